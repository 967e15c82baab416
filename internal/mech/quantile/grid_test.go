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
// (n = 10): ranked from 0, bin 0 holds ranks 0..1, bin 1 2..4, bin 2
// none (it sits between 4 and 5) and bin 3 5..9; the target is
// t = q·(n − 1) = 9q. Median, t = 4.5: distances 3.5, 0.5, 0.5 (empty:
// max(5 − 4.5, 4.5 − 4)), 0.5. q = 0.9, t = 8.1: 7.1, 4.1, 4.1, 0.
// q = 15/32, t = 135/32 = 4.21875, between ranks 4 and 5: 3.21875,
// 0.21875, 0.78125 (the empty bin takes the larger gap, 5 − t), 0.78125.
// q = 17/32, t = 4.78125: 3.78125, 0.78125, 0.78125 (t − 4), 0.21875. Log
// weights are −ε·dist/(2·max(q, 1−q)) (ε less 2^−55, invisible here),
// normalised; max(q, 1−q) = 17/32 for both of the last two.
func TestGridQuantileWeights(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		dist []float64
	}{
		{0.5, []float64{3.5, 0.5, 0.5, 0.5}},
		{0.9, []float64{7.1, 4.1, 4.1, 0}},
		{15.0 / 32, []float64{3.21875, 0.21875, 0.78125, 0.78125}},
		{17.0 / 32, []float64{3.78125, 0.78125, 0.78125, 0.21875}},
	} {
		m, err := NewGridExponential(tc.q, 1, 4)
		if err != nil {
			t.Fatal(err)
		}
		got := gridLogLaw(t, m, []int64{2, 3, 0, 5})
		want := make([]float64, len(tc.dist))
		z := 0.0
		for i, d := range tc.dist {
			want[i] = -d / (2 * max(tc.q, 1-tc.q))
			z += math.Exp(want[i])
		}
		for i := range got {
			if math.Abs(got[i]-(want[i]-math.Log(z))) > 1e-12 {
				t.Errorf("q=%v: log law %v, want %v − ln %v", tc.q, got, want, z)
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
// utility 0 and every other bin at least 500.5 ranks away, so at ε = 1 the
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
	// The far bins keep their probability e^(−ε·dist): bin 10 holds ranks
	// 0..9, 500.5 below the target t = 0.5·1019 = 509.5, and the normaliser
	// is 1 within e^−400.
	if lp := gridLogLaw(t, m, counts)[10]; math.Abs(lp+500.5) > 1e-9 {
		t.Errorf("ln P[bin 10] = %v, want −500.5", lp)
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

// gridDistances returns dist_j = max(a_j − t, t − (a_j + c_j − 1), 0) with
// t = q·(n − 1) for every bin, straight from the definition in exact
// rationals.
func gridDistances(q float64, counts []int64) []*big.Rat {
	var n int64
	for _, c := range counts {
		n += c
	}
	t := new(big.Rat).Mul(new(big.Rat).SetFloat64(q), big.NewRat(n-1, 1))
	dist := make([]*big.Rat, len(counts))
	var a int64
	for j, c := range counts {
		d := new(big.Rat).Sub(big.NewRat(a, 1), t)
		if e := new(big.Rat).Sub(t, big.NewRat(a+c-1, 1)); e.Cmp(d) > 0 {
			d = e
		}
		if d.Sign() < 0 {
			d.SetInt64(0)
		}
		dist[j], a = d, a+c
	}
	return dist
}

// TestGridMatchesDefinition checks the table's law against the definition
// computed directly (gridDistances) on every histogram of the exact checks'
// pairs, both sides, at ε = 1 and 0.05: ln P_j − ln P_k = −s·(dist_j −
// dist_k) with s = (ε − 2^−55)/(2Δu), k the most likely bin. It covers
// empty bins between two ranks (which side's gap they take), n = 0 and 1,
// and integer and fractional targets.
func TestGridMatchesDefinition(t *testing.T) {
	for _, p := range gridPairs(t) {
		for _, eps := range []float64{1, 0.05} {
			m, err := NewGridExponential(p.q, eps, len(p.d))
			if err != nil {
				t.Fatal(err)
			}
			s, _ := m.scale.Float64()
			for _, h := range [][]int64{p.d, add(p.d, p.added, 1)} {
				got := gridLogLaw(t, m, h)
				dist := gridDistances(p.q, h)
				k := 0
				for j := range got {
					if got[j] > got[k] {
						k = j
					}
				}
				for j := range got {
					dd, _ := new(big.Rat).Sub(dist[j], dist[k]).Float64()
					if want := -s * dd; math.Abs(got[j]-got[k]-want) > 1e-9*(1+math.Abs(want)) {
						t.Fatalf("%s ε=%v, histogram %v: bin %d has ln P_j − ln P_k = %v, want %v (distances %v)", p.name, eps, h, j, got[j]-got[k], want, dist)
					}
				}
			}
		}
	}
}
