package noise

import (
	"math/big"
	"math/bits"
)

// uint128 is an unsigned 128-bit integer. The discrete Laplace sampler
// computes in it so that no draw, however large, overflows: a sample
// beyond 2^64 needs about 2^64 loop iterations, which cannot happen.
type uint128 struct{ Hi, Lo uint64 }

// mulAdd returns a·b + c exactly.
func mulAdd(a, b, c uint64) uint128 {
	hi, lo := bits.Mul64(a, b)
	lo, carry := bits.Add64(lo, c, 0)
	return uint128{Hi: hi + carry, Lo: lo}
}

// quo returns ⌊x/d⌋ for d > 0.
func (x uint128) quo(d uint64) uint128 {
	qhi, r := x.Hi/d, x.Hi%d
	qlo, _ := bits.Div64(r, x.Lo, d)
	return uint128{Hi: qhi, Lo: qlo}
}

// isZero reports whether x is 0.
func (x uint128) isZero() bool { return x.Hi == 0 && x.Lo == 0 }

// below reports whether x < 2^p for p < 64.
func (x uint128) below(p uint) bool { return x.Hi == 0 && x.Lo < 1<<p }

// bigInt returns x as a big.Int.
func (x uint128) bigInt() *big.Int {
	v := new(big.Int).SetUint64(x.Hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(x.Lo))
}
