package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Sum mechanisms.
//
// Guarantee: ε-DP under add/remove of one row. Every value is clamped to
// the public [L, U] (by the database), so one row contributes some
// c ∈ [L, U] to Σ clamp(x) and adding or removing it changes the sum by
// at most Δ = max(|L|, |U|): Laplace(Δ/ε) on the grid (Laplace) is ε-DP.
// The SUM statistic itself is released from exact grid sums
// (sum_grid.go); the float constructions here serve the centred sums of
// BoundedMean and BoundedVariance.
//
// The centered sum Σ (clamp(x) - m) with m = (L+U)/2 is the primitive of
// the mean and variance: one row contributes c - m ∈ [-(U-L)/2, (U-L)/2],
// so its sensitivity is the smaller Δ = (U-L)/2.
//
// Floating point: in these float constructions the database computes
// Σ clamp(x) in its own arithmetic and the centered sum is derived from it
// here; their rounding errors are not part of the sensitivity analysis, so
// they are not what the proxy releases (Casacuberta et al. 2022 exploit
// such sums): its SUM, AVG and VARIANCE come from exact grid sums
// (sum_grid.go, centred_grid.go, edges.go). BoundedMean and
// BoundedVariance remain as the textbook baselines the benchmarks compare
// against.

// Summary is what the database computes over the rows a query selects,
// after clamping each value to the column's bounds.
type Summary struct {
	// Count is n, the exact number of (non-NULL) values.
	Count int64
	// Sum is Σ clamp(x).
	Sum float64
	// SumSquares is Σ clamp(x)²; only the variance needs it.
	SumSquares float64
}

// validate checks that s can come from a database.
func (s Summary) validate() error {
	if s.Count < 0 || math.IsNaN(s.Sum) || math.IsInf(s.Sum, 0) ||
		!(s.SumSquares >= 0) || math.IsInf(s.SumSquares, 0) {
		return fmt.Errorf("%w: summary %+v", mech.ErrInvalidInput, s)
	}
	return nil
}

// centeredSum returns Σ (clamp(x) - m) = Sum - n·m, limited to the range
// [-n·h, n·h] every dataset satisfies (so rounding cannot leave it).
func (s Summary) centeredSum(b mech.Bounds) float64 {
	n, h := float64(s.Count), b.HalfRange()
	return math.Min(math.Max(s.Sum-n*b.Mid(), -n*h), n*h)
}

// DeriveSum turns a noisy sum into an answer with its Laplace interval; when
// the bounds fix the sign of every value (L ≥ 0 or U ≤ 0) the value and the
// interval are limited to that sign.
func DeriveSum(sum Noisy, confidence float64) (mech.Estimate, error) {
	if err := mech.CheckConfidence(confidence); err != nil {
		return mech.Estimate{}, err
	}
	if sum.noise == nil || sum.stat != statSum {
		return mech.Estimate{}, fmt.Errorf("%w: not a sum release", mech.ErrInvalidInput)
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if sum.bounds.Lower >= 0 {
		lo = 0
	}
	if sum.bounds.Upper <= 0 {
		hi = 0
	}
	return interval(sum.value, sum.HalfWidth(confidence), lo, hi), nil
}

// ReleaseCenteredSum releases Σ (clamp(x) - (L+U)/2), computed from the
// summary, with Laplace noise for sensitivity (U-L)/2.
func ReleaseCenteredSum(src noise.Source, b mech.Bounds, s Summary, epsilon float64) (Noisy, error) {
	return ReleaseUnitCenteredSum(src, b, s, 1, epsilon)
}

// ReleaseUnitCenteredSum releases the centred sum over a table bounded to
// k rows per privacy unit with Laplace noise for sensitivity k·(U-L)/2
// (unit.go), formed in float as Sum − n·m: exact only where that
// cancellation stays far below the sensitivity (centred_grid.go). It
// serves BoundedMean and BoundedVariance, the float constructions the
// benchmarks compare with; the planner releases
// ReleaseUnitCenteredSumOnGrid.
func ReleaseUnitCenteredSum(src noise.Source, b mech.Bounds, s Summary, k int64, epsilon float64) (Noisy, error) {
	if err := b.Validate(); err != nil {
		return Noisy{}, err
	}
	if err := s.validate(); err != nil {
		return Noisy{}, err
	}
	if err := checkRows(k); err != nil {
		return Noisy{}, err
	}
	l, err := noise.NewLaplace(timesRows(k, exact.RoundUp(b.HalfRange())), epsilon)
	if err != nil {
		return Noisy{}, err
	}
	return Noisy{value: l.Release(src, s.centeredSum(b)), stat: statCenteredSum, bounds: b, noise: l}, nil
}
