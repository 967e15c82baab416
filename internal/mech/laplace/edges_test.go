package laplace

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// gridSumsOf returns the grid of b and the exact sums the database would
// return for xs on it.
func gridSumsOf(t *testing.T, b mech.Bounds, xs []float64) (mech.Grid, mech.GridSums) {
	t.Helper()
	g, err := mech.NewGrid(b)
	if err != nil {
		t.Fatal(err)
	}
	_, s := g.Indices(xs)
	return g, s
}

// inValueUnits returns the exact coordinate c (grid units^power) in the
// units of the values.
func inValueUnits(g mech.Grid, c *big.Rat, power int) float64 {
	v := new(big.Rat).Set(c)
	for range power {
		v.Mul(v, new(big.Rat).SetFloat64(g.Unit))
	}
	f, _ := v.Float64()
	return f
}

// edgeSumsExact returns S_L = Σk and S_U = n·Top − Σk, exactly.
func edgeSumsExact(g mech.Grid, s mech.GridSums) (lower, upper *big.Rat) {
	u := new(big.Int).Mul(big.NewInt(s.Count), big.NewInt(g.Top))
	return new(big.Rat).SetInt(s.Sum), new(big.Rat).SetInt(u.Sub(u, s.Sum))
}

// TestEdgeCoordinates checks hand-computed coordinates and derived
// answers on [0, 10] for the values 1, 2, 6 (on the grid exactly: Unit
// is a power of two dividing them): S_L = 9, S_U = 21, A = 1+4+36 = 41,
// B = 81+64+16 = 161, C = 2(9+16+24) = 98; n = 300/100, mean 3, VAR_POP
// 41/3 − 9 = 14/3.
func TestEdgeCoordinates(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	g, s := gridSumsOf(t, b, []float64{1, 2, 6})
	if w := float64(g.Top) * g.Unit; w != 10 {
		t.Fatalf("grid width %v, want 10", w)
	}
	lo, hi := edgeSumsExact(g, s)
	if l, u := inValueUnits(g, lo, 1), inValueUnits(g, hi, 1); l != 9 || u != 21 {
		t.Fatalf("edge sums %v %v, want 9 21", l, u)
	}
	ar, upr, cr := edgeSquaresOf(g, s)
	a, up, c := inValueUnits(g, ar, 2), inValueUnits(g, upr, 2), inValueUnits(g, cr, 2)
	if a != 41 || up != 161 || c != 98 {
		t.Fatalf("edge squares %v %v %v, want 41 161 98", a, up, c)
	}
	if m := (EdgeSums{Lower: 9, Upper: 21, Width: 10}).Mean(b); m != 3 {
		t.Fatalf("mean %v, want 3", m)
	}
	if v := (EdgeSquares{Lower: 41, Upper: 161, Cross: 98, Width: 10}).Variance(b, PopulationVariance); math.Abs(v-14.0/3) > 1e-12 {
		t.Fatalf("variance %v, want 14/3", v)
	}
	// The sample variance takes its n = (A+B+C)/(U−L)² = 3 from the squares.
	if v := (EdgeSquares{Lower: 41, Upper: 161, Cross: 98, Width: 10}).Variance(b, SampleVariance); math.Abs(v-7) > 1e-12 {
		t.Fatalf("sample variance %v, want 14/2", v)
	}
	// The squares of {1, 2, 6} and of {9}, added: those of {1, 2, 6, 9},
	// whose mean is 4.5 and VAR_POP (12.25+6.25+2.25+20.25)/4 = 10.25.
	g9, s9 := gridSumsOf(t, b, []float64{9})
	a9r, up9r, c9r := edgeSquaresOf(g9, s9)
	nine := EdgeSquares{Lower: inValueUnits(g, a9r, 2), Upper: inValueUnits(g, up9r, 2), Cross: inValueUnits(g, c9r, 2), Width: 10}
	sum := EdgeSquares{Lower: a, Upper: up, Cross: c, Width: 10}.Plus(nine)
	if v := sum.Variance(b, PopulationVariance); math.Abs(v-10.25) > 1e-12 {
		t.Fatalf("variance of the added squares %v, want 10.25", v)
	}
	// Shifted bounds: [−5, 5] holds the same values shifted by −5.
	g2, s2 := gridSumsOf(t, mech.Bounds{Lower: -5, Upper: 5}, []float64{-4, -3, 1})
	a2r, up2r, c2r := edgeSquaresOf(g2, s2)
	if a2, up2, c2 := inValueUnits(g2, a2r, 2), inValueUnits(g2, up2r, 2), inValueUnits(g2, c2r, 2); a2 != 41 || up2 != 161 || c2 != 98 {
		t.Fatalf("shifted edge squares %v %v %v, want 41 161 98", a2, up2, c2)
	}
	// Negative noisy sums are read as 0; both 0 answers the middle.
	if m := (EdgeSums{Lower: -3, Upper: 21, Width: 10}).Mean(b); m != 0 {
		t.Fatalf("mean with S_L < 0: %v, want 0", m)
	}
	if m := (EdgeSums{Lower: -3, Upper: -1, Width: 10}).Mean(b); m != 5 {
		t.Fatalf("mean with both < 0: %v, want 5", m)
	}
}

