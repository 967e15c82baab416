package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Bounded variance and standard deviation.
//
// Guarantee: ε-DP under add/remove of one row, by sequential composition
// of three ε/3-DP releases: the count (sensitivity 1), the centered sum
// S = Σ (c - m) (sensitivity h = (U-L)/2) and the centered sum of squares
// Q = Σ (c - m)² (ReleaseCenteredSumOfSquares: one row contributes
// (c - m)² ∈ [0, h²], so its sensitivity is h²), with c = clamp(x) and
// m = (L+U)/2. Everything else is post-processing:
//
//	ñ₁ = max(ñ, 1), μ = clamp(S̃/ñ₁, -h, h)
//	population variance = clamp(Q̃/ñ₁ - μ², 0, h²)
//	sample variance     = population variance · ñ₂/(ñ₂-1), ñ₂ = max(ñ, 2)
//	standard deviation  = √variance (interval endpoints likewise: √ is monotone)
//
// h² bounds the population variance of values in [L, U].

// VarianceKind selects the population (VAR_POP) or sample (VAR_SAMP)
// variance.
type VarianceKind int

// The variance kinds.
const (
	PopulationVariance VarianceKind = iota
	SampleVariance
)

// ReleaseCenteredSumOfSquares releases Σ (clamp(x) - (L+U)/2)², computed
// from the summary as SumSquares - 2m·Sum + n·m² and limited to [0, n·h²],
// with Laplace noise for sensitivity ((U-L)/2)².
func ReleaseCenteredSumOfSquares(src noise.Source, b mech.Bounds, s Summary, epsilon float64) (Noisy, error) {
	return ReleaseUnitCenteredSumOfSquares(src, b, s, 1, epsilon)
}

// ReleaseUnitCenteredSumOfSquares releases the centred sum of squares over
// a table bounded to k rows per privacy unit with Laplace noise for
// sensitivity k·((U-L)/2)² (unit.go), formed in float from the summary:
// exact only where the cancellation of SumSquares − 2m·Sum + n·m² stays
// far below the sensitivity, which a column far from 0 for its width
// breaks (centred_grid.go). It serves BoundedVariance, the float
// construction the benchmarks compare with; the planner releases
// ReleaseUnitCenteredSumOfSquaresOnGrid.
func ReleaseUnitCenteredSumOfSquares(src noise.Source, b mech.Bounds, s Summary, k int64, epsilon float64) (Noisy, error) {
	if err := b.Validate(); err != nil {
		return Noisy{}, err
	}
	if err := s.validate(); err != nil {
		return Noisy{}, err
	}
	if err := checkRows(k); err != nil {
		return Noisy{}, err
	}
	h, m, n := b.HalfRange(), b.Mid(), float64(s.Count)
	l, err := noise.NewLaplace(timesRows(k, exact.RoundUp(exact.RoundUp(h)*exact.RoundUp(h))), epsilon)
	if err != nil {
		return Noisy{}, err
	}
	q := mech.Clamp(s.SumSquares-2*m*s.Sum+n*m*m, 0, n*h*h)
	return Noisy{value: l.Release(src, q), stat: statCenteredSumOfSquares, bounds: b, noise: l}, nil
}

// varianceOf is the variance derived from the three primitives.
func varianceOf(b mech.Bounds, kind VarianceKind, count, centeredSum, centeredSumSquares float64) float64 {
	h := b.HalfRange()
	n := max(count, 1)
	mu := mech.Clamp(centeredSum/n, -h, h)
	v := mech.Clamp(centeredSumSquares/n-mu*mu, 0, h*h)
	if kind == SampleVariance {
		n2 := max(count, 2)
		v *= n2 / (n2 - 1)
	}
	return v
}

// varianceRange returns an upper bound on the true variance of any dataset
// within b: h² for the population variance, 2h² (n = 2) for the sample one.
func varianceRange(b mech.Bounds, kind VarianceKind) float64 {
	h := b.HalfRange()
	if kind == SampleVariance {
		return 2 * h * h
	}
	return h * h
}

