package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// nested returns leaf wrapped n times by wrap.
func nested(n int, wrap func(string) string, leaf string) string {
	for range n {
		leaf = wrap(leaf)
	}
	return leaf
}

// refusedPromptly runs q on s and fails the test unless the catalog
// refuses it with 1235. Before the bound, the engine planned these for
// minutes to days, holding a statement slot that no timeout, KILL or
// hang-up could free; the deadline here is only there so that the test
// fails instead of hanging.
func refusedPromptly(t *testing.T, s *Session, name, q string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Query(context.Background(), q)
		done <- err
	}()
	select {
	case err := <-done:
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != 1235 || ce.State != "42000" {
			t.Errorf("%s: got %v, want 1235", name, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still planning after 30 s, want 1235 at once", name)
	}
}

// Statements the engine would take minutes or more to plan are refused
// before it sees them (an independent review: SELECT (SELECT ... 1))
// 16 deep planned for 95 s, 28 deep for days).
func TestDeeplyNestedStatementsAreRefused(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, c := range []struct{ name, query string }{
		{"scalar subqueries 28 deep", "SELECT " + nested(28, func(e string) string { return "(SELECT " + e + ")" }, "1")},
		{"EXISTS 100 deep", "SELECT " + strings.Repeat("EXISTS(SELECT ", 100) + "1" + strings.Repeat(")", 100)},
		{"IN subqueries 40 deep", "SELECT 1" + strings.Repeat(" WHERE 1 IN (SELECT 1", 40) + strings.Repeat(")", 40)},
		{"derived tables 40 deep", "SELECT * FROM " + nested(40, func(e string) string { return "(SELECT * FROM " + e + ") t" }, "(SELECT 1 AS a) t")},
		{"CTEs 40 deep", strings.Repeat("WITH c AS (", 40) + "SELECT 1 AS a" + strings.Repeat(") SELECT * FROM c", 40)},
		{"subqueries beside subqueries, 6 levels", "SELECT " + nested(6, func(e string) string { return "(SELECT (SELECT 1)+" + e + ")" }, "1")},
		{"50 terms at each of 2 levels", "SELECT " + nested(2, func(e string) string { return "(SELECT " + e + strings.Repeat("+1", 50) + ")" }, "1")},
		{"unary minus 40 deep", "SELECT " + strings.Repeat("-(", 40) + "@a" + strings.Repeat(")", 40)},
		{"a sum of 16000 terms", "SELECT @a" + strings.Repeat("+@a", 16000)},
		{"65 subqueries", "SELECT " + strings.TrimSuffix(strings.Repeat("(SELECT 1),", 65), ",")},
		{"a subquery in a set operation's CTE", "WITH c AS (SELECT " + nested(28, func(e string) string { return "(SELECT " + e + ")" }, "1") + ") SELECT 1 UNION SELECT 2"},
	} {
		refusedPromptly(t, s, c.name, c.query)
	}
	// The prepared-statement path (Describe) runs the same checks.
	q := "SELECT " + nested(28, func(e string) string { return "(SELECT " + e + ")" }, "1")
	var ce *Error
	if _, err := s.Describe(context.Background(), q); !errors.As(err, &ce) || ce.Code != 1235 {
		t.Errorf("Describe of scalar subqueries 28 deep: got %v, want 1235", err)
	}
}

// Nesting within the bound is answered, as are the catalog queries of
// drivers and BI tools.
func TestNestingWithinTheBoundIsAnswered(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, c := range []struct{ query, want string }{
		{"SELECT " + nested(6, func(e string) string { return "(SELECT " + e + ")" }, "1"), "[[1]]"},
		{"SELECT 1" + strings.Repeat(" WHERE EXISTS(SELECT 1", 4) + strings.Repeat(")", 4), "[[1]]"},
		{"SELECT 1" + strings.Repeat(" WHERE 1 IN (SELECT 1", 4) + strings.Repeat(")", 4), "[[1]]"},
		{"SELECT * FROM " + nested(5, func(e string) string { return "(SELECT * FROM " + e + ") t" }, "(SELECT 1 AS a) t"), "[[1]]"},
		{strings.Repeat("WITH c AS (", 6) + "SELECT 1 AS a" + strings.Repeat(") SELECT * FROM c", 6), "[[1]]"},
		{"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'visits'" + strings.Repeat(" OR TABLE_NAME = 'visits'", 200), "[[1]]"},
		{"SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dpproxy' AND TABLE_NAME IN " +
			"(SELECT TABLE_NAME FROM information_schema.COLUMNS WHERE COLUMN_NAME = 'age' AND TABLE_SCHEMA IN (SELECT SCHEMA_NAME FROM information_schema.SCHEMATA))", "[[visits]]"},
		{"SELECT COUNT(*) FROM (SELECT * FROM (SELECT age, city FROM visits) t WHERE age > 3) u LIMIT 0", "[]"},
		{"SELECT (SELECT COUNT(*) FROM information_schema.COLUMNS c WHERE c.TABLE_NAME = t.TABLE_NAME) FROM information_schema.TABLES t WHERE t.TABLE_NAME = 'visits'", "[[3]]"},
	} {
		r, err := s.Query(context.Background(), c.query)
		if err != nil {
			t.Errorf("%.100s: %v", c.query, err)
			continue
		}
		if got := fmt.Sprint(r.Rows); got != c.want {
			t.Errorf("%.100s: %s, want %s", c.query, got, c.want)
		}
	}
}

// planningCost reads every field of the parse: sqlparser.Walk does not
// visit a set operation's WITH or ORDER BY.
func TestPlanningCostReadsEveryField(t *testing.T) {
	for _, c := range []struct {
		query      string
		subqueries int
	}{
		{"WITH c AS (SELECT (SELECT 1)) SELECT 1 UNION SELECT 2", 2},
		{"SELECT 1 UNION SELECT 2 ORDER BY (SELECT 1)", 1},
		{"SELECT (SELECT 1) FROM (SELECT 1) t WHERE EXISTS(SELECT 1) AND 1 IN (SELECT 1)", 4},
	} {
		stmt, err := sqlparser.Parse(c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if _, subqueries, _ := planningCost(stmt, len(c.query)); subqueries != c.subqueries {
			t.Errorf("%s: %d subqueries, want %d", c.query, subqueries, c.subqueries)
		}
	}
}

// TestPlanningCostBoundsPlanningTime measures, for each shape whose
// planning time grows fastest with its size, the largest statement the
// bound lets through: it is answered in well under a second on an idle
// machine (the bound asserted here is generous, for loaded CI machines),
// and the next size is refused. The times logged are those the comment of
// planningCost quotes.
func TestPlanningCostBoundsPlanningTime(t *testing.T) {
	if testing.Short() {
		t.Skip("plans statements for a few seconds")
	}
	e := testEngine(t)
	for _, c := range []struct {
		name  string
		shape func(n int) string
	}{
		{scalarShape, func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT " + e + ")" }, "1")
		}},
		{"EXISTS n deep", func(n int) string {
			return "SELECT 1" + strings.Repeat(" WHERE EXISTS(SELECT 1", n) + strings.Repeat(")", n)
		}},
		{"UNION in subqueries n deep", func(n int) string {
			return "SELECT " + strings.Repeat("(SELECT 1 UNION SELECT ", n) + "1" + strings.Repeat(")", n)
		}},
		{"catalog subqueries n deep", func(n int) string {
			return "SELECT " + strings.Repeat("(SELECT ", n) + "(SELECT TABLE_NAME FROM information_schema.TABLES LIMIT 1)" +
				strings.Repeat(" FROM information_schema.SCHEMATA LIMIT 1)", n)
		}},
		{"derived tables in subqueries, n levels", func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT x FROM (SELECT " + e + "+1 AS x) t)" }, "1")
		}},
		{"subqueries beside subqueries, n levels", func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT (SELECT 1)+" + e + ")" }, "1")
		}},
		{"two subqueries per subquery, n levels", func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT " + e + "+" + e + ")" }, "1")
		}},
		{"10 terms at each of n levels", func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT " + e + strings.Repeat("+1", 10) + ")" }, "1")
		}},
		{"3 products at each of n levels", func(n int) string {
			return "SELECT " + nested(n, func(e string) string { return "(SELECT " + e + strings.Repeat("*@a", 3) + ")" }, "@a")
		}},
		{"n subqueries summed", func(n int) string { return "SELECT " + strings.TrimSuffix(strings.Repeat("(SELECT 1)+", n), "+") }},
		{"unary minus n deep", func(n int) string { return "SELECT " + strings.Repeat("-(", n) + "@a" + strings.Repeat(")", n) }},
		{"n terms", func(n int) string { return "SELECT @a" + strings.Repeat("+@a", n) }},
		{"n products", func(n int) string { return "SELECT @a" + strings.Repeat("*@a", n) }},
	} {
		allowed := 0
		for n := 1; n < 10000; n++ {
			stmt, err := sqlparser.Parse(sql.RemoveSpaceAndDelimiter(c.shape(n), ';'))
			if err != nil {
				t.Fatalf("%s, n=%d: %v", c.name, n, err)
			}
			if checkPlanningCost(stmt, len(c.shape(n))) != nil {
				break
			}
			allowed = n
		}
		if allowed == 0 {
			t.Errorf("%s: refused at n=1", c.name)
			continue
		}
		s := e.Open("a", 1, nil)
		start := time.Now()
		if _, err := s.Query(context.Background(), c.shape(allowed)); err != nil {
			t.Errorf("%s, n=%d (the largest allowed): %v", c.name, allowed, err)
		}
		took := time.Since(start)
		t.Logf("%s: n=%d answered in %v", c.name, allowed, took)
		if took > 5*time.Second {
			t.Errorf("%s, n=%d (the largest allowed): took %v", c.name, allowed, took)
		}
		refusedPromptly(t, s, fmt.Sprintf("%s, n=%d", c.name, allowed+1), c.shape(allowed+1))
		if c.name == scalarShape && allowed != maxScalarNesting {
			t.Errorf("%s: n=%d allowed, but the refusal says %d", c.name, allowed, maxScalarNesting)
		}
	}
}

const scalarShape = "scalar subqueries n deep"
