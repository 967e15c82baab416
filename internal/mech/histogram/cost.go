package histogram

import (
	"math/bits"
	"slices"
	"sort"
)

// dawaMaxBinForCost is the public cap on a bin count inside the stage-1
// cost (2^36 ≈ 6.9·10^10 rows in one bin). Clamping every bin to
// [0, cap] maps neighbouring histograms to neighbouring or equal ones, so
// it keeps every sensitivity; it keeps window sums below 2^62.
const dawaMaxBinForCost = 1 << 36

// dawaDevCosts computes, for every window of length l of x (clamped at
// dawaMaxBinForCost), the L1 deviation from the window mean (the paper's
// dev, Eq. 2) as an integer: min(⌊dev·2^unitExp⌋, capU). Entry i is the
// window [i, i+l).
//
// Exact integer arithmetic (digest §2.4, Fenwick variant): with window sum
// S, the bins with x_j ≥ S/l (count C≥, sum S≥) give
// dev = 2·(l·S≥ - C≥·S)/l; the numerator is computed in 128 bits. Two
// Fenwick trees over the ranks of the distinct values hold the window's
// counts and sums, updated as the window slides: O(n log n) per length.
func dawaDevCosts(x []int64, l, unitExp int, capU uint64) []uint64 {
	n := len(x)
	vals := make([]int64, n)
	for j, v := range x {
		vals[j] = min(v, dawaMaxBinForCost)
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(vals)))
	rank := make([]int, n)
	for j, v := range vals {
		rank[j], _ = slices.BinarySearch(distinct, v)
	}
	cnt, sum := newDawaFenwick(len(distinct)), newDawaFenwick(len(distinct))
	var s int64
	for j := range l {
		cnt.add(rank[j], 1)
		sum.add(rank[j], vals[j])
		s += vals[j]
	}
	ul := uint64(l)
	costs := make([]uint64, n-l+1)
	for i := range costs {
		if i > 0 {
			out, in := i-1, i+l-1
			cnt.add(rank[out], -1)
			sum.add(rank[out], -vals[out])
			cnt.add(rank[in], 1)
			sum.add(rank[in], vals[in])
			s += vals[in] - vals[out]
		}
		// First rank r with l·distinct[r] ≥ s, i.e. distinct[r] ≥ ⌈s/l⌉.
		threshold := (s + int64(l) - 1) / int64(l)
		r := sort.Search(len(distinct), func(i int) bool { return distinct[i] >= threshold })
		cAbove := uint64(int64(l) - cnt.prefix(r))
		sAbove := uint64(s - sum.prefix(r))
		h1, l1 := bits.Mul64(ul, sAbove)
		h2, l2 := bits.Mul64(cAbove, uint64(s))
		lo, borrow := bits.Sub64(l1, l2, 0)
		hi, _ := bits.Sub64(h1, h2, borrow)
		costs[i] = dawaScaledDev(hi, lo, ul, unitExp+1, capU)
	}
	return costs
}

// dawaScaledDev returns min(⌊num·2^shift / l⌋, capU) for the 128-bit
// numerator num = (hi, lo), shift ≤ 32 and 0 < l < 2^32.
func dawaScaledDev(hi, lo, l uint64, shift int, capU uint64) uint64 {
	if hi >= l { // the quotient needs more than 64 bits
		return capU
	}
	q, rem := bits.Div64(hi, lo, l)
	if shift < 0 {
		if -shift >= 64 {
			return 0
		}
		return min(q>>-shift, capU)
	}
	if q > capU>>shift {
		return capU
	}
	return min(q<<shift+(rem<<shift)/l, capU)
}
