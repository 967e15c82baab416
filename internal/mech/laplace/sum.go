package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
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
//
// The releases of a count or a sum on disjoint rows (WITH ROLLUP's groups)
// add up to a release of the count or sum of their union whose noise is
// the sum of theirs (Total); DeriveTotal gives it the interval of that
// noise (noise.Sum), and DeriveCount and DeriveSum are the case of one
// release.

// DeriveSum turns a noisy sum into an answer with its Laplace interval; when
// the bounds fix the sign of every value (L ≥ 0 or U ≤ 0) the value and the
// interval are limited to that sign.
func DeriveSum(sum Noisy, confidence float64) (mech.Estimate, error) {
	if sum.noise == nil || sum.stat != statSum {
		return mech.Estimate{}, fmt.Errorf("%w: not a sum release", mech.ErrInvalidInput)
	}
	return DeriveTotal(sum.Total(), confidence)
}

// Total is the sum of releases of one count or one sum (over one set of
// bounds) on disjoint rows, with the description of its noise: a release
// of the count or sum of the union of those rows.
type Total struct {
	value  float64
	stat   statistic
	bounds mech.Bounds
	noise  noise.Sum
}

// term is a noise model that describes itself as a term of a sum of
// releases: a Laplace or DiscreteLaplace release in the statistic's own
// units.
type term interface{ Sum() noise.Sum }

// Total returns r as a total of one release; the zero Total, which
// DeriveTotal refuses, unless r is a count or a sum.
func (r Noisy) Total() Total {
	n, ok := r.noise.(term)
	if !ok || r.stat != statCount && r.stat != statSum {
		return Total{}
	}
	return Total{value: r.value, stat: r.stat, bounds: r.bounds, noise: n.Sum()}
}

// Plus returns the total of t's and o's releases, which must be of the
// same statistic on disjoint rows (independent noises); the zero Total
// adds nothing.
func (t Total) Plus(o Total) Total {
	if t.noise.Count() == 0 {
		return o
	}
	t.value += o.value
	t.noise = t.noise.Plus(o.noise)
	return t
}

// Value returns the sum of the releases.
func (t Total) Value() float64 { return t.value }

// DeriveTotal turns a total into an answer: its value and the interval
// value ± the half-width of the sum of its releases' noises
// (noise.Sum.HalfWidth), both limited to the range the truth has (a count
// ≥ 0; a sum of the sign the bounds fix, when L ≥ 0 or U ≤ 0), which keeps
// the coverage.
func DeriveTotal(t Total, confidence float64) (mech.Estimate, error) {
	if err := mech.CheckConfidence(confidence); err != nil {
		return mech.Estimate{}, err
	}
	if t.noise.Count() == 0 {
		return mech.Estimate{}, fmt.Errorf("%w: not a total of count or sum releases", mech.ErrInvalidInput)
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if t.stat == statCount || t.bounds.Lower >= 0 {
		lo = 0
	}
	if t.stat == statSum && t.bounds.Upper <= 0 {
		hi = 0
	}
	return interval(t.value, t.noise.HalfWidth(confidence), lo, hi), nil
}
