package planner

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// selectionLaws are ln P[keep] and ln P[drop] of a key with n = 0..hi
// units at scale beta and threshold T: P[Z ≥ T-n] for n ≥ 1; a key with
// no unit is never read, so never kept.
func selectionLaws(beta float64, threshold, hi int64) (keep, drop []float64) {
	keep, drop = make([]float64, hi+2), make([]float64, hi+2)
	keep[0] = math.Inf(-1)
	for n := int64(1); n <= hi+1; n++ {
		keep[n], drop[n] = logTail(beta, threshold-n), logBelow(beta, threshold-n)
	}
	return keep, drop
}

// worstUnitSelection is the largest exact δ(ε) (privtest.ExactLoss's
// MassAbove, both directions) between neighbours that differ by one unit
// counted toward g keys, over every multiset of the smaller neighbour's
// counts n_1 ≤ … ≤ n_g in [0, hi] (0: the key is absent there and never
// released; the larger neighbour has n_i + 1), with the counts attaining
// it. The output is the released subset of the g touched keys (the other
// keys have the same law on both); its law is the product of the keys'
// independent keep/drop draws, 2^g cells.
func worstUnitSelection(t *testing.T, beta float64, threshold int64, g int, hi int64, epsilon float64) (float64, []int64) {
	t.Helper()
	keep, drop := selectionLaws(beta, threshold, hi)
	lnP, lnQ := make([]float64, 1<<g), make([]float64, 1<<g)
	worst, at := -1.0, []int64(nil)
	n := make([]int64, g)
	var walk func(i int, from int64)
	walk = func(i int, from int64) {
		if i == g {
			for s := range 1 << g {
				lnP[s], lnQ[s] = 0, 0
				for i, c := range n {
					if s>>i&1 == 1 {
						lnP[s] += keep[c]
						lnQ[s] += keep[c+1]
					} else {
						lnP[s] += drop[c]
						lnQ[s] += drop[c+1]
					}
				}
			}
			l, err := privtest.ExactLoss(lnP, lnQ, epsilon)
			if err != nil {
				t.Fatal(err)
			}
			if l.MassAbove > worst {
				worst, at = l.MassAbove, append([]int64(nil), n...)
			}
			return
		}
		for c := from; c <= hi; c++ {
			n[i] = c
			walk(i+1, c)
		}
	}
	walk(0, 0)
	return worst, at
}

