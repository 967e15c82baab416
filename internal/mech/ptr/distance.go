package ptr

import "math"

// Distances to instability (digest §2.4, re-derived for add/remove).
//
// Notation: x_(i) are the order statistics of a dataset D of n values in
// the universe [lower, upper], padded x_(i) = lower for i ≤ 0 and upper for
// i > n (ptrOrder). Rank functions r(n) used below move by 0 or +1 when n
// grows by one: ⌈n/2⌉, ⌊n/4⌋+1, ⌈3n/4⌉, ⌈nα/2⌉, ⌊n(1−α/2)⌋.
//
// Bracket facts. Adding a value gives x'_(i) ∈ [x_(i−1), x_(i)] for every
// i; removing one gives x'_(i) ∈ [x_(i), x_(i+1)]; substituting one gives
// one of the two for all i at once (digest key lemma). With the rank
// moving by δ ∈ {0, 1}, the statistic at rank r of an add/remove neighbour
// lies in [x_(r−1), x_(r+1)].
//
// Every distance below is a capped, monotone search over shifted order
// statistics, and has the two properties PTR needs (for capped values too,
// ptr_stability.go): (P1) it is 1-Lipschitz between neighbours, and
// (P2) a value ≥ 2 implies that every neighbour's statistic is in the same
// bin. Property tests compare them with brute force (ptr_distance_test.go).

// ptrSpread is the spread statistic max(top − bottom, 0), computed in
// float64: nondecreasing in top and nonincreasing in bottom (rounding is
// monotone), which is all the proofs use.
func ptrSpread(top, bottom float64) float64 { return math.Max(top-bottom, 0) }

// ptrSpreadBin is the bin of a spread: [lower, upper) with lower > 0, or
// the zero bin {0} (zero = true), the same in both grids (paper's log 0 =
// −∞ convention, digest P3).
type ptrSpreadBin struct {
	zero         bool
	lower, upper float64
}

// widens reports whether the spread of (top, bottom) is above the bin.
func (b ptrSpreadBin) widens(top, bottom float64) bool {
	s := ptrSpread(top, bottom)
	if b.zero {
		return s > 0
	}
	return s >= b.upper
}

// shrinks reports whether the spread of (top, bottom) is below the bin.
func (b ptrSpreadBin) shrinks(top, bottom float64) bool {
	return !b.zero && ptrSpread(top, bottom) < b.lower
}

// ptrSpreadDistanceAddRemove returns min(G, cap) for the spread
// q = x_(hi) − x_(lo) of a column under add/remove, with
//
//	G = min{k ≥ 1 : spread(x_(hi+k), x_(lo−k)) leaves the bin upwards, or
//	               spread(x_(hi−k), x_(lo+k)) leaves it downwards}.
//
// (P2): an add/remove neighbour's top and bottom order statistics lie in
// [x_(hi−1), x_(hi+1)] and [x_(lo−1), x_(lo+1)], so by monotonicity its
// spread is between the k = 1 values; G ≥ 2 keeps it in the bin.
// (P1), D' = D + v, rank shifts δh, δl ∈ {0, 1}: x'_(hi'+k) ≤ x_(hi+k+1),
// x'_(lo'−k) ≥ x_(lo−k−1), x'_(hi'−k) ≥ x_(hi−k−1), x'_(lo'+k) ≤ x_(lo+k+1),
// so a witness k for D' is a witness k+1 for D; and x'_(hi'+k+1) ≥
// x_(hi+k), x'_(lo'−k−1) ≤ x_(lo−k), x'_(hi'−k−1) ≤ x_(hi−k),
// x'_(lo'+k+1) ≥ x_(lo+k), so a witness k for D is one of k+1 for D'. If
// the two spreads are in different bins, both distances are 1 by (P2).
//
// Why both ranks move by k (the digest's "halving", P12): one added row can
// move the two quartile ranks in opposite directions (a value added
// between them when n ≡ 3 mod 4 shrinks the spread by two rank steps), so
// a+b ≤ k witnesses, as under substitution, would not be 1-Lipschitz.
// Reads ranks lo ± (cap−1) and hi ± (cap−1); O(cap).
func ptrSpreadDistanceAddRemove(o ptrOrder, lo, hi int64, bin ptrSpreadBin, cap int64) int64 {
	for k := int64(1); k < cap; k++ {
		if bin.widens(o.at(hi+k), o.at(lo-k)) || bin.shrinks(o.at(hi-k), o.at(lo+k)) {
			return k
		}
	}
	return cap
}

// ptrSpreadDistanceSubstitution returns min(A, cap) for the spread under
// substitution of one value in a dataset of fixed, public size (the blocks
// of the regressions, where one row changes one block estimate), with the
// digest's §2.4(a) distance
//
//	A = min{a + b : spread(x_(hi+a), x_(lo−b)) leaves upwards, or
//	                spread(x_(hi−a), x_(lo+b)) leaves downwards}
//
// (a moves of the top order statistic and b of the bottom one; one
// substitution moves every order statistic one rank the same way). It is
// sound, 1-Lipschitz and (P2) holds (digest §2.4, reviewed, and the
// property tests). Computed with two pointers in O(cap): the smallest a
// that leaves for a given b is nonincreasing in b. Reads ranks lo ± cap
// and hi ± cap.
func ptrSpreadDistanceSubstitution(o ptrOrder, lo, hi int64, bin ptrSpreadBin, cap int64) int64 {
	widen := ptrTwoPointer(cap, func(a, b int64) bool { return bin.widens(o.at(hi+a), o.at(lo-b)) })
	if bin.zero {
		return widen
	}
	return min(widen, ptrTwoPointer(cap, func(a, b int64) bool { return bin.shrinks(o.at(hi-a), o.at(lo+b)) }))
}

// ptrTwoPointer returns min(cap, min{a + b : a, b ≥ 0, leaves(a, b)}) for
// a predicate nondecreasing in both arguments.
func ptrTwoPointer(cap int64, leaves func(a, b int64) bool) int64 {
	best, a := cap, cap
	for b := int64(0); b < best; b++ {
		for a > 0 && leaves(a-1, b) {
			a--
		}
		if a+b < best && leaves(a, b) {
			best = a + b
		}
	}
	return best
}

// ptrMedianDistance returns min(A, cap) for the order statistic x_(r)
// leaving the bin [lower, upper):
//
//	A = min{k ≥ 1 : x_(r+k) ≥ upper or x_(r−k) < lower}
//
// (digest §2.4(b), Thm 12(b)'s min/max index argument). Exact under
// substitution; under add/remove with r = ⌈n/2⌉ recomputed from the true
// n it keeps (P1) and (P2): a neighbour's x'_(r') is in [x_(r−1), x_(r+1)],
// and x'_(r'+k) ≥ U ⇒ x_(r+k+1) ≥ U, x'_(r'−k) < L ⇒ x_(r−k−1) < L, and
// conversely x_(r+k) ≥ U ⇒ x'_(r'+k+1) ≥ U, x_(r−k) < L ⇒ x'_(r'−k−1) < L.
// Reads ranks r ± (cap−1); O(cap).
func ptrMedianDistance(o ptrOrder, r int64, lower, upper float64, cap int64) int64 {
	for k := int64(1); k < cap; k++ {
		if o.at(r+k) >= upper || o.at(r-k) < lower {
			return k
		}
	}
	return cap
}
