package quantile

import (
	"fmt"
	"math/big"

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
// is symmetric. With exact weights the mechanism would be ε-DP: the
// numerator and the normaliser of each probability each move by at most
// e^(ε/2).
//
// What the implementation guarantees: pure ε-DP (δ = 0) under add/remove
// one row, n private and used exactly. It computes every exponent
// x_j = ε'·dist_j/(2Δu) exactly as a rational, with ε' = ε − 2^−55 and
// t = q·n, q and ε read as the exact rationals their float64 values are.
// Each weight exp(−x_j) becomes a dyadic w_j within a relative
// noise.ExpWeightError = 2^−62 of it (noise.ExpNeg/ExpNegPowers), and the
// bin is drawn with probability exactly w_j/Σw (noise.ExpTable: integer
// arithmetic only, no weight rounded to 0 however small). So each
// probability ratio on neighbours is at most e^(ε')·((1+2^−62)/(1−2^−62))²
// < e^(ε'+2^−59) < e^ε. TestGridExactPrivacy computes both laws of
// thousands of neighbouring histograms and checks this.
//
// Why a grid rather than intervals between data points: there is no
// clipping, so ties cost nothing (a block of equal values sits in one bin
// with utility 0 when it holds the target), the fetch is one GROUP BY
// histogram computed by the database (DESIGN.md §5) whatever n is, and
// outputs are grid points that carry no low-order bits of any value. The
// price is resolution: the answer is exact only to the bin width.
//
// No floating point decides anything: the exponents are exact rationals
// and the draw is exact; the only approximation is the stated 2^−62 of
// each weight, paid for by the 2^−55 taken from ε.
type GridExponential struct {
	q, epsilon  float64
	bins        int
	sensitivity *big.Rat // Δu = max(q, 1−q)
	scale       *big.Rat // (ε − 2^−55)/(2Δu): the exponent per unit of rank distance
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
	qr := new(big.Rat).SetFloat64(q)
	sensitivity := new(big.Rat).Sub(big.NewRat(1, 1), qr) // exactly 1 − q
	if qr.Cmp(sensitivity) > 0 {
		sensitivity = qr
	}
	m := &GridExponential{q: q, epsilon: epsilon, bins: bins, sensitivity: sensitivity}
	m.setScale()
	return m, nil
}

// setScale computes the exponent per unit of rank distance from ε and Δu.
func (m *GridExponential) setScale() {
	m.scale = new(big.Rat).Sub(new(big.Rat).SetFloat64(m.epsilon), noise.ExpWeightSlack)
	m.scale.Quo(m.scale, new(big.Rat).Mul(big.NewRat(2, 1), m.sensitivity))
}

// Bins returns the number of bins the histogram must have.
func (m *GridExponential) Bins() int { return m.bins }

// table returns the law Release draws from for the histogram counts.
// With t = q·n, the bins j < lo have b_j < t (distance t − b_j), the bins
// j ≥ hi have a_j > t (distance a_j − t) and the bins between distance 0.
// Walking away from the target, the distances grow by integers, so each
// side is one call of noise.ExpNegPowers: below, x = s·(t − r) + s·m with
// r = ⌈t⌉ − 1 the largest integer below t and m = r − b_j; above,
// x = s·(r' − t) + s·m with r' = ⌊t⌋ + 1 and m = a_j − r'.
func (m *GridExponential) table(counts []int64) (*noise.ExpTable, error) {
	if len(counts) != m.bins {
		return nil, fmt.Errorf("%w: histogram has %d bins, want %d", mech.ErrInvalidInput, len(counts), m.bins)
	}
	var n int64
	for _, c := range counts {
		if c < 0 || c > maxGridCount {
			return nil, fmt.Errorf("%w: bin count %d outside [0, 2^53]", mech.ErrInvalidInput, c)
		}
		n += c
		if n > maxGridCount {
			return nil, fmt.Errorf("%w: more than 2^53 values", mech.ErrInvalidInput)
		}
	}
	t := new(big.Rat).Mul(new(big.Rat).SetFloat64(m.q), new(big.Rat).SetInt64(n))
	above := make([]int64, m.bins+1) // above[j] = a_j, above[bins] = n
	for j, c := range counts {
		above[j+1] = above[j] + c
	}
	tBelow := new(big.Int).Quo(t.Num(), t.Denom()) // ⌊t⌋ (t ≥ 0)
	ri, rpi := tBelow.Int64(), tBelow.Int64()+1    // ⌈t⌉ − 1 and ⌊t⌋ + 1
	if t.IsInt() {
		ri--
	}
	lo, hi := 0, m.bins // bins [0, lo) below, [hi, bins) above
	for lo < m.bins && above[lo+1] <= ri {
		lo++
	}
	for hi > lo && above[hi-1] >= rpi {
		hi--
	}
	weights := make([]noise.Weight, m.bins)
	belowMs := make([]uint64, lo)
	for i := range lo { // bins lo−1, lo−2, …, 0
		belowMs[i] = uint64(ri - above[lo-i])
	}
	x0 := new(big.Rat).Sub(t, new(big.Rat).SetInt64(ri))
	ws, err := noise.ExpNegPowers(x0.Mul(x0, m.scale), m.scale, belowMs)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		weights[lo-1-i] = w
	}
	aboveMs := make([]uint64, m.bins-hi)
	for i := range aboveMs {
		aboveMs[i] = uint64(above[hi+i] - rpi)
	}
	x0 = new(big.Rat).Sub(new(big.Rat).SetInt64(rpi), t)
	if ws, err = noise.ExpNegPowers(x0.Mul(x0, m.scale), m.scale, aboveMs); err != nil {
		return nil, err
	}
	copy(weights[hi:], ws)
	one, _ := noise.ExpNeg(new(big.Rat))
	for j := lo; j < hi; j++ {
		weights[j] = one
	}
	return noise.NewExpTable(nil, weights)
}

// maxGridCount bounds n, so that every exponent stays below 2^60.
const maxGridCount = 1 << 53

// Release picks a bin index from the histogram counts (one per bin, of the
// clamped non-NULL values).
func (m *GridExponential) Release(src noise.Source, counts []int64) (int, error) {
	t, err := m.Law(counts)
	if err != nil {
		return 0, err
	}
	return t.Draw(src), nil
}

// Law returns the exact law of Release on counts: Release(src, counts)
// is Law(counts).Draw(src). For benchmarks that draw many releases from
// one histogram; each draw is one ε-DP release.
func (m *GridExponential) Law(counts []int64) (*noise.ExpTable, error) { return m.table(counts) }