// nearestOnGrid returns the integer nearest x/γ (halves away from 0), as
// noise.Laplace.ReleaseExact computes it.
func nearestOnGrid(x *big.Rat, gamma float64) *big.Int {
	q := new(big.Rat).Quo(x, new(big.Rat).SetFloat64(gamma))
	twice := new(big.Int).Mul(new(big.Int).Abs(q.Num()), big.NewInt(2))
	twice.Add(twice, q.Denom())
	m := twice.Quo(twice, new(big.Int).Mul(q.Denom(), big.NewInt(2)))
	if q.Sign() < 0 {
		m.Neg(m)
	}
	return m
}

// edgeLoss returns the exact worst log-ratio of the joint output law of
// ReleaseEdgeSums (squares false) or ReleaseEdgeSquares on d and d2, the
// noise built for cut × the sensitivity. Each coordinate is γ·(m_i + Z_i)
// with independent discrete Laplace Z_i of scale β on the integers
// (noise.Laplace.ReleaseExact), so the joint law's worst log-ratio is
// exactly Σ|m_i − m_i'|/β.
func edgeLoss(t *testing.T, b mech.Bounds, d, d2 []float64, epsilon, cut float64, squares bool) float64 {
	t.Helper()
	g, err := mech.NewGrid(b)
	if err != nil {
		t.Fatal(err)
	}
	sens, k := float64(g.Top), 2
	if squares {
		sens, k = squareUp(g.Top), 3
	}
	l, err := edgeNoise(sens*cut, k, epsilon)
	if err != nil {
		t.Fatal(err)
	}
	coords := func(xs []float64) []*big.Rat {
		_, s := g.Indices(xs)
		if squares {
			a, up, c := edgeSquaresOf(g, s)
			return []*big.Rat{a, up, c}
		}
		lo, up := edgeSumsExact(g, s)
		return []*big.Rat{lo, up}
	}
	gamma := l.Granularity()
	beta := l.Scale() / gamma
	steps := new(big.Int)
	c1, c2 := coords(d), coords(d2)
	for i := range c1 {
		diff := new(big.Int).Sub(nearestOnGrid(c1[i], gamma), nearestOnGrid(c2[i], gamma))
		steps.Add(steps, diff.Abs(diff))
	}
	f, _ := new(big.Float).SetInt(steps).Float64()
	return f / beta
}

// worstEdgeLoss is the largest exact loss relative to ε over the
// neighbours of privtest.BoundedNeighbours on three bounds and a range of ε (the
// smallest below edgeMinEpsilon, where the coordinates split ε).
func worstEdgeLoss(t *testing.T, cut float64, squares bool) (worst, eps float64) {
	rng := rand.New(rand.NewPCG(16, 1))
	worstRatio := 0.0
	// The last bounds are an hour of Unix seconds: far from 0 for their
	// width, where coordinates formed from float sums lost ε many times over.
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4095}, {Lower: -3, Upper: 10}, {Lower: 0.5, Upper: 0.75}, {Lower: 1.7e9, Upper: 1.7e9 + 3600}} {
		for _, e := range []float64{0x1p-31, 0.05, 0.5, 1, 3} {
			for _, p := range privtest.BoundedNeighbours(b.Lower, b.Upper, rng) {
				loss := edgeLoss(t, b, p[0], p[1], e, cut, squares)
				if r := loss / e; r > worstRatio {
					worstRatio, worst, eps = r, loss, e
				}
			}
		}
	}
	return worst, eps
}

// TestEdgeExactPrivacy: the worst exact log-ratio of both joint releases
// over every pair, bounds and ε is at most ε.
func TestEdgeExactPrivacy(t *testing.T) {
	for _, squares := range []bool{false, true} {
		worst, eps := worstEdgeLoss(t, 1, squares)
		if worst > eps {
			t.Fatalf("squares=%v: worst log-ratio %v exceeds ε = %v", squares, worst, eps)
		}
		if worst < 0.9*eps {
			t.Errorf("squares=%v: worst log-ratio %v below 0.9ε = %v: the pairs do not reach the sensitivity", squares, worst, 0.9*eps)
		}
		t.Logf("squares=%v: worst log-ratio %.6g at ε = %g", squares, worst, eps)
	}
}

