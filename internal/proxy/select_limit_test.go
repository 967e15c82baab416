package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSelectLimitCutsTopLevelSelects: sql_select_limit cuts the rows of
// every top-level SELECT without a LIMIT of its own, on every path that
// answers one (a constant UNION, the catalog engine, a constant SELECT,
// EXECUTE of a prepared SELECT), and SHOW as MariaDB does, and nothing
// else: not a subquery, not a statement's own LIMIT, not SHOW WARNINGS or
// EXPLAIN, not the session's own reads of
// variables (sql_select_limit = 0 made them internal errors). It was
// ignored by every path but the catalog engine's.
func TestSelectLimitCutsTopLevelSelects(t *testing.T) {
	s := newTestSession(t)
	rowsOf := func(sql string) int {
		t.Helper()
		return len(run(t, s, sql).Rows)
	}
	value := func(sql string) string {
		t.Helper()
		r := run(t, s, sql)
		if len(r.Rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", sql, len(r.Rows))
		}
		return strings.Trim(fmt.Sprint(r.Rows[0]), "[]")
	}
	if got := value("SELECT @@sql_select_limit"); got != "18446744073709551615" {
		t.Errorf("default @@sql_select_limit = %s, want MySQL's 18446744073709551615", got)
	}
	const union4 = "SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4"
	const explain = "EXPLAIN SELECT COUNT(*), AVG(age), MIN(age), MEDIAN(income) FROM pums"
	explained := rowsOf(explain)
	run(t, s, "SET SQL_SELECT_LIMIT = 3")
	if got := value("SELECT @@sql_select_limit"); got != "3" {
		t.Errorf("@@sql_select_limit = %s after SET, want 3", got)
	}
	for sql, want := range map[string]int{
		union4:              3,
		union4 + " LIMIT 4": 4, // its own LIMIT wins
		"(SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4) LIMIT 5":       4,
		"SELECT * FROM information_schema.COLLATIONS":                           3,
		"SELECT * FROM information_schema.COLLATIONS LIMIT 5":                   5,
		"SELECT COUNT(*) FROM (" + union4 + ") t":                               1,
		"SELECT * FROM (SELECT * FROM information_schema.COLLATIONS LIMIT 5) c": 3,
		"SELECT (SELECT COUNT(*) FROM information_schema.COLLATIONS) > 3":       1,
		"SHOW COLLATION": 3, // as MariaDB cuts a SHOW
		"DESCRIBE pums":  3,
		"SELECT @dp_epsilon, @@version, USER() UNION ALL SELECT 1, 2, 3 UNION ALL SELECT 4, 5, 6 UNION ALL SELECT 7, 8, 9": 3,
	} {
		if got := rowsOf(sql); got != want {
			t.Errorf("%s: %d rows under sql_select_limit 3, want %d", sql, got, want)
		}
	}
	// Neither SHOW WARNINGS nor EXPLAIN is cut.
	run(t, s, "SELECT 1/0, 2/0, 3/0, 4/0")
	if got := rowsOf("SHOW WARNINGS"); got != 4 {
		t.Errorf("SHOW WARNINGS after 4 warnings: %d rows, want 4", got)
	}
	if got := rowsOf(explain); got != explained || got <= 3 {
		t.Errorf("%s: %d rows under sql_select_limit 3, want all %d", explain, got, explained)
	}
	if got := value("SELECT COUNT(*) FROM (" + union4 + ") t"); got != "4" {
		t.Errorf("a subquery was cut: COUNT(*) = %s, want 4", got)
	}
	rowsOf(union4)
	if got := value("SELECT FOUND_ROWS()"); got != "3" {
		t.Errorf("FOUND_ROWS() after a cut UNION = %s, want the 3 rows sent", got)
	}
	run(t, s, "PREPARE p FROM '"+union4+"'")
	if got := rowsOf("EXECUTE p"); got != 3 {
		t.Errorf("EXECUTE of a prepared UNION: %d rows, want 3", got)
	}

	// 0 leaves no row of a SELECT without LIMIT, one-row ones included.
	run(t, s, "SET SQL_SELECT_LIMIT = 0")
	for _, sql := range []string{"SELECT 1", "SELECT @@sql_select_limit", "SELECT @dp_epsilon, @@version", "SELECT FOUND_ROWS()", union4} {
		if got := rowsOf(sql); got != 0 {
			t.Errorf("%s: %d rows under sql_select_limit 0, want 0", sql, got)
		}
	}
	if got := value("SELECT @dp_epsilon, @@sql_select_limit LIMIT 1"); got != "0.1 0" {
		t.Errorf("SELECT @dp_epsilon, @@sql_select_limit LIMIT 1 = %s", got)
	}
	run(t, s, "SET SQL_SELECT_LIMIT = DEFAULT")
	if got := value("SELECT @@sql_select_limit"); got != "18446744073709551615" {
		t.Errorf("@@sql_select_limit after SET DEFAULT = %s, want 18446744073709551615", got)
	}
	if got := rowsOf(union4); got != 4 {
		t.Errorf("%s after SET DEFAULT: %d rows, want 4", union4, got)
	}
}

// TestSelectLimitUnderTheCatalogsRowBound: a catalog statement with more
// than the engine's 100,000 rows answers its first sql_select_limit rows
// (MariaDB does), since the engine reads no more than those: it failed
// with "at most 100000 rows" once the session, not the engine, cut it.
// FOUND_ROWS() counts the rows sent.
func TestSelectLimitUnderTheCatalogsRowBound(t *testing.T) {
	s := newTestSession(t)
	const cube = "SELECT a.ID, b.ID, c.ID FROM information_schema.COLLATIONS a, information_schema.COLLATIONS b, information_schema.COLLATIONS c"
	if _, err := s.Execute(context.Background(), cube); err == nil || !strings.Contains(err.Error(), "at most 100000 rows") {
		t.Fatalf("%s without sql_select_limit: %v, want the 100000 rows refusal", cube, err)
	}
	run(t, s, "SET SQL_SELECT_LIMIT = 5")
	if r := run(t, s, cube); len(r.Rows) != 5 || len(r.Typed) != 3 {
		t.Errorf("%s under sql_select_limit 5: %d rows of %d columns, want 5 of 3", cube, len(r.Rows), len(r.Typed))
	}
	if got := fmt.Sprint(run(t, s, "SELECT FOUND_ROWS() LIMIT 1").Rows); got != "[[5]]" {
		t.Errorf("FOUND_ROWS() after the cut: %s, want the 5 rows sent", got)
	}
	run(t, s, "SET SQL_SELECT_LIMIT = 100001")
	if _, err := s.Execute(context.Background(), cube); err == nil || !strings.Contains(err.Error(), "at most 100000 rows") {
		t.Errorf("%s under sql_select_limit 100001: %v, want the 100000 rows refusal", cube, err)
	}
}
