package planner

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestPartitionSelectionExact is the exact privacy check of partition
// selection. From the closed-form law of the discrete Laplace it computes,
// for every count n ≥ 1 up to far beyond the threshold, the keep and drop
// probabilities of a key with n and n+1 rows and asserts their ratios are
// at most e^ε; and for a key absent from one neighbour (0 rows, never
// released) and with one row in the other, that the keep probability is
// at most δ. Mutations: with the noise scale cut by 25% the ratio bound
// fails, and with the threshold two below (one below the smallest
// admissible one) the δ bound fails.
func TestPartitionSelectionExact(t *testing.T) {
	col := &catalog.Column{Name: "k", Type: catalog.Text}
	for _, c := range []struct{ eps, delta float64 }{{0.05, 5e-8}, {0.5, 1e-6}, {1, 1e-6}, {2, 1e-9}, {5, 1e-3}, {20, 1e-5}} {
		ps, err := newPartitionSelection(col, c.eps, c.delta, 1)
		if err != nil {
			t.Fatal(err)
		}
		beta := ps.Scale()
		ratio, newKey := selectionWorst(beta, ps.Threshold)
		if got := ps.KeepProbability(1); got != newKey {
			t.Errorf("KeepProbability(1) = %g, want the closed form %g", got, newKey)
		}
		if ratio > c.eps*(1+1e-9) {
			t.Errorf("ε = %g: worst log-ratio %g > ε", c.eps, ratio)
		}
		if newKey > c.delta {
			t.Errorf("ε = %g, δ = %g: a new key with one row is released with probability %g > δ", c.eps, c.delta, newKey)
		}
		if ratio < c.eps*0.999 {
			t.Errorf("ε = %g: worst log-ratio %g is far below ε: the check has no power", c.eps, ratio)
		}
		if mutant, _ := selectionWorst(0.75*beta, ps.Threshold); !(mutant > c.eps) {
			t.Errorf("ε = %g: mutation (scale cut 25%%) not detected: log-ratio %g", c.eps, mutant)
		}
		if _, mutant := selectionWorst(beta, ps.Threshold-2); !(mutant > c.delta) {
			t.Errorf("ε = %g, δ = %g: mutation (threshold %d) not detected: %g", c.eps, c.delta, ps.Threshold-2, mutant)
		}
	}
}

// selectionWorst returns, for a key selected by n + Z ≥ threshold with
// Z ~ DLap(beta), the largest log-ratio of its keep or drop probabilities
// at n and n + 1 rows (n ≥ 1, up to far beyond the threshold) and the
// probability that a key with one row is kept (it is never kept with
// none): the key's exact (ε, δ).
func selectionWorst(beta float64, threshold int64) (ratio, newKey float64) {
	for n := int64(1); n < threshold+int64(40*beta)+40; n++ {
		keep := logTail(beta, threshold-n-1) - logTail(beta, threshold-n)
		drop := logBelow(beta, threshold-n) - logBelow(beta, threshold-n-1)
		ratio = math.Max(ratio, math.Max(keep, drop))
	}
	return ratio, dlapTail(beta, threshold-1)
}

// TestPlannedSelectionComposes is the exact check of what a statement
// grouped by a partition-selected key spends, as planned: the selection's
// exact per-key (ε, δ) from the noise it draws and its threshold
// (selectionWorst), times g, the keys one unit reaches (1 on a row-level
// table), plus the cost of the releases of the g groups a unit reaches,
// must be at most the statement's ε and δ. With an aggregate the
// selection gets half; alone, all. Mutations: ε·4/3 handed to the
// selection's noise by the planner, or to each group's releases, exceeds
// the statement's ε. Exact: no false rejections.
func TestPlannedSelectionComposes(t *testing.T) {
	lo, hi := 0.0, 100.0
	cols := []catalog.Column{{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi}}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: cols},
		{Name: "u", Source: "u", PrivacyUnit: "person", MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2, Columns: cols}}}
	p, parser := New(cat), sqlrewrite.NewParser(cat)
	for _, table := range []string{"t", "u"} {
		for _, sql := range []string{"SELECT name, COUNT(*), AVG(v) FROM %s GROUP BY name", "SELECT name FROM %s GROUP BY name"} {
			st, err := parser.Parse(fmt.Sprintf(sql, table))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ eps, delta float64 }{{0.1, 1e-6}, {1, 1e-6}, {3, 1e-9}} {
				qp, err := p.PlanQuery(st.(*sqlrewrite.Query), Settings{Epsilon: c.eps, Delta: c.delta, Mechanism: "auto"})
				if err != nil || qp.Selection == nil {
					t.Fatalf("%s: plan %v, %v", fmt.Sprintf(sql, table), qp, err)
				}
				g := float64(qp.Selection.KeysPerUnit)
				ratio, newKey := selectionWorst(qp.Selection.Scale(), qp.Selection.Threshold)
				eps, delta := g*ratio, g*newKey
				if qp.Base != nil {
					eps += g * qp.Base.Cost.Epsilon
					delta += g * qp.Base.Cost.Delta
				}
				if eps > c.eps*(1+1e-9) || delta > c.delta {
					t.Errorf("%s at ε = %v, δ = %v: selection and releases spend ε = %v, δ = %v", fmt.Sprintf(sql, table), c.eps, c.delta, eps, delta)
				}
			}
		}
	}
}

// logTail is ln P[Z ≥ m] for Z ~ DLap(β), in the log domain so that far
// tails do not underflow: ln P[Z ≥ m] = -m/β - ln(1+r) for m ≥ 1, and
// ln(1 - P[Z ≤ m-1]) with P[Z ≤ -j] = r^j/(1+r) otherwise.
func logTail(beta float64, m int64) float64 {
	r := math.Exp(-1 / beta)
	if m >= 1 {
		return -float64(m)/beta - math.Log1p(r)
	}
	return math.Log1p(-math.Exp(-float64(1-m)/beta - math.Log1p(r)))
}

// logBelow is ln P[Z < m] = ln P[Z ≥ 1-m] by symmetry.
func logBelow(beta float64, m int64) float64 { return logTail(beta, 1-m) }
