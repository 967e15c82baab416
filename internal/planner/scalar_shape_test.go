package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// planScalarStatement parses and plans sql at ε = 1 over testCatalog.
func planScalarStatement(t *testing.T, sql string) (*planner.QueryPlan, error) {
	t.Helper()
	cat := testCatalog()
	st, err := sqlrewrite.NewParser(cat).Parse(sql)
	if err != nil {
		t.Fatalf("parse %.80s: %v", sql, err)
	}
	q, ok := st.(*sqlrewrite.Query)
	if !ok {
		t.Fatalf("parse %.80s: %T, want a Query", sql, st)
	}
	return planner.New(cat).PlanQuery(q, planner.Settings{Epsilon: 1, Mechanism: "auto"})
}

// nestedCounts is SELECT COUNT(*) + (SELECT COUNT(*) + (... (SELECT
// COUNT(*) FROM pums) ...) FROM pums) FROM pums, with depth subqueries
// each inside the one before.
func nestedCounts(depth int) string {
	return strings.Repeat("SELECT COUNT(*) + (", depth) + "SELECT COUNT(*) FROM pums" + strings.Repeat(") FROM pums", depth)
}

// TestScalarSubqueryShapeIsBounded: scalar subqueries nested more than 8
// levels deep, or more than 64 in one statement, are refused at plan
// time (1235, saying why), before anything is reserved. Before, a
// statement 800 levels deep (24 KB) grew the proxy's memory past 14 GB:
// each level's notes repeated every enclosing subquery's text.
func TestScalarSubqueryShapeIsBounded(t *testing.T) {
	if _, err := planScalarStatement(t, nestedCounts(8)); err != nil {
		t.Errorf("subqueries 8 levels deep: %v, want a plan", err)
	}
	_, err := planScalarStatement(t, nestedCounts(9))
	if err == nil || !strings.Contains(err.Error(), "nested 9 levels deep (at most 8)") {
		t.Errorf("subqueries 9 levels deep: %v, want 1235 naming the bound", err)
	}
	terms := func(n int) string {
		var ts []string
		for k := range n {
			ts = append(ts, fmt.Sprintf("(SELECT COUNT(*) FROM pums WHERE age > %d)", k))
		}
		return "SELECT " + strings.Join(ts, " + ")
	}
	if _, err := planScalarStatement(t, terms(64)); err != nil {
		t.Errorf("64 subqueries: %v, want a plan", err)
	}
	_, err = planScalarStatement(t, terms(65))
	if err == nil || !strings.Contains(err.Error(), "65 scalar subqueries in one statement (at most 64)") {
		t.Errorf("65 subqueries: %v, want 1235 naming the bound", err)
	}
}

// TestScalarSubqueryResultSize: a subquery whose rows post-processing
// holds may pass the result bound is refused at plan time, as the same
// query on its own is (before, it was planned, failed while it ran and
// was charged); and a bare subquery's value counts as its one value, not
// as max_allowed_packet's text (before, a subquery beside 21 buckets was
// refused as 21 rows of 4 MiB).
func TestScalarSubqueryResultSize(t *testing.T) {
	huge := "SELECT CONCAT(COUNT(*), REPEAT('x', 1000000)) FROM pums GROUP BY FLOOR(income/100)*100 LIMIT 1"
	if _, err := planScalarStatement(t, huge); err == nil || !strings.Contains(err.Error(), "bytes each") {
		t.Fatalf("the query on its own: %v, want the result bound's 1235", err)
	}
	_, err := planScalarStatement(t, "SELECT ("+huge+") AS big")
	if err == nil || !strings.Contains(err.Error(), "bytes each") {
		t.Errorf("the same query as a subquery: %v, want the result bound's 1235 at plan time", err)
	}
	for _, sql := range []string{
		"SELECT FLOOR(age/5)*5 AS b, (SELECT COUNT(*) FROM pums) AS n FROM pums GROUP BY b",
		"SELECT (SELECT COUNT(*) FROM pums WHERE age > 1), (SELECT COUNT(*) FROM pums WHERE age > 2), (SELECT COUNT(*) FROM pums WHERE age > 3), " +
			"(SELECT COUNT(*) FROM pums WHERE age > 4), (SELECT COUNT(*) FROM pums WHERE age > 5), (SELECT COUNT(*) FROM pums WHERE age > 6), " +
			"(SELECT COUNT(*) FROM pums WHERE age > 7), (SELECT COUNT(*) FROM pums WHERE age > 8), (SELECT COUNT(*) FROM pums WHERE age > 9), " +
			"(SELECT COUNT(*) FROM pums WHERE age > 10), (SELECT COUNT(*) FROM pums WHERE age > 11), (SELECT COUNT(*) FROM pums WHERE age > 12), " +
			"(SELECT COUNT(*) FROM pums WHERE age > 13), (SELECT COUNT(*) FROM pums WHERE age > 14), (SELECT COUNT(*) FROM pums WHERE age > 15), " +
			"(SELECT COUNT(*) FROM pums WHERE age > 16)",
		"SELECT FLOOR(age/5)*5 AS b, (SELECT CONCAT('n=', COUNT(*)) FROM pums) AS n FROM pums GROUP BY b",
	} {
		if _, err := planScalarStatement(t, sql); err != nil {
			t.Errorf("%.90s: %v, want a plan", sql, err)
		}
	}
}

// TestScalarWhereRefusesTextValues: a subquery in WHERE whose value is
// text of any length (CAST AS CHAR, CONCAT, an IF mixing a number and
// text) is refused at plan time against a numeric column. Before, only
// VARCHAR(255) was: the others were planned, charged, and failed with
// 1105 once released.
func TestScalarWhereRefusesTextValues(t *testing.T) {
	for _, sub := range []string{
		"SELECT CAST(COUNT(*) AS CHAR) FROM pums",
		"SELECT CONCAT(COUNT(*), '') FROM pums",
		"SELECT IF(COUNT(*) > 500, 7, 'x') FROM pums",
	} {
		sql := "SELECT COUNT(*) FROM pums WHERE age > (" + sub + ")"
		_, err := planScalarStatement(t, sql)
		if err == nil || !strings.Contains(err.Error(), "not a number") {
			t.Errorf("%s: %v, want 1235 (not a number) at plan time", sql, err)
		}
	}
	if _, err := planScalarStatement(t, "SELECT COUNT(*) FROM pums WHERE age > (SELECT CAST(AVG(age) AS DECIMAL(10, 2)) FROM pums)"); err != nil {
		t.Errorf("a DECIMAL(10, 2) value: %v, want a plan", err)
	}
}