// DeriveVariance computes the variance from a noisy count, centered sum and
// centered sum of squares over bounds b, with a conservative interval
// (derived_interval.go): post-processing.
func DeriveVariance(b mech.Bounds, kind VarianceKind, count, centeredSum, centeredSumSquares Noisy, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if kind != PopulationVariance && kind != SampleVariance {
		return mech.Estimate{}, fmt.Errorf("%w: variance kind %d", mech.ErrInvalidInput, kind)
	}
	for _, c := range []struct {
		r    Noisy
		stat statistic
	}{{count, statCount}, {centeredSum, statCenteredSum}, {centeredSumSquares, statCenteredSumOfSquares}} {
		if err := c.r.check(c.stat, b); err != nil {
			return mech.Estimate{}, err
		}
	}
	value := varianceOf(b, kind, count.value, centeredSum.value, centeredSumSquares.value)
	top := varianceRange(b, kind)
	alpha := (1 - confidence) / 3
	minCount := 1.0
	if kind == SampleVariance {
		minCount = 2
	}
	n, ok := countSpan(count, alpha, minCount)
	if !ok {
		return mech.Estimate{Value: value, Low: 0, High: top, HasInterval: true}, nil
	}
	v := populationVarianceSpan(b, n, primitiveSpan(centeredSum, alpha), primitiveSpan(centeredSumSquares, alpha))
	if kind == SampleVariance { // × n/(n-1), decreasing in n
		v = span{v.lo * n.hi / (n.hi - 1), v.hi * n.lo / (n.lo - 1)}
	}
	return mech.Estimate{Value: value, Low: mech.Clamp(v.lo, 0, top), High: mech.Clamp(v.hi, 0, top), HasInterval: true}, nil
}

// DeriveStddev is the square root of DeriveVariance, interval included.
func DeriveStddev(b mech.Bounds, kind VarianceKind, count, centeredSum, centeredSumSquares Noisy, confidence float64) (mech.Estimate, error) {
	v, err := DeriveVariance(b, kind, count, centeredSum, centeredSumSquares, confidence)
	if err != nil {
		return mech.Estimate{}, err
	}
	return mech.Estimate{Value: math.Sqrt(v.Value), Low: math.Sqrt(v.Low), High: math.Sqrt(v.High), HasInterval: true}, nil
}

// BoundedVariance is the complete VARIANCE mechanism: count, centered sum
// and centered sum of squares released with ε/3 each, then DeriveVariance.
// It checks every argument before drawing noise.
func BoundedVariance(src noise.Source, b mech.Bounds, kind VarianceKind, s Summary, epsilon, confidence float64) (mech.Estimate, error) {
	releases, err := releaseForVariance(src, b, kind, s, epsilon, confidence)
	if err != nil {
		return mech.Estimate{}, err
	}
	return DeriveVariance(b, kind, releases[0], releases[1], releases[2], confidence)
}

// BoundedStddev is BoundedVariance followed by a square root.
func BoundedStddev(src noise.Source, b mech.Bounds, kind VarianceKind, s Summary, epsilon, confidence float64) (mech.Estimate, error) {
	releases, err := releaseForVariance(src, b, kind, s, epsilon, confidence)
	if err != nil {
		return mech.Estimate{}, err
	}
	return DeriveStddev(b, kind, releases[0], releases[1], releases[2], confidence)
}

// releaseForVariance checks the arguments of BoundedVariance and makes its
// three releases.
func releaseForVariance(src noise.Source, b mech.Bounds, kind VarianceKind, s Summary, epsilon, confidence float64) ([]Noisy, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if err := checkDerive(b, confidence); err != nil {
		return nil, err
	}
	if kind != PopulationVariance && kind != SampleVariance {
		return nil, fmt.Errorf("%w: variance kind %d", mech.ErrInvalidInput, kind)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return releasePrimitives(src, b, s, epsilon/3, true)
}

// releasePrimitives releases the count and the centered sum of s, and with
// squares the centered sum of squares, each with epsilon.
func releasePrimitives(src noise.Source, b mech.Bounds, s Summary, epsilon float64, squares bool) ([]Noisy, error) {
	count, err := ReleaseCount(src, s.Count, epsilon)
	if err != nil {
		return nil, err
	}
	sum, err := ReleaseCenteredSum(src, b, s, epsilon)
	if err != nil {
		return nil, err
	}
	if !squares {
		return []Noisy{count, sum}, nil
	}
	sumSquares, err := ReleaseCenteredSumOfSquares(src, b, s, epsilon)
	if err != nil {
		return nil, err
	}
	return []Noisy{count, sum, sumSquares}, nil
}
