package mech

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors; every error returned by this package wraps one of them
// together with the offending value.
var (
	// ErrInvalidEpsilon: ε is not finite or outside [MinEpsilon, MaxEpsilon].
	ErrInvalidEpsilon = errors.New("mech: invalid epsilon")
	// ErrInvalidSensitivity: a sensitivity or noise scale is out of range.
	ErrInvalidSensitivity = errors.New("mech: invalid sensitivity")
	// ErrInvalidBounds: clamping bounds are not finite with lower < upper.
	ErrInvalidBounds = errors.New("mech: invalid bounds")
	// ErrInvalidQuantile: a quantile is outside [0, 1] or a window width
	// is out of range.
	ErrInvalidQuantile = errors.New("mech: invalid quantile")
	// ErrInvalidConfidence: a confidence level is outside (0, 1).
	ErrInvalidConfidence = errors.New("mech: invalid confidence")
	// ErrInvalidInput: a value computed by the database is impossible
	// (negative count, non-finite sum, unsorted window, mixed releases).
	ErrInvalidInput = errors.New("mech: invalid input")
	// ErrWindowMismatch: the fetched window of order statistics does not
	// cover the ranks the quantile mechanism needs (a planner bug).
	ErrWindowMismatch = errors.New("mech: order-statistic window does not cover the needed ranks")
)

// MinEpsilon and MaxEpsilon bound the ε of a single release. The lower
// bound is Google's (2^-50); below it noise scales leave float64 range.
// Above the upper bound e^ε > 10^43: the release protects nothing, so such
// a value is taken for a unit mistake. The cap also keeps grid arithmetic
// exact (sensitivity/granularity < 2^47).
const (
	MinEpsilon = 0x1p-50
	MaxEpsilon = 100
)

// MinDelta is the smallest δ a statement may set. Mechanisms divide a
// statement's δ into at most a few hundred shares, which from 2^-1000 stay
// positive and normal, so every −ln δ they compute is finite (about 700 at
// most); each mechanism also refuses a share that is not positive (a
// subnormal δ split 24 ways rounds to 0, and −ln 0 = +∞ turned PTR's
// stability test off).
const MinDelta = 0x1p-1000

// checkEpsilon validates one release's ε.
func CheckEpsilon(epsilon float64) error {
	if math.IsNaN(epsilon) || epsilon < MinEpsilon || epsilon > MaxEpsilon {
		return fmt.Errorf("%w: %v, must be finite and in [2^-50, %v]", ErrInvalidEpsilon, epsilon, float64(MaxEpsilon))
	}
	return nil
}

// checkConfidence validates a confidence level.
func CheckConfidence(confidence float64) error {
	if !(confidence > 0 && confidence < 1) {
		return fmt.Errorf("%w: %v, must be in (0, 1)", ErrInvalidConfidence, confidence)
	}
	return nil
}
