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

// centredExact returns Σ(k − Top/2) or Σ(k − Top/2)² of xs on g, exactly.
func centredExact(g mech.Grid, xs []float64, squares bool) *big.Rat {
	total := new(big.Rat)
	for _, x := range xs {
		d := new(big.Rat).SetFrac(big.NewInt(2*g.Index(x)-g.Top), big.NewInt(2))
		if squares {
			d.Mul(d, d)
		}
		total.Add(total, d)
	}
	return total
}

// worstCentredLoss is the largest exact loss relative to ε of the grid
// centred sum (or sum of squares) over add/remove neighbours on several
// bounds (the last an hour of Unix seconds, where the float forms lost
// ε many times over) and ε, with the noise built for cut × the
// sensitivity. The release is γ·(m + Z), m the integer nearest f/γ, Z
// discrete Laplace of scale β, so the worst log-ratio is |m − m'|/β.
func worstCentredLoss(t *testing.T, cut float64, squares bool) (worst, eps float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(19, 1))
	worstRatio := 0.0
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4095}, {Lower: -3, Upper: 10}, {Lower: 1.7e9, Upper: 1.7e9 + 3600}} {
		g, err := mech.NewGrid(b)
		if err != nil {
			t.Fatal(err)
		}
		sens := float64(g.Top) / 2
		if squares {
			sens = squareUp(g.Top) / 4
		}
		for _, e := range []float64{0.05, 0.5, 1, 3} {
			l, err := noise.NewLaplace(sens*cut, e)
			if err != nil {
				t.Fatal(err)
			}
			gamma := l.Granularity()
			beta := l.Scale() / gamma
			for _, p := range privtest.BoundedNeighbours(b.Lower, b.Upper, rng) {
				d := new(big.Int).Sub(nearestOnGrid(centredExact(g, p[0], squares), gamma), nearestOnGrid(centredExact(g, p[1], squares), gamma))
				steps, _ := new(big.Float).SetInt(d.Abs(d)).Float64()
				if r := steps / beta / e; r > worstRatio {
					worstRatio, worst, eps = r, steps/beta, e
				}
			}
		}
	}
	return worst, eps
}

// TestCentredOnGridExactPrivacy: the worst exact log-ratio is at most ε
// and reaches 0.9ε (the pairs reach the sensitivity); with the noise cut
// by 25% it exceeds ε (the check has power).
func TestCentredOnGridExactPrivacy(t *testing.T) {
	for _, squares := range []bool{false, true} {
		worst, eps := worstCentredLoss(t, 1, squares)
		if worst > eps || worst < 0.9*eps {
			t.Errorf("squares=%v: worst log-ratio %v, want in [0.9ε, ε] for ε = %v", squares, worst, eps)
		}
		if worst, eps := worstCentredLoss(t, 0.75, squares); worst <= eps {
			t.Errorf("squares=%v, noise cut by 25%%: worst log-ratio %v ≤ ε = %v, the check has no power", squares, worst, eps)
		}
	}
}

// TestCentredOnGridRelease is the seeded statistical test of the releases
// on an hour of Unix seconds: over 20000 releases the mean absolute error
// of each is its Laplace scale ((U−L)/(2ε) and ((U−L)/2)²/ε, in the
// values' units) within 5 standard errors (|Z| has mean and standard
// deviation b: false rejection ≈ 6·10⁻⁷ each), around the true centred
// sums of the values; and the rows per unit multiply the scale.
func TestCentredOnGridRelease(t *testing.T) {
	rng := privtest.Seeded(t, 21)
	b := mech.Bounds{Lower: 1.7e9, Upper: 1.7e9 + 3600}
	xs := []float64{1.7e9, 1.7e9 + 1, 1.7e9 + 1800.5, 1.7e9 + 3599, 1.7e9 + 3600, 1.8e9}
	g, err := mech.NewGrid(b)
	if err != nil {
		t.Fatal(err)
	}
	_, sums := g.Indices(xs)
	const eps, trials = 0.8, 20000
	for _, c := range []struct {
		squares bool
		k       int64
	}{{false, 1}, {true, 1}, {false, 3}, {true, 3}} {
		truth, _ := centredExact(g, xs, c.squares).Float64()
		scale := float64(c.k) * 1800 / eps
		if c.squares {
			truth *= g.Unit * g.Unit
			scale = float64(c.k) * 1800 * 1800 / eps
		} else {
			truth *= g.Unit
		}
		release := ReleaseUnitCenteredSumOnGrid
		if c.squares {
			release = ReleaseUnitCenteredSumOfSquaresOnGrid
		}
		checkMeanAbsError(t, fmt.Sprintf("%+v", c), trials, truth, scale, func() (Noisy, error) { return release(rng, b, g, sums, c.k, eps) })
	}
}

// checkMeanAbsError draws trials releases and checks that each has the
// Laplace scale (to a relative 10⁻⁵) and that their mean absolute error
// around truth is the scale within 5 standard errors (|Z| has mean and
// standard deviation equal to the scale: false rejection ≈ 6·10⁻⁷).
func checkMeanAbsError(t *testing.T, name string, trials int, truth, scale float64, release func() (Noisy, error)) {
	t.Helper()
	dev := 0.0
	for range trials {
		n, err := release()
		if err != nil {
			t.Fatal(err)
		}
		dev += math.Abs(n.Value() - truth)
		if math.Abs(n.Scale()-scale) > 1e-5*scale {
			t.Fatalf("%s: scale %v, want %v", name, n.Scale(), scale)
		}
	}
	if got := dev / float64(trials); math.Abs(got-scale) > 5*scale/math.Sqrt(float64(trials)) {
		t.Errorf("%s: mean |error| %v, want %v ± %v", name, got, scale, 5*scale/math.Sqrt(float64(trials)))
	}
}
