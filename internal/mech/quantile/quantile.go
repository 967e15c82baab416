package quantile

import (
	"fmt"
	"math"

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
// picks an interval with weight |I_i|·exp(ε·u_i/(2Δu)) (in log space,
// SampleLogWeights) and a uniform point of it (exact integer Uniform). This
// is the continuous exponential mechanism on [L, U] discretised to G; since
// the output is a grid point drawn by integers, its low bits cannot reveal
// a data value the way lo + (hi-lo)·u on floats would (Mironov 2012).
//
// Sensitivity, add/remove. Adding a value v to D (n → n+1) changes, at every
// y ∈ G, rank(y) by [v < y] ∈ {0, 1} and the target by q, so
// rank(y) - q·n moves by [v < y] - q ∈ {-q, 1-q}; |·| is 1-Lipschitz and so
// is min(·, k) (a minimum with a constant never increases sensitivity).
// Hence |u_D(y) - u_D'(y)| ≤ Δu = max(q, 1-q) ≤ 1 for every y, and the
// probability ratio is at most exp(ε/2) in the numerator and exp(ε/2) in
// the normaliser: exactly ε-DP, δ = 0. (For the median Δu = 1/2: the weights
// are exp(ε·u), twice the usual exponent.) n is private and used exactly,
// which the analysis above covers. Floating point: q·n is rounded once (FMA),
// so utilities are within 2^-53·k of the exact ones; see SampleLogWeights
// for the sampling step.
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
	grid        float64 // γ
	gridMin     int64   // ⌈L/γ⌉: G = {jγ : gridMin ≤ j ≤ ⌊U/γ⌋}
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
	return &WindowExponential{bounds: b, q: q, epsilon: epsilon, k: k, sensitivity: max(q, 1-q),
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
	ps, err := m.pieces(w)
	if err != nil {
		return mech.Estimate{}, err
	}
	logWeights := make([]float64, len(ps))
	for i, p := range ps {
		logWeights[i] = p.logWeight
	}
	i, err := noise.SampleLogWeights(src, logWeights)
	if err != nil {
		return mech.Estimate{}, err
	}
	p := ps[i]
	j := p.after + 1 + int64(noise.Uniform(src, uint64(p.points)))
	return mech.Estimate{Value: float64(j) * m.grid}, nil
}

// piece is the set of grid points jγ with after < j ≤ after+points, lying
// in (lo, hi] (in [lo, hi] for the first piece, lo = L), all of utility u,
// with log weight ln(points) + ε·u/(2Δu).
type piece struct {
	lo, hi        float64
	after, points int64
	utility       float64
	logWeight     float64
}

// pieces returns the mechanism's intervals for w, in ascending order: the
// merged lower region (if any), the inner intervals, the merged upper region.
// Interval i (0-based, as in the Quantile comment) ends at rank i+1.
func (m *WindowExponential) pieces(w mech.SortedWindow) ([]piece, error) {
	n, k := w.Count, float64(m.k)
	if n > maxWindowCount {
		return nil, fmt.Errorf("%w: count %d above 2^53", mech.ErrInvalidInput, n)
	}
	distance := func(i int64) float64 { return math.Abs(math.FMA(-m.q, float64(n), float64(i))) }
	// The inner intervals form one run inside [⌊q·n⌋-k, ⌊q·n⌋+k+1].
	f := int64(math.Floor(m.q * float64(n)))
	lo, hi := int64(-1), int64(-2)
	for i := max(0, f-m.k); i <= min(n, f+m.k+1); i++ {
		if distance(i) < k {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	if err := w.Check(m.bounds, mech.RankRange{First: max(lo, 1), Last: min(hi+1, n)}); err != nil {
		return nil, err
	}
	value := func(i int64) float64 { // c_{i-1} of the comment: rank i, padded with L and U
		v, _ := w.At(m.bounds, i)
		return v
	}
	var ps []piece
	if lo > 0 {
		ps = append(ps, m.newPiece(m.bounds.Lower, value(lo), true, -k))
	}
	for i := lo; i <= hi; i++ {
		ps = append(ps, m.newPiece(value(i), value(i+1), i == 0, -distance(i)))
	}
	if hi < n {
		ps = append(ps, m.newPiece(value(hi+1), m.bounds.Upper, false, -k))
	}
	return ps, nil
}

// newPiece returns the piece of utility u holding the grid points in
// (lo, hi], or in [lo, hi] when fromLower (lo = L, the first piece).
func (m *WindowExponential) newPiece(lo, hi float64, fromLower bool, u float64) piece {
	after := m.gridIndex(lo)
	if fromLower {
		after = m.gridMin - 1
	}
	points := m.gridIndex(hi) - after
	return piece{lo: lo, hi: hi, after: after, points: points, utility: u,
		logWeight: math.Log(float64(points)) + m.epsilon*u/(2*m.sensitivity)}
}

// gridIndex returns ⌊x/γ⌋ for x in [L, U], exactly.
func (m *WindowExponential) gridIndex(x float64) int64 {
	return int64(math.Floor(x / m.grid))
}
