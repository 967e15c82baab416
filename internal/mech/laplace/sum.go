package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Sum answers.
//
// The SUM statistic is released by ReleaseUnitSumOnGrid (sum_grid.go)
// from the exact grid sums: pure ε-DP under add/remove of one row (one
// unit on a table bounded to k rows per unit), every value clamped to the
// public [L, U] and snapped to the grid of the bounds, so one row changes
// the sum by at most max(|L|, |L + Top·Unit|) (k times that per unit) and
// the Laplace noise is calibrated to that sensitivity. DeriveSum below
// turns the release into an answer: post-processing, no privacy cost.

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
