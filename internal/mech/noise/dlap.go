package noise

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// dlap is the discrete Laplace distribution on the integers with rational
// scale t/s: P[Z = z] = (1-r)/(1+r) · r^|z| with r = exp(-s/t). Adding it to
// an integer whose sensitivity is Δ is (Δ·s/t)-DP.
type Dlap struct{ t, s uint64 }

// maxRationalPart bounds the numerator and denominator of a dlap scale.
const maxRationalPart = 1 << 62

// newDlap returns the discrete Laplace whose scale t/s is the smallest
// rational with s a power of two, s ≤ 2^62 and t ≤ 2^62 that is at least
// sensitivity/ε. Rounding the scale up keeps the guarantee: the mechanism is
// (sensitivity·s/t)-DP with sensitivity·s/t ≤ ε. The scale grows by a
// relative amount below 2^-54 once scale ≥ 2^-8, so the loss of accuracy
// is invisible. It fails if sensitivity/ε exceeds 2^60.
func NewDlap(sensitivity uint64, epsilon float64) (Dlap, error) {
	// ε = mant·2^(exp-53) exactly, so sensitivity/ε·2^shift is the ratio
	// of integers sensitivity·2^(53-exp+shift) / mant.
	frac, exp := math.Frexp(epsilon)
	mant := new(big.Int).SetUint64(uint64(math.Ldexp(frac, 53)))
	ceilScaled := func(shift int) *big.Int { // ⌈sensitivity/ε·2^shift⌉
		num, den := new(big.Int).SetUint64(sensitivity), new(big.Int).Set(mant)
		if p := 53 - exp + shift; p >= 0 {
			num.Lsh(num, uint(p))
		} else {
			den.Lsh(den, uint(-p))
		}
		q, r := num.QuoRem(num, den, new(big.Int))
		if r.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		return q
	}
	if ceilScaled(-60).Cmp(big.NewInt(1)) > 0 {
		return Dlap{}, fmt.Errorf("%w: discrete scale %d/%v exceeds 2^60", mech.ErrInvalidSensitivity, sensitivity, epsilon)
	}
	// Start from the shift that puts the scaled value in [2^61, 2^63): at
	// most two tries find the largest admissible one.
	limit := new(big.Int).SetUint64(maxRationalPart)
	for shift := min(62, 62-math.Ilogb(float64(sensitivity)/epsilon)); ; shift-- {
		if t := ceilScaled(shift); t.Cmp(limit) <= 0 {
			return Dlap{t: t.Uint64(), s: 1 << shift}, nil
		}
	}
}

// Scale returns t/s rounded to the nearest float64 (ties to even). s is a
// power of two, 2^k with k ≤ 62, and 1 ≤ t < 2^63: the conversion of t
// rounds it once to 53 bits, and dividing by 2^k is then exact (the
// quotient is at least 2^-62, far from the subnormals), so this is the
// exact quotient rounded once, as big.Rat's Float64 computed it.
func (d Dlap) Scale() float64 {
	return math.Ldexp(float64(d.t), -bits.TrailingZeros64(d.s))
}

// sample draws Z and returns its sign (true: negative) and magnitude, by
// Algorithm 2 of Canonne, Kamath and Steinke (2020): X = U + t·V with U
// uniform on [0, t) accepted with probability exp(-U/t) and V geometric
// with ratio exp(-1), so X is geometric with ratio exp(-1/t); then
// Y = ⌊X/s⌋ is geometric with ratio exp(-s/t), and a random sign with the
// negative zero rejected makes Z = ±Y discrete Laplace. Every step is exact
// integer arithmetic.
func (d Dlap) Sample(src Source) (negative bool, magnitude uint128) {
	for {
		u := Uniform(src, d.t)
		if !bernoulliExpUnit(src, u, d.t) {
			continue
		}
		var v uint64
		for bernoulliExpUnit(src, 1, 1) {
			v++
		}
		y := mulAdd(d.t, v, u).quo(d.s)
		negative = src.Uint64()&1 == 1
		if negative && y.isZero() {
			continue
		}
		return negative, y
	}
}

// halfWidth returns the smallest integer k ≥ 0 with P[|Z| ≤ k] ≥ confidence.
// P[|Z| > k] = 2·r^(k+1)/(1+r) with r = exp(-s/t), which gives
// k = ⌈(t/s)·ln(2/((1-confidence)(1+r)))⌉ - 1.
func (d Dlap) halfWidth(confidence float64) float64 {
	beta := d.Scale()
	r := math.Exp(-1 / beta)
	k := math.Ceil(beta*math.Log(2/((1-confidence)*(1+r)))) - 1
	return math.Max(k, 0)
}
