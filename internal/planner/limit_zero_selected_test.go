package planner_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLimitZeroOverSelectedKey: LIMIT 0 leaves no row whatever the data,
// with a key chosen by partition selection as with a declared one, so the
// statement is free and EXPLAIN says so (it was planned, and a projection
// of it charged, at full ε and δ: an independent review).
func TestLimitZeroOverSelectedKey(t *testing.T) {
	cat := testCatalog()
	parser, p := sqlrewrite.NewParser(cat), planner.New(cat)
	for _, sql := range []string{
		"SELECT * FROM (SELECT state, COUNT(*) AS n FROM pums GROUP BY state) s LIMIT 0",
		"SELECT * FROM (SELECT name, COUNT(*) AS n FROM pums GROUP BY name) s LIMIT 0",
	} {
		// Over one table, LIMIT 0 is a zero-row probe the catalog engine
		// answers (EXPLAIN says so); over a derived table, it is planned.
		st, err := parser.Parse("EXPLAIN " + sql)
		if err != nil {
			t.Fatal(err)
		}
		qp, err := p.PlanQuery(st.(*sqlrewrite.Explain).Query, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		if !qp.Empty || qp.Cost.Epsilon != 0 || qp.Cost.Delta != 0 {
			t.Errorf("%s: Empty %v, cost ε %g δ %g; want no row and nothing spent", sql, qp.Empty, qp.Cost.Epsilon, qp.Cost.Delta)
		}
	}
	for _, sql := range []string{
		"SELECT state, COUNT(*) FROM pums GROUP BY state LIMIT 0",
		"SELECT name, COUNT(*) FROM pums GROUP BY name LIMIT 0",
	} {
		st, err := parser.Parse("EXPLAIN " + sql)
		if err != nil {
			t.Fatal(err)
		}
		if ex := st.(*sqlrewrite.Explain); ex.ZeroRow != "pums" {
			t.Errorf("EXPLAIN %s: %+v, want the zero-row probe of pums", sql, ex)
		}
	}
}
