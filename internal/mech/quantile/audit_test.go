package quantile

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// quantileRelease draws m on the sorted values, fetching only m.Window.
func quantileRelease(m *WindowExponential, src rand.Source, sorted []float64) float64 {
	e, err := m.Release(src, mech.WindowOf(m.Window(), sorted))
	if err != nil {
		panic(err)
	}
	return e.Value
}

func TestAuditQuantile(t *testing.T) {
	// ε = 1; bounds [0, 10] unless stated. The hard cases: ties at the
	// median, values at the bounds, n = 0, 1, 2, a clipped window (k = 2 on
	// 60 values), and other quantiles.
	spread := ranks(60)
	withMiddle := append(slices.Clone(spread[:30]), append([]float64{29.5}, spread[30:]...)...)
	for _, tc := range []struct {
		name  string
		b     mech.Bounds
		q     float64
		k     int64
		d, d2 []float64
	}{
		{"ties at the median", mech.Bounds{Lower: 0, Upper: 10}, 0.5, 56, []float64{1, 5, 5, 5, 9}, []float64{1, 5, 5, 5, 5, 9}},
		// All equal: D is uniform on the grid, D' puts 0.269 instead of ½ on
		// [0, 5] (weights 5e^-2.5 and 5e^-1.5): a loss of 0.62.
		{"all equal", mech.Bounds{Lower: 0, Upper: 10}, 0.5, 56, []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5, 10}},
		{"values at the bounds", mech.Bounds{Lower: 0, Upper: 10}, 0.5, 56, []float64{0, 0, 10, 10}, []float64{0, 0, 10, 10, 10}},
		{"n = 0 and 1", mech.Bounds{Lower: 0, Upper: 10}, 0.5, 56, []float64{}, []float64{3}},
		{"n = 1 and 2", mech.Bounds{Lower: 0, Upper: 10}, 0.5, 56, []float64{2}, []float64{2, 8}},
		{"clipped window", mech.Bounds{Lower: 0, Upper: 100}, 0.5, 2, spread, withMiddle},
		{"q = 0.9 remove the top", mech.Bounds{Lower: 0, Upper: 100}, 0.9, 3, spread[:20], spread[:19]},
		{"q = 0.25 with ties", mech.Bounds{Lower: 0, Upper: 10}, 0.25, 56, []float64{0, 2, 2, 2, 7, 9}, []float64{0, 2, 2, 2, 2, 7, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewWindowExponential(tc.b, tc.q, 1, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			privtest.AuditDefault(t, 0xa5, 1, nil, func(src rand.Source, nb int) float64 {
				if nb == 1 {
					return quantileRelease(m, src, tc.d2)
				}
				return quantileRelease(m, src, tc.d)
			})
		})
	}
}

// TestAuditCatchesBrokenExponential: the rank-window exponential mechanism
// with a halved utility sensitivity (true ε = 2), on {2} against {2, 8},
// must fail an audit at ε = 1 (see TestAuditCatchesBrokenNoise for the
// loss it has).
func TestAuditCatchesBrokenExponential(t *testing.T) {
	em, _ := NewWindowExponential(mech.Bounds{Lower: 0, Upper: 10}, 0.5, 1, 56)
	em.sensitivity /= 2 // the exponent doubles: true ε = 2
	res, err := privtest.Run(privtest.Config{Epsilon: 1, Samples: privtest.AuditSamples, Seed: privtest.Seed(t, 0xa3)},
		func(src rand.Source, nb int) float64 { return quantileRelease(em, src, []float64{2, 8}[:1+nb]) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ε̂_lb=%.4f at %s, point %.4f", res.LowerBound, res.Event, res.PointEstimate)
	if res.LowerBound <= 1 {
		t.Errorf("lower bound got %v, want > 1 (the audit missed halved noise)", res.LowerBound)
	}
}
