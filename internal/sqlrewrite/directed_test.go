package sqlrewrite

import (
	"math"
	"math/big"
	"testing"
)

// TestDirectedRoundsOutwardWithoutNegativeZero: hand-checked directed
// roundings: 0.1 + 0.2 rounds below and above the exact sum; x − x is +0
// in every mode (toward −∞, big.Float gives −0, which EXPLAIN printed as
// a bound "-0").
func TestDirectedRoundsOutwardWithoutNegativeZero(t *testing.T) {
	lo, hi := directed(0.1, 0.2, '+', big.ToNegativeInf), directed(0.1, 0.2, '+', big.ToPositiveInf)
	if !(lo < hi) || math.Nextafter(lo, 1) != hi {
		t.Errorf("0.1 + 0.2 in [%v, %v], want adjacent float64 values", lo, hi)
	}
	for _, m := range []big.RoundingMode{big.ToNegativeInf, big.ToPositiveInf, big.ToNearestEven} {
		if z := directed(5, 5, '-', m); z != 0 || math.Signbit(z) {
			t.Errorf("5 − 5 in mode %v = %v (sign bit %v), want +0", m, z, math.Signbit(z))
		}
	}
}
