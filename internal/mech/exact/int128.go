package exact

import (
	"math"
	"math/big"
	"math/bits"
)

// int128 is a signed 128-bit integer in two's complement. The exact
// fixed-point algorithms of sensitivity preprocessing (preprocess_mean.go)
// compute in it; each caller bounds its operands so that no result leaves
// the range, and the multiplication panics if one would (a bug, not data).
type Int128 struct {
	Hi int64
	Lo uint64
}

// i128 returns x as an int128.
func Int(x int64) Int128 {
	return Int128{Hi: x >> 63, Lo: uint64(x)}
}

// add returns x + y.
func (x Int128) Add(y Int128) Int128 {
	lo, carry := bits.Add64(x.Lo, y.Lo, 0)
	return Int128{Hi: x.Hi + y.Hi + int64(carry), Lo: lo}
}

// neg returns -x.
func (x Int128) Neg() Int128 {
	lo, borrow := bits.Sub64(0, x.Lo, 0)
	return Int128{Hi: -x.Hi - int64(borrow), Lo: lo}
}

// sub returns x - y.
func (x Int128) Sub(y Int128) Int128 { return x.Add(y.Neg()) }

// sign returns -1, 0 or +1.
func (x Int128) sign() int {
	switch {
	case x.Hi < 0:
		return -1
	case x.Hi == 0 && x.Lo == 0:
		return 0
	}
	return 1
}

// cmp compares x and y.
func (x Int128) Cmp(y Int128) int {
	switch {
	case x.Hi < y.Hi:
		return -1
	case x.Hi > y.Hi:
		return 1
	case x.Lo < y.Lo:
		return -1
	case x.Lo > y.Lo:
		return 1
	}
	return 0
}

// abs returns |x| as an unsigned magnitude (hi, lo).
func (x Int128) Abs() (uint64, uint64) {
	if x.Hi < 0 {
		n := x.Neg()
		return uint64(n.Hi), n.Lo
	}
	return uint64(x.Hi), x.Lo
}

// mul64 returns x·y. It panics if the product does not fit in 127 bits.
func (x Int128) Mul64(y int64) Int128 {
	xh, xl := x.Abs()
	yu := uint64(y)
	if y < 0 {
		yu = -yu
	}
	h1, l1 := bits.Mul64(xl, yu)
	h2, l2 := bits.Mul64(xh, yu)
	hi, carry := bits.Add64(h1, l2, 0)
	if h2 != 0 || carry != 0 || hi>>63 != 0 {
		panic("mech: int128 multiplication overflow")
	}
	p := Int128{Hi: int64(hi), Lo: l1}
	if (x.Hi < 0) != (y < 0) {
		p = p.Neg()
	}
	return p
}

// bigInt returns x as a big.Int.
func (x Int128) BigInt() *big.Int {
	h, l := x.Abs()
	v := new(big.Int).SetUint64(h)
	v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(l))
	if x.Hi < 0 {
		v.Neg(v)
	}
	return v
}

// float64 returns x rounded to a float64 (with at most two roundings:
// accurate to a relative 2^-52, enough for the filters that use it).
func (x Int128) Float64() float64 {
	h, l := x.Abs()
	f := float64(h)*0x1p64 + float64(l)
	if x.Hi < 0 {
		return -f
	}
	return f
}

// fitsBits reports whether |x| < 2^p, for p ≤ 126.
func (x Int128) FitsBits(p uint) bool {
	h, l := x.Abs()
	if p >= 64 {
		return h>>(p-64) == 0
	}
	return h == 0 && l>>p == 0
}

// ratio128 is the exact rational num/den with den > 0.
type Ratio struct {
	Num Int128
	Den int64
}

// cmp compares a and b exactly; both cross products must fit in 127 bits,
// which the callers guarantee.
func (a Ratio) Cmp(b Ratio) int {
	return a.Num.Mul64(b.Den).Cmp(b.Num.Mul64(a.Den))
}

// rat returns a as a big.Rat.
func (a Ratio) rat() *big.Rat {
	return new(big.Rat).SetFrac(a.Num.BigInt(), big.NewInt(a.Den))
}

// float64 returns a correctly rounded to a float64 (a·unit when scaled
// by a power of two unit, see scaledFloat).
func (a Ratio) float64() float64 {
	f, _ := a.rat().Float64()
	return f
}

// scaledFloat returns r·unit correctly rounded, for a power of two unit.
func ScaledFloat(r *big.Rat, unit float64) float64 {
	_, exp := math.Frexp(unit) // unit = 2^(exp-1)
	f := new(big.Float).SetPrec(53).SetMode(big.ToNearestEven).SetRat(r)
	f.SetMantExp(f, exp-1)
	v, _ := f.Float64()
	return v
}
