package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestDescribe: a prepared private SELECT is described with the column
// definitions its execution sends (answerColumn of the plan's types), its
// markers standing for values not yet known; statements whose columns
// are not the private path's, or could depend on an argument, are not.
func TestDescribe(t *testing.T) {
	s := newTestSession(t)
	spent := func() float64 {
		eps, _, err := s.remaining(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	before := spent()
	for _, c := range []struct {
		query string
		want  string // name:type ..., "" for not described
	}{
		{"SELECT COUNT(*) FROM pums", "COUNT(*):8"},
		{"SELECT race, COUNT(*), AVG(income) FROM pums WHERE age > ? GROUP BY race", "race:8 COUNT(*):8 AVG(income):5"},
		{"SELECT race, COUNT(*) AS n FROM pums WHERE age BETWEEN ? AND ? GROUP BY race ORDER BY n DESC LIMIT ?", "race:8 n:8"},
		{"SELECT COUNT(*) FROM pums WHERE age > ? LIMIT ? OFFSET ?", "COUNT(*):8"},
		{"SELECT COUNT(*) FROM pums WHERE sex = ? LIMIT ?, ?", "COUNT(*):8"},
		{"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums WHERE income > ? GROUP BY b", "b:8 COUNT(*):8"},
		{"SELECT MEDIAN(income) FROM pums WHERE ? IS NULL OR sex = ?", "MEDIAN(income):5"},
		{"SELECT t.n FROM (SELECT COUNT(*) AS n FROM pums WHERE age > ?) t", "n:8"},
		// Constants without FROM, which post-processing answers.
		{"SELECT 1, CAST('1.5' AS SIGNED), ROUND(2.5e0), 'a'", "1:8 CAST('1.5' AS SIGNED):8 ROUND(2.5e0):5 a:253"},
		// A marker whose value names or types a column.
		{"SELECT COUNT(*) + ? FROM pums", ""},
		{"SELECT SUM(CASE WHEN sex = ? THEN 1 END) AS n FROM pums", ""},
		// Statements other than a SELECT, the session's, refused and unparsed ones.
		{"SHOW TABLES", ""},
		{"SELECT TABLE_NAME FROM information_schema.TABLES UNION SELECT 'x'", ""},
		{"SELECT dp_remaining_epsilon()", ""},
		{"SELECT age FROM pums", ""},
		{"SET @dp_epsilon = ?", ""},
		{"SELECT COUNT(*) FROM nosuch", ""},
		{"SELEC", ""},
	} {
		markers := strings.Count(c.query, "?")
		var got []string
		for _, col := range s.Describe(context.Background(), c.query, markers) {
			got = append(got, fmt.Sprintf("%s:%d", col.Name, col.Type))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: described %q, want %q", c.query, g, c.want)
		}
	}
	// A statement past largeStatementBytes is not parsed outside the
	// large-parse gate: not described, though it would be if shorter.
	long := "SELECT COUNT(*) FROM pums WHERE age > ?" + strings.Repeat(" ", largeStatementBytes)
	if cols := s.Describe(context.Background(), long, 1); cols != nil {
		t.Errorf("described a statement of %d bytes: %v", len(long), cols)
	}
	// A miscounted statement (the protocol's count decides) is not described.
	if cols := s.Describe(context.Background(), "SELECT COUNT(*) FROM pums WHERE age > ?", 2); cols != nil {
		t.Errorf("described %v with the wrong marker count", cols)
	}
	if after := spent(); after != before {
		t.Errorf("describing spent epsilon %g", before-after)
	}
}

// TestDescribeCatalogSelects: a prepared SELECT the catalog engine
// answers, zero-row probes of configured tables included, is described
// with the column definitions its execution sends (ODBC's SQLPrepare then
// SQLNumResultCols, Connector/J's getMetaData()). Before, every such
// statement announced no columns: SELECT * FROM pums WHERE 1=0 had 0
// columns after prepare and 6 after execute, where MariaDB has 6 (an
// independent review with ODBC and JDBC).
func TestDescribeCatalogSelects(t *testing.T) {
	s := newTestSession(t)
	for _, c := range []struct{ prepared, executed string }{
		{"SELECT * FROM pums WHERE 1=0", ""},
		{"SELECT * FROM pums LIMIT 0", ""},
		{"SELECT age, income FROM pums LIMIT 0", ""},
		{"SELECT race, COUNT(*) FROM pums GROUP BY race LIMIT 0", ""},
		{"SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
			"SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'dpproxy' AND TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION"},
		{"SELECT * FROM information_schema.tables", ""},
		{"SELECT 1, 'a', @@version_comment, DATABASE()", ""},
		{"SELECT @n := COUNT(*), @n + 1 FROM information_schema.TABLES", ""},
	} {
		executed := c.executed
		if executed == "" {
			executed = c.prepared
		}
		described := s.Describe(context.Background(), c.prepared, strings.Count(c.prepared, "?"))
		r := run(t, s, executed)
		if len(described) == 0 {
			t.Errorf("%s: described no columns, executed %d", c.prepared, len(r.Typed))
			continue
		}
		if got, want := columnDefs(described), columnDefs(r.Typed); got != want {
			t.Errorf("%s: described %s, executed %s", c.prepared, got, want)
		}
	}
}
