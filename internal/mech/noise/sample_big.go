package noise

import "math/big"

// UniformBig returns an integer uniformly distributed on [0, n), exactly,
// for n > 0 of any size: it draws b = bitlen(n) bits (⌈b/64⌉ values of
// src, the first the least significant, the last cut to its low bits), a
// uniform integer on [0, 2^b), and draws again while that is ≥ n (each
// time with probability below ½). It panics unless n > 0.
func UniformBig(src Source, n *big.Int) *big.Int {
	if n.Sign() <= 0 {
		panic("noise.UniformBig: n is not positive")
	}
	b := n.BitLen()
	words := (b + 63) / 64
	buf := make([]byte, 8*words) // big-endian: the first word drawn goes last
	v := new(big.Int)
	for {
		for i := range words {
			w := src.Uint64()
			if i == words-1 && b%64 != 0 {
				w &= 1<<(b%64) - 1
			}
			for k := range 8 {
				buf[8*(words-1-i)+7-k] = byte(w >> (8 * k))
			}
		}
		if v.SetBytes(buf).Cmp(n) < 0 {
			return v
		}
	}
}

// BernoulliBig returns true with probability exactly num/den, for integers
// of any size: a uniform integer on [0, den) (UniformBig) is below num. It
// panics unless 0 ≤ num ≤ den and den > 0.
func BernoulliBig(src Source, num, den *big.Int) bool {
	if den.Sign() <= 0 || num.Sign() < 0 || num.Cmp(den) > 0 {
		panic("noise.BernoulliBig: need 0 < den and 0 <= num <= den")
	}
	return UniformBig(src, den).Cmp(num) < 0
}

// BernoulliExpRat returns true with probability exactly exp(−x) for a
// rational x ≥ 0 of any size: BernoulliExp's algorithm (Canonne, Kamath and
// Steinke 2020, Algorithm 1) with the fractional part's Bernoulli(γ/k)
// trials drawn by BernoulliBig, ⌊x⌋ Bernoulli(exp(−1)) trials first
// (stopping at the first failure). Integer arithmetic only. It panics if
// x < 0.
func BernoulliExpRat(src Source, x *big.Rat) bool {
	if x.Sign() < 0 {
		panic("noise.BernoulliExpRat: x is negative")
	}
	whole, frac := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	for one := big.NewInt(1); whole.Sign() > 0; whole.Sub(whole, one) {
		if !BernoulliExp(src, 1, 1) {
			return false
		}
	}
	// exp(−γ) for γ = frac/den ∈ [0, 1): the first failure of the trials
	// Bernoulli(γ)·Bernoulli(1/k), k = 1, 2, ..., comes at an odd k.
	k := uint64(1)
	for BernoulliBig(src, frac, x.Denom()) && Uniform(src, k) == 0 {
		k++
	}
	return k%2 == 1
}
