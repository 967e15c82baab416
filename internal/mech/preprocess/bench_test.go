package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Benchmarks of the exact preprocessing algorithms against the paper's
// O(n²) ones (float64 versions below, for timing only), and of each
// mechanism's release. Run: go test ./internal/mech/preprocess -run '^$' -bench .

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

var benchBounds = mech.Bounds{Lower: 0, Upper: 1000}

func BenchmarkPreprocessMedian(b *testing.B) {
	for _, n := range benchSizes {
		xs := benchColumn("uniform", n)
		p := Params{Bounds: benchBounds, Delta: 1000 / float64(n), Center: 500}
		m, _ := NewMedian(p, 1)
		w := mech.SortedWindow{Count: int64(n), First: 1, Values: xs}
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
		p := Params{Bounds: benchBounds, Delta: 1000 / (4 * float64(n)), Center: 500}
		m, _ := NewMean(p, 1)
		s, idx := SummaryOf(m.Grid(), xs)
		b.Run(fmt.Sprintf("hull/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Value(s, idx); err != nil {
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
			p := Params{Bounds: benchBounds, Delta: tc.factor * varPopFloat(xs) / float64(n)}
			m, _ := NewVariance(p, 1)
			s, idx := SummaryOf(m.Grid(), xs)
			b.Run(fmt.Sprintf("%s/n=%d", tc.kind, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := m.Value(s, idx); err != nil {
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

// varPopFloat is the population variance in float64 (to set Δ).
func varPopFloat(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return ss / float64(len(xs))
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
