package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Exact privacy check of releaseSumAround. Its output is γ·(m + Z) with γ
// the Laplace granularity, m = round(f(D)/γ) and Z discrete Laplace of
// scale β on the integers (noise.Laplace): the law on γℤ is
// P(j) ∝ exp(−|j − m|/β) with a normalising constant that does not depend
// on m, so the worst log-ratio of the output laws on neighbours D, D' is
// exactly |m − m'|/β.

// aroundLoss returns the exact worst log-ratio of releaseSumAround's
// (squares false) or releaseSquaresAround's (squares true) output laws on
// d and d2 for centre c, their noise scale multiplied by cut. The released
// value is computed as the functions compute it, from the summary.
func aroundLoss(t *testing.T, b mech.Bounds, c float64, d, d2 []float64, epsilon, cut float64, squares bool) float64 {
	t.Helper()
	sens := sensitivityAround(b, c)
	if squares {
		sens = exact.RoundUp(sens * sens)
	}
	l, err := noise.NewLaplace(sens*cut, epsilon)
	if err != nil {
		t.Fatal(err)
	}
	f := func(xs []float64) float64 {
		s := summaryOf(b, xs)
		n := float64(s.Count)
		if squares {
			dd := sensitivityAround(b, c)
			return mech.Clamp(s.SumSquares-2*c*s.Sum+n*c*c, 0, n*dd*dd)
		}
		return mech.Clamp(s.Sum-n*c, n*(b.Lower-c), n*(b.Upper-c))
	}
	gamma := l.Granularity()
	beta := l.Scale() / gamma
	return math.Abs(math.Round(f(d)/gamma)-math.Round(f(d2)/gamma)) / beta
}

// summaryOf is the database's summary of xs clamped to b.
func summaryOf(b mech.Bounds, xs []float64) Summary {
	var s Summary
	for _, x := range xs {
		v := b.Clamp(x)
		s.Count++
		s.Sum += v
		s.SumSquares += v * v
	}
	return s
}

// worstAroundLoss is the largest exact loss (relative to ε) over every
// pair, centre in a spread of public centres, and ε.
func worstAroundLoss(t *testing.T, cut float64, squares bool) (worst, eps float64) {
	rng := rand.New(rand.NewPCG(15, 1))
	worstRatio := 0.0
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4095}, {Lower: -3, Upper: 10}, {Lower: 0.5, Upper: 0.75}} {
		pairs := privtest.BoundedNeighbours(b.Lower, b.Upper, rng)
		for _, c := range []float64{b.Lower, b.Lower + (b.Upper-b.Lower)/7, b.Mid(), b.Upper - 1e-6, b.Upper} {
			for _, e := range []float64{0.05, 0.5, 1, 3} {
				for _, p := range pairs {
					loss := aroundLoss(t, b, c, p[0], p[1], e, cut, squares)
					if r := loss / e; r > worstRatio {
						worstRatio, worst, eps = r, loss, e
					}
				}
			}
		}
	}
	return worst, eps
}

// TestExactPrivacyAround: for the sum and the sum of squares around a
// centre, the worst log-ratio over every pair, centre, bounds and ε is at
// most ε.
func TestExactPrivacyAround(t *testing.T) {
	for _, squares := range []bool{false, true} {
		worst, eps := worstAroundLoss(t, 1, squares)
		if worst > eps*(1+1e-12) {
			t.Fatalf("squares=%v: worst log-ratio %v exceeds ε = %v", squares, worst, eps)
		}
		t.Logf("squares=%v: worst log-ratio %.6g at ε = %g", squares, worst, eps)
	}
}

// TestExactCheckCatchesReducedAroundNoise is the mutation check: with the
// sensitivity (so the noise scale) cut by 25% the same exact check finds a
// pair whose log-ratio exceeds ε, for both releases.
func TestExactCheckCatchesReducedAroundNoise(t *testing.T) {
	for _, squares := range []bool{false, true} {
		worst, eps := worstAroundLoss(t, 0.75, squares)
		if worst <= eps {
			t.Fatalf("squares=%v, noise cut by 25%%: worst log-ratio %v ≤ ε = %v, the check has no power", squares, worst, eps)
		}
	}
}

// TestVarianceAround checks hand-computed values: the sum of squares
// around a centre and the derived variance, which does not depend on the
// centre, and its clamping.
func TestVarianceAround(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	xs := []float64{1, 3, 11} // clamped: 1, 3, 10; mean 14/3, VAR_POP = (1+9+100)/3 − (14/3)² = 110/3 − 196/9 = 134/9
	s := summaryOf(b, xs)
	src := noise.NewStream(2)
	for _, c := range []float64{0, 2, 5, 10} {
		sum, _, err := releaseSumAround(src, b, c, s, 100)
		if err != nil {
			t.Fatal(err)
		}
		sq, _, err := releaseSquaresAround(src, b, c, s, 100)
		if err != nil {
			t.Fatal(err)
		}
		got := varianceAround(b, sum, sq, 3)
		if math.Abs(got-134.0/9) > 5 {
			t.Errorf("centre %v: variance %v, want ≈ 134/9", c, got)
		}
		if m := meanAround(b, c, sum, 3); math.Abs(m-14.0/3) > 1 {
			t.Errorf("centre %v: mean %v, want ≈ 14/3", c, m)
		}
	}
	if got := varianceAround(b, 0, -5, 3); got != 0 {
		t.Errorf("negative variance not clamped to 0: %v", got)
	}
	if got := varianceAround(b, 0, 1e9, 3); got != 25 {
		t.Errorf("variance above ((U−L)/2)² not clamped: %v", got)
	}
}

// TestMeanAround checks hand-computed values: the centred sum, its
// sensitivity, and the derived mean with its clamping.
func TestMeanAround(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	for _, c := range []struct{ centre, want float64 }{{2, 8}, {5, 5}, {10, 10}} {
		if got := sensitivityAround(b, c.centre); got < c.want || got > c.want*(1+1e-15) {
			t.Errorf("D(%v) = %v, want %v rounded up", c.centre, got, c.want)
		}
	}
	if got := meanAround(b, 2, 6, 4); got != 3.5 {
		t.Errorf("mean = %v, want 2 + 6/4 = 3.5", got)
	}
	if got := meanAround(b, 2, -40, 4); got != 0 {
		t.Errorf("mean = %v, want clamped to 0", got)
	}
	if got := meanAround(b, 9, 5, 0); got != 10 {
		t.Errorf("mean = %v, want 9 + 5/1 clamped to 10", got)
	}
	// With a tiny scale the release is the centred sum: {1, 3, 11→10} around 2.
	src := noise.NewStream(1)
	v, _, err := releaseSumAround(src, b, 2, summaryOf(b, []float64{1, 3, 11}), 100)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v-8) > 1 {
		t.Errorf("centred sum = %v, want (1−2)+(3−2)+(10−2) = 8", v)
	}
	if _, _, err := releaseSumAround(src, b, 11, Summary{}, 1); err == nil {
		t.Error("centre outside the bounds accepted")
	}
}
