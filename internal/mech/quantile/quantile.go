package quantile

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Quantile: the exponential mechanism on a window of order statistics
// (MEDIAN, PERCENTILE_CONT(col, q)).
//
// Definition. The output space is a public grid G = γℤ ∩ [L, U], with γ the
// smallest power of two that is at least (U-L)·2^-40 and at least the
// float64 spacing at max(|L|, |U|): about 2^40 points, every one an exact
// float64, fixed before any data is seen. Let c_0 ≤ … ≤ c_{n-1} be the
// clamped values and c_{-1} = L, c_n = U. A grid point y has
// rank(y) = #{v : v < y}; the points of rank i form the interval
// I_i = G ∩ (c_{i-1}, c_i] (I_0 = G ∩ [L, c_0]), i = 0..n. Ties make empty
// intervals; a point equal to a tied value belongs to the interval that ends
// there. The target rank is q·n and the utility, clipped at the public
// window half-width k ≥ 1, is
//
//	u(y) = -min(|rank(y) - q·n|, k).
//
// The mechanism outputs y ∈ G with probability ∝ exp(ε·u(y)/(2Δu)): it
// picks an interval with weight |I_i|·exp(ε·u_i/(2Δu)) and a uniform point
// of it (exact integer Uniform). This is the continuous exponential
// mechanism on [L, U] discretised to G; since the output is a grid point
// drawn by integers, its low bits cannot reveal a data value the way
// lo + (hi-lo)·u on floats would (Mironov 2012).
//
// Sensitivity, add/remove. Adding a value v to D (n → n+1) changes, at every
// y ∈ G, rank(y) by [v < y] ∈ {0, 1} and the target by q, so
// rank(y) - q·n moves by [v < y] - q ∈ {-q, 1-q}; |·| is 1-Lipschitz and so
// is min(·, k) (a minimum with a constant never increases sensitivity).
// Hence |u_D(y) - u_D'(y)| ≤ Δu = max(q, 1-q) for every y, and with exact
// weights the probability ratio would be at most e^(ε/2) in the numerator
// and e^(ε/2) in the normaliser. (For the median Δu = 1/2: the weights are
// exp(ε·u), twice the usual exponent.) n is private and used exactly.
//
// What the implementation guarantees: pure ε-DP (δ = 0) under add/remove
// one row. Every exponent x_i = ε'·min(|i − q·n|, k)/(2Δu) is an exact
// rational (q, ε and Δu the exact rationals of their float64 values,
// ε' = ε − 2^−55), and which intervals are inner or merged is decided on
// those rationals too. Each exp(−x_i) is a dyadic within a relative 2^−62
// (noise.ExpNeg, ExpNegPowers), the interval is drawn with probability
// exactly |I_i|·w_i/Σ (noise.ExpTable), so every ratio on neighbours is
// within e^(ε' + 2^−59) < e^ε. TestWindowExactPrivacy computes both laws
// of thousands of neighbouring datasets and checks it.
//
// Window. Intervals with |i - q·n| ≥ k all have utility -k, so the lower
// ones merge into G ∩ [L, c_{a-1}] and the upper ones into G ∩ (c_b, U], where a..b
// are the inner intervals (|i - q·n| < k). Only c_{a-1} .. c_b are needed,
// never the whole column (DESIGN.md §5). With q·n exact to ±½ (n ≤ 2^53)
// the inner intervals lie in ⌊q·n⌋-k .. ⌊q·n⌋+k+1, so the needed 1-based
// ranks lie in f-k .. f+k+2 with f = ⌊fl(q·n)⌋. For the window centre
// r = ⌊q·(n-1)⌋+1 of RankWindowSpec, f is r-1 or r (or r+1 if q·n rounded
// up onto an integer), so the spec r-(k+2) .. r+(k+3), 2k+6 values, covers
// them, with a rank to spare on each side in the common case f = r.
//
// Choice of k (DefaultWindow). Clipping changes only pieces at rank
// distance ≥ k, whose total weight is at most (U-L)·e^(-εk/(2Δu)). If the
// ranks within k/2 of the target span a length of at least 10^-6·(U-L),
// the inner weight is at least 10^-6·(U-L)·e^(-εk/(4Δu)), so with
// k = ⌈(4Δu/ε)·ln 10^12⌉ the clipped mechanism is within 2·10^-6 in total
// variation of the unclipped one: clipping costs no accuracy worth naming.
// For ε = 1 that is k = 56 for the median, 110 for q = 0.99.
//
// Small n: n = 0 gives one interval G (uniform output); n = 1, 2 and
// all-equal values need nothing special (ties only add empty intervals). The
// mechanism has no data-independent interval, so its Estimate has none.
type WindowExponential struct {
	bounds      mech.Bounds
	q, epsilon  float64
	k           int64
	sensitivity float64
	scale       *big.Rat // ε'/(2Δu), exactly: the exponent per unit of rank distance
	grid        float64  // γ
	gridMin     int64    // ⌈L/γ⌉: G = {jγ : gridMin ≤ j ≤ ⌊U/γ⌋}
}

