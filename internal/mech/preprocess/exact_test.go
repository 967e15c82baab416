package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Exact privacy check of the preprocessing releases. A release is
// l.Release(g(D)) = γ·(m + Z) with γ the Laplace granularity, m =
// round(g(D)/γ) and Z the discrete Laplace of scale β on the integers
// (noise.Laplace), rounded once to float64 (post-processing). The output
// law on γℤ is P(j) ∝ exp(−|j − m|/β) with the same normalising constant
// for every m, so the worst log-ratio between the laws on D and D' is
// exactly |m − m'|/β: no sampling is needed.

// exactLaplaceLoss returns the worst log-ratio of l's output laws at g and g2.
func exactLaplaceLoss(l *noise.Laplace, g, g2 float64) float64 {
	gamma := l.Granularity()
	beta := l.Scale() / gamma
	m, m2 := math.Round(g/gamma), math.Round(g2/gamma)
	return math.Abs(m-m2) / beta
}

// exactPairs returns add/remove neighbour pairs over [0, 10]: n = 0, 1, 2,
// ties, values at the bounds, tiny and subnormal values, non-dyadic reals,
// then random tied datasets of up to 40 rows.
func exactPairs(rng *rand.Rand, random int) [][2][]float64 {
	special := []float64{0, 5e-324, 1e-300, 1e-17, 0.1, 1.0 / 3, 0.7, 4.9, 5, 5.1, 9.9, 10 - 1e-15, 10}
	var pairs [][2][]float64
	add := func(d []float64, x float64) {
		sorted, added := privtest.WithRow(d, x)
		pairs = append(pairs, [2][]float64{sorted, added})
	}
	for _, x := range special {
		add(nil, x)
		for _, y := range special {
			add([]float64{y}, x)
			add([]float64{y, y}, x)
			add([]float64{0, 10}, x)
			add([]float64{y, 5, 5, 5}, x)
		}
	}
	for range random {
		n := rng.IntN(40)
		vals := []float64{special[rng.IntN(len(special))], float64(rng.IntN(101)) / 10, special[rng.IntN(len(special))]}
		d := make([]float64, n)
		for i := range d {
			d[i] = vals[rng.IntN(1+rng.IntN(3))]
		}
		x := vals[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			x = float64(rng.IntN(101)) / 10
		}
		add(d, x)
	}
	return pairs
}

// preprocessCase is a preprocessing mechanism as a value function and its
// noise.
type preprocessCase struct {
	name  string
	value func([]float64) (float64, error)
	noise *noise.Laplace
}

// preprocessCases returns the mean, variance and median at ε = 1 over
// [0, 10] for several Δ (small Δ: g far from the statistic, the rows
// path; large Δ: the summary path settles g).
func preprocessCases(t *testing.T) []preprocessCase {
	t.Helper()
	b := mech.Bounds{Lower: 0, Upper: 10}
	var cases []preprocessCase
	for _, delta := range []float64{0.05, 0.5, 2, 20} {
		p := Params{Bounds: b, Delta: delta, Center: 5}
		mean, err := NewMean(p, 1)
		if err != nil {
			t.Fatal(err)
		}
		vari, err := NewVariance(Params{Bounds: b, Delta: delta}, 1)
		if err != nil {
			t.Fatal(err)
		}
		med, err := NewMedian(p, 1)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			preprocessCase{fmt.Sprintf("mean Δ=%v", delta), func(x []float64) (float64, error) {
				s, idx := SummaryOf(mean.Grid(), x)
				return mean.Value(s, idx)
			}, mean.noise},
			preprocessCase{fmt.Sprintf("variance Δ=%v", delta), func(x []float64) (float64, error) {
				s, idx := SummaryOf(vari.Grid(), x)
				return vari.Value(s, idx)
			}, vari.noise},
			preprocessCase{fmt.Sprintf("median Δ=%v", delta), func(x []float64) (float64, error) {
				return med.Value(mech.WindowOf(med.Window(), x))
			}, med.noise})
	}
	return cases
}

// worstPreprocessLoss returns the worst exact loss of c with noise l over
// pairs, and where.
func worstPreprocessLoss(t *testing.T, c preprocessCase, l *noise.Laplace, pairs [][2][]float64) (float64, [2][]float64) {
	t.Helper()
	worst, at := 0.0, [2][]float64{}
	for _, p := range pairs {
		g, err := c.value(p[0])
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, p[0], err)
		}
		g2, err := c.value(p[1])
		if err != nil {
			t.Fatalf("%s %v: %v", c.name, p[1], err)
		}
		if loss := exactLaplaceLoss(l, g, g2); loss > worst {
			worst, at = loss, p
		}
	}
	return worst, at
}

func TestExactPrivacyPreprocess(t *testing.T) {
	pairs := exactPairs(rand.New(privtest.Seeded(t, 0xe3)), 1500)
	for _, c := range preprocessCases(t) {
		worst, at := worstPreprocessLoss(t, c, c.noise, pairs)
		t.Logf("%s: worst exact loss %.15f over %d pairs (at %v vs %v)", c.name, worst, len(pairs), at[0], at[1])
		if worst > 1+1e-12 {
			t.Errorf("%s: exact loss %v > ε = 1 at %v vs %v", c.name, worst, at[0], at[1])
		}
	}
}

