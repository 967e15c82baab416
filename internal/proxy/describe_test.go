package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
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
		// MariaDB's DECIMAL(22,0) of FLOOR(b / 10) * 10 of a BIGINT b.
		{"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM pums WHERE income > ? GROUP BY b", "b:246 COUNT(*):8"},
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
		// A WHERE's marker bound to NULL makes a probe, a value a
		// refusal.
		{"SELECT age FROM pums WHERE age = ?", ""},
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
		// Zero-row probes whatever their markers hold, which announced
		// no columns: their reading with a WHERE's markers as NULL was
		// the private path's, which refuses them.
		{"SELECT * FROM pums WHERE age > ? LIMIT 0", "SELECT * FROM pums WHERE age > 5 LIMIT 0"},
		{"SELECT age, income FROM pums WHERE age = ? AND 1=0", "SELECT age, income FROM pums WHERE age = 5 AND 1=0"},
		{"SELECT COUNT(*), SUM(income) FROM pums WHERE sex = ? AND income = NULL", "SELECT COUNT(*), SUM(income) FROM pums WHERE sex = 1 AND income = NULL"},
		{"SELECT race, COUNT(*) FROM pums WHERE age > ? AND 1 = 0 GROUP BY race", "SELECT race, COUNT(*) FROM pums WHERE age > 5 AND 1 = 0 GROUP BY race"},
		// FROM-less SELECTs with markers outside the select list.
		{"SELECT @@version, NOW() WHERE ? = 1 LIMIT ?", "SELECT @@version, NOW() WHERE 5 = 1 LIMIT 1"},
		{"SELECT ROUND(2.5e0), 'a' HAVING ?", "SELECT ROUND(2.5e0), 'a' HAVING 1"},
		// Casts whose type go-mysql-server announced as TEXT and TIME.
		{"SELECT CAST('abcdef' AS CHAR(3)), CAST('10:00' AS TIME(6)) HAVING ?", "SELECT CAST('abcdef' AS CHAR(3)), CAST('10:00' AS TIME(6)) HAVING 1"},
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

// TestDescribeProbeWhoseKeysAWhereMayNarrow: a prepared zero-row probe
// whose private reading groups by a key whose declared values are of
// several types (integers and fractions) announces no columns, as the
// statement without the probe's condition does: the WHERE's values may
// narrow the key to integers, typed BIGINT where all of them are DOUBLE.
func TestDescribeProbeWhoseKeysAWhereMayNarrow(t *testing.T) {
	cfg, err := catalog.ParseConfig(strings.NewReader(`
backend: {driver: sqlite, dsn: unused}
ledger: {driver: sqlite, dsn: unused}
users:
  - {name: ana, password_hash: "*C142FB215B6E05B7C134B1A653AD4B455157FD79", epsilon: 100}
tables:
  - name: w
    columns:
      - {name: k, type: real, lower: 0, upper: 2, values: [1, 1.5]}
      - {name: n, type: integer, lower: 0, upper: 10}
`))
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, nil, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.Open("ana", 7)
	for _, q := range []string{
		"SELECT k, COUNT(*) FROM w WHERE k > ? GROUP BY k",
		"SELECT k, COUNT(*) FROM w WHERE k > ? AND 1 = 0 GROUP BY k",
	} {
		if cols := s.Describe(context.Background(), q, 1); cols != nil {
			t.Errorf("%s: described %s", q, columnDefs(cols))
		}
	}
	if cols := s.Describe(context.Background(), "SELECT k, COUNT(*) FROM w WHERE 1 = 0 GROUP BY k", 0); cols == nil {
		t.Error("SELECT k, COUNT(*) FROM w WHERE 1 = 0 GROUP BY k: not described")
	}
}

