package quantile

import (
	"bufio"
	"fmt"
	"math"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// pumsAgeHistogram returns the demo table's age histogram on the proxy's
// unit grid for bounds [0, 100] (101 bins).
func pumsAgeHistogram(t *testing.T) []int64 {
	t.Helper()
	f, err := os.Open("../../demo/pums.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := make([]int64, 101)
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		age, err := strconv.Atoi(strings.SplitN(sc.Text(), ",", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		counts[min(max(age, 0), 100)]++
	}
	return counts
}

// TestGridPumsAgeNoZeroBins is the review's case (issue 10): the age
// column's grid (bounds [0, 100], 101 unit bins), 73 rows at age 10
// against 74, median, ε = 1; and the same rows added to the demo table
// (internal/demo/pums.csv). Every bin's weight is positive, so every bin
// must have positive probability on both sides and the exact worst
// log-ratio must be at most ε. TestGridFloatSamplerLeaked shows the old
// sampler failing exactly this check.
func TestGridPumsAgeNoZeroBins(t *testing.T) {
	alone := make([]int64, 101)
	alone[10] = 73
	withPums := pumsAgeHistogram(t)
	withPums[10] += 73
	for name, d := range map[string][]int64{"73 vs 74 at age 10": alone, "pums.age + 73 vs 74 at age 10": withPums} {
		m, err := NewGridExponential(0.5, 1, len(d))
		if err != nil {
			t.Fatal(err)
		}
		l := gridLoss(t, m, d, 10)
		t.Logf("%s: exact loss %v (ε = 1), bins zero on one side only %d", name, l.Worst, l.ZeroMismatch)
		l.Check(t, name, 1, 0)
		for _, h := range [][]int64{d, add(d, 10, 1)} {
			table, err := m.table(h)
			if err != nil {
				t.Fatal(err)
			}
			for j := range table.Len() {
				if table.Mass(j).Sign() <= 0 {
					t.Errorf("%s: bin %d has probability 0", name, j)
				}
			}
		}
	}
}

// floatInverseCDFLaw is the exact law of the sampler the grid exponential
// mechanism used before (a float inverse CDF): weights exp(lw − max)
// summed in float64 into a running total, U uniform on the 2^53 multiples
// of 2^−53, and the first bin j with fl(U·total) < c_j wins. Bin j's mass
// is the number of U landing on it, found by binary search (u is monotone
// in U).
func floatInverseCDFLaw(counts []int64, q, eps float64) []*big.Float {
	var n int64
	for _, c := range counts {
		n += c
	}
	t, below := q*float64(n), int64(0)
	cum := make([]float64, len(counts))
	total := 0.0
	for j, c := range counts {
		a, b := float64(below), float64(below+c)
		total += math.Exp(-eps * math.Max(math.Max(a-t, t-b), 0) / (2 * max(q, 1-q)))
		cum[j] = total
		below += c
	}
	first := func(x float64) int { // the least U with fl(U·2^−53)·total ≥ x
		return sort.Search(1<<53, func(u int) bool { return float64(u)*0x1p-53*total >= x })
	}
	law := make([]*big.Float, len(counts))
	prev := 0
	for j, c := range cum {
		next := first(c)
		law[j] = big.NewFloat(float64(next - prev))
		prev = next
	}
	return law
}

// TestGridFloatSamplerLeaked proves the exact check has the power the
// review asked for: on the 73 vs 74 case the old float sampler's law gives
// 92 bins probability 0 on one side only (an infinite loss), and the check
// rejects it.
func TestGridFloatSamplerLeaked(t *testing.T) {
	d := make([]int64, 101)
	d[10] = 73
	l, err := privtest.ExactLossMasses(floatInverseCDFLaw(d, 0.5, 1), floatInverseCDFLaw(add(d, 10, 1), 0.5, 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.ZeroMismatch != 92 || l.Holds(1, 0) {
		t.Errorf("old sampler: got %d bins zero on one side only (loss %v), want 92 and a failed check", l.ZeroMismatch, l.Worst)
	}
}

// gridPair is one neighbouring pair: histogram d and a row added to bin added.
type gridPair struct {
	name  string
	q     float64
	d     []int64
	added int
}

// gridPairs returns the adversarial and random pairs of the exact checks:
// n = 0, 1, 2; a row added at the lower and upper bound; all values tied
// in one bin, at the bounds and at the target; the target rank falling on
// a bin edge (ties straddling it); one row against a block; the pums.age
// case; and random histograms with many empty bins, for quantiles 0, 0.01,
// 0.25, 0.5, 0.9, 1 and random.
func gridPairs(t *testing.T) []gridPair {
	src := privtest.Seeded(t, 0x9a4)
	var pairs []gridPair
	qs := []float64{0, 0.01, 0.25, 0.5, 0.9, 1, 1.0 / 3}
	for _, q := range qs {
		for _, bins := range []int{1, 2, 5, 11} {
			fixed := map[string][]int64{
				"n=0":           make([]int64, bins),
				"n=1 low":       oneAt(bins, 0, 1),
				"n=1 high":      oneAt(bins, bins-1, 1),
				"n=2 spread":    add(oneAt(bins, 0, 1), bins-1, 1),
				"tied block":    oneAt(bins, bins/2, 40),
				"tied at low":   oneAt(bins, 0, 40),
				"tied at high":  oneAt(bins, bins-1, 40),
				"half and half": add(oneAt(bins, 0, 20), bins-1, 20),
				"edge ties":     add(oneAt(bins, bins/2, 10), max(bins/2-1, 0), 10),
			}
			for name, d := range fixed {
				for _, added := range []int{0, bins - 1, bins / 2, max(bins/2-1, 0)} {
					pairs = append(pairs, gridPair{fmt.Sprintf("%s B=%d q=%v +bin %d", name, bins, q, added), q, d, added})
				}
			}
		}
	}
	for i := range 900 {
		bins := 1 + int(src.Uint64()%40)
		d := make([]int64, bins)
		switch i % 3 {
		case 0: // sparse: a few rows
			for range src.Uint64() % 6 {
				d[src.Uint64()%uint64(bins)]++
			}
		case 1: // many empty bins, some heavy ties
			for range 1 + src.Uint64()%4 {
				d[src.Uint64()%uint64(bins)] += int64(src.Uint64() % 200)
			}
		default: // dense
			for j := range d {
				d[j] = int64(src.Uint64() % 5)
			}
		}
		q := qs[i%len(qs)]
		if i%5 == 0 {
			q = float64(src.Uint64()>>11) * 0x1p-53
		}
		pairs = append(pairs, gridPair{fmt.Sprintf("random %d %v q=%v", i, d, q), q, d, int(src.Uint64() % uint64(bins))})
	}
	return pairs
}

func oneAt(bins, j int, c int64) []int64 {
	d := make([]int64, bins)
	d[j] = c
	return d
}

func add(d []int64, j int, c int64) []int64 {
	d = append([]int64(nil), d...)
	d[j] += c
	return d
}

// gridEpsilons are the ε of the exact checks, from MinEpsilon to MaxEpsilon.
var gridEpsilons = []float64{mech.MinEpsilon, 1e-6, 0.05, 0.5, 1, 3, 20, mech.MaxEpsilon}

// TestGridExactPrivacy computes both output laws of every pair in
// gridPairs, at every ε of gridEpsilons, from the exact masses the sampler
// draws with (so the loss is the implementation's, weights' rounding
// included), and checks the worst log-ratio ≤ ε and no zero-probability
// bin on one side only.
func TestGridExactPrivacy(t *testing.T) {
	pairs := gridPairs(t)
	for ei, eps := range gridEpsilons {
		var worst privtest.MaxLoss
		for pi, p := range pairs {
			if (pi+ei)%2 == 1 && eps != 1 { // each ε sees half the pairs, ε = 1 all
				continue
			}
			m, err := NewGridExponential(p.q, eps, len(p.d))
			if err != nil {
				t.Fatal(err)
			}
			l := gridLoss(t, m, p.d, p.added)
			l.Check(t, p.name, eps, 0)
			worst.Add(p.name, l)
		}
		t.Logf("ε = %v: worst exact loss %.17g (ratio to ε %.17g) over %d pairs, at %s", eps, worst.Worst, worst.Worst/eps, worst.Pairs, worst.Pair)
	}
}

// TestGridExactCatchesCutNoise: with its noise scale cut by 25% (Δu taken
// as 0.75·max(q, 1−q), so the exponents grow by 4/3), the mechanism must
// fail the exact check on some pair at every ε of gridEpsilons. The pairs'
// worst loss is at least 0.88ε at every ε (TestGridExactPrivacy logs it;
// at ε = 100, two bins of 20 rows against 20 and 21 rows give ε − ln 2), so a
// cut to 0.75 of the scale shows at every ε.
func TestGridExactCatchesCutNoise(t *testing.T) {
	pairs := gridPairs(t)
	for _, eps := range gridEpsilons {
		var worst privtest.MaxLoss
		for _, p := range pairs {
			m, err := NewGridExponential(p.q, eps, len(p.d))
			if err != nil {
				t.Fatal(err)
			}
			m.sensitivity = new(big.Rat).Mul(m.sensitivity, big.NewRat(3, 4))
			m.setScale()
			worst.Add(p.name, gridLoss(t, m, p.d, p.added))
		}
		t.Logf("ε = %v, scale cut 25%%: worst exact loss %.6g (ratio %.4f) at %s", eps, worst.Worst, worst.Worst/eps, worst.Pair)
		if worst.Holds(eps, 0) {
			t.Errorf("ε = %v: the exact check missed a 25%% noise cut (worst loss %v)", eps, worst.Worst)
		}
	}
}