// TestUnitPartitionSelectionExact is the exact privacy check of partition
// selection on a unit table: one neighbour step adds or removes a unit
// counted once toward each of g keys (UnitBound.Key, KeyCounts at one row
// per unit). For every multiset of the g keys' unit counts from 0 (the
// key exists only in the larger neighbour) to well past the threshold
// (T + 3β; above T the keep probabilities are within e^-3 of 1 and
// the drop probabilities' ratio is the constant e^(1/β)), the law of the released
// subset is computed on both neighbours and the (ε, δ) hockey-stick
// divergence (privtest.ExactLoss, both directions) must be at most the
// selection's δ at its ε. Mutations fail it: the noise scale cut by 25%
// (same threshold), g ignored (each key calibrated at the whole ε and δ,
// as on a row-level table), and the threshold two below (one below the
// smallest admissible), which shows the check is tight.
func TestUnitPartitionSelectionExact(t *testing.T) {
	col := &catalog.Column{Name: "site", Type: catalog.Text}
	for _, c := range []struct {
		eps, delta float64
		g          int
	}{{1, 1e-6, 2}, {0.5, 1e-5, 3}, {2, 1e-6, 4}, {0.25, 1e-7, 2}, {4, 1e-9, 3}} {
		name := fmt.Sprintf("ε=%g δ=%g g=%d", c.eps, c.delta, c.g)
		ps, err := newPartitionSelection(col, c.eps, c.delta, int64(c.g))
		if err != nil {
			t.Fatal(err)
		}
		beta := ps.Scale()
		if beta < float64(c.g)/c.eps {
			t.Errorf("%s: scale %g below g/ε = %g", name, beta, float64(c.g)/c.eps)
		}
		hi := ps.Threshold + int64(math.Ceil(3*beta))
		worst, at := worstUnitSelection(t, beta, ps.Threshold, c.g, hi, c.eps)
		t.Logf("%s: β = %.4g, T = %d, one unit's key released with p = %.3g; worst δ(ε) = %.4g at counts %v (%.2f of δ)",
			name, beta, ps.Threshold, ps.KeepProbability(1), worst, at, worst/c.delta)
		if worst > c.delta*(1+privtest.LossTolerance) {
			t.Errorf("%s: exact δ(ε) = %g at counts %v exceeds δ", name, worst, at)
		}
		// Power: one step below the smallest admissible threshold (T-2)
		// the same enumeration finds δ(ε) above δ.
		if m, at := worstUnitSelection(t, beta, ps.Threshold-2, c.g, hi, c.eps); !(m > c.delta) {
			t.Errorf("%s: threshold %d (mutation) not detected: δ(ε) = %g at %v", name, ps.Threshold-2, m, at)
		}
		if p := ps.KeepProbability(1); p > ps.KeyDelta || p != dlapTail(beta, ps.Threshold-1) {
			t.Errorf("%s: a key of one unit is kept with probability %g (share δ/g = %g)", name, p, ps.KeyDelta)
		}
		// Mutation: the noise scale cut by 25%, the same threshold.
		if m, at := worstUnitSelection(t, 0.75*beta, ps.Threshold, c.g, hi, c.eps); !(m > c.delta) {
			t.Errorf("%s: mutation (scale cut 25%%) not detected: δ(ε) = %g at %v", name, m, at)
		}
		// Mutation: g ignored, each key at the whole ε and δ.
		one, err := newPartitionSelection(col, c.eps, c.delta, 1)
		if err != nil {
			t.Fatal(err)
		}
		hiOne := one.Threshold + int64(math.Ceil(3*one.Scale()))
		if m, at := worstUnitSelection(t, one.Scale(), one.Threshold, c.g, hiOne, c.eps); !(m > c.delta) {
			t.Errorf("%s: mutation (calibrated for g = 1) not detected: δ(ε) = %g at %v", name, m, at)
		}
	}
}

// TestUnitPartitionSelectionFewUnits: a key contributed by fewer units
// than the threshold is not released, however many rows those units have
// (the count is of units). At ε = 1, δ = 1e-9, g = 3 (T = 70), keys of
// 1, 2 and 5 units are drawn 20,000 times each from a seeded source and
// never kept: the chance of any release is at most 20,000·Σ P[keep n] <
// 1e-4 (the false-rejection rate); a key of T + 30 units is kept in at
// least 99% of the draws (P[keep] ≥ 1 - e^(-30/β)/(1+r) > 0.999; false
// rejection below 1e-6 by a binomial tail).
func TestUnitPartitionSelectionFewUnits(t *testing.T) {
	col := &catalog.Column{Name: "site", Type: catalog.Text}
	ps, err := newPartitionSelection(col, 1, 1e-9, 3)
	if err != nil {
		t.Fatal(err)
	}
	src := privtest.Seeded(t, 0x5e1ec7)
	const draws = 20000
	bound := 0.0
	for _, n := range []int64{1, 2, 5} {
		bound += draws * ps.KeepProbability(n)
		for range draws {
			if ps.Keep(src, n) {
				t.Fatalf("a key of %d units (threshold %d) was released", n, ps.Threshold)
			}
		}
	}
	if bound > 1e-4 {
		t.Errorf("the stated false-rejection rate %g exceeds 1e-4 (T = %d)", bound, ps.Threshold)
	}
	kept := 0
	big := ps.Threshold + 30
	for range draws {
		if ps.Keep(src, big) {
			kept++
		}
	}
	if kept < draws*99/100 {
		t.Errorf("a key of %d units was kept %d of %d times", big, kept, draws)
	}
	t.Logf("T = %d, β = %.3g: keys of 1, 2, 5 units never kept in %d draws each (bound %.2g); %d units kept %d times",
		ps.Threshold, ps.Scale(), draws, bound, big, kept)
}
