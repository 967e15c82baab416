package quantile

import (
	"fmt"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// GridExponential: the exponential mechanism for a quantile over a public grid
// of bins, computed from a histogram (MEDIAN, PERCENTILE_CONT; forceable
// as 'exponential', the baseline GridPermuteFlip improves on).
//
// Definition. [L, U] is cut into B public bins; c_j is the number of
// (clamped) values in bin j and a_j = c_0 + … + c_{j-1} the number below
// bin j, so with the n values sorted and ranked from 0 (as PERCENTILE_CONT
// ranks them) bin j holds the ranks a_j .. a_j + c_j − 1. PERCENTILE_CONT
// interpolates at the fractional rank t = q·(n − 1), and the utility of
// bin j is the distance from t to the ranks it holds,
//
//	u_j = -max(a_j − t, t − (a_j + c_j − 1), 0),
//
// and the mechanism picks bin j with probability ∝ exp(ε·u_j/(2Δu)). The
// planner maps the bin to a value (its integer for unit bins of an integer
// column, its midpoint otherwise): post-processing. For n ≥ 1 the bin
// holding rank t has utility 0 when t is an integer; otherwise the bins
// holding ⌊t⌋ and ⌈t⌉ are at distances t − ⌊t⌋ and ⌈t⌉ − t (or one bin
// holds both, at distance 0), so the one whose value PERCENTILE_CONT
// weighs more is preferred and some bin is within ½ of t. The same
// formula rates an empty bin (c_j = 0: it holds no rank, and its two terms
// sum to 1): it sits between ranks a_j − 1 and a_j, and
// u_j = −(|t − (a_j − ½)| + ½), never above −½, so an empty bin is never
// preferred to a bin holding the rank nearest t. With n = 0, t = −q and
// every bin (all empty, a_j = 0) has u_j = −max(q, 1 − q): the law is
// uniform.
//
// Sensitivity, add/remove. Adding one value v (n → n + 1, any n ≥ 0)
// changes a_j by [v below bin j] ∈ {0,1}, a_j + c_j − 1 by [v in or below
// bin j] ∈ {0,1}, and t by q; this holds for empty bins and for n = 0 as
// for any other, since the formula does not distinguish them. So
// a_j − t moves by an element of {−q, 1−q} and t − (a_j + c_j − 1) by
// one of {q−1, q}; the maximum of these and 0 moves by at most
// Δu = max(q, 1−q) ≤ 1. Removing is symmetric. With exact weights the
// mechanism would be ε-DP: the numerator and the normaliser of each
// probability each move by at most e^(ε/2).
//
// What the implementation guarantees: pure ε-DP (δ = 0) under add/remove
// one row, n private and used exactly. It computes every exponent
// x_j = ε'·dist_j/(2Δu) exactly as a rational, with ε' = ε − 2^−55 and
// t = q·(n − 1), q and ε read as the exact rationals their float64 values
// are.
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
	sensitivity, err := gridSensitivity(q, epsilon, bins)
	if err != nil {
		return nil, err
	}
	m := &GridExponential{q: q, epsilon: epsilon, bins: bins, sensitivity: sensitivity}
	m.setScale()
	return m, nil
}

// gridSensitivity checks a grid mechanism's parameters (q ∈ [0, 1], a
// valid ε, bins ∈ [1, 2^20]) and returns the utility's sensitivity
// Δu = max(q, 1−q), exactly.
func gridSensitivity(q, epsilon float64, bins int) (*big.Rat, error) {
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
	return sensitivity, nil
}

// setScale computes the exponent per unit of rank distance from ε and Δu.
func (m *GridExponential) setScale() {
	m.scale = new(big.Rat).Sub(new(big.Rat).SetFloat64(m.epsilon), noise.ExpWeightSlack)
	m.scale.Quo(m.scale, new(big.Rat).Mul(big.NewRat(2, 1), m.sensitivity))
}

// Bins returns the number of bins the histogram must have.
func (m *GridExponential) Bins() int { return m.bins }

