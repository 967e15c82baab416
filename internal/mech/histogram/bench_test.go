package histogram

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// benchHistogram returns a public synthetic histogram of n bins with the
// shapes DAWA meets: empty ranges, plateaus, spikes and a smooth trend.
func benchHistogram(n int) []int64 {
	r := rand.New(rand.NewPCG(1, 2))
	h := make([]int64, n)
	for j := range h {
		switch x := float64(j) / float64(n); {
		case x < 0.3:
			// empty
		case x < 0.5:
			h[j] = 40
		case x < 0.8:
			h[j] = int64(200 * (x - 0.5) * float64(1+r.IntN(3)))
		default:
			if r.IntN(50) == 0 {
				h[j] = int64(r.IntN(5000))
			}
		}
	}
	return h
}

// BenchmarkHistogramMechanisms times one release of each mechanism at
// n = 4096 and n = 2^20 bins, ε = 0.1, with 2000 uniform intervals (run
// with -bench Histogram; -short skips n = 2^20).
func BenchmarkHistogramMechanisms(b *testing.B) {
	for _, n := range []int{4096, 1 << 20} {
		if n > 4096 && testing.Short() {
			continue
		}
		h := benchHistogram(n)
		w, err := UniformIntervalsWorkload(n, 2000, 1)
		if err != nil {
			b.Fatal(err)
		}
		mechs := []struct {
			name string
			run  func(src noise.Source) (*Synopsis, error)
		}{
			{"dawa", func(src noise.Source) (*Synopsis, error) { return DAWA(src, h, w, 0.1, DAWAOptions{}) }},
			{"dawa-noise-first", func(src noise.Source) (*Synopsis, error) {
				return DAWA(src, h, w, 0.1, DAWAOptions{Partition: DAWANoiseFirst})
			}},
			{"dawa-noisy-cost", func(src noise.Source) (*Synopsis, error) {
				return DAWA(src, h, w, 0.1, DAWAOptions{Partition: DAWANoisyCost})
			}},
			{"greedy-h", func(src noise.Source) (*Synopsis, error) { return GreedyH(src, h, w, 0.1) }},
			{"h2", func(src noise.Source) (*Synopsis, error) { return H2(src, h, 0.1) }},
			{"identity", func(src noise.Source) (*Synopsis, error) { return Identity(src, h, 0.1) }},
		}
		for _, m := range mechs {
			b.Run(fmt.Sprintf("%s/n=%d", m.name, n), func(b *testing.B) {
				src := noise.NewCryptoSource()
				for b.Loop() {
					if _, err := m.run(src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
