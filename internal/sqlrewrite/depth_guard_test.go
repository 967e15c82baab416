package sqlrewrite_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestDeepNestingIsRefused: a statement nested deeper than the proxy's
// conversions can recurse is refused at parse with 1235 (an independent
// review killed the proxy, a fatal stack overflow, with 260,000
// parentheses around a WHERE condition), on every route: private
// SELECTs, FROM-less SELECTs for the catalog engine, SET and EXPLAIN;
// nesting of the depth real statements use, and long chains of one
// logical operator, still parse.
func TestDeepNestingIsRefused(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	parens := func(n int, inner string) string { return strings.Repeat("(", n) + inner + strings.Repeat(")", n) }
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE " + parens(260000, "age > 1"),
		"SELECT COUNT(*) FROM pums WHERE " + parens(5200, "age > 1"),
		"SELECT COUNT(*) FROM pums WHERE " + strings.Repeat("NOT ", 5200) + "age > 1",
		"SELECT COUNT(*) FROM pums WHERE age > " + strings.Repeat("- ", 5200) + "1",
		"SELECT " + parens(6000, "1"),
		"SELECT " + strings.Repeat("ABS(", 5200) + "1" + strings.Repeat(")", 5200),
		"SET @v = " + parens(6000, "1"),
		"EXPLAIN SELECT AVG(age) FROM pums WHERE " + parens(6000, "age > 1"),
		"SELECT COUNT(*) FROM pums WHERE " + strings.Repeat("age = 1 OR ", 400000) + "age = 2",
		"SELECT " + strings.Repeat("1 AND ", 20000) + "1",
	} {
		_, err := p.Parse(sql)
		var e *dperr.Error
		if !errors.As(err, &e) || e.Kind != dperr.Unsupported || !(strings.Contains(e.Error(), "nested more than") || strings.Contains(e.Error(), "a chain of more than")) {
			t.Errorf("%.60s…: got %v, want 1235 naming the nesting or the chain", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT COUNT(*) FROM pums WHERE " + parens(3000, "age > 1"),
		"SELECT " + parens(400, "1"),
		"SELECT COUNT(*) FROM pums WHERE " + strings.Repeat("NOT ", 3000) + "age > 1",
		// Chains of one operator are links, not levels: BI tools write
		// long OR lists, which the conversions flatten.
		"SELECT COUNT(*) FROM pums WHERE " + strings.Repeat("age = 1 OR ", 5000) + "age = 2",
		"SELECT COUNT(*) FROM pums WHERE (age > 1 AND (" + strings.Repeat("sex = 1 OR ", 3000) + "sex = 2))",
	} {
		if _, err := p.Parse(sql); err != nil {
			t.Errorf("%.60s…: %v", sql, err)
		}
	}
}

// TestLongSetOperationsAreRefused: set operations of more than eight
// SELECTs that read a table or hold anything but literals, which the
// catalog engine plans in exponential time beyond its timeout's reach,
// are refused at parse with 1235, nested ones counted too; eight answer.
// A UNION of literal rows (MariaDB ODBC's SQLGetTypeInfo) is a
// ConstantUnion up to its own bounds (constant_union_test.go).
func TestLongSetOperationsAreRefused(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	union := func(n int, branch string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(branch, i)
		}
		return strings.Join(parts, " UNION ")
	}
	const (
		catalogTable = "SELECT %d AS a, TABLE_NAME AS b FROM information_schema.TABLES"
		variable     = "SELECT %d AS a, @@version AS b"
		decimal      = "SELECT %d.5 AS a, 'x' AS b"
		literal      = "SELECT %d AS a, 'x' AS b"
	)
	for _, sql := range []string{
		union(9, catalogTable), union(43, catalogTable), union(43, variable), union(9, decimal),
		union(42, literal) + " UNION SELECT 1, 'x' FROM information_schema.TABLES",
		"SELECT * FROM (" + union(5, literal) + ") t UNION " + union(4, literal),
		"SELECT 1 UNION (" + union(9, literal) + ")",
		union(9, literal) + " INTERSECT SELECT 1, 'x'",
	} {
		if _, err := p.Parse(sql); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "more than 8 SELECTs") {
			t.Errorf("%.60s…: %v, want 1235 naming the limit", sql, err)
		}
	}
	for _, sql := range []string{union(8, catalogTable), union(8, decimal)} {
		if st, err := p.Parse(sql); err != nil {
			t.Errorf("eight SELECTs: %v", err)
		} else if _, ok := st.(*sqlrewrite.Catalog); !ok {
			t.Errorf("eight SELECTs: %T, want the catalog engine's", st)
		}
	}
}
