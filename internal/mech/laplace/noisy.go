package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// noiseModel is the public description of how a primitive release was
// noised: enough to compute its interval.
type noiseModel interface {
	// HalfWidth bounds |release - truth| with the given confidence.
	HalfWidth(confidence float64) float64
	// Scale is the Laplace scale of the noise.
	Scale() float64
}

// statistic names what a primitive release measured.
type statistic int

const (
	statCount statistic = iota + 1
	statSum
	statCenteredSum
	statCenteredSumOfSquares
)

// Noisy is one primitive release (a noisy count, clamped sum, centered
// sum or centered sum of squares) together with its public noise model.
// It is what a planner shares between the aggregates of one statement:
// the Derive functions compute answers from Noisy values by
// post-processing. Only the Release functions of this package create
// Noisy values, so a Derive function can check it is given the statistics
// (and bounds) it needs.
type Noisy struct {
	value  float64
	stat   statistic
	bounds mech.Bounds
	noise  noiseModel
}

// Value returns the released value.
func (r Noisy) Value() float64 { return r.value }

// Scale returns the Laplace scale of the release's noise.
func (r Noisy) Scale() float64 { return r.noise.Scale() }

// HalfWidth returns w such that the release is within w of the true value
// with probability at least confidence.
func (r Noisy) HalfWidth(confidence float64) float64 { return r.noise.HalfWidth(confidence) }

// check reports an error unless r is a release of stat (over bounds b,
// for the sums).
func (r Noisy) check(stat statistic, b mech.Bounds) error {
	if r.noise == nil || r.stat != stat || (stat != statCount && r.bounds != b) {
		return fmt.Errorf("%w: release of statistic %d over %v given where statistic %d over %v is needed",
			mech.ErrInvalidInput, r.stat, r.bounds, stat, b)
	}
	return nil
}

// interval returns the Estimate of value ± halfWidth intersected with
// [lo, hi], a range known to contain the truth (which keeps the coverage),
// with the value clamped into it.
func interval(value, halfWidth, lo, hi float64) mech.Estimate {
	return mech.Estimate{
		Value:       math.Min(math.Max(value, lo), hi),
		Low:         math.Min(math.Max(value-halfWidth, lo), hi),
		High:        math.Max(math.Min(value+halfWidth, hi), lo),
		HasInterval: true,
	}
}
