package mech

import (
	"math"
	"math/big"
)

// Splitting a budget among steps. A release that composes k steps, each at
// a share of ε, is ε-DP only if the shares' exact (real-number) sum is at
// most ε. Rounding to nearest does not ensure it: fl(ε/3)·3 exceeds ε by
// an ulp for about a third of all ε. The helpers below round every share
// down, checked in exact rational arithmetic, so the composed budget never
// exceeds what was charged.

// EvenShare returns the largest float64 s ≤ total/parts with parts·s ≤ total
// exactly (as real numbers), for total ≥ 0 finite and parts ≥ 1. It is
// within an ulp of total/parts. A total that is negative, NaN or infinite
// gives total/parts unchanged, for the caller's validation (CheckEpsilon)
// to reject.
func EvenShare(total float64, parts int) float64 {
	if parts < 1 {
		panic("mech: EvenShare needs parts ≥ 1")
	}
	s := total / float64(parts)
	if !(total >= 0) || math.IsInf(total, 0) {
		return s
	}
	exactTotal := ratOf(total)
	k := new(big.Rat).SetInt64(int64(parts))
	for s > 0 && new(big.Rat).Mul(k, ratOf(s)).Cmp(exactTotal) > 0 {
		s = math.Nextafter(s, 0)
	}
	return s
}

// ProportionalShare returns the largest float64 s ≤ total·part/whole with
// whole·s ≤ part·total exactly, for total ≥ 0 finite and 0 ≤ part ≤ whole,
// whole ≥ 1: shares of parts summing to whole then sum to at most total.
// A total that is negative, NaN or infinite gives total·part/whole
// unchanged, for the caller's validation to reject.
func ProportionalShare(total float64, part, whole int) float64 {
	if whole < 1 || part < 0 || part > whole {
		panic("mech: ProportionalShare needs 0 ≤ part ≤ whole, whole ≥ 1")
	}
	s := total * float64(part) / float64(whole)
	if !(total >= 0) || math.IsInf(total, 0) {
		return s
	}
	limit := new(big.Rat).Mul(ratOf(total), big.NewRat(int64(part), int64(whole)))
	for s > 0 && ratOf(s).Cmp(limit) > 0 {
		s = math.Nextafter(s, 0)
	}
	return s
}

// SplitShare splits total into a = total·fraction and b = total − a, both
// rounded down so that a + b ≤ total exactly, for total ≥ 0 finite and
// fraction in [0, 1] (a constant of the caller). Each is within an ulp of
// its real value. A total that is negative, NaN or infinite gives
// total·fraction and total·(1 − fraction) unchanged, for the caller's
// validation to reject.
func SplitShare(total, fraction float64) (a, b float64) {
	if !(fraction >= 0 && fraction <= 1) {
		panic("mech: SplitShare needs a fraction in [0, 1]")
	}
	if !(total >= 0) || math.IsInf(total, 0) {
		return total * fraction, total * (1 - fraction)
	}
	exactTotal := ratOf(total)
	a = total * fraction
	for a > 0 && ratOf(a).Cmp(new(big.Rat).Mul(exactTotal, ratOf(fraction))) > 0 {
		a = math.Nextafter(a, 0)
	}
	b = total - a
	for b > 0 && new(big.Rat).Add(ratOf(a), ratOf(b)).Cmp(exactTotal) > 0 {
		b = math.Nextafter(b, 0)
	}
	return a, b
}

// SumRoundedUp returns the smallest float64 at least the exact sum of xs
// (finite), 0 for none: what a statement composed of releases at these
// costs is charged.
func SumRoundedUp(xs ...float64) float64 {
	sum := new(big.Rat)
	for _, x := range xs {
		sum.Add(sum, ratOf(x))
	}
	f, _ := sum.Float64()
	if ratOf(f).Cmp(sum) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// ratOf returns x exactly.
func ratOf(x float64) *big.Rat { return new(big.Rat).SetFloat64(x) }
