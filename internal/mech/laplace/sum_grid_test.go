package laplace

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// TestSensitivitiesRoundUp: the float sensitivities computed from exact
// integers are never below them (squareUp rounded to nearest before, and
// fell below Top² for Top = 2^30 − 1).
func TestSensitivitiesRoundUp(t *testing.T) {
	for _, top := range []int64{1<<30 - 1, 1<<30 - 3, 999999937, 1 << 30, 4095} {
		want := new(big.Int).Mul(big.NewInt(top), big.NewInt(top))
		if got, _ := new(big.Float).SetFloat64(squareUp(top)).Int(nil); got.Cmp(want) < 0 {
			t.Errorf("squareUp(%d) = %v, below %v", top, got, want)
		}
	}
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4095}, {Lower: -3, Upper: 10}, {Lower: 1.7e9, Upper: 1.7e9 + 3600}, {Lower: -1e15 - 0.3, Upper: 1}, {Lower: 0.1, Upper: 0.7}} {
		g, err := mech.NewGrid(b)
		if err != nil {
			t.Fatal(err)
		}
		top := new(big.Rat).Add(new(big.Rat).SetFloat64(g.Lower), new(big.Rat).Mul(new(big.Rat).SetInt64(g.Top), new(big.Rat).SetFloat64(g.Unit)))
		got := new(big.Rat).SetFloat64(gridSumSensitivity(g))
		if got.Cmp(top.Abs(top)) < 0 || got.Cmp(new(big.Rat).Abs(new(big.Rat).SetFloat64(g.Lower))) < 0 {
			t.Errorf("%v: sensitivity %v below |L| or |L + Top·Unit| = %v", b, got.FloatString(6), top.FloatString(6))
		}
		if s := gridSumSensitivity(g); s > math.Max(math.Abs(b.Lower), math.Abs(b.Upper))+g.Unit {
			t.Errorf("%v: sensitivity %v above max(|L|, |U|) + Unit", b, s)
		}
	}
}

// worstGridSumLoss is the largest exact loss relative to ε of the grid sum
// over add/remove neighbours on several bounds (an hour of Unix seconds,
// where a float sum's rounding is largest next to the sensitivity, and
// bounds either side of 0) and ε, with the noise built for cut × the
// sensitivity. The release is γ·(m + Z), m the integer nearest the exact
// sum over γ, Z discrete Laplace of scale β: the worst log-ratio is
// |m − m'|/β.
func worstGridSumLoss(t *testing.T, cut float64) (worst, eps float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(23, 1))
	worstRatio := 0.0
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4095}, {Lower: -3, Upper: 10}, {Lower: -10, Upper: -2.5}, {Lower: 1.7e9, Upper: 1.7e9 + 3600}} {
		g, err := mech.NewGrid(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []float64{0.05, 0.5, 1, 3} {
			l, err := noise.NewLaplace(gridSumSensitivity(g)*cut, e)
			if err != nil {
				t.Fatal(err)
			}
			gamma := l.Granularity()
			beta := l.Scale() / gamma
			for _, p := range privtest.BoundedNeighbours(b.Lower, b.Upper, rng) {
				_, s0 := g.Indices(p[0])
				_, s1 := g.Indices(p[1])
				d := new(big.Int).Sub(nearestOnGrid(gridSumOf(g, s0), gamma), nearestOnGrid(gridSumOf(g, s1), gamma))
				steps, _ := new(big.Float).SetInt(d.Abs(d)).Float64()
				if r := steps / beta / e; r > worstRatio {
					worstRatio, worst, eps = r, steps/beta, e
				}
			}
		}
	}
	return worst, eps
}

// TestSumOnGridExactPrivacy: the worst exact log-ratio is at most ε and
// reaches 0.9ε (the pairs reach the sensitivity); with the noise cut by
// 25% it exceeds ε (the check has power).
func TestSumOnGridExactPrivacy(t *testing.T) {
	worst, eps := worstGridSumLoss(t, 1)
	if worst > eps || worst < 0.9*eps {
		t.Errorf("worst log-ratio %v, want in [0.9ε, ε] for ε = %v", worst, eps)
	}
	if worst, eps := worstGridSumLoss(t, 0.75); worst <= eps {
		t.Errorf("noise cut by 25%%: worst log-ratio %v ≤ ε = %v, the check has no power", worst, eps)
	}
}

// TestSumOnGridRelease: the value released is n·L + Unit·Σk (hand-checked
// on integers, where the grid is exact: 3 + 4 + 10 on [0, 10]), and over
// 20000 seeded releases on an hour of Unix seconds the mean absolute
// error around the grid sum is the Laplace scale k·max(|L|, |U|)/ε (to a
// grid step) within 5 standard errors (false rejection ≈ 6·10⁻⁷ each).
func TestSumOnGridRelease(t *testing.T) {
	rng := privtest.Seeded(t, 29)
	ints := mech.Bounds{Lower: 0, Upper: 10}
	g, err := mech.NewGrid(ints)
	if err != nil {
		t.Fatal(err)
	}
	_, s := g.Indices([]float64{3, 4, 10, 12})
	if got := gridSumOf(g, s); got.Cmp(big.NewRat(27, 1)) != 0 {
		t.Errorf("grid sum of 3, 4, 10, 12 on [0, 10]: got %v, want 27", got)
	}
	b := mech.Bounds{Lower: 1.7e9, Upper: 1.7e9 + 3600}
	xs := []float64{1.7e9, 1.7e9 + 1, 1.7e9 + 1800.5, 1.7e9 + 3599, 1.7e9 + 3600, 1.8e9}
	if g, err = mech.NewGrid(b); err != nil {
		t.Fatal(err)
	}
	_, sums := g.Indices(xs)
	truth, _ := gridSumOf(g, sums).Float64()
	const eps, trials = 0.8, 20000
	for _, k := range []int64{1, 3} {
		checkMeanAbsError(t, fmt.Sprintf("k=%d", k), trials, truth, float64(k)*b.Upper/eps, func() (Noisy, error) {
			return ReleaseUnitSumOnGrid(rng, b, g, sums, k, eps)
		})
	}
}