// table returns the law Release draws from for the histogram counts: each
// side of the target is one call of noise.ExpNegPowers (rankDistances),
// below x = s·(t − r) + s·m, above x = s·(r' − t) + s·m, the bins between
// weight 1.
func (m *GridExponential) table(counts []int64) (*noise.ExpTable, error) {
	d, err := newRankDistances(counts, m.bins, m.q)
	if err != nil {
		return nil, err
	}
	lo, hi := d.lo, d.hi
	weights := make([]noise.Weight, m.bins)
	belowMs := make([]uint64, lo)
	for i := range lo { // bins lo−1, lo−2, …, 0
		belowMs[i] = uint64(d.belowMultiple(lo - 1 - i))
	}
	ws, err := noise.ExpNegPowers(new(big.Rat).Mul(d.belowGap, m.scale), m.scale, belowMs)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		weights[lo-1-i] = w
	}
	aboveMs := make([]uint64, m.bins-hi)
	for i := range aboveMs {
		aboveMs[i] = uint64(d.aboveMultiple(hi + i))
	}
	if ws, err = noise.ExpNegPowers(new(big.Rat).Mul(d.aboveGap, m.scale), m.scale, aboveMs); err != nil {
		return nil, err
	}
	copy(weights[hi:], ws)
	one, _ := noise.ExpNeg(new(big.Rat))
	for j := lo; j < hi; j++ {
		weights[j] = one
	}
	return noise.NewExpTable(nil, weights)
}

// rankDistances is dist_j for every bin of a histogram, in the form the
// grid mechanisms walk it. With t = q·(n − 1), r = ⌈t⌉ − 1 the largest
// integer below t and r' = ⌊t⌋ + 1 the smallest above, and e_j = a_j +
// c_j − 1 the last rank bin j holds: the bins with e_j ≤ r (a prefix) are
// below t, at distance t − e_j unless a_j − t is larger; the bins with
// a_j ≥ r' (a suffix) are above, at distance a_j − t unless t − e_j is
// larger; the bins between are at distance 0. The prefix and the suffix
// overlap only when t is not an integer, in empty bins with a_j = r' =
// r + 1 (the bins strictly between ranks r and r'), each at distance
// max(t − r, r' − t): they join the side whose term that is. Everywhere
// else the other term is at most 0, so walking away from t the distances
// grow by integers: bin j < lo is at belowGap + belowMultiple(j), bin
// j ≥ hi at aboveGap + aboveMultiple(j), bins [lo, hi) at 0; the
// multiples are non-negative integers, non-increasing below and
// non-decreasing above.
type rankDistances struct {
	above    []int64  // a_j, and above[bins] = n
	r, rp    int64    // r and r'
	lo, hi   int      // bins [0, lo) below, [hi, bins) above, lo ≤ hi
	belowGap *big.Rat // t − r
	aboveGap *big.Rat // r' − t
}

// newRankDistances checks the histogram (bins counts in [0, 2^53], total at
// most 2^53) and returns its distances with q's target.
func newRankDistances(counts []int64, bins int, q float64) (*rankDistances, error) {
	if len(counts) != bins {
		return nil, fmt.Errorf("%w: histogram has %d bins, want %d", mech.ErrInvalidInput, len(counts), bins)
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
	// t = −q when n = 0.
	t := new(big.Rat).Mul(new(big.Rat).SetFloat64(q), new(big.Rat).SetInt64(n-1))
	d := &rankDistances{above: make([]int64, bins+1)}
	for j, c := range counts {
		d.above[j+1] = d.above[j] + c
	}
	tFloor := new(big.Int).Div(t.Num(), t.Denom()) // ⌊t⌋: Euclidean division, the denominator is positive
	d.r, d.rp = tFloor.Int64(), tFloor.Int64()+1   // ⌈t⌉ − 1 and ⌊t⌋ + 1
	if t.IsInt() {
		d.r--
	}
	lo, hi := 0, bins
	for lo < bins && d.above[lo+1]-1 <= d.r {
		lo++
	}
	for hi > 0 && d.above[hi-1] >= d.rp {
		hi--
	}
	d.belowGap = new(big.Rat).Sub(t, new(big.Rat).SetInt64(d.r))
	d.aboveGap = new(big.Rat).Sub(new(big.Rat).SetInt64(d.rp), t)
	// The empty bins [hi, lo), if any, lie strictly between r and r'.
	if hi < lo {
		if d.belowGap.Cmp(d.aboveGap) >= 0 {
			hi = lo
		} else {
			lo = hi
		}
	}
	d.lo, d.hi = lo, hi
	return d, nil
}

// belowMultiple is r − e_j for a bin j < lo.
func (d *rankDistances) belowMultiple(j int) int64 { return d.r - (d.above[j+1] - 1) }

// aboveMultiple is a_j − r' for a bin j ≥ hi.
func (d *rankDistances) aboveMultiple(j int) int64 { return d.above[j] - d.rp }

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
