package laplace

import (
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Bounded mean (Google's construction).
//
// Guarantee: ε-DP under add/remove of one row, by sequential composition
// of two ε/2-DP releases: the count n (sensitivity 1, ReleaseCount) and the
// centered sum S = Σ (clamp(x) - m), m = (L+U)/2 (sensitivity (U-L)/2,
// ReleaseCenteredSum). The mean
//
//	mean = m + clamp(S̃ / max(ñ, 1), -(U-L)/2, (U-L)/2) ∈ [L, U]
//
// is post-processing. Centering makes the sum's sensitivity half the range
// instead of max(|L|,|U|), and keeps the noisy ratio near m when ñ is small.

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

// BoundedMean is the complete AVG mechanism: a count and a centered sum
// released with ε/2 each, then DeriveMean. It checks every argument before
// drawing noise.
func BoundedMean(src noise.Source, b mech.Bounds, s Summary, epsilon, confidence float64) (mech.Estimate, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return mech.Estimate{}, err
	}
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if err := s.validate(); err != nil {
		return mech.Estimate{}, err
	}
	releases, err := releasePrimitives(src, b, s, epsilon/2, false)
	if err != nil {
		return mech.Estimate{}, err
	}
	return DeriveMean(b, releases[0], releases[1], confidence)
}