// maxQuantileWindow caps k, which keeps windows fetchable. Only ε below
// about 10^-5 reaches it; the guarantee does not depend on k.
const maxQuantileWindow = 1 << 24

// maxWindowCount is the largest n the mechanism accepts: q·n and the ranks
// must be exact in float64.
const maxWindowCount = 1 << 53

// DefaultWindow returns k = ⌈(4·max(q, 1-q)/ε)·ln 10^12⌉, limited
// to [1, 2^24] (see Quantile for why clipping there is harmless).
func DefaultWindow(epsilon, q float64) int64 {
	k := math.Ceil(4 * max(q, 1-q) / epsilon * math.Log(1e12))
	if !(k >= 1) {
		return 1
	}
	return int64(min(k, maxQuantileWindow))
}

// NewWindowExponential returns the exponential mechanism for quantile q ∈ [0, 1] of
// values clamped to b, with ε and window half-width k ∈ [1, 2^24].
func NewWindowExponential(b mech.Bounds, q, epsilon float64, k int64) (*WindowExponential, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if !(q >= 0 && q <= 1) {
		return nil, fmt.Errorf("%w: %v, must be in [0, 1]", mech.ErrInvalidQuantile, q)
	}
	if k < 1 || k > maxQuantileWindow {
		return nil, fmt.Errorf("%w: window half-width %d, must be in [1, 2^24]", mech.ErrInvalidQuantile, k)
	}
	grid := gridStep(b)
	qr := new(big.Rat).SetFloat64(q)
	sensitivity := new(big.Rat).Sub(big.NewRat(1, 1), qr) // exactly 1 − q
	if qr.Cmp(sensitivity) > 0 {
		sensitivity = qr
	}
	scale := new(big.Rat).Sub(new(big.Rat).SetFloat64(epsilon), noise.ExpWeightSlack)
	scale.Quo(scale, sensitivity.Mul(sensitivity, big.NewRat(2, 1)))
	return &WindowExponential{bounds: b, q: q, epsilon: epsilon, k: k, sensitivity: max(q, 1-q), scale: scale,
		grid: grid, gridMin: int64(math.Ceil(b.Lower / grid))}, nil
}

// gridStep returns γ: the smallest power of two ≥ (U-L)·2^-40 and ≥ the
// float64 spacing at max(|L|, |U|), so that every multiple of γ in [L, U]
// is exactly representable and |j| ≤ 2^53 for each grid point jγ.
func gridStep(b mech.Bounds) float64 {
	m := math.Max(math.Abs(b.Lower), math.Abs(b.Upper))
	spacing := 0x1p-1074
	if m >= 0x1p-1022 {
		spacing = math.Ldexp(1, math.Ilogb(m)-52)
	}
	return math.Max(noise.CeilPowerOfTwo(b.HalfRange()*0x1p-39), spacing)
}

// K returns the window half-width k.
func (m *WindowExponential) K() int64 { return m.k }

// Sensitivity returns Δu = max(q, 1-q), the sensitivity of the utility.
func (m *WindowExponential) Sensitivity() float64 { return m.sensitivity }

// Window returns the ranks to fetch (see Quantile): k+2 below and k+3
// above the centre rank of q.
func (m *WindowExponential) Window() mech.RankWindowSpec {
	return mech.RankWindowSpec{Quantile: m.q, Below: m.k + 2, Above: m.k + 3}
}

// Release draws the quantile from the window: a point of [L, U]. The
// Estimate has no interval. It fails with ErrWindowMismatch if the window
// misses a rank the mechanism needs and with ErrInvalidInput if it is not
// a window of sorted values within the bounds.
func (m *WindowExponential) Release(src noise.Source, w mech.SortedWindow) (mech.Estimate, error) {
	ps, table, err := m.law(w)
	if err != nil {
		return mech.Estimate{}, err
	}
	return mech.Estimate{Value: m.draw(src, ps, table)}, nil
}

// draw picks a piece from the table and a uniform grid point of it.
func (m *WindowExponential) draw(src noise.Source, ps []piece, table *noise.ExpTable) float64 {
	p := ps[table.Draw(src)]
	j := p.after + 1 + int64(noise.Uniform(src, uint64(p.points)))
	return float64(j) * m.grid
}

// law returns the pieces for w and the table of their weights
// |I_i|·exp(−x_i): the law Release draws from.
func (m *WindowExponential) law(w mech.SortedWindow) ([]piece, *noise.ExpTable, error) {
	ps, err := m.pieces(w)
	if err != nil {
		return nil, nil, err
	}
	counts := make([]uint64, len(ps))
	weights := make([]noise.Weight, len(ps))
	for i, p := range ps {
		counts[i], weights[i] = uint64(p.points), p.weight
	}
	table, err := noise.NewExpTable(counts, weights)
	return ps, table, err
}

