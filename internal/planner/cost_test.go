package planner_test

import (
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestChargedCostCoversShares checks, in exact rationals, that a
// statement is charged at least the ε and δ its releases are calibrated
// for, for δ and ε that do not split evenly in binary: the float sum of
// the δ shares could round below their exact total (δ = 10⁻⁷ over five
// releases summed to 9.999999999999998e-08; an independent review), and
// so could the shares of conditional aggregates' parts.
func TestChargedCostCoversShares(t *testing.T) {
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "a", Source: "a", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "b", Source: "b", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "c", Source: "c", Type: catalog.Integer, Lower: &lo, Upper: &hi}}}}}
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	rat := func(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
	statements := map[string]string{
		"five ptr medians":        "SELECT MEDIAN(a), MEDIAN(b), MEDIAN(c), MEDIAN(a + b), MEDIAN(b + c) FROM t",
		"conditional aggregates":  "SELECT MEDIAN(CASE WHEN c > 3 THEN a END), MEDIAN(CASE WHEN c > 5 THEN b END), MEDIAN(CASE WHEN a > 7 THEN c END) FROM t",
		"three ptr medians, mean": "SELECT MEDIAN(a), MEDIAN(b), MEDIAN(c), AVG(a) FROM t",
	}
	checked := 0
	for name, sql := range statements {
		st, err := parser.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, delta := range []float64{1e-7, 1e-6, 3e-9, 7e-5, 2e-6, 5e-8, 1.1e-5} {
			for _, epsilon := range []float64{0.1, 0.3, 1, 0.7, 0.05, 0.2, 0.4, 0.6, 0.9, 1.3, 2, 0.15} {
				s := planner.Settings{Epsilon: epsilon, Delta: delta, Mechanism: "ptr"}
				var releases []*planner.Release
				var cost planner.Cost
				switch q := st.(type) {
				case *sqlrewrite.Select:
					plan, err := p.Plan(q, s)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					releases, cost = plan.Releases, plan.Cost
				case *sqlrewrite.Query:
					qp, err := p.PlanQuery(q, s)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					cost = qp.Cost
					if qp.Base != nil {
						releases = qp.Base.Releases
					}
					for _, part := range qp.Parts {
						releases = append(releases, part.Plan.Releases...)
					}
				default:
					t.Fatalf("%s: parsed as %T", name, st)
				}
				if len(releases) < 3 {
					t.Fatalf("%s: %d releases, want at least 3", name, len(releases))
				}
				sumE, sumD := new(big.Rat), new(big.Rat)
				for _, r := range releases {
					sumE.Add(sumE, rat(r.Epsilon))
					sumD.Add(sumD, rat(r.Delta))
				}
				if sumE.Cmp(rat(cost.Epsilon)) > 0 || sumD.Cmp(rat(cost.Delta)) > 0 {
					t.Errorf("%s at ε %v δ %v: releases use ε %s δ %s, charged %v, %v", name, epsilon, delta,
						sumE.FloatString(25), sumD.FloatString(30), cost.Epsilon, cost.Delta)
				}
				if cost.Epsilon > epsilon || cost.Delta > delta {
					t.Errorf("%s at ε %v δ %v: charged more than asked, %v, %v", name, epsilon, delta, cost.Epsilon, cost.Delta)
				}
				checked++
			}
		}
	}
	t.Logf("%d plans charge at least what their releases use", checked)
}
