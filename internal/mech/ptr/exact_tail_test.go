package ptr

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// ptrTrimmedTailExact returns the exact δ_tail of tm: the largest, over
// the log position p of a passed spread bin [k − o, k + 1 − o] (in bin
// units; k − o = 0 without loss of generality, the law is shift-invariant
// on the grid), of the probability that the released scale
// s = b^y, y = g·(round(p/g) + Y), Y ~ DLap(β) on the integers, gives
// s·N^κ < U = b^(k+1−o), i.e. y < 1 − κ·log_b N: the event on which the
// mean's noise is below its sensitivity. round(p/g)·g ≥ −g/2 for p ≥ 0,
// and p = 0 attains it (round(0) = 0 has y = g·Y; the bound −g/2 is the
// worst any rounding can do), so the event is Y < (1 − κ·log_b N)/g + ½
// at worst: P[Y ≥ m] = r^m/(1 + r), m = 1 − ⌈(1 − κ·log_b N)/g + ½⌉ ≥ 1,
// r = e^(−1/β), β = (⌊1/g⌋ + 1)/ε_step (noise.NewLaplace's integer
// sensitivity over ε: the scale release has sensitivity 1). The float evaluation of b^y and of the comparison is
// what the constructor's 2g margin covers; this is the exact grid law.
func ptrTrimmedTailExact(tm *TrimmedMean, size float64) float64 {
	c := tm.scale
	g, _ := ptrReleaseGrid(c.release)
	beta := (math.Floor(1/g) + 1) / tm.epsilon // the DLap's integer scale: sensitivity ⌊1/g⌋ + 1 grid steps
	logSize := math.Log(ptrSize(size)) / c.grid.w
	m := 1 - math.Ceil((1-tm.kappa*logSize)/g+0.5)
	r := math.Exp(-1 / beta)
	if m < 1 {
		return 1 - math.Pow(r, 1-m)/(1+r)
	}
	return math.Exp(-m/beta) / (1 + r)
}

// TestPTRTrimmedTailExact: the trimmed mean's δ_tail, which its δ
// composition charges (2δ0 + δ_tail ≤ Delta) and no step check covers, is
// computed exactly on the release grid and is at most the closed form the
// constructor uses (and at least half of it: the closed form is tight), at
// sizes and ε where κ is derived from Delta. Mutation: with κ cut by 25%
// (the mean's noise scale N^κ/c_min cut by a factor N^(κ/4)) the exact
// δ_tail exceeds Delta/2.
func TestPTRTrimmedTailExact(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	for _, tc := range []struct{ epsilon, delta, size float64 }{
		{4, 1e-6, 1e4}, {1, 1e-3, 5000}, {8, 1e-9, 1e5}, {2, 1e-4, 2e4},
	} {
		p := Params{Epsilon: tc.epsilon, Delta: tc.delta, Size: tc.size, Bounds: b}
		tm, err := NewTrimmedMean(p, 0.1, 0)
		if err != nil {
			t.Fatal(err)
		}
		exact := ptrTrimmedTailExact(tm, tc.size)
		t.Logf("(ε, δ) = (%v, %v), N = %v: κ = %.6f, δ_tail exact %.6g = claimed·(1 %+.3g) (Delta/2 = %.3g)",
			tc.epsilon, tc.delta, tc.size, tm.Kappa(), exact, exact/tm.DeltaTail()-1, tc.delta/2)
		if exact > tm.DeltaTail() || tm.DeltaTail() > tc.delta/2*(1+1e-12) || exact < tm.DeltaTail()/2 {
			t.Errorf("(ε, δ) = (%v, %v): δ_tail exact %v, claimed %v, want exact ≤ claimed ≤ Delta/2 and claimed ≤ 2·exact",
				tc.epsilon, tc.delta, exact, tm.DeltaTail())
		}
		cut := *tm
		cut.kappa *= 0.75
		if leak := ptrTrimmedTailExact(&cut, tc.size); leak <= tc.delta/2 {
			t.Errorf("(ε, δ) = (%v, %v): with κ cut by 25%% the exact δ_tail %v is still ≤ Delta/2: the check has no power", tc.epsilon, tc.delta, leak)
		}
	}
}
