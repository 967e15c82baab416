package planner_test

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestUnitGroupsSplitByPublicGroups is the exact privacy check of the
// per-group split of a grouped statement on a unit table (sessions:
// k = 3 rows and g = 12 groups per person), with the releases the planner
// makes: each group's COUNT(*) is released with discrete Laplace noise of
// its release's ε and k (laplace.ReleaseUnitCount). The worst neighbour
// adds a person with k rows in every group they can reach, min(n, g) of
// the n public groups, shifting each such group's count by k; the other
// groups' laws are equal on both neighbours. The exact loss of the joint
// law must be at most the statement's ε, and equal to it: with fewer
// public groups than g the split is by their number n (the statement at
// ε/12 per group used n/12 of what it was charged), and with more by g.
func TestUnitGroupsSplitByPublicGroups(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	for _, c := range []struct {
		query   string
		groups  int
		perUnit int64 // min(groups, 12)
	}{
		{"SELECT FLOOR(age / 1000) * 1000 AS a, COUNT(*) FROM sessions GROUP BY a", 1, 1},
		{"SELECT cat, COUNT(*) FROM sessions GROUP BY cat", 2, 2},
		{"SELECT FLOOR(age / 50) * 50 AS a, COUNT(*) FROM sessions GROUP BY a", 3, 3},
		{"SELECT YEAR(day), cat, COUNT(*) FROM sessions GROUP BY 1, 2", 4, 4},
		{"SELECT YEAR(day), MONTH(day), COUNT(*) FROM sessions GROUP BY 1, 2", 24, 12},
	} {
		for _, eps := range []float64{0.1, 1, 3} {
			st, err := parser.Parse(c.query)
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			qp, err := p.PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: eps, Mechanism: "auto"})
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			if len(qp.Groups) != c.groups || qp.GroupsPerUnit != c.perUnit || qp.Cost.Epsilon != eps || len(qp.Base.Releases) != 1 {
				t.Fatalf("%s: %d groups, %d per unit, cost %v, %d releases; want %d, %d, %v, 1",
					c.query, len(qp.Groups), qp.GroupsPerUnit, qp.Cost.Epsilon, len(qp.Base.Releases), c.groups, c.perUnit, eps)
			}
			r := qp.Base.Releases[0]
			d, err := noise.NewDiscreteLaplace(r.RowsPerUnit, r.Epsilon)
			if err != nil {
				t.Fatal(err)
			}
			// The groups the person reaches; the others cancel.
			lnP, lnQ := []float64{0}, []float64{0}
			for range c.perUnit {
				p1, q1 := privtest.DiscreteShiftLaws(d.Scale(), float64(r.RowsPerUnit))
				var nextP, nextQ []float64
				for i := range lnP {
					for j := range p1 {
						nextP = append(nextP, lnP[i]+p1[j])
						nextQ = append(nextQ, lnQ[i]+q1[j])
					}
				}
				lnP, lnQ = nextP, nextQ
			}
			l, err := privtest.ExactLoss(lnP, lnQ, eps)
			if err != nil {
				t.Fatal(err)
			}
			l.Check(t, c.query, eps, 0)
			if math.Abs(l.Worst-eps) > privtest.LossTolerance*eps {
				t.Errorf("%s at ε = %v: a person with %d rows in each of %d groups loses %v, want the statement's ε (each group at ε = %v)",
					c.query, eps, r.RowsPerUnit, c.perUnit, l.Worst, r.Epsilon)
			}
		}
	}
}
