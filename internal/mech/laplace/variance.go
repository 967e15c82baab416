package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Variance and standard deviation from a count and the centred sums
// (Google's bounded variance).
//
// Guarantee: ε-DP under add/remove of one row (one unit on a table bounded
// to k rows per unit), by sequential composition of three releases with
// ε_n + ε_S + ε_Q = ε: the count (sensitivity 1, or k; ReleaseUnitCount),
// the centred sum S = Σ (c - m) (sensitivity h = (U-L)/2, or k·h;
// ReleaseUnitCenteredSumOnGrid) and the centred sum of squares
// Q = Σ (c - m)² (one row contributes (c - m)² ∈ [0, h²], so its
// sensitivity is h², or k·h²; ReleaseUnitCenteredSumOfSquaresOnGrid), with
// c = clamp(x) and m = (L+U)/2; the sums are formed exactly from the grid
// sums (centred_grid.go). The planner's forced laplace mechanism makes
// these three releases for VARIANCE, VAR_SAMP and STDDEV and splits the
// statement's ε evenly over its distinct releases (ε/3 each for one of
// them alone; an AVG or COUNT of the same column shares the count, and AVG
// the centred sum, at no extra cost). Everything else is
// post-processing (DeriveVariance, DeriveStddev):
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
