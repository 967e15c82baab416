package laplace

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Count mechanism.
//
// Guarantee: ε-DP under add/remove of one row. Adding or removing a row
// changes a count by exactly 1, so the sensitivity is Δ = 1, and the
// release n + Z with Z ~ DLap(1/ε) (DiscreteLaplace) is ε-DP: for every
// output k, P[n+Z = k]/P[n+1+Z = k] = exp(±(|k-n-1| - |k-n|)/β) ≤ exp(1/β)
// ≤ exp(ε). The released count is an integer; no grid or float is involved.

// ReleaseCount releases the exact count n ≥ 0 with discrete Laplace noise
// of scale 1/ε: the primitive noisy count for sharing within a statement.
func ReleaseCount(src noise.Source, n int64, epsilon float64) (Noisy, error) {
	return ReleaseUnitCount(src, n, 1, epsilon)
}

// ReleaseUnitCount releases the count n ≥ 0 of a table bounded to k rows
// per privacy unit with discrete Laplace noise of scale k/ε (unit.go).
func ReleaseUnitCount(src noise.Source, n, k int64, epsilon float64) (Noisy, error) {
	if n < 0 {
		return Noisy{}, fmt.Errorf("%w: count %d", mech.ErrInvalidInput, n)
	}
	if err := checkRows(k); err != nil {
		return Noisy{}, err
	}
	d, err := noise.NewDiscreteLaplace(k, epsilon)
	if err != nil {
		return Noisy{}, err
	}
	return Noisy{value: float64(d.Release(src, n)), stat: statCount, noise: d}, nil
}

// DeriveCount turns a noisy count into an answer: the value clamped to
// ≥ 0 and the exact discrete-Laplace interval, intersected with [0, ∞).
func DeriveCount(count Noisy, confidence float64) (mech.Estimate, error) {
	if err := count.check(statCount, mech.Bounds{}); err != nil {
		return mech.Estimate{}, err
	}
	return DeriveTotal(count.Total(), confidence)
}
