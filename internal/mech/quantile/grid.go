package quantile

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// GridExponential: the exponential mechanism for a quantile over a public grid
// of bins, computed from a histogram (MEDIAN, PERCENTILE_CONT; the proxy's
// default quantile baseline).
//
// Definition. [L, U] is cut into B public bins; c_j is the number of
// (clamped) values in bin j, a_j = c_0 + … + c_{j-1} the number below bin
// j and b_j = a_j + c_j the number up to and including it. With target
// t = q·n the utility of bin j is the distance from t to the ranks the bin
// holds,
//
//	u_j = -dist(t, [a_j, b_j]) = -max(a_j - t, t - b_j, 0),
//
// and the mechanism picks bin j with probability ∝ exp(ε·u_j/(2Δu)). The
// planner maps the bin to a value (its integer for unit bins of an integer
// column, its midpoint otherwise): post-processing.
//
// Sensitivity, add/remove. Adding one value v changes a_j by [v below bin
// j] ∈ {0,1}, b_j by [v in or below bin j] ∈ {0,1}, and t by q. So a_j - t
// moves by an element of {-q, 1-q} and t - b_j by one of {q-1, q}; the
// maximum of these and 0 moves by at most Δu = max(q, 1-q) ≤ 1. Removing
// is symmetric. Hence the mechanism is exactly ε-DP (pure, δ = 0) under
// add/remove one row, with n private and used exactly.
//
// Why a grid rather than intervals between data points: there is no
// clipping, so ties cost nothing (a block of equal values sits in one bin
// with utility 0 when it holds the target), the fetch is one GROUP BY
// histogram computed by the database (DESIGN.md §5) whatever n is, and
// outputs are grid points that carry no low-order bits of any value. The
// price is resolution: the answer is exact only to the bin width.
//
// Floating point: utilities are exact integers minus t rounded once;
// sampling is SampleLogWeights (total-variation error below B·2^-51).
type GridExponential struct {
	q, epsilon  float64
	bins        int
	sensitivity float64
}

// MaxGridBins caps the number of bins of a GridExponential.
const MaxGridBins = 1 << 20

// NewGridExponential returns the grid exponential mechanism for quantile
// q ∈ [0, 1] with ε over bins ∈ [1, 2^20] bins.
func NewGridExponential(q, epsilon float64, bins int) (*GridExponential, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if !(q >= 0 && q <= 1) {
		return nil, fmt.Errorf("%w: %v, must be in [0, 1]", mech.ErrInvalidQuantile, q)
	}
	if bins < 1 || bins > MaxGridBins {
		return nil, fmt.Errorf("%w: %d bins, must be in [1, 2^20]", mech.ErrInvalidInput, bins)
	}
	return &GridExponential{q: q, epsilon: epsilon, bins: bins, sensitivity: max(q, 1-q)}, nil
}

// Bins returns the number of bins the histogram must have.
func (m *GridExponential) Bins() int { return m.bins }

// logWeights returns ε·u_j/(2Δu) for every bin of counts.
func (m *GridExponential) logWeights(counts []int64) ([]float64, error) {
	if len(counts) != m.bins {
		return nil, fmt.Errorf("%w: histogram has %d bins, want %d", mech.ErrInvalidInput, len(counts), m.bins)
	}
	var n int64
	for _, c := range counts {
		if c < 0 {
			return nil, fmt.Errorf("%w: negative bin count %d", mech.ErrInvalidInput, c)
		}
		n += c
	}
	t := m.q * float64(n)
	w := make([]float64, m.bins)
	var below int64
	for j, c := range counts {
		a, b := float64(below), float64(below+c)
		dist := math.Max(math.Max(a-t, t-b), 0)
		w[j] = -m.epsilon * dist / (2 * m.sensitivity)
		below += c
	}
	return w, nil
}

// Release picks a bin index from the histogram counts (one per bin, of the
// clamped non-NULL values).
func (m *GridExponential) Release(src noise.Source, counts []int64) (int, error) {
	w, err := m.logWeights(counts)
	if err != nil {
		return 0, err
	}
	return noise.SampleLogWeights(src, w)
}
