package noise

import "math/bits"

// Uniform returns an integer uniformly distributed on [0, n), exactly (no
// modulo bias: Lemire's multiply-and-reject method). It panics if n is 0.
func Uniform(src Source, n uint64) uint64 {
	if n == 0 {
		panic("mech.Uniform: n is 0")
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		// Reject the low products that would make some results more
		// likely: there are 2^64 mod n of them.
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Bernoulli returns true with probability exactly num/den. It panics unless
// 0 < den and num ≤ den.
func Bernoulli(src Source, num, den uint64) bool {
	if den == 0 || num > den {
		panic("mech.Bernoulli: need 0 < den and num <= den")
	}
	return Uniform(src, den) < num
}

// BernoulliExp returns true with probability exactly exp(-num/den), by
// Algorithm 1 of Canonne, Kamath and Steinke, "The Discrete Gaussian for
// Differential Privacy" (2020): exp(-γ) = exp(-1)^⌊γ⌋ · exp(-(γ-⌊γ⌋)), and
// for γ ∈ [0,1], exp(-γ) is the probability that the first failure in a
// run of Bernoulli(γ/k) trials, k = 1, 2, ..., happens at an odd k.
// It uses only integer arithmetic. It panics if den is 0.
func BernoulliExp(src Source, num, den uint64) bool {
	if den == 0 {
		panic("mech.BernoulliExp: den is 0")
	}
	for i := num / den; i > 0; i-- {
		if !bernoulliExpUnit(src, 1, 1) {
			return false
		}
	}
	return bernoulliExpUnit(src, num%den, den)
}

// bernoulliExpUnit returns true with probability exp(-num/den) for
// num ≤ den. A Bernoulli(γ/k) trial is Bernoulli(num/den) and Bernoulli(1/k)
// together, so no product of integers can overflow.
func bernoulliExpUnit(src Source, num, den uint64) bool {
	k := uint64(1)
	for Bernoulli(src, num, den) && Uniform(src, k) == 0 {
		k++
	}
	return k%2 == 1
}
