package laplace

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// unitRowsOf is one unit's rows: m values, all at the upper bound, all at
// the lower bound, or alternating (the extremes every sensitivity is
// attained at).
func unitRowsOf(b mech.Bounds, m int, pattern int) []float64 {
	xs := make([]float64, m)
	for i := range xs {
		switch {
		case pattern == 0, pattern == 2 && i%2 == 0:
			xs[i] = b.Upper
		default:
			xs[i] = b.Lower
		}
	}
	return xs
}

// bounded keeps at most k rows of each unit: the first k after a seeded
// shuffle, as the database's keyed shuffle does (any per-unit choice gives
// the same neighbour relation; the patterns above make every choice
// extreme).
func bounded(src noise.Source, units [][]float64, k int) []float64 {
	var out []float64
	for _, u := range units {
		u = append([]float64(nil), u...)
		for i := len(u) - 1; i > 0; i-- {
			j := int(src.Uint64() % uint64(i+1))
			u[i], u[j] = u[j], u[i]
		}
		out = append(out, u[:min(k, len(u))]...)
	}
	return out
}

// shiftLoss is the exact loss of n + Z against n + d + Z for Z discrete
// Laplace of scale beta on the integers (grid steps), as three cells: the
// tail below n (ratio e^{d/β}), the run n..n+d-1 and the tail from n+d
// (ratio e^{-d/β}). The run's per-output log-ratios lie between the
// tails', so the worst cell is the worst output: d/β.
func shiftLoss(t *testing.T, beta float64, d float64, epsilon float64) privtest.Loss {
	t.Helper()
	a := 1 / beta
	ln1r := math.Log1p(math.Exp(-a)) // ln(1 + r), r = e^{-a}
	var lnRun float64                // ln(1 - r^d)
	if d > 0 {
		lnRun = math.Log(-math.Expm1(-d * a))
	} else {
		lnRun = math.Inf(-1)
	}
	lnP := []float64{-a - ln1r, lnRun - ln1r, -d*a - ln1r}
	lnQ := []float64{-(d+1)*a - ln1r, -a + lnRun - ln1r, -ln1r}
	l, err := privtest.ExactLoss(lnP, lnQ, epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// unitStat is one k-scaled primitive: it releases over a bounded table and
// returns the exact statistic in grid steps and the noise's scale in steps.
type unitStat struct {
	name    string
	release func(b mech.Bounds, xs []float64, k int64, eps float64) (Noisy, error)
	value   func(b mech.Bounds, xs []float64) float64
}

var unitStats = []unitStat{
	{"count", func(_ mech.Bounds, xs []float64, k int64, eps float64) (Noisy, error) {
		return ReleaseUnitCount(noise.NewCryptoSource(), int64(len(xs)), k, eps)
	}, func(_ mech.Bounds, xs []float64) float64 { return float64(len(xs)) }},
	{"sum", func(b mech.Bounds, xs []float64, k int64, eps float64) (Noisy, error) {
		g, err := mech.NewGrid(b)
		if err != nil {
			return Noisy{}, err
		}
		_, s := g.Indices(xs)
		return ReleaseUnitSumOnGrid(noise.NewCryptoSource(), b, g, s, k, eps)
	}, func(b mech.Bounds, xs []float64) float64 {
		g, _ := mech.NewGrid(b)
		_, s := g.Indices(xs)
		f, _ := gridSumOf(g, s).Float64()
		return f
	}},
	// The centred sums as the planner releases them, from the exact grid
	// sums; their values in grid units, where their noise is (scaledNoise).
	{"centred sum", func(b mech.Bounds, xs []float64, k int64, eps float64) (Noisy, error) {
		g, s, err := gridOf(b, xs)
		if err != nil {
			return Noisy{}, err
		}
		return ReleaseUnitCenteredSumOnGrid(noise.NewCryptoSource(), b, g, s, k, eps)
	}, func(b mech.Bounds, xs []float64) float64 {
		g, s, _ := gridOf(b, xs)
		v := new(big.Rat).SetInt(s.Sum)
		v.Sub(v, big.NewRat(s.Count*g.Top, 2))
		f, _ := v.Float64()
		return f
	}},
	{"centred sum of squares", func(b mech.Bounds, xs []float64, k int64, eps float64) (Noisy, error) {
		g, s, err := gridOf(b, xs)
		if err != nil {
			return Noisy{}, err
		}
		return ReleaseUnitCenteredSumOfSquaresOnGrid(noise.NewCryptoSource(), b, g, s, k, eps)
	}, func(b mech.Bounds, xs []float64) float64 {
		g, s, _ := gridOf(b, xs)
		top := big.NewInt(g.Top)
		v := new(big.Rat).SetInt(new(big.Int).Sub(s.SumSquares, new(big.Int).Mul(top, s.Sum)))
		v.Add(v, new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(s.Count), new(big.Int).Mul(top, top)), big.NewInt(4)))
		f, _ := v.Float64()
		return f
	}},
}

// gridOf returns the grid of b and the exact grid sums of xs.
func gridOf(b mech.Bounds, xs []float64) (mech.Grid, mech.GridSums, error) {
	g, err := mech.NewGrid(b)
	if err != nil {
		return mech.Grid{}, mech.GridSums{}, err
	}
	_, s := g.Indices(xs)
	return g, s, nil
}

