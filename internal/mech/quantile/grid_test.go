package quantile

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// gridLogLaw returns ln P[Release = j] for every bin j.
func gridLogLaw(t *testing.T, m *GridExponential, counts []int64) []float64 {
	t.Helper()
	table, err := m.table(counts)
	if err != nil {
		t.Fatal(err)
	}
	law := make([]float64, table.Len())
	for j := range law {
		law[j] = table.LogProb(j)
	}
	return law
}

// TestGridQuantileWeights checks the law by hand. Counts [2, 3, 0, 5]
// (n = 10), median t = 5: bin 0 holds ranks [0, 2] (distance 3), bin 1
// [2, 5] (0), bin 2 [5, 5] (0), bin 3 [5, 10] (0). For q = 0.9, t = 9:
// distances 7, 4, 4, 0. Log weights are -ε·dist/(2·max(q, 1-q)) (ε less
// 2^−55, invisible here), normalised.
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
		got := gridLogLaw(t, m, []int64{2, 3, 0, 5})
		z := 0.0
		for _, w := range tc.want {
			z += math.Exp(w)
		}
		for i := range got {
			if math.Abs(got[i]-(tc.want[i]-math.Log(z))) > 1e-12 {
				t.Errorf("q=%v: log law %v, want %v − ln %v", tc.q, got, tc.want, z)
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
	if _, err := m.Release(rand.NewChaCha8([32]byte{}), []int64{1, -2, 0, 0}); err == nil {
		t.Error("a negative count was accepted")
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
	// The far bins keep their probability e^(−ε·dist): bin 10 is 505 ranks
	// below the target (b = 10, t = 510).
	if lp := gridLogLaw(t, m, counts)[10]; math.Abs(lp+500) > 1e-9 {
		t.Errorf("ln P[bin 10] = %v, want −500", lp)
	}
}

// TestGridQuantileMatchesWeights draws 200,000 releases and compares the
// bin frequencies with the law by a chi-square test whose false-rejection
// probability is 1e-6.
func TestGridQuantileMatchesWeights(t *testing.T) {
	counts := []int64{1, 0, 3, 2, 2, 0, 1, 4, 0, 2}
	m, _ := NewGridExponential(0.3, 0.7, len(counts))
	law := gridLogLaw(t, m, counts)
	probs := make([]float64, len(law))
	for i, lp := range law {
		probs[i] = math.Exp(lp)
	}
	// Release builds the table and draws once; the draws reuse the table.
	table, err := m.table(counts)
	if err != nil {
		t.Fatal(err)
	}
	src := privtest.Seeded(t, 0x9a2)
	observed := make([]int, len(counts))
	if bin, err := m.Release(src, counts); err != nil || bin < 0 || bin >= len(counts) {
		t.Fatalf("Release: %v, %v", bin, err)
	}
	for range 200000 {
		observed[table.Draw(src)]++
	}
	stat, crit, err := privtest.ChiSquare(observed, probs, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if stat > crit {
		t.Errorf("chi-square %v > critical %v: frequencies %v, probabilities %v", stat, crit, observed, probs)
	}
}

// gridLoss returns the exact loss between the laws of m on d and on d
// with one row added to bin added, from the tables' exact masses.
func gridLoss(t *testing.T, m *GridExponential, d []int64, added int) privtest.Loss {
	t.Helper()
	nb := append([]int64(nil), d...)
	nb[added]++
	var masses [2][]*big.Float
	for k, h := range [2][]int64{d, nb} {
		table, err := m.table(h)
		if err != nil {
			t.Fatal(err)
		}
		for j := range table.Len() {
			masses[k] = append(masses[k], table.Mass(j))
		}
	}
	l, err := privtest.ExactLossMasses(masses[0], masses[1], m.epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
