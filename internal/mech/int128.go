package mech

import (
	"math"
	"math/big"
	"math/bits"
)

// int128 is a signed 128-bit integer in two's complement. The exact
// fixed-point algorithms of sensitivity preprocessing (preprocess_mean.go)
// compute in it; each caller bounds its operands so that no result leaves
// the range, and the multiplication panics if one would (a bug, not data).
type int128 struct {
	hi int64
	lo uint64
}

// i128 returns x as an int128.
func i128(x int64) int128 {
	return int128{hi: x >> 63, lo: uint64(x)}
}

// add returns x + y.
func (x int128) add(y int128) int128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	return int128{hi: x.hi + y.hi + int64(carry), lo: lo}
}

// neg returns -x.
func (x int128) neg() int128 {
	lo, borrow := bits.Sub64(0, x.lo, 0)
	return int128{hi: -x.hi - int64(borrow), lo: lo}
}

// sub returns x - y.
func (x int128) sub(y int128) int128 { return x.add(y.neg()) }

// sign returns -1, 0 or +1.
func (x int128) sign() int {
	switch {
	case x.hi < 0:
		return -1
	case x.hi == 0 && x.lo == 0:
		return 0
	}
	return 1
}

// cmp compares x and y.
func (x int128) cmp(y int128) int {
	switch {
	case x.hi < y.hi:
		return -1
	case x.hi > y.hi:
		return 1
	case x.lo < y.lo:
		return -1
	case x.lo > y.lo:
		return 1
	}
	return 0
}

// abs returns |x| as an unsigned magnitude (hi, lo).
func (x int128) abs() (uint64, uint64) {
	if x.hi < 0 {
		n := x.neg()
		return uint64(n.hi), n.lo
	}
	return uint64(x.hi), x.lo
}

// mul64 returns x·y. It panics if the product does not fit in 127 bits.
func (x int128) mul64(y int64) int128 {
	xh, xl := x.abs()
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
	p := int128{hi: int64(hi), lo: l1}
	if (x.hi < 0) != (y < 0) {
		p = p.neg()
	}
	return p
}

// bigInt returns x as a big.Int.
func (x int128) bigInt() *big.Int {
	h, l := x.abs()
	v := new(big.Int).SetUint64(h)
	v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(l))
	if x.hi < 0 {
		v.Neg(v)
	}
	return v
}

// float64 returns x rounded to a float64 (with at most two roundings:
// accurate to a relative 2^-52, enough for the filters that use it).
func (x int128) float64() float64 {
	h, l := x.abs()
	f := float64(h)*0x1p64 + float64(l)
	if x.hi < 0 {
		return -f
	}
	return f
}

// fitsBits reports whether |x| < 2^p, for p ≤ 126.
func (x int128) fitsBits(p uint) bool {
	h, l := x.abs()
	if p >= 64 {
		return h>>(p-64) == 0
	}
	return h == 0 && l>>p == 0
}

// ratio128 is the exact rational num/den with den > 0.
type ratio128 struct {
	num int128
	den int64
}

// cmp compares a and b exactly; both cross products must fit in 127 bits,
// which the callers guarantee.
func (a ratio128) cmp(b ratio128) int {
	return a.num.mul64(b.den).cmp(b.num.mul64(a.den))
}

// rat returns a as a big.Rat.
func (a ratio128) rat() *big.Rat {
	return new(big.Rat).SetFrac(a.num.bigInt(), big.NewInt(a.den))
}

// float64 returns a correctly rounded to a float64 (a·unit when scaled
// by a power of two unit, see scaledFloat).
func (a ratio128) float64() float64 {
	f, _ := a.rat().Float64()
	return f
}

// scaledFloat returns r·unit correctly rounded, for a power of two unit.
func scaledFloat(r *big.Rat, unit float64) float64 {
	_, exp := math.Frexp(unit) // unit = 2^(exp-1)
	f := new(big.Float).SetPrec(53).SetMode(big.ToNearestEven).SetRat(r)
	f.SetMantExp(f, exp-1)
	v, _ := f.Float64()
	return v
}