// unitLoss releases the statistic on the bounded neighbours and returns the
// exact loss of the implemented noise: the shift between the two exact
// values on the noise's own grid (the count's integers; the Laplace
// mechanism's power-of-two grid g, on which it rounds the value first)
// against the grid scale.
func unitLoss(t *testing.T, st unitStat, b mech.Bounds, d, d2 []float64, k int64, buildEps, claimEps float64) privtest.Loss {
	t.Helper()
	r, err := st.release(b, d, k, buildEps)
	if err != nil {
		t.Fatal(err)
	}
	x, x2 := st.value(b, d), st.value(b, d2)
	var steps, beta float64
	switch nz := r.noise.(type) {
	case *noise.DiscreteLaplace:
		steps, beta = math.Abs(x2-x), nz.Scale()
	case *noise.Laplace:
		g := nz.Granularity()
		steps, beta = math.Abs(math.Round(x2/g)-math.Round(x/g)), nz.Scale()/g
	case scaledNoise: // values in grid units, where the noise is
		g := nz.noise.Granularity()
		steps, beta = math.Abs(math.Round(x2/g)-math.Round(x/g)), nz.noise.Scale()/g
	default:
		t.Fatalf("%s: unexpected noise %T", st.name, r.noise)
	}
	return shiftLoss(t, beta, steps, claimEps)
}

// unitPairs enumerates neighbouring unit tables: a base of units with 1 to
// 3k rows, and the base plus one unit of m ∈ {1, k, k+1, 3k} rows at the
// extremes, bounded to k rows per unit.
func unitPairs(b mech.Bounds, k int) (pairs [][2][]float64, names []string) {
	src := noise.NewStream(uint64(k))
	var base [][]float64
	for i := range 6 {
		base = append(base, unitRowsOf(b, 1+i*k/2, i%3))
	}
	// One salt: the base units keep the same rows in both tables.
	kept := bounded(src, base, k)
	for _, m := range []int{1, k, k + 1, 3 * k} {
		for pattern := range 3 {
			added := bounded(src, [][]float64{unitRowsOf(b, m, pattern)}, k)
			pairs = append(pairs, [2][]float64{kept, append(append([]float64(nil), kept...), added...)})
			names = append(names, fmt.Sprintf("unit of %d rows, pattern %d", m, pattern))
		}
	}
	return pairs, names
}

var unitBounds = []mech.Bounds{{Lower: 0, Upper: 100}, {Lower: -3.5, Upper: 12}, {Lower: 1e-3, Upper: 2}, {Lower: -1e6, Upper: -10}}

// TestUnitReleasesExactPrivacy: every k-scaled primitive on neighbours
// that differ by all rows of one unit (k = 2, 3, 7, 50; units of 1 to 3k
// rows), at ε from 2^-50 to 100: the exact worst loss of the implemented
// noise is at most ε; the logs give the worst ratio (1 where a unit's k
// kept rows are all at the bound that attains the sensitivity).
func TestUnitReleasesExactPrivacy(t *testing.T) {
	for _, st := range unitStats {
		var worst privtest.MaxLoss
		var worstRatio float64
		for _, eps := range []float64{mech.MinEpsilon, 0.1, 1, 17, mech.MaxEpsilon} {
			for _, k := range []int64{2, 3, 7, 50} {
				for _, b := range unitBounds {
					pairs, names := unitPairs(b, int(k))
					for i, p := range pairs {
						name := fmt.Sprintf("%s k=%d ε=%v %v: %s", st.name, k, eps, b, names[i])
						l := unitLoss(t, st, b, p[0], p[1], k, eps, eps)
						l.Check(t, name, eps, 0)
						worst.Add(name, l)
						worstRatio = max(worstRatio, l.Worst/eps)
					}
				}
			}
		}
		t.Logf("%s: worst loss/ε = %.15f over %d pairs (at %s)", st.name, worstRatio, worst.Pairs, worst.Pair)
	}
}

// TestUnitReleasesMutation: the same pairs fail the exact check when the
// noise scale is cut by 25% (built for 4ε/3), and when the release ignores
// the unit bound (row-level sensitivity, k = 1) on a unit of k rows.
func TestUnitReleasesMutation(t *testing.T) {
	for _, st := range unitStats {
		for _, eps := range []float64{0.1, 1, 17} {
			for _, k := range []int64{2, 7} {
				b := mech.Bounds{Lower: 0, Upper: 100}
				pairs, names := unitPairs(b, int(k))
				var cut, rowLevel privtest.MaxLoss
				for i, p := range pairs {
					cut.Add(names[i], unitLoss(t, st, b, p[0], p[1], k, eps*4/3, eps))
					rowLevel.Add(names[i], unitLoss(t, st, b, p[0], p[1], 1, eps, eps))
				}
				if cut.Holds(eps, 0) || rowLevel.Holds(eps, 0) {
					t.Errorf("%s k=%d ε=%v: a mutation passed (cut %v, row-level %v)", st.name, k, eps, cut.Worst, rowLevel.Worst)
				}
				if eps == 1 {
					t.Logf("%s k=%d: scale cut 25%% → loss %.4fε; row-level noise → %.4fε", st.name, k, cut.Worst/eps, rowLevel.Worst/eps)
				}
			}
		}
	}
}
