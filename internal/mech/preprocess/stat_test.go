package preprocess

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPreprocessReleaseLaw(t *testing.T) {
	// Release − g is the package's Laplace noise of scale Scale(): its mean
	// is 0 and its mean absolute value is the scale. N = 10^5; tolerances
	// privtest.Z6·σ/√N with σ = √2·scale (mean) and scale (|·|): false rejection
	// about 2·10^−6 per mechanism.
	src := privtest.Seeded(t, 0x5a03)
	b := mech.Bounds{Lower: 0, Upper: 10}
	data := []float64{0, 1, 1, 2, 3, 5, 8, 8, 9, 10}
	p := Params{Bounds: b, Delta: 0.5, Center: 5}
	med, _ := NewMedian(p, 1)
	mean, _ := NewMean(p, 1)
	vp := p
	vp.Delta = 4
	vari, _ := NewVariance(vp, 1)
	w := mech.WindowOf(med.Window(), data)
	ms, mIdx := SummaryOf(mean.Grid(), data)
	vs, vIdx := SummaryOf(vari.Grid(), data)
	for _, tc := range []struct {
		name    string
		scale   float64
		value   func() (float64, error)
		release func() (float64, error)
	}{
		{"median", med.Scale(), func() (float64, error) { return med.Value(w) }, func() (float64, error) { return med.Release(src, w) }},
		{"mean", mean.Scale(), func() (float64, error) { return mean.Value(ms, mIdx) }, func() (float64, error) { return mean.Release(src, ms, mIdx) }},
		{"variance", vari.Scale(), func() (float64, error) { return vari.Value(vs, vIdx) }, func() (float64, error) { return vari.Release(src, vs, vIdx) }},
	} {
		g, err := tc.value()
		if err != nil {
			t.Fatal(err)
		}
		const n = 100000
		var sum, abs float64
		for range n {
			y, err := tc.release()
			if err != nil {
				t.Fatal(err)
			}
			sum += y - g
			abs += math.Abs(y - g)
		}
		if m := sum / n; math.Abs(m) > privtest.Z6*math.Sqrt2*tc.scale/math.Sqrt(n) {
			t.Errorf("%s: mean error got %v, want 0 ± %v", tc.name, m, privtest.Z6*math.Sqrt2*tc.scale/math.Sqrt(n))
		}
		if m := abs / n; math.Abs(m-tc.scale) > privtest.Z6*tc.scale/math.Sqrt(n) {
			t.Errorf("%s: mean |error| got %v, want %v", tc.name, m, tc.scale)
		}
	}
}
