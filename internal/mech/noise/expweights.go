package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"sync"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// ExpWeightError bounds the relative error of every weight [ExpNeg] and
// [ExpNegLadder] return: |w/exp(−x) − 1| ≤ 2^−62 for every x they accept.
// A mechanism that samples index i with probability w_i/Σw (an [ExpTable])
// instead of exp(−x_i)/Σexp(−x) therefore realises every probability, and
// every ratio of probabilities on neighbouring datasets, within a factor
// ((1+η)/(1−η))² ≤ exp(4.01·η) ≤ exp(2^−59) of the exact one, however
// small the weight: no weight is ever rounded to 0.
const ExpWeightError = 0x1p-62

// ExpWeightSlack is what a mechanism sampling with ExpTable subtracts from
// its ε before computing exponents: it covers the factor exp(2^−59) of
// ExpWeightError with room to spare, so the implementation, weights
// included, is ε-DP whenever the exact-weight mechanism at ε − slack is.
var ExpWeightSlack = big.NewRat(1, 1<<55)

// MaxExpArgument is the largest exponent x ExpNeg accepts (so that the
// binary exponent of exp(−x) fits an int64 with room to spare).
const MaxExpArgument = 1 << 60

// Weight is the dyadic number Mant·2^Exp, Mant ∈ [2^62, 2^63]: a weight
// exp(−x) to within ExpWeightError.
type Weight struct {
	Mant uint64
	Exp  int64
}

// expPrec is the working precision of the exponentials: 192 bits keep the
// error of the argument reduction (at most MaxExpArgument·2^−190) and of a
// ladder of 2^30 steps (2^30·2^−190) far below the final rounding to 63 bits.
const expPrec = 192

var (
	ln2Once sync.Once
	ln2     *big.Float // ln 2 to 300 bits
)

// ln2Const returns ln 2 to 300 bits: ln 2 = Σ_{k≥1} 1/(k·2^k), truncated
// after 320 terms (tail below 2^−320), each term rounded at 340 bits.
func ln2Const() *big.Float {
	ln2Once.Do(func() {
		sum := new(big.Float).SetPrec(340)
		for k := 1; k <= 320; k++ {
			den := new(big.Float).SetPrec(340).SetMantExp(big.NewFloat(float64(k)), k) // k·2^k, exact
			sum.Add(sum, new(big.Float).SetPrec(340).Quo(big.NewFloat(1), den))
		}
		ln2 = sum.SetPrec(300)
	})
	return ln2
}

// ExpNeg returns exp(−x) for a rational 0 ≤ x ≤ MaxExpArgument as a Weight,
// with relative error at most ExpWeightError. Method: λ = x/ln 2 at 192
// bits, k = ⌊λ⌋, f = λ − k ∈ [0, 1); exp(−f·ln 2) ∈ (½, 1] from 16 terms of
// its Taylor series at f·ln 2/256 (below 2^−8.5, so the truncation is below
// 2^−170) squared 8 times (relative error ×256); its 63-bit rounding m
// gives exp(−x) ≈ m·2^(−k−63), m ∈ [2^62, 2^63]. Every big.Float operation
// rounds correctly at 192 bits; the errors of λ (below x·2^−190 ≤ 2^−130
// absolute) and of the series and squarings (below 2^−160 relative) add
// less than 2^−100 to the final rounding's 2^−63.
func ExpNeg(x *big.Rat) (Weight, error) {
	xf := new(big.Float).SetPrec(expPrec).SetRat(x)
	if x.Sign() < 0 || xf.Cmp(big.NewFloat(MaxExpArgument)) > 0 {
		return Weight{}, fmt.Errorf("%w: exponent %v outside [0, 2^60]", mech.ErrInvalidInput, xf)
	}
	return expNegFloat(xf), nil
}

// expNegFloat is ExpNeg for a big.Float 0 ≤ x ≤ 2^60 at expPrec.
func expNegFloat(x *big.Float) Weight {
	var k int64
	r := fullExpNeg(x, &k)
	return weightOf(r, k)
}

// expNegSmall returns exp(−g) for 0 ≤ g < 1 at expPrec.
func expNegSmall(g *big.Float) *big.Float {
	const halvings = 8
	y := new(big.Float).SetPrec(expPrec).SetMantExp(g, -halvings)
	sum := new(big.Float).SetPrec(expPrec).SetInt64(1)
	term := new(big.Float).SetPrec(expPrec).SetInt64(1)
	for i := int64(1); i <= 16; i++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetInt64(-i))
		sum.Add(sum, term)
	}
	for range halvings {
		sum.Mul(sum, sum)
	}
	return sum
}

// weightOf rounds r·2^(−k), r ∈ (¼, 2), to a Weight.
func weightOf(r *big.Float, k int64) Weight {
	mant := new(big.Float).SetPrec(expPrec)
	e := r.MantExp(mant) // r = mant·2^e, mant ∈ [½, 1)
	mant.SetMantExp(mant, 63)
	mi, _ := new(big.Float).SetPrec(expPrec).Add(mant, big.NewFloat(0.5)).Int(nil) // round half up: [2^62, 2^63]
	return Weight{Mant: mi.Uint64(), Exp: int64(e) - 63 - k}
}

