package mech

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Benchmarks of the exact preprocessing algorithms against the paper's
// O(n²) ones (float64 versions below, for timing only), and of each
// mechanism's release. Run: go test ./internal/mech -run '^$' -bench .

// benchSizes are the column sizes of the scaling benchmarks.
var benchSizes = []int{1_000, 10_000, 100_000, 1_000_000}

// benchColumn returns n sorted values in [0, 1000]: "uniform" spread over
// the range, or "concentrated" N(500, 20²) with five outliers at 1000.
func benchColumn(kind string, n int) []float64 {
	r := rand.New(rand.NewChaCha8([32]byte{byte(n), 'b', 'e', 'n', 'c', 'h'}))
	xs := make([]float64, n)
	for i := range xs {
		switch kind {
		case "uniform":
			xs[i] = 1000 * r.Float64()
		default:
			xs[i] = math.Min(math.Max(500+20*r.NormFloat64(), 0), 1000)
			if i < 5 {
				xs[i] = 1000
			}
		}
	}
	slices.Sort(xs)
	return xs
}

var benchBounds = Bounds{Lower: 0, Upper: 1000}

func BenchmarkPreprocessMedian(b *testing.B) {
	for _, n := range benchSizes {
		xs := benchColumn("uniform", n)
		p := PreprocessParams{Bounds: benchBounds, Delta: 1000 / float64(n), Center: 500}
		m, _ := NewPreprocessMedian(p, 1)
		w := SortedWindow{Count: int64(n), First: 1, Values: xs}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Value(w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPreprocessMean(b *testing.B) {
	// Spread data with Δ = (U−L)/(4n): Lemma 5.13 fails, so every run
	// builds the hull (O(n log n)); the paper's Algorithm 2 is O(n²).
	for _, n := range benchSizes {
		xs := benchColumn("uniform", n)
		p := PreprocessParams{Bounds: benchBounds, Delta: 1000 / (4 * float64(n)), Center: 500}
		m, _ := NewPreprocessMean(p, 1)
		s := summaryOfFloat(xs)
		b.Run(fmt.Sprintf("hull/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Value(s, xs); err != nil {
					b.Fatal(err)
				}
			}
		})
		if n <= 10_000 {
			b.Run(fmt.Sprintf("paper-O(n²)/n=%d", n), func(b *testing.B) {
				for b.Loop() {
					algorithm2MeanFloat(xs, p.Delta, p.Center)
				}
			})
		}
	}
}

func BenchmarkPreprocessVariance(b *testing.B) {
	// "concentrated, Δ=16·Var/n": the regime where Theorem 1.8 says the
	// answer is accurate; pruning keeps the trim depth T small. "uniform,
	// Δ=Var/(4n)": a small Δ on spread data; T grows with n and the
	// enumeration is O(n²), like the paper's Algorithm 3.
	for _, tc := range []struct {
		kind   string
		factor float64
		sizes  []int
	}{
		{"concentrated", 16, benchSizes},
		{"uniform", 0.25, []int{1_000, 10_000}},
	} {
		for _, n := range tc.sizes {
			xs := benchColumn(tc.kind, n)
			s := summaryOfFloat(xs)
			p := PreprocessParams{Bounds: benchBounds, Delta: tc.factor * s.VarPop / float64(n)}
			m, _ := NewPreprocessVariance(p, 1)
			b.Run(fmt.Sprintf("%s/n=%d", tc.kind, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := m.Value(s, xs); err != nil {
						b.Fatal(err)
					}
				}
			})
			if n <= 10_000 {
				b.Run(fmt.Sprintf("%s/paper-O(n²)/n=%d", tc.kind, n), func(b *testing.B) {
					for b.Loop() {
						algorithm3Float(xs, p.Delta)
					}
				})
			}
		}
	}
}

func BenchmarkWindowedRelease(b *testing.B) {
	// One release of each windowed mechanism on a column of 10^6 values
	// (the window only), at ε = 1 and 0.1.
	xs := benchColumn("uniform", 1_000_000)
	src := rand.NewChaCha8([32]byte{'r'})
	for _, eps := range []float64{1, 0.1} {
		plm, _ := NewPiecewiseQuantile(benchBounds, 0.5, eps, DefaultRho(benchBounds, false))
		inv, _ := NewInverseSensitivityQuantile(benchBounds, 0.5, eps, DefaultRho(benchBounds, false))
		ss, _ := NewSmoothMedian(benchBounds, eps)
		pv, _ := NewPiecewiseVariance(benchBounds, eps, 0)
		sk := sketchOfFloat(benchBounds, xs, pv.Extremes())
		for _, tc := range []struct {
			name    string
			release func() error
		}{
			{"PLM-median", func() error { _, err := plm.Release(src, WindowOf(plm.Window(), xs)); return err }},
			{"INV-median", func() error { _, err := inv.Release(src, WindowOf(inv.Window(), xs)); return err }},
			{"SS-median", func() error { _, err := ss.Release(src, WindowOf(ss.Window(), xs)); return err }},
			{"PLM-variance", func() error { _, err := pv.Release(src, sk); return err }},
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

// summaryOfFloat is summaryOf in float64 arithmetic (large n).
func summaryOfFloat(xs []float64) PreprocessSummary {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return PreprocessSummary{Count: int64(len(xs)), Sum: sum, Min: xs[0], Max: xs[len(xs)-1], VarPop: ss / float64(len(xs))}
}

// sketchOfFloat is sketchOf in float64 arithmetic (large n).
func sketchOfFloat(b Bounds, xs []float64, k int64) VarianceSketch {
	c := b.mid()
	var s, q float64
	for _, x := range xs {
		s += x - c
		q += (x - c) * (x - c)
	}
	k = min(k, int64(len(xs)))
	return VarianceSketch{Count: int64(len(xs)), CenteredSum: s, CenteredSumSquares: q,
		Smallest: xs[:k], Largest: xs[int64(len(xs))-k:]}
}

// algorithm2MeanFloat is the paper's Algorithm 2 for the mean in float64
// (Welford window means), for timing only.
func algorithm2MeanFloat(xs []float64, delta, center float64) float64 {
	n := len(xs)
	prev := make([]float64, n+1)
	mean := make([]float64, n+1)
	for i := range prev {
		prev[i] = center
	}
	for k := 1; k <= n; k++ {
		for i := 0; i+k <= n; i++ {
			mean[i] += (xs[i+k-1] - mean[i]) / float64(k)
			prev[i] = min(max(mean[i], prev[i+1]-delta), prev[i]+delta)
		}
	}
	return prev[0]
}

// algorithm3Float is the paper's Algorithm 3 (variance) in float64, for
// timing only.
func algorithm3Float(xs []float64, delta float64) float64 {
	n := len(xs)
	prev := make([]float64, n+1)
	mean := make([]float64, n+1)
	m2 := make([]float64, n+1)
	for k := 1; k <= n; k++ {
		for i := 0; i+k <= n; i++ {
			d := xs[i+k-1] - mean[i]
			mean[i] += d / float64(k)
			m2[i] += d * (xs[i+k-1] - mean[i])
			prev[i] = min(m2[i]/float64(k), prev[i]+delta, prev[i+1]+delta)
		}
	}
	return prev[0]
}
