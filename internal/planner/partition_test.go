package planner

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
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
		worst := func(beta float64, threshold int64) (ratio, newKey float64) {
			for n := int64(1); n < threshold+int64(40*beta)+40; n++ {
				keep := logTail(beta, threshold-n-1) - logTail(beta, threshold-n)
				drop := logBelow(beta, threshold-n) - logBelow(beta, threshold-n-1)
				ratio = math.Max(ratio, math.Max(keep, drop))
			}
			return ratio, dlapTail(beta, threshold-1)
		}
		ratio, newKey := worst(beta, ps.Threshold)
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
		if mutant, _ := worst(0.75*beta, ps.Threshold); !(mutant > c.eps) {
			t.Errorf("ε = %g: mutation (scale cut 25%%) not detected: log-ratio %g", c.eps, mutant)
		}
		if _, mutant := worst(beta, ps.Threshold-2); !(mutant > c.delta) {
			t.Errorf("ε = %g, δ = %g: mutation (threshold %d) not detected: %g", c.eps, c.delta, ps.Threshold-2, mutant)
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