// ExpNegPowers returns exp(−(x0 + m·step)) for every m of ms, each with
// relative error at most ExpWeightError, for rationals x0, step ≥ 0,
// non-decreasing integers ms and x0 + max(ms)·step ≤ MaxExpArgument,
// len(ms) ≤ 2^30. It starts from exp(−x0) and multiplies by exp(−step)^d
// for each increment d of m, by binary powering from the squares
// exp(−step·2^i), all at 192 bits: the square of index i carries at most
// 2^(i+1)·2^−190 relative error, so an entry carries at most
// (2·max(ms) + 200·len(ms))·2^−190 ≤ 2^−120 before its rounding to 63 bits.
// It costs a few multiplications per entry instead of an ExpNeg.
func ExpNegPowers(x0, step *big.Rat, ms []uint64) ([]Weight, error) {
	var top uint64
	for i, m := range ms {
		if i > 0 && m < ms[i-1] {
			return nil, fmt.Errorf("%w: exponent multiples not sorted", mech.ErrInvalidInput)
		}
		top = max(top, m)
	}
	last := new(big.Rat).Mul(step, new(big.Rat).SetInt(new(big.Int).SetUint64(top)))
	last.Add(last, x0)
	if x0.Sign() < 0 || step.Sign() < 0 || len(ms) > 1<<30 ||
		new(big.Float).SetRat(last).Cmp(big.NewFloat(MaxExpArgument)) > 0 {
		return nil, fmt.Errorf("%w: exponents outside [0, 2^60] or more than 2^30", mech.ErrInvalidInput)
	}
	out := make([]Weight, len(ms))
	if len(ms) == 0 {
		return out, nil
	}
	// exp(−x) is carried as r·2^(−k), r renormalised into [½, 1) by powers
	// of two (exact) so that it never leaves big.Float's exponent range.
	type scaled struct {
		r *big.Float
		k int64
	}
	renorm := func(v *scaled) {
		mant := new(big.Float).SetPrec(expPrec)
		e := v.r.MantExp(mant)
		v.r, v.k = mant, v.k-int64(e)
	}
	cur := scaled{}
	cur.r = fullExpNeg(new(big.Float).SetPrec(expPrec).SetRat(x0), &cur.k)
	squares := []scaled{{}}
	squares[0].r = fullExpNeg(new(big.Float).SetPrec(expPrec).SetRat(step), &squares[0].k)
	var prev uint64
	for j, m := range ms {
		for i, d := 0, m-prev; d != 0; i, d = i+1, d>>1 {
			if i == len(squares) {
				s := squares[i-1]
				next := scaled{r: new(big.Float).SetPrec(expPrec).Mul(s.r, s.r), k: 2 * s.k}
				renorm(&next)
				squares = append(squares, next)
			}
			if d&1 == 1 {
				cur.r.Mul(cur.r, squares[i].r)
				cur.k += squares[i].k
				renorm(&cur)
			}
		}
		prev = m
		out[j] = weightOf(cur.r, cur.k)
	}
	return out, nil
}

// fullExpNeg returns r ∈ (½, 1] at expPrec and sets *k with
// exp(−x) = r·2^(−k), for 0 ≤ x ≤ 2^60 at expPrec.
func fullExpNeg(x *big.Float, k *int64) *big.Float {
	lam := new(big.Float).SetPrec(expPrec).Quo(x, ln2Const())
	*k, _ = lam.Int64()
	f := new(big.Float).SetPrec(expPrec).Sub(lam, new(big.Float).SetInt64(*k))
	f.Mul(f, ln2Const())
	return expNegSmall(f)
}

// ExpTable draws index i with probability exactly c_i·w_i / Σ_j c_j·w_j for
// integer multiplicities c_i ≥ 0 and dyadic weights w_i (from ExpNeg or
// ExpNegLadder). No float is compared and no weight is rounded: the draw is
// exact whatever the range of the weights.
//
// Method. Let E be the highest bit of any c_i·w_i and scale every weight by
// 2^(200−E). A weight still an integer after scaling ("near") is used as
// is; a smaller one ("far", below 2^(−200) of the largest up to the
// multiplicity) is rounded up to the integer R_i = ⌈a_i⌉ ≥ 1, and a draw
// of i is then kept with probability a_i/R_i (an exact dyadic Bernoulli)
// and otherwise the whole draw restarts. The kept index has law ∝ a_i:
// rejection sampling with proposal R ≥ a. Restarts happen with probability
// below len·2^−199 per draw.
type ExpTable struct {
	mass       []*big.Int // c_i·m_i: the weight is mass_i·2^(exp_i)
	exps       []int64
	shifts     []int64    // exp_i − (E − 200): ≥ 0 near, < 0 far
	cumulative []*big.Int // of the proposal R
}

// tableHeadroom is the number of bits below the largest weight kept exact.
const tableHeadroom = 200

