package sqlrewrite

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// TestDescribeText: markers in WHERE and HAVING stand for NULL, in LIMIT for
// 1 and in OFFSET for 0; a ? in a string or comment is no marker; a marker
// anywhere else, a miscount or a statement other than one SELECT is not
// described.
func TestDescribeText(t *testing.T) {
	p := NewParser(&catalog.Config{})
	for _, c := range []struct {
		sql      string
		markers  int
		want     string
		filtered bool
		ok       bool
	}{
		{"SELECT a FROM t", 0, "SELECT a FROM t", false, true},
		{"SELECT a FROM t WHERE b = '?' AND c > ? /* ? */ LIMIT ?, ?", 3, "SELECT a FROM t WHERE b = '?' AND c > NULL /* ? */ LIMIT 0, 1", true, true},
		{"SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > ? LIMIT ? OFFSET ?", 3, "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > NULL LIMIT 1 OFFSET 0", true, true},
		{"SELECT n FROM (SELECT COUNT(*) AS n FROM t WHERE b < ? LIMIT ?) d", 2, "SELECT n FROM (SELECT COUNT(*) AS n FROM t WHERE b < NULL LIMIT 1) d", true, true},
		{"SELECT a + ? FROM t", 1, "", false, false},
		{"SELECT a FROM t GROUP BY ?", 1, "", false, false},
		{"SELECT a FROM t ORDER BY ?", 1, "", false, false},
		{"SELECT a FROM t WHERE b = ?", 2, "", false, false},
		{"SET @x = ?", 1, "", false, false},
		{"SELECT 1; SELECT 2", 0, "", false, false},
		{"SELEC", 0, "", false, false},
	} {
		got, filtered, ok := p.DescribeText(c.sql, c.markers)
		if got != c.want || filtered != c.filtered || ok != c.ok {
			t.Errorf("%s: got %q, %v, %v; want %q, %v, %v", c.sql, got, filtered, ok, c.want, c.filtered, c.ok)
		}
	}
}
