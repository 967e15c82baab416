package quantile

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// TestGridQuantileWeights checks the utilities by hand. Counts [2, 3, 0, 5]
// (n = 10), median t = 5: bin 0 holds ranks [0, 2] (distance 3), bin 1
// [2, 5] (0), bin 2 [5, 5] (0), bin 3 [5, 10] (0). For q = 0.9, t = 9:
// distances 7, 4, 4, 0. Log weights are -ε·dist/(2·max(q, 1-q)).
func TestGridQuantileWeights(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		want []float64
	}{
		{0.5, []float64{-3, 0, 0, 0}},
		{0.9, []float64{-7 / 1.8, -4 / 1.8, -4 / 1.8, 0}},
	} {
		m, err := NewGridExponential(tc.q, 1, 4)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.logWeights([]int64{2, 3, 0, 5})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("q=%v: log weights %v, want %v", tc.q, got, tc.want)
				break
			}
		}
	}
}

func TestGridQuantileRejects(t *testing.T) {
	if _, err := NewGridExponential(1.5, 1, 4); err == nil {
		t.Error("q = 1.5 accepted")
	}
	if _, err := NewGridExponential(0.5, 0, 4); err == nil {
		t.Error("ε = 0 accepted")
	}
	if _, err := NewGridExponential(0.5, 1, 0); err == nil {
		t.Error("0 bins accepted")
	}
	m, _ := NewGridExponential(0.5, 1, 4)
	if _, err := m.Release(rand.NewChaCha8([32]byte{}), []int64{1, 2}); err == nil {
		t.Error("a histogram with the wrong number of bins was accepted")
	}
}

// TestGridQuantileTies is the case that breaks a rank-window exponential
// mechanism: 1000 equal values at the median. The bin holding them has
// utility 0 and every other bin at least 500 ranks away, so at ε = 1 the
// mechanism returns that bin except with probability below e^-400.
func TestGridQuantileTies(t *testing.T) {
	counts := make([]int64, 101)
	counts[30] = 1000
	counts[10], counts[90] = 10, 10
	m, _ := NewGridExponential(0.5, 1, len(counts))
	src := privtest.Seeded(t, 0x9a1)
	for range 1000 {
		bin, err := m.Release(src, counts)
		if err != nil {
			t.Fatal(err)
		}
		if bin != 30 {
			t.Fatalf("got bin %d, want 30", bin)
		}
	}
}

// TestGridQuantileMatchesWeights draws 200,000 releases and compares the
// bin frequencies with the exact probabilities by a chi-square test whose
// false-rejection probability is 1e-6.
func TestGridQuantileMatchesWeights(t *testing.T) {
	counts := []int64{1, 0, 3, 2, 2, 0, 1, 4, 0, 2}
	m, _ := NewGridExponential(0.3, 0.7, len(counts))
	w, _ := m.logWeights(counts)
	var total float64
	probs := make([]float64, len(w))
	for i, x := range w {
		probs[i] = math.Exp(x)
		total += probs[i]
	}
	for i := range probs {
		probs[i] /= total
	}
	src := privtest.Seeded(t, 0x9a2)
	observed := make([]int, len(counts))
	for range 200000 {
		bin, err := m.Release(src, counts)
		if err != nil {
			t.Fatal(err)
		}
		observed[bin]++
	}
	stat, crit, err := privtest.ChiSquare(observed, probs, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if stat > crit {
		t.Errorf("chi-square %v > critical %v: frequencies %v, probabilities %v", stat, crit, observed, probs)
	}
}

// TestAuditGridQuantile audits neighbouring histograms (one row added): a
// tie block at the median, a value added at the lower and upper bound,
// n = 0 → 1 and 1 → 2, and the 0.9 quantile.
func TestAuditGridQuantile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     float64
		d     []int64
		added int
	}{
		{"ties at the median", 0.5, []int64{0, 2, 5, 5, 2, 0}, 2},
		{"added at the lower bound", 0.5, []int64{1, 1, 1, 1, 1, 1}, 0},
		{"added at the upper bound", 0.5, []int64{1, 1, 1, 1, 1, 1}, 5},
		{"n = 0 to 1", 0.5, []int64{0, 0, 0, 0, 0, 0}, 3},
		{"n = 1 to 2", 0.5, []int64{0, 0, 1, 0, 0, 0}, 5},
		{"q = 0.9", 0.9, []int64{3, 1, 0, 2, 1, 3}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := NewGridExponential(tc.q, 1, len(tc.d))
			nb := append([]int64(nil), tc.d...)
			nb[tc.added]++
			privtest.AuditDefault(t, 0x9a3, 1, privtest.IntegerEdges(0, len(tc.d)), func(src rand.Source, neighbour int) float64 {
				h := tc.d
				if neighbour == 1 {
					h = nb
				}
				bin, err := m.Release(src, h)
				if err != nil {
					t.Fatal(err)
				}
				return float64(bin)
			})
		})
	}
}