// NewExpTable returns the table for multiplicities counts (nil: all 1) and
// weights. At least one entry must have a positive multiplicity.
func NewExpTable(counts []uint64, weights []Weight) (*ExpTable, error) {
	if counts != nil && len(counts) != len(weights) {
		return nil, fmt.Errorf("%w: %d multiplicities for %d weights", mech.ErrInvalidInput, len(counts), len(weights))
	}
	t := &ExpTable{
		mass: make([]*big.Int, len(weights)), exps: make([]int64, len(weights)),
		shifts: make([]int64, len(weights)), cumulative: make([]*big.Int, len(weights)),
	}
	top, any := int64(math.MinInt64), false
	for i, w := range weights {
		c := uint64(1)
		if counts != nil {
			c = counts[i]
		}
		hi, lo := bits.Mul64(c, w.Mant)
		t.mass[i] = new(big.Int).SetUint64(hi)
		t.mass[i].Lsh(t.mass[i], 64).Or(t.mass[i], new(big.Int).SetUint64(lo))
		t.exps[i] = w.Exp
		if t.mass[i].Sign() > 0 {
			any = true
			top = max(top, w.Exp+int64(t.mass[i].BitLen()))
		}
	}
	if !any {
		return nil, fmt.Errorf("%w: no positive weight among %d", mech.ErrInvalidInput, len(weights))
	}
	base := top - tableHeadroom
	total := new(big.Int)
	for i, m := range t.mass {
		s := t.exps[i] - base
		t.shifts[i] = s
		r := new(big.Int)
		switch {
		case m.Sign() == 0:
		case s >= 0:
			r.Lsh(m, uint(s))
		case -s >= int64(m.BitLen()):
			r.SetInt64(1) // 0 < a_i < 1
		default: // ⌈m·2^s⌉
			r.Rsh(new(big.Int).Sub(new(big.Int).Add(m, new(big.Int).Lsh(big.NewInt(1), uint(-s))), big.NewInt(1)), uint(-s))
		}
		total.Add(total, r)
		t.cumulative[i] = new(big.Int).Set(total)
	}
	return t, nil
}

// Draw returns an index with the table's law, exactly.
func (t *ExpTable) Draw(src Source) int {
	for {
		u := uniformBig(src, t.cumulative[len(t.cumulative)-1])
		i := sort.Search(len(t.cumulative), func(i int) bool { return u.Cmp(t.cumulative[i]) < 0 })
		if t.shifts[i] >= 0 {
			return i
		}
		prev := new(big.Int)
		if i > 0 {
			prev = t.cumulative[i-1]
		}
		proposal := new(big.Int).Sub(t.cumulative[i], prev)
		if bernoulliDyadic(src, t.mass[i], uint64(-t.shifts[i]), proposal) {
			return i
		}
	}
}

// bernoulliDyadic returns true with probability num/(den·2^shift) ≤ 1,
// exactly: the shift is spent 64 fair bits at a time (all must be 0), the
// rest by an exact rational Bernoulli.
func bernoulliDyadic(src Source, num *big.Int, shift uint64, den *big.Int) bool {
	for ; shift > 64+uint64(num.BitLen()); shift -= 64 {
		if src.Uint64() != 0 {
			return false
		}
	}
	d := new(big.Int).Lsh(den, uint(shift))
	return bernoulliRat(src, new(big.Rat).SetFrac(num, d))
}

// LogProb returns the natural logarithm of the probability that Draw
// returns i (−Inf for a zero multiplicity), computed in float64 from the
// exact weights: absolute error below 10^−15·(1 + |ln p|).
func (t *ExpTable) LogProb(i int) float64 {
	if t.mass[i].Sign() == 0 {
		return math.Inf(-1)
	}
	// ln Σ_j mass_j·2^(shift_j) with shifts relative to the base, exact
	// for near entries; far entries change it by less than 2^−190.
	total := new(big.Float).SetPrec(128)
	for j, m := range t.mass {
		if m.Sign() > 0 && t.shifts[j] > -2*tableHeadroom {
			total.Add(total, new(big.Float).SetMantExp(new(big.Float).SetInt(m), int(t.shifts[j])))
		}
	}
	return logBig(new(big.Float).SetInt(t.mass[i])) + float64(t.shifts[i])*math.Ln2 - logBig(total)
}

// Mass returns entry i's unnormalised probability exactly (the law of
// Draw is Mass(i)/Σ_j Mass(j)), as multiplicity·weight scaled by a power
// of two common to all entries.
func (t *ExpTable) Mass(i int) *big.Float {
	m := new(big.Float).SetInt(t.mass[i])
	return m.SetMantExp(m, int(t.shifts[i]))
}

// Len returns the number of entries.
func (t *ExpTable) Len() int { return len(t.mass) }

// logBig returns ln x for x > 0 in float64.
func logBig(x *big.Float) float64 {
	mant := new(big.Float)
	e := x.MantExp(mant)
	f, _ := mant.Float64()
	return math.Log(f) + float64(e)*math.Ln2
}
