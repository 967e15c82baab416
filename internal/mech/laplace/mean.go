package laplace

import "github.com/dpproxy/dpproxy/internal/mech"

// Mean from a count and a centred sum (Google's bounded mean).
//
// Guarantee: ε-DP under add/remove of one row (one unit on a table bounded
// to k rows per unit), by sequential composition of two releases, ε_n-DP
// and ε_s-DP with ε_n + ε_s = ε: the count n (sensitivity 1, or k;
// ReleaseUnitCount) and the centred sum S = Σ (clamp(x) - m),
// m = (L+U)/2, formed exactly from the grid sums (sensitivity (U-L)/2, or
// k·(U-L)/2; ReleaseUnitCenteredSumOnGrid, centred_grid.go). The planner's
// forced laplace mechanism makes these two releases for AVG and splits the
// statement's ε evenly over its distinct releases (ε/2 each for AVG
// alone; a COUNT of the same column in the statement shares the count, a
// VARIANCE or STDDEV both). The mean
//
//	mean = m + clamp(S̃ / max(ñ, 1), -(U-L)/2, (U-L)/2) ∈ [L, U]
//
// and its interval (DeriveMean) are post-processing. Centering makes the
// sum's sensitivity half the range instead of max(|L|,|U|), and keeps the
// noisy ratio near m when ñ is small.

// meanOf is the mean derived from a count and a centered sum.
func meanOf(b mech.Bounds, count, centeredSum float64) float64 {
	h := b.HalfRange()
	return b.Mid() + mech.Clamp(centeredSum/max(count, 1), -h, h)
}

// DeriveMean computes the mean of the column over bounds b from a noisy
// count and a noisy centered sum over b, with a conservative interval
// (derived_interval.go) limited to [L, U]: post-processing.
func DeriveMean(b mech.Bounds, count, centeredSum Noisy, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if err := count.check(statCount, b); err != nil {
		return mech.Estimate{}, err
	}
	if err := centeredSum.check(statCenteredSum, b); err != nil {
		return mech.Estimate{}, err
	}
	value := meanOf(b, count.value, centeredSum.value)
	alpha := (1 - confidence) / 2
	n, ok := countSpan(count, alpha, 1)
	if !ok {
		return mech.Estimate{Value: value, Low: b.Lower, High: b.Upper, HasInterval: true}, nil
	}
	s := meanSpan(b, n, primitiveSpan(centeredSum, alpha))
	return mech.Estimate{Value: value, Low: s.lo, High: s.hi, HasInterval: true}, nil
}

// checkDerive validates the arguments every Derive function shares.
func checkDerive(b mech.Bounds, confidence float64) error {
	if err := b.Validate(); err != nil {
		return err
	}
	return mech.CheckConfidence(confidence)
}
