package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// Release time of the windowed mechanisms (piecewise Laplace, inverse
// sensitivity, smooth sensitivity, piecewise variance) given their window.
// Run: go test ./bench -run '^$' -bench WindowedRelease

var windowedBounds = mech.Bounds{Lower: 0, Upper: 1000}

// uniformColumn returns n sorted values spread uniformly over [0, 1000].
func uniformColumn(n int) []float64 {
	r := rand.New(rand.NewChaCha8([32]byte{byte(n), 'b', 'e', 'n', 'c', 'h'}))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = 1000 * r.Float64()
	}
	slices.Sort(xs)
	return xs
}

func BenchmarkWindowedRelease(b *testing.B) {
	// One release of each windowed mechanism on a column of 10^6 values
	// (the window only), at ε = 1 and 0.1.
	xs := uniformColumn(1_000_000)
	src := rand.NewChaCha8([32]byte{'r'})
	for _, eps := range []float64{1, 0.1} {
		plm, _ := piecewise.NewQuantile(windowedBounds, 0.5, eps, piecewise.DefaultRho(windowedBounds, false))
		inv, _ := piecewise.NewInverseSensitivityQuantile(windowedBounds, 0.5, eps, piecewise.DefaultRho(windowedBounds, false))
		ss, _ := quantile.NewSmoothMedian(windowedBounds, eps)
		pv, _ := piecewise.NewVariance(windowedBounds, eps, 0)
		sk := pv.Sketch(xs)
		// Issue 15's case: 1000 tied integer values (an integer column,
		// ρ = ½), where many windows tie and every comparison is exact.
		tied := make([]float64, 1000)
		for i := range tied {
			tied[i] = float64(i % 101)
		}
		slices.Sort(tied)
		pvTied, _ := piecewise.NewVariance(windowedBounds, eps, 0.5)
		skTied := pvTied.Sketch(tied)
		// The default VARIANCE before the edges release (the centred candidate) at n = 10^6 after its
		// fetch (summary, histogram, and for piecewise the sketch: computed
		// by the first, untimed release): spread data take the piecewise
		// branch, data near a bound the moments around the median.
		autoSpread, err := centredVariance(NewColumn(&Dataset{Name: "uniform", Values: xs, Lower: 0, Upper: 1000}), eps)
		if err != nil {
			b.Fatal(err)
		}
		nearBound := make([]float64, len(xs))
		for i, x := range xs {
			nearBound[i] = x * x / 1e5 // in [0, 10], bounds [0, 1000]
		}
		autoNear, err := centredVariance(NewColumn(&Dataset{Name: "near-bound", Values: nearBound, Lower: 0, Upper: 1000}), eps)
		if err != nil {
			b.Fatal(err)
		}
		// The default VARIANCE now (bench.RuleCandidate: the squares from both
		// bounds, one vector Laplace release, formed exactly) given its
		// fetch, the exact grid sums (n, Σk, Σk²) the database computes;
		// and with those sums computed here from the 10^6 values in one
		// pass, the work the database does for them.
		variance := Statistics[slices.IndexFunc(Statistics, func(s Statistic) bool { return s.Kind == VarianceStat })]
		spreadCol := NewColumn(&Dataset{Name: "uniform", Values: xs, Lower: 0, Upper: 1000})
		ruleVariance, err := RuleCandidate().Prepare(variance, spreadCol, eps)
		if err != nil {
			b.Fatal(err)
		}
		ruleWithSummary := func() error {
			col := NewColumn(&Dataset{Name: "uniform", Values: xs, Lower: 0, Upper: 1000})
			p, err := RuleCandidate().Prepare(variance, col, eps)
			if err != nil {
				return err
			}
			_, err = p.Draw(src)
			return err
		}
		for range 3 {
			if _, err := ruleVariance.Draw(src); err != nil {
				b.Fatal(err)
			}
			if _, err := autoSpread(src, int64(len(xs))); err != nil {
				b.Fatal(err)
			}
			if _, err := autoNear(src, int64(len(xs))); err != nil {
				b.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name    string
			release func() error
		}{
			{"PLM-median", func() error { _, err := plm.Release(src, mech.WindowOf(plm.Window(), xs)); return err }},
			{"INV-median", func() error { _, err := inv.Release(src, mech.WindowOf(inv.Window(), xs)); return err }},
			{"SS-median", func() error { _, err := ss.Release(src, mech.WindowOf(ss.Window(), xs)); return err }},
			{"PLM-variance", func() error { _, err := pv.Release(context.Background(), src, sk); return err }},
			{"PLM-variance-tied-1000", func() error { _, err := pvTied.Release(context.Background(), src, skTied); return err }},
			{"default-variance", func() error { _, err := ruleVariance.Draw(src); return err }},
			{"default-variance-with-summary", ruleWithSummary},
			{"auto-variance-spread", func() error { _, err := autoSpread(src, int64(len(xs))); return err }},
			{"auto-variance-near-bound", func() error { _, err := autoNear(src, int64(len(xs))); return err }},
		} {
			b.Run(fmt.Sprintf("%s/ε=%v", tc.name, eps), func(b *testing.B) {
				for b.Loop() {
					if err := tc.release(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