func TestExactCheckCatchesReducedPreprocessNoise(t *testing.T) {
	// Mutation: the same releases with the Laplace scale cut by 25% must
	// fail the exact check.
	pairs := exactPairs(rand.New(privtest.Seeded(t, 0xe4)), 200)
	for _, c := range preprocessCases(t) {
		if c.name == "mean Δ=20" || c.name == "median Δ=20" {
			// Δ = 20 exceeds what one row can move the mean or median of
			// [0, 10] (5, from the centre): g is the statistic and the
			// shipped loss is 0.25ε, so a 25% cut cannot reach ε.
			continue
		}
		cut, err := noise.NewLaplace(0.75*c.noise.Sensitivity(), c.noise.Epsilon())
		if err != nil {
			t.Fatal(err)
		}
		worst, at := worstPreprocessLoss(t, c, cut, pairs)
		t.Logf("%s with 0.75 scale: worst exact loss %.6f (at %v vs %v)", c.name, worst, at[0], at[1])
		if worst <= 1 {
			t.Errorf("%s: the exact check passed a release with its noise cut by 25%% (loss %v)", c.name, worst)
		}
	}
}

// variedCases returns the mean, variance and median at ε = 1 on bounds b
// with the planner's parameters, DefaultParams for noisy counts 1, 4, 30
// and 1000: Δ = w/n for the mean and median (centre the midpoint), w²/n
// for the variance; small Δ puts g far from the statistic (the rows path),
// large Δ lets the summary path settle g.
func variedCases(t *testing.T, b mech.Bounds) []preprocessCase {
	t.Helper()
	var cases []preprocessCase
	for _, n := range []float64{1, 4, 30, 1000} {
		pm, err1 := DefaultParams(MeanStatistic, b, n)
		pv, err2 := DefaultParams(VarianceStatistic, b, n)
		pd, err3 := DefaultParams(MedianStatistic, b, n)
		mean, err4 := NewMean(pm, 1)
		vari, err5 := NewVariance(pv, 1)
		med, err6 := NewMedian(pd, 1)
		for _, err := range []error{err1, err2, err3, err4, err5, err6} {
			if err != nil {
				t.Fatalf("%v n=%v: %v", b, n, err)
			}
		}
		cases = append(cases,
			preprocessCase{fmt.Sprintf("%v mean n=%v", b, n), func(x []float64) (float64, error) {
				s, idx := SummaryOf(mean.Grid(), x)
				return mean.Value(s, idx)
			}, mean.noise},
			preprocessCase{fmt.Sprintf("%v variance n=%v", b, n), func(x []float64) (float64, error) {
				s, idx := SummaryOf(vari.Grid(), x)
				return vari.Value(s, idx)
			}, vari.noise},
			preprocessCase{fmt.Sprintf("%v median n=%v", b, n), func(x []float64) (float64, error) {
				return med.Value(mech.WindowOf(med.Window(), x))
			}, med.noise})
	}
	return cases
}

// TestPreprocessExactOnVariedBounds runs the exact check of
// TestExactPrivacyPreprocess on each of privtest.VariedBounds (negative,
// asymmetric, tiny, large-magnitude and ±10^9 ranges) instead of [0, 10]
// with centre 5: ε-DP (ε = 1) under adding or removing one row. For every
// release of variedCases and every add/remove pair of
// privtest.TiedNeighbours (seeded: rows at and next to the bounds, ties,
// the midpoint, upper − 10^−12·w, 1500 random tied datasets of up to 24
// rows), it computes g on both neighbours and the exact loss of the two
// output laws, |m − m'|/β (exactLaplaceLoss), and checks it is at most ε.
func TestPreprocessExactOnVariedBounds(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xe7))
	for _, vb := range privtest.VariedBounds {
		b := mech.Bounds{Lower: vb[0], Upper: vb[1]}
		pairs := privtest.TiedNeighbours(b.Lower, b.Upper, rng, 1500, 25)
		for _, c := range variedCases(t, b) {
			worst, at := worstPreprocessLoss(t, c, c.noise, pairs)
			t.Logf("%s: worst exact loss %.15f over %d pairs (at %s vs %s)",
				c.name, worst, len(pairs), privtest.FormatRows(at[0]), privtest.FormatRows(at[1]))
			if worst > 1+1e-12 {
				t.Errorf("%s: exact loss %v > ε = 1 at %v vs %v", c.name, worst, at[0], at[1])
			}
		}
	}
}

// TestPreprocessExactOnVariedBoundsCatchesReducedNoise: the mutation of
// TestExactCheckCatchesReducedPreprocessNoise on the varied bounds. Each
// release of variedCases with its Laplace scale cut by 25% must fail the
// exact check, except at n = 1: Δ = w (w² for the variance) exceeds what
// one row can move the mean or median (w/2, from the midpoint) or the
// variance (w²/4), so the shipped loss is about ½ε (¼ε) and a 25% cut
// cannot reach ε.
func TestPreprocessExactOnVariedBoundsCatchesReducedNoise(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xe8))
	for _, vb := range privtest.VariedBounds {
		b := mech.Bounds{Lower: vb[0], Upper: vb[1]}
		pairs := privtest.TiedNeighbours(b.Lower, b.Upper, rng, 300, 25)
		for _, c := range variedCases(t, b) {
			if strings.HasSuffix(c.name, " n=1") {
				continue
			}
			cut, err := noise.NewLaplace(0.75*c.noise.Sensitivity(), c.noise.Epsilon())
			if err != nil {
				t.Fatal(err)
			}
			worst, at := worstPreprocessLoss(t, c, cut, pairs)
			t.Logf("%s with 0.75 scale: worst exact loss %.6f (at %s vs %s)",
				c.name, worst, privtest.FormatRows(at[0]), privtest.FormatRows(at[1]))
			if worst <= 1 {
				t.Errorf("%s: the exact check passed a release with its noise cut by 25%% (loss %v)", c.name, worst)
			}
		}
	}
}