// TestPreparedColumnLabels: a prepared statement's select-list items that
// hold ? markers, without an alias, name their columns as the statement
// writes them ("1 + ?", "?"), as MySQL and MariaDB name them, over the
// protocol and SQL's PREPARE alike; they were named after the values
// bound ("1 + 5", "5").
func TestPreparedColumnLabels(t *testing.T) {
	s := newTestSession(t)
	names := func(r *Result) string {
		if r.Typed == nil {
			return strings.Join(r.Columns, ", ")
		}
		var out []string
		for _, c := range r.Typed {
			out = append(out, c.Name)
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct{ prepared, bound, want string }{
		{"SELECT 1 + ?", "SELECT 1 + 5", "1 + ?"},
		{"SELECT @@version_comment, ?", "SELECT @@version_comment, 5", "@@version_comment, ?"},
		{"SELECT ?, ? AS x, CONCAT('a', ?)", "SELECT 'b', 2 AS x, CONCAT('a', 'c')", "?, x, CONCAT('a', ?)"},
		{"SELECT ?, @dp_epsilon", "SELECT 7, @dp_epsilon", "?, @dp_epsilon"},
		{"SELECT TABLE_NAME, ? FROM information_schema.TABLES WHERE TABLE_NAME = ?", "SELECT TABLE_NAME, 1 FROM information_schema.TABLES WHERE TABLE_NAME = 'x'", "TABLE_NAME, ?"},
		{"SELECT 1 + 1 WHERE ? = 1", "SELECT 1 + 1 WHERE 1 = 1", "1 + 1"},
	} {
		r, err := s.ExecutePrepared(context.Background(), c.prepared, c.bound)
		if err != nil {
			t.Errorf("%s: %v", c.prepared, err)
			continue
		}
		if got := names(r); got != c.want {
			t.Errorf("%s: columns %s, want %s", c.prepared, got, c.want)
		}
	}
	run(t, s, "PREPARE s FROM 'SELECT 1 + ?, @@version_comment, ?, ? AS x'")
	run(t, s, "SET @a = 5")
	if got := names(run(t, s, "EXECUTE s USING @a, @a, @a")); got != "1 + ?, @@version_comment, ?, x" {
		t.Errorf("EXECUTE s: columns %s", got)
	}
}

// TestMarkerLabelsCached: the labels of a prepared statement's columns are
// computed once per text and session (they were a second parse of every
// execution), stay right when executions of several prepared statements
// alternate and after SET @dp_epsilon, and the cache is bounded.
func TestMarkerLabelsCached(t *testing.T) {
	s := newTestSession(t)
	cases := []struct{ prepared, bound, want string }{
		{"SELECT 1 + ?", "SELECT 1 + 5", "1 + ?"},
		{"SELECT ?, 2 + ?", "SELECT 3, 2 + 4", "?, 2 + ?"},
		{"SELECT ? AS x", "SELECT 7 AS x", "x"},
	}
	for round := range 3 {
		if round == 1 {
			run(t, s, "SET @dp_epsilon = 0.5")
		}
		for _, c := range cases {
			r, err := s.ExecutePrepared(context.Background(), c.prepared, c.bound)
			if err != nil {
				t.Fatalf("%s: %v", c.prepared, err)
			}
			got := strings.Join(r.Columns, ", ")
			if r.Typed != nil {
				var names []string
				for _, col := range r.Typed {
					names = append(names, col.Name)
				}
				got = strings.Join(names, ", ")
			}
			if got != c.want {
				t.Errorf("round %d, %s: columns %s, want %s", round, c.prepared, got, c.want)
			}
		}
	}
	if len(s.markerLabels) != len(cases) {
		t.Errorf("cache holds %d texts, want %d", len(s.markerLabels), len(cases))
	}
	other := newTestSession(t)
	if len(other.markerLabels) != 0 {
		t.Errorf("another session's cache holds %d texts", len(other.markerLabels))
	}
	for i := range maxMarkerLabelTexts + 5 {
		q := fmt.Sprintf("SELECT %d + ?", i)
		if _, err := s.ExecutePrepared(context.Background(), q, fmt.Sprintf("SELECT %d + 1", i)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(s.markerLabels) > maxMarkerLabelTexts {
			t.Fatalf("cache holds %d texts, more than %d", len(s.markerLabels), maxMarkerLabelTexts)
		}
	}
}