// piece is the set of grid points jγ with after < j ≤ after+points, lying
// in (lo, hi] (in [lo, hi] for the first piece, lo = L), all of utility
// −min(|i − q·n|, k) (utility, rounded, for reading), with weight
// ≈ exp(−x), x = ε'·min(|i − q·n|, k)/(2Δu) exactly.
type piece struct {
	lo, hi        float64
	after, points int64
	utility       float64
	weight        noise.Weight
}

// pieces returns the mechanism's intervals for w, in ascending order: the
// merged lower region (if any), the inner intervals, the merged upper region.
// Interval i (0-based, as in the Quantile comment) ends at rank i+1. With
// t = q·n exact, the inner intervals are t − k < i < t + k; the exponents
// below t are s·(t − r) + s·(r − i) with r = ⌈t⌉ − 1, above it
// s·(r' − t) + s·(i − r') with r' = ⌊t⌋ + 1, one noise.ExpNegPowers call
// per side.
func (m *WindowExponential) pieces(w mech.SortedWindow) ([]piece, error) {
	n, k := w.Count, m.k
	if n < 0 || n > maxWindowCount {
		return nil, fmt.Errorf("%w: count %d outside [0, 2^53]", mech.ErrInvalidInput, n)
	}
	t := new(big.Rat).Mul(new(big.Rat).SetFloat64(m.q), big.NewRat(n, 1))
	floorT := new(big.Int).Quo(t.Num(), t.Denom()).Int64() // t ≥ 0
	r, rp := floorT, floorT+1                              // ⌈t⌉ − 1 and ⌊t⌋ + 1
	if t.IsInt() {
		r--
	}
	// Inner: t − k < i < t + k, i.e. ⌊t⌋ − k + 1 ≤ i ≤ ⌈t⌉ + k − 1.
	lo, hi := max(0, floorT-k+1), min(n, r+k)
	if err := w.Check(m.bounds, mech.RankRange{First: max(lo, 1), Last: min(hi+1, n)}); err != nil {
		return nil, err
	}
	value := func(i int64) float64 { // c_{i-1} of the comment: rank i, padded with L and U
		v, _ := w.At(m.bounds, i)
		return v
	}
	exponent := func(x0 *big.Rat, ms []uint64) ([]noise.Weight, error) {
		return noise.ExpNegPowers(x0.Mul(x0, m.scale), m.scale, ms)
	}
	var belowMs, aboveMs []uint64
	for i := min(hi, r); i >= lo; i-- {
		belowMs = append(belowMs, uint64(r-i))
	}
	for i := max(lo, rp); i <= hi; i++ {
		aboveMs = append(aboveMs, uint64(i-rp))
	}
	below, err := exponent(new(big.Rat).Sub(t, big.NewRat(r, 1)), belowMs)
	if err != nil {
		return nil, err
	}
	above, err := exponent(new(big.Rat).Sub(big.NewRat(rp, 1), t), aboveMs)
	if err != nil {
		return nil, err
	}
	clipped, err := noise.ExpNeg(new(big.Rat).Mul(m.scale, big.NewRat(k, 1)))
	if err != nil {
		return nil, err
	}
	tf, _ := t.Float64()
	var ps []piece
	if lo > 0 {
		ps = append(ps, m.newPiece(m.bounds.Lower, value(lo), true, -float64(k), clipped))
	}
	for i := lo; i <= hi; i++ {
		var wt noise.Weight
		switch {
		case i <= r:
			wt = below[r-i-max(0, r-hi)]
		case i >= rp:
			wt = above[i-max(lo, rp)]
		default: // i = t
			wt, _ = noise.ExpNeg(new(big.Rat))
		}
		ps = append(ps, m.newPiece(value(i), value(i+1), i == 0, -math.Abs(float64(i)-tf), wt))
	}
	if hi < n {
		ps = append(ps, m.newPiece(value(hi+1), m.bounds.Upper, false, -float64(k), clipped))
	}
	return ps, nil
}

// newPiece returns the piece of utility u and weight w holding the grid
// points in (lo, hi], or in [lo, hi] when fromLower (lo = L, the first piece).
func (m *WindowExponential) newPiece(lo, hi float64, fromLower bool, u float64, w noise.Weight) piece {
	after := m.gridIndex(lo)
	if fromLower {
		after = m.gridMin - 1
	}
	return piece{lo: lo, hi: hi, after: after, points: m.gridIndex(hi) - after, utility: u, weight: w}
}

// gridIndex returns ⌊x/γ⌋ for x in [L, U], exactly.
func (m *WindowExponential) gridIndex(x float64) int64 {
	return int64(math.Floor(x / m.grid))
}
