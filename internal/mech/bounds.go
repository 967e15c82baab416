package mech

import (
	"fmt"
	"math"
)

// Bounds are the public clamping bounds [Lower, Upper] of a column
// (DESIGN.md §2: declared in the configuration, never read from the data).
type Bounds struct {
	Lower, Upper float64
}

// Validate checks that the bounds are finite with Lower < Upper.
func (b Bounds) Validate() error {
	if math.IsNaN(b.Lower) || math.IsNaN(b.Upper) || math.IsInf(b.Lower, 0) || math.IsInf(b.Upper, 0) || !(b.Lower < b.Upper) {
		return fmt.Errorf("%w: [%v, %v], must be finite with lower < upper", ErrInvalidBounds, b.Lower, b.Upper)
	}
	return nil
}

// Clamp returns x limited to [Lower, Upper].
func (b Bounds) Clamp(x float64) float64 {
	return math.Min(math.Max(x, b.Lower), b.Upper)
}

// mid returns the centre (L+U)/2, computed without overflow.
func (b Bounds) Mid() float64 {
	return b.Lower/2 + b.Upper/2
}

// halfRange returns (U-L)/2, computed without overflow.
func (b Bounds) HalfRange() float64 {
	return b.Upper/2 - b.Lower/2
}

// clampTo limits x to [lo, hi].
func Clamp(x, lo, hi float64) float64 { return min(max(x, lo), hi) }

// magnitude returns max(|L|, |U|).
func (b Bounds) Magnitude() float64 { return math.Max(math.Abs(b.Lower), math.Abs(b.Upper)) }