// TestEdgeExactPrivacyMutation: with the noise cut by 25% the same check
// finds a pair whose log-ratio exceeds ε, for both releases.
func TestEdgeExactPrivacyMutation(t *testing.T) {
	for _, squares := range []bool{false, true} {
		worst, eps := worstEdgeLoss(t, 0.75, squares)
		if worst <= eps {
			t.Fatalf("squares=%v, noise cut by 25%%: worst log-ratio %v ≤ ε = %v, the check has no power", squares, worst, eps)
		}
	}
}

// TestEdgeNoiseScale is the seeded statistical test: over 20000 releases
// the mean absolute noise of each coordinate is its Laplace scale
// ((U−L)/ε, (U−L)²/ε) within 5 standard errors (|Z| has mean and
// standard deviation b, so the standard error is b/√20000; false
// rejection ≈ 6·10⁻⁷ per coordinate), and the mean's interval covers the
// true mean in at least 93% of 2000 releases at 95% (false rejection
// < 10⁻³ for a correct interval).
func TestEdgeNoiseScale(t *testing.T) {
	rng := privtest.Seeded(t, 17)
	src := noise.Source(rng)
	b := mech.Bounds{Lower: 0, Upper: 100}
	xs := []float64{0, 3, 3, 50, 99, 100, 7}
	g, s := gridSumsOf(t, b, xs)
	const eps, trials = 0.7, 20000
	lo, hi := edgeSumsExact(g, s)
	wantL, wantU := inValueUnits(g, lo, 1), inValueUnits(g, hi, 1)
	ar, br, cr := edgeSquaresOf(g, s)
	wantA, wantB, wantC := inValueUnits(g, ar, 2), inValueUnits(g, br, 2), inValueUnits(g, cr, 2)
	var dev [5]float64
	for range trials {
		e, err := ReleaseEdgeSums(src, g, s, eps)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ReleaseEdgeSquares(src, g, s, eps)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range []float64{e.Lower - wantL, e.Upper - wantU, q.Lower - wantA, q.Upper - wantB, q.Cross - wantC} {
			dev[i] += math.Abs(d)
		}
	}
	for i, scale := range []float64{100 / eps, 100 / eps, 1e4 / eps, 1e4 / eps, 1e4 / eps} {
		got := dev[i] / trials
		if math.Abs(got-scale) > 5*scale/math.Sqrt(trials) {
			t.Errorf("coordinate %d: mean |noise| %v, want %v ± %v", i, got, scale, 5*scale/math.Sqrt(trials))
		}
	}
	truth := 0.0
	for _, x := range xs {
		truth += x / float64(len(xs))
	}
	covered := 0
	for range 2000 {
		e, err := ReleaseEdgeSums(src, g, s, eps)
		if err != nil {
			t.Fatal(err)
		}
		est, err := EdgeMeanEstimate(b, e, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if est.Low > est.Value || est.Value > est.High {
			t.Fatalf("interval [%v, %v] misses its value %v", est.Low, est.High, est.Value)
		}
		if est.Low <= truth && truth <= est.High {
			covered++
		}
	}
	if covered < 1860 {
		t.Errorf("the 95%% interval covered the mean in %d of 2000 releases", covered)
	}
}

// TestEdgeVarianceInterval: the variance interval holds its value and, on
// a column with little noise for its size, the true variance.
func TestEdgeVarianceInterval(t *testing.T) {
	rng := privtest.Seeded(t, 18)
	b := mech.Bounds{Lower: 0, Upper: 10}
	var xs []float64
	for i := range 20000 {
		xs = append(xs, float64(i%11))
	}
	g, s := gridSumsOf(t, b, xs)
	population := 10.0 // the integers 0..10 equally often
	for range 50 {
		e, err := ReleaseEdgeSquares(rng, g, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		for kind, truth := range map[VarianceKind]float64{PopulationVariance: population, SampleVariance: population * 20000 / 19999} {
			est, err := EdgeVarianceEstimate(b, kind, e, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if est.Low > est.Value || est.Value > est.High || est.Low > truth || truth > est.High {
				t.Fatalf("kind %d: interval [%v, %v] with value %v, truth %v", kind, est.Low, est.High, est.Value, truth)
			}
			if math.Abs(est.Value-truth) > 0.2 {
				t.Fatalf("kind %d: variance %v, want about %v", kind, est.Value, truth)
			}
		}
	}
}
