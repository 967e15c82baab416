package planner_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestOuterLimitLeavesNoRow: an outer query's LIMIT 0, or an OFFSET past
// the one row an outer query without keys has, leaves no row whatever the
// data, so the statement is free (it was charged the grouped subquery's
// releases: a review); with outer keys, how many rows an OFFSET skips
// depends on the released values, so it is planned and charged.
func TestOuterLimitLeavesNoRow(t *testing.T) {
	cat := testCatalog()
	parser, p := sqlrewrite.NewParser(cat), planner.New(cat)
	const sub = "(SELECT state, COUNT(*) AS n FROM pums GROUP BY state) s"
	for sql, empty := range map[string]bool{
		"SELECT COUNT(*) FROM " + sub + " LIMIT 0":                        true,
		"SELECT COUNT(*), SUM(n) FROM " + sub + " LIMIT 5 OFFSET 1":       true,
		"SELECT COUNT(*) FROM " + sub + " LIMIT 1":                        false,
		"SELECT n, COUNT(*) FROM " + sub + " GROUP BY n LIMIT 0":          true,
		"SELECT n, COUNT(*) FROM " + sub + " GROUP BY n LIMIT 1 OFFSET 1": false,
	} {
		st, err := parser.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		qp, err := p.PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if free := qp.Cost.Epsilon == 0 && qp.Cost.Delta == 0; qp.Empty != empty || free != empty {
			t.Errorf("%s: Empty %v, cost ε %g δ %g; want Empty %v", sql, qp.Empty, qp.Cost.Epsilon, qp.Cost.Delta, empty)
		}
	}
}
