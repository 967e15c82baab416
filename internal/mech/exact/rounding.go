package exact

import (
	"math"
	"math/big"
)

// roundUp returns the next float64 above x: a sensitivity computed with
// one rounding, rounded up, is at least the exact one.
func RoundUp(x float64) float64 { return math.Nextafter(x, math.Inf(1)) }

// ulpOf returns the spacing of float64 values at magnitude m.
func Ulp(m float64) float64 {
	return math.Nextafter(m, math.Inf(1)) - m
}

// clampRational returns y limited to [lo, hi].
func ClampRat(y, lo, hi *big.Rat) *big.Rat {
	switch {
	case y.Cmp(lo) < 0:
		return lo
	case y.Cmp(hi) > 0:
		return hi
	}
	return y
}
