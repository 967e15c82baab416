package planner_test

import (
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestReads: the backend columns a plan reads (Plan.Reads,
// QueryPlan.Reads) are those of its aggregates, WHERE, GROUP BY keys and
// a key chosen by partition selection, a row expression's columns, a
// synopsis's column, every column of an interactive domain, and on a
// table with a privacy unit every declared column and the unit column;
// a WHERE no row satisfies reads none.
func TestReads(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	s := planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"}
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"SELECT COUNT(*) FROM pums", []string{}},
		{"SELECT AVG(income) FROM pums WHERE state = 'CA'", []string{"income", "st"}},
		{"SELECT MEDIAN(age) FROM pums WHERE sex = 1 OR state = 'NY'", []string{"age", "sex", "st"}},
		{"SELECT COUNT(*) FROM pums WHERE age = 1 AND age = 2", []string{}},
		{"SELECT SUM(age + income) FROM pums", []string{"age", "income"}},
		{"SELECT state, AVG(age) FROM pums WHERE sex = 1 GROUP BY state", []string{"age", "sex", "st"}},
		{"SELECT YEAR(day) AS y, COUNT(*) FROM pums GROUP BY y", []string{"dt"}},
		{"SELECT FLOOR(age / 10) * 10 AS b, SUM(income) FROM pums GROUP BY b", []string{"age", "income"}},
		{"SELECT name, COUNT(*) FROM pums WHERE sex = 0 GROUP BY name", []string{"nm", "sex"}},
		{"SELECT state, SUM(CASE WHEN sex = 1 THEN income END) FROM pums GROUP BY state", []string{"income", "sex", "st"}},
		{"SELECT COUNT(*) FROM people WHERE age BETWEEN 10 AND 20", []string{"age"}},
		{"SELECT COUNT(*) FROM survey WHERE age < 30", []string{"age", "sex", "st"}},
		{"SELECT COUNT(*) FROM visits", []string{"age", "income", "person_id", "site_src"}},
		{"SELECT site, COUNT(*) FROM visits GROUP BY site", []string{"age", "income", "person_id", "site_src"}},
	} {
		st, err := parser.Parse(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		var got []string
		switch st := st.(type) {
		case *sqlrewrite.Select:
			plan, err := p.Plan(st, s)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			got = plan.Reads()
		case *sqlrewrite.Query:
			qp, err := p.PlanQuery(st, s)
			if err != nil {
				t.Fatalf("%s: %v", c.sql, err)
			}
			got = qp.Reads()
		default:
			t.Fatalf("%s: parsed as %T", c.sql, st)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: reads %q, want %q", c.sql, got, c.want)
		}
	}
}
