package mech

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestSharesNeverExceedTotal enumerates many ε (every k/1000 up to 3, and
// 3000 log-uniform in [e^-12, e^8]) and 1 to 12 parts, and counts the
// splits whose exact sum exceeds the total: the rounded-to-nearest shares
// (the old code) do so for a large fraction, the helpers never.
func TestSharesNeverExceedTotal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var totals []float64
	for k := 1; k <= 3000; k++ {
		totals = append(totals, float64(k)/1000)
	}
	for range 3000 {
		totals = append(totals, math.Exp(rng.Float64()*20-12))
	}
	exceeds := func(shares []float64, total float64) bool {
		sum := new(big.Rat)
		for _, s := range shares {
			sum.Add(sum, ratOf(s))
		}
		return sum.Cmp(ratOf(total)) > 0
	}
	nearestOver, checked := 0, 0
	for _, e := range totals {
		for parts := 1; parts <= 12; parts++ {
			checked++
			naive := make([]float64, parts)
			exact := make([]float64, parts)
			for i := range naive {
				naive[i], exact[i] = e/float64(parts), EvenShare(e, parts)
			}
			if exceeds(naive, e) {
				nearestOver++
			}
			if exceeds(exact, e) {
				t.Fatalf("EvenShare(%v, %d) = %v: %d shares exceed the total", e, parts, exact[0], parts)
			}
			if exact[0] < math.Nextafter(e/float64(parts), 0) {
				t.Fatalf("EvenShare(%v, %d) = %v: more than an ulp below %v", e, parts, exact[0], e/float64(parts))
			}
		}
		for _, weights := range [][]int{{1, 2}, {1, 1, 1}, {2, 3, 5, 7}, {1, 1, 1, 1, 1, 1, 1}, {3, 9, 1}} {
			whole := 0
			for _, w := range weights {
				whole += w
			}
			shares := make([]float64, len(weights))
			for i, w := range weights {
				shares[i] = ProportionalShare(e, w, whole)
				if shares[i] < math.Nextafter(math.Nextafter(e*float64(w)/float64(whole), 0), 0) {
					t.Fatalf("ProportionalShare(%v, %d, %d) = %v: too far below %v", e, w, whole, shares[i], e*float64(w)/float64(whole))
				}
			}
			if exceeds(shares, e) {
				t.Fatalf("ProportionalShare(%v, %v of %d) = %v exceed the total", e, weights, whole, shares)
			}
		}
		for _, f := range []float64{0.1, 0.2, 1.0 / 3, 0.9} {
			a, b := SplitShare(e, f)
			if exceeds([]float64{a, b}, e) {
				t.Fatalf("SplitShare(%v, %v) = %v + %v exceeds the total", e, f, a, b)
			}
			if a < math.Nextafter(e*f, 0) || b < math.Nextafter(math.Nextafter(e-e*f, 0), 0) {
				t.Fatalf("SplitShare(%v, %v) = %v, %v: too far below %v, %v", e, f, a, b, e*f, e-e*f)
			}
		}
	}
	t.Logf("%d even splits checked; rounded to nearest, %d exceed the total; EvenShare: 0", checked, nearestOver)
	if nearestOver == 0 {
		t.Error("the enumeration found no split that rounding to nearest gets wrong: it cannot tell the helpers from the old code")
	}
}

func TestSharesEdgeCases(t *testing.T) {
	if got := EvenShare(0, 3); got != 0 {
		t.Errorf("EvenShare(0, 3) = %v", got)
	}
	if got := EvenShare(1, 1); got != 1 {
		t.Errorf("EvenShare(1, 1) = %v", got)
	}
	if a, b := SplitShare(1, 0.5); a != 0.5 || b != 0.5 {
		t.Errorf("SplitShare(1, 0.5) = %v, %v", a, b)
	}
	if a, b := SplitShare(math.SmallestNonzeroFloat64, 0.1); a+b > math.SmallestNonzeroFloat64 {
		t.Errorf("SplitShare(min, 0.1) = %v, %v", a, b)
	}
	// Invalid totals pass through for the caller's validation to reject.
	if got := EvenShare(math.Inf(1), 3); !math.IsInf(got, 1) {
		t.Errorf("EvenShare(+Inf, 3) = %v", got)
	}
	if a, _ := SplitShare(math.NaN(), 0.1); !math.IsNaN(a) {
		t.Errorf("SplitShare(NaN, 0.1) = %v", a)
	}
}
