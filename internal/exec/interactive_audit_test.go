package exec

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestAuditInstanceReleases audits what the creation of an interactive
// instance releases (releaseInstance), each at its share of the
// instance's ε as the plan gives it, on neighbouring histograms over X:
// two cells, 100 rows in the first against 101 (one row added). n̂ = max(n + Z, 1) is
// audited at CountEpsilon with the instance at ε = 10 (a share of 0.3), and
// the noisy count of cell 0 at RestEpsilon with the instance at ε = 1 (0.97),
// the histogram forced by the configuration. Both are discrete Laplace
// releases far from the clamp, so their tails carry the likelihood ratio
// e^(share) exactly. Mutation: ε·4/3 handed to either noise (by the
// executor or inside package histogram) fails its audit (lower bounds
// about 0.38 and 1.27). False rejections: each audit fails a correct
// release with probability at most 10⁻³ (privtest's 99.9% bound), the
// test at most 2·10⁻³; the seeds are fixed.
func TestAuditInstanceReleases(t *testing.T) {
	lo, hi := 0.0, 1.0
	in := &catalog.Interactive{Columns: []catalog.InteractiveColumn{{Name: "a", Edges: []float64{0, 1, 2}}},
		Alpha: 0.1, Beta: 0.05, PlannedQueries: 1000, Mechanism: catalog.InteractiveHistogram}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Interactive: in,
		Columns: []catalog.Column{{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hi}}}}}
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM t WHERE a = 0 OR a = 1")
	if err != nil {
		t.Fatal(err)
	}
	d, d2 := []int64{100, 0}, []int64{101, 0}
	for _, tc := range []struct {
		name    string
		epsilon float64
		claim   func(ip *planner.InteractivePlan) float64
		out     func(inst *interactiveInstance) float64
		edges   []float64
	}{
		{"noisy row count", 10, (*planner.InteractivePlan).CountEpsilon,
			func(inst *interactiveInstance) float64 { return float64(inst.header.NHat) }, privtest.IntegerEdges(75, 126)},
		{"noisy cell", 1, (*planner.InteractivePlan).RestEpsilon,
			func(inst *interactiveInstance) float64 { return float64(inst.header.Noisy[0]) }, privtest.IntegerEdges(90, 111)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in.Epsilon = tc.epsilon
			plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.1})
			if err != nil || plan.Interactive == nil || plan.Interactive.Predicate.Cells() != 2 {
				t.Fatalf("plan %v, %v: want an interactive plan over 2 cells", plan, err)
			}
			ip := plan.Interactive
			if ip.CountEpsilon()+ip.RestEpsilon() > tc.epsilon {
				t.Fatalf("shares %v + %v exceed the instance's ε = %v", ip.CountEpsilon(), ip.RestEpsilon(), tc.epsilon)
			}
			cfg := privtest.Config{Epsilon: tc.claim(ip), Samples: privtest.AuditSamples, Seed: privtest.Seed(t, 0xe7), Edges: tc.edges}
			privtest.Audit(t, cfg, func(src rand.Source, nb int) float64 {
				inst, err := releaseInstance(src, ip, [][]int64{d, d2}[nb], 0)
				if err != nil {
					t.Fatal(err)
				}
				return tc.out(inst)
			})
		})
	}
}
