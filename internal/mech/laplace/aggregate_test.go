package laplace

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestDeriveCountAndSum(t *testing.T) {
	// Hand-checked: ε = 1 count noise has 95% half-width 3
	// (TestDlapHalfWidth), so a released 2 gives [max(2-3, 0), 5]; a released
	// -4 gives value 0 and [0, 0]... limited to [0, ∞): value 0, interval
	// [0, 0] since -4+3 < 0. A sum over [1, 5] (all positive) is limited to
	// ≥ 0 the same way; over [-5, 5] it is not.
	d, _ := noise.NewDiscreteLaplace(1, 1)
	for _, tc := range []struct {
		value float64
		want  mech.Estimate
	}{
		{2, mech.Estimate{Value: 2, Low: 0, High: 5, HasInterval: true}},
		{10, mech.Estimate{Value: 10, Low: 7, High: 13, HasInterval: true}},
		{-4, mech.Estimate{Value: 0, Low: 0, High: 0, HasInterval: true}},
	} {
		got, err := DeriveCount(Noisy{value: tc.value, stat: statCount, noise: d}, 0.95)
		if err != nil || got != tc.want {
			t.Errorf("DeriveCount(%v): got %+v (%v), want %+v", tc.value, got, err, tc.want)
		}
	}
	l, _ := noise.NewLaplace(5, 1)
	w := l.HalfWidth(0.95)
	for _, tc := range []struct {
		b    mech.Bounds
		want mech.Estimate
	}{
		{mech.Bounds{Lower: 1, Upper: 5}, mech.Estimate{Value: 0, Low: 0, High: -1 + w, HasInterval: true}},
		{mech.Bounds{Lower: -5, Upper: 5}, mech.Estimate{Value: -1, Low: -1 - w, High: -1 + w, HasInterval: true}},
		{mech.Bounds{Lower: -5, Upper: -1}, mech.Estimate{Value: -1, Low: -1 - w, High: 0, HasInterval: true}},
	} {
		got, err := DeriveSum(Noisy{value: -1, stat: statSum, bounds: tc.b, noise: l}, 0.95)
		if err != nil || got != tc.want {
			t.Errorf("DeriveSum over %v: got %+v (%v), want %+v", tc.b, got, err, tc.want)
		}
	}
}

func TestDerivedFormulas(t *testing.T) {
	// Bounds [0, 10]: m = 5, h = 5. Values {2, 4, 9} (on the grid: Unit is
	// a power of two ≤ 1): n = 3, S = -3 - 1 + 4 = 0, Q = 9 + 1 + 16 = 26:
	// mean 5, population variance 26/3, sample variance 13.
	b := mech.Bounds{Lower: 0, Upper: 10}
	g, s := gridSumsOf(t, b, []float64{2, 4, 9})
	unit := new(big.Rat).SetFloat64(g.Unit)
	if got, want := new(big.Rat).Mul(centredSumOf(g, s), unit), new(big.Rat); got.Cmp(want) != 0 {
		t.Errorf("centred sum: got %v, want %v", got, want)
	}
	if got, want := new(big.Rat).Mul(centredSquaresOf(g, s), new(big.Rat).Mul(unit, unit)), big.NewRat(26, 1); got.Cmp(want) != 0 {
		t.Errorf("centred sum of squares: got %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name    string
		got     float64
		want    float64
		epsilon float64
	}{
		{"mean", meanOf(b, 3, 0), 5, 0},
		{"mean of a noisy zero count", meanOf(b, -2, 3), 8, 0}, // ñ₁ = 1
		{"mean clamped", meanOf(b, 1, 100), 10, 0},             // S̃/ñ > h
		{"population variance", varianceOf(b, PopulationVariance, 3, 0, 26), 26.0 / 3, 1e-15},
		{"sample variance", varianceOf(b, SampleVariance, 3, 0, 26), 13, 1e-14},
		{"variance clamped up", varianceOf(b, PopulationVariance, 3, 0, -5), 0, 0},
		{"variance clamped down", varianceOf(b, PopulationVariance, 3, 0, 1000), 25, 0},
		{"sample variance of ñ < 2", varianceOf(b, SampleVariance, 1, 0, 10), 20, 0}, // 10·2/1
	} {
		if math.Abs(tc.got-tc.want) > tc.epsilon {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestDeriveChecksItsInputs(t *testing.T) {
	src := rand.NewChaCha8([32]byte{})
	b := mech.Bounds{Lower: 0, Upper: 10}
	xs := []float64{2, 4, 9}
	g, s := gridSumsOf(t, b, xs)
	wide := mech.Bounds{Lower: 0, Upper: 20}
	gWide, sWide := gridSumsOf(t, wide, xs)
	count, _ := ReleaseCount(src, 3, 1)
	sum, _ := ReleaseUnitCenteredSumOnGrid(src, b, g, s, 1, 1)
	squares, _ := ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, s, 1, 1)
	other, _ := ReleaseUnitCenteredSumOnGrid(src, wide, gWide, sWide, 1, 1)
	inconsistent := mech.GridSums{Count: 1, Sum: big.NewInt(0), SumSquares: big.NewInt(-1)}
	sumOnly := mech.GridSums{Count: s.Count, Sum: s.Sum}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"swapped", second(DeriveMean(b, sum, count, 0.95)), mech.ErrInvalidInput},
		{"other bounds", second(DeriveMean(b, count, other, 0.95)), mech.ErrInvalidInput},
		{"zero Noisy", second(DeriveCount(Noisy{}, 0.95)), mech.ErrInvalidInput},
		{"variance swapped", second(DeriveVariance(b, PopulationVariance, count, squares, sum, 0.95)), mech.ErrInvalidInput},
		{"variance kind", second(DeriveVariance(b, VarianceKind(7), count, sum, squares, 0.95)), mech.ErrInvalidInput},
		{"confidence", second(DeriveMean(b, count, sum, 1)), mech.ErrInvalidConfidence},
		{"sum as count", second(DeriveSum(count, 0.95)), mech.ErrInvalidInput},
		{"negative count", second(ReleaseCount(src, -1, 1)), mech.ErrInvalidInput},
		{"inconsistent grid sums", second(ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, inconsistent, 1, 1)), mech.ErrInvalidInput},
		{"squares not fetched", second(ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, sumOnly, 1, 1)), mech.ErrInvalidInput},
		{"grid of other bounds", second(ReleaseUnitCenteredSumOnGrid(src, b, gWide, sWide, 1, 1)), mech.ErrInvalidInput},
		{"rows per unit", second(ReleaseUnitCenteredSumOnGrid(src, b, g, s, 0, 1)), mech.ErrInvalidSensitivity},
		{"mean ε", second(ReleaseUnitCenteredSumOnGrid(src, b, g, s, 1, math.Inf(1))), mech.ErrInvalidEpsilon},
		{"squares ε", second(ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, s, 1, 0)), mech.ErrInvalidEpsilon},
		{"release bounds", second(ReleaseUnitCenteredSumOfSquaresOnGrid(src, mech.Bounds{}, g, s, 1, 1)), mech.ErrInvalidBounds},
		{"variance bounds", second(DeriveVariance(mech.Bounds{}, PopulationVariance, count, sum, squares, 0.95)), mech.ErrInvalidBounds},
		{"stddev confidence", second(DeriveStddev(b, SampleVariance, count, sum, squares, 0)), mech.ErrInvalidConfidence},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

