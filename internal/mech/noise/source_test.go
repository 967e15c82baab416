package noise

import (
	"math"
	"math/bits"
	"sync"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestCryptoSourceConcurrentAndBalanced(t *testing.T) {
	// 8 goroutines share one source (run with -race to check the mutex).
	// Each of the 8·4000·64 bits is 1 with probability 1/2: the number of
	// ones deviates from half by more than privtest.Z6 standard deviations with
	// probability 10⁻⁶; a repeated 64-bit value has probability < 2^-38.
	src := NewCryptoSource()
	const workers, draws = 8, 4000
	var mu sync.Mutex
	ones := 0
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			local := make([]uint64, draws)
			for i := range local {
				local[i] = src.Uint64()
			}
			mu.Lock()
			defer mu.Unlock()
			for _, v := range local {
				ones += bits.OnesCount64(v)
				seen[v] = true
			}
		})
	}
	wg.Wait()
	n := float64(workers * draws * 64)
	if dev := math.Abs(float64(ones) - n/2); dev > privtest.Z6*math.Sqrt(n/4) {
		t.Errorf("ones got %v, want %v ± %v", ones, n/2, privtest.Z6*math.Sqrt(n/4))
	}
	if len(seen) != workers*draws {
		t.Errorf("distinct values got %v, want %v", len(seen), workers*draws)
	}
}