// second returns the error of a two-value call.
func second[T any](_ T, err error) error { return err }

// meanAndVarianceReleases makes the releases the planner's forced laplace
// mechanism makes for AVG (a count and the centred sum, ε/2 each) and for
// VARIANCE or STDDEV (a count and both centred sums, ε/3 each) of the
// values with grid sums s: the primitives of DeriveMean and
// DeriveVariance. With variance false the third release is the zero
// Noisy.
func meanAndVarianceReleases(t *testing.T, src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, epsilon float64, variance bool) (count, sum, squares Noisy) {
	t.Helper()
	share := epsilon / 2
	if variance {
		share = epsilon / 3
	}
	count, err := ReleaseCount(src, s.Count, share)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err = ReleaseUnitCenteredSumOnGrid(src, b, g, s, 1, share); err != nil {
		t.Fatal(err)
	}
	if variance {
		if squares, err = ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, s, 1, share); err != nil {
			t.Fatal(err)
		}
	}
	return count, sum, squares
}

func TestDerivedIntervalsAreTightWithLittleNoise(t *testing.T) {
	// At ε = 100 (ε/2 or ε/3 per release) the noise is negligible next to
	// n = 999999, so the values are the exact mean 5 and population
	// variance 26/3 (values {2, 4, 9} repeated) and the intervals shrink
	// around them.
	src := rand.NewChaCha8([32]byte{})
	b := mech.Bounds{Lower: 0, Upper: 10}
	const reps = 1000000 / 3
	g, s := gridSumsOf(t, b, slices.Repeat([]float64{2, 4, 9}, reps))
	count, sum, _ := meanAndVarianceReleases(t, src, b, g, s, 100, false)
	mean, err := DeriveMean(b, count, sum, 0.95)
	if err != nil || math.Abs(mean.Value-5) > 1e-3 || mean.High-mean.Low > 1e-3 || mean.Low > mean.Value || mean.High < mean.Value {
		t.Errorf("mean: got %+v (%v), want 5 with a tight interval", mean, err)
	}
	count, sum, squares := meanAndVarianceReleases(t, src, b, g, s, 100, true)
	v, err := DeriveVariance(b, PopulationVariance, count, sum, squares, 0.95)
	if err != nil || math.Abs(v.Value-26.0/3) > 1e-3 || v.High-v.Low > 1e-3 {
		t.Errorf("variance: got %+v (%v), want 8.667 with a tight interval", v, err)
	}
	count, sum, squares = meanAndVarianceReleases(t, src, b, g, s, 100, true)
	sd, err := DeriveStddev(b, SampleVariance, count, sum, squares, 0.95)
	if want := math.Sqrt(26.0 / 3 * 3 * reps / (3*reps - 1)); err != nil || math.Abs(sd.Value-want) > 1e-3 || sd.High-sd.Low > 1e-3 {
		t.Errorf("stddev: got %+v (%v), want %v", sd, err, want)
	}
}

func TestIntervalCoverage(t *testing.T) {
	// Coverage of the 95% intervals over 4000 independent releases each.
	// Every interval has coverage ≥ 95% for every dataset (exact for count
	// and sum, conservative for mean and variance), so the hits are at least
	// Binomial(4000, 0.95): mean 3800, sd 13.8, and fewer than 3730 hits
	// (5.1 sd below) has probability < 10⁻⁶ for each of the four.
	// n = 10 at ε = 1 is a small-n case where noise dominates.
	src := privtest.Seeded(t, 0x06)
	b := mech.Bounds{Lower: 0, Upper: 10}
	hit := func(e mech.Estimate, truth float64) int {
		if e.Low <= truth && truth <= e.High {
			return 1
		}
		return 0
	}
	const runs, minHits = 4000, 3730
	g, grid := gridSumsOf(t, b, slices.Repeat([]float64{3}, 10))
	// Mean 3, deviations {3, -3, 2, -2, 1, -1, 1, -1, 0, 0}: population
	// variance 30/10 = 3, sample variance 30/9.
	_, spread := gridSumsOf(t, b, []float64{6, 0, 5, 1, 4, 2, 4, 2, 3, 3})
	var counts, sums, means, variances int
	for range runs {
		noisyCount, _ := ReleaseCount(src, 10, 0.5)
		c, _ := DeriveCount(noisyCount, 0.95)
		noisySum, _ := ReleaseUnitSumOnGrid(src, b, g, grid, 1, 0.5)
		sm, _ := DeriveSum(noisySum, 0.95)
		n, s, _ := meanAndVarianceReleases(t, src, b, g, spread, 1, false)
		m, _ := DeriveMean(b, n, s, 0.95)
		n, s, q := meanAndVarianceReleases(t, src, b, g, spread, 1, true)
		v, _ := DeriveVariance(b, SampleVariance, n, s, q, 0.95)
		counts += hit(c, 10)
		sums += hit(sm, 30)
		means += hit(m, 3)
		variances += hit(v, 3*10.0/9)
	}
	t.Logf("coverage of %d: count %v, sum %v, mean %v, sample variance %v", runs, counts, sums, means, variances)
	for name, hits := range map[string]int{"count": counts, "sum": sums, "mean": means, "variance": variances} {
		if hits < minHits {
			t.Errorf("%s coverage: got %v of %v, want ≥ %v", name, hits, runs, minHits)
		}
	}
}

func TestDerivedIntervalArithmetic(t *testing.T) {
	// Hand-computed over bounds [0, 10] (m = 5, h = 5), n ∈ [8, 12]:
	// S ∈ [-4, 6]: S/n ∈ [-4/8, 6/8] → mean ∈ [4.5, 5.75];
	// Q ∈ [40, 80]: variance ≥ 40/12 - 36/64 = 2.7708…, ≤ 80/8 - 0 = 10;
	// S ∈ [2, 6]: the upper end loses 4/144.
	b := mech.Bounds{Lower: 0, Upper: 10}
	n := span{8, 12}
	if got, want := meanSpan(b, n, span{-4, 6}), (span{4.5, 5.75}); got != want {
		t.Errorf("mean span: got %v, want %v", got, want)
	}
	for _, tc := range []struct {
		s, want span
	}{
		{span{-4, 6}, span{40.0/12 - 36.0/64, 10}},
		{span{2, 6}, span{40.0/12 - 36.0/64, 10 - 4.0/144}},
	} {
		if got := populationVarianceSpan(b, n, tc.s, span{40, 80}); math.Abs(got.lo-tc.want.lo) > 1e-15 || math.Abs(got.hi-tc.want.hi) > 1e-15 {
			t.Errorf("variance span for S in %v: got %v, want %v", tc.s, got, tc.want)
		}
	}
	// Count spans: ε = 1, half-width 3 at 95%.
	d, _ := noise.NewDiscreteLaplace(1, 1)
	if got, ok := countSpan(Noisy{value: 10, stat: statCount, noise: d}, 0.05, 1); !ok || got != (span{7, 13}) {
		t.Errorf("count span: got %v %v, want [7, 13]", got, ok)
	}
	if got, ok := countSpan(Noisy{value: -5, stat: statCount, noise: d}, 0.05, 1); ok {
		t.Errorf("count span of -5: got %v, want none", got)
	}
}
