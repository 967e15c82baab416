package ptr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// ptrUniverse is the universe of the brute-force tests: integer-ish
// values in [0, 6].
var ptrUniverse = mech.Bounds{Lower: 0, Upper: 6}

// ptrOrderOf returns the order statistics of xs (sorted) in ptrUniverse.
func ptrOrderOf(xs []float64) ptrOrder { return ptrSortedOrder(xs, ptrUniverse) }

func TestPTRSpreadDistanceVectors(t *testing.T) {
	oneToTwelve := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	wide := mech.Bounds{Lower: 0, Upper: 13}
	for _, tc := range []struct {
		name              string
		xs                []float64
		bounds            mech.Bounds
		lo, hi            int64
		bin               ptrSpreadBin
		substitution, add int64
	}{
		// Digest §2.4 worked examples (substitution). Add/remove, by hand
		// (both ranks move k): [4.5, 6.5) at k=1: x(8)−x(5) = 3 < 4.5;
		// [3.5, 7.5) at k=1: x(8)−x(5) = 3 < 3.5; [2, 12) at k=2:
		// x(7)−x(6) = 1 < 2; zero bin at k=2: x(8)−x(1) = 1 > 0; ties at
		// k=2: x(8)−x(1) = 8 ≥ 1.5 (k=1 gives 3−2 and 3−2, inside).
		{"IQR bin [4.5,6.5)", oneToTwelve, wide, 4, 9, ptrSpreadBin{lower: 4.5, upper: 6.5}, 1, 1},
		{"IQR bin [3.5,7.5)", oneToTwelve, wide, 4, 9, ptrSpreadBin{lower: 3.5, upper: 7.5}, 2, 1},
		{"IQR bin [2,12)", oneToTwelve, wide, 4, 9, ptrSpreadBin{lower: 2, upper: 12}, 4, 2},
		{"zero bin", []float64{0, 0, 0, 0, 0, 0, 0, 1}, mech.Bounds{Lower: 0, Upper: 1}, 3, 6, ptrSpreadBin{zero: true}, 2, 2},
		{"ties", []float64{1, 2, 2, 2, 3, 3, 3, 9}, mech.Bounds{Lower: 0, Upper: 9}, 3, 6, ptrSpreadBin{lower: 0.5, upper: 1.5}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ptrSortedOrder(tc.xs, tc.bounds)
			if got := ptrSpreadDistanceSubstitution(o, tc.lo, tc.hi, tc.bin, 20); got != tc.substitution {
				t.Errorf("substitution: got %v, want %v", got, tc.substitution)
			}
			if got := ptrSpreadDistanceAddRemove(o, tc.lo, tc.hi, tc.bin, 20); got != tc.add {
				t.Errorf("add/remove: got %v, want %v", got, tc.add)
			}
			if got := ptrSpreadDistanceAddRemove(o, tc.lo, tc.hi, tc.bin, 1); got != 1 {
				t.Errorf("capped at 1: got %v, want 1", got)
			}
		})
	}
}

func TestPTRMedianDistanceVectors(t *testing.T) {
	for _, tc := range []struct {
		name         string
		xs           []float64
		r            int64
		lower, upper float64
		want         int64
	}{
		// Digest §2.4(b).
		{"1..9 bin [4.5,7.5)", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 4.5, 7.5, 1},
		{"1..9 bin [3.5,6.5)", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 3.5, 6.5, 2},
		{"ties", []float64{5, 5, 5, 5, 5, 5, 6}, 4, 4.9, 5.1, 3},
		{"bin reaching the bounds", []float64{5, 5, 5}, 2, -1, 11, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ptrMedianDistance(ptrSortedOrder(tc.xs, mech.Bounds{Lower: 0, Upper: 10}), tc.r, tc.lower, tc.upper, 9); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// ptrNeighbours returns the add/remove (or, with substitution, the
// substitution) neighbours of the sorted xs with new values from cands.
func ptrNeighbours(xs, cands []float64, substitution bool) [][]float64 {
	var out [][]float64
	for i, v := range xs {
		if i > 0 && xs[i-1] == v {
			continue
		}
		rest := slices.Delete(slices.Clone(xs), i, i+1)
		if !substitution {
			out = append(out, rest)
			continue
		}
		for _, c := range cands {
			out = append(out, ptrInsert(rest, c))
		}
	}
	if !substitution {
		for _, c := range cands {
			out = append(out, ptrInsert(xs, c))
		}
	}
	return out
}

// ptrInsert returns sorted xs with v added.
func ptrInsert(xs []float64, v float64) []float64 {
	i, _ := slices.BinarySearch(xs, v)
	return slices.Insert(slices.Clone(xs), i, v)
}

// ptrBruteDistance returns the smallest k ≤ maxK such that some dataset k
// neighbour steps from xs satisfies leaves, or maxK+1.
func ptrBruteDistance(xs, cands []float64, substitution bool, maxK int, leaves func([]float64) bool) int {
	level := [][]float64{xs}
	seen := map[string]bool{fmt.Sprint(xs): true}
	for k := 1; k <= maxK; k++ {
		var next [][]float64
		for _, d := range level {
			for _, nb := range ptrNeighbours(d, cands, substitution) {
				if leaves(nb) {
					return k
				}
				if key := fmt.Sprint(nb); !seen[key] {
					seen[key] = true
					next = append(next, nb)
				}
			}
		}
		level = next
	}
	return maxK + 1
}

// ptrSpreadCase is a random spread statistic: ranks as a function of n and
// a log grid.
type ptrSpreadCase struct {
	ranks  func(n int64) (lo, hi int64)
	grid   ptrLogGrid
	offset float64
}

// bin returns the bin of the spread of xs.
func (c ptrSpreadCase) bin(xs []float64) ptrSpreadBin {
	lo, hi := c.ranks(int64(len(xs)))
	o := ptrOrderOf(xs)
	q := ptrSpread(o.at(hi), o.at(lo))
	if q == 0 {
		return ptrSpreadBin{zero: true}
	}
	b, _ := c.grid.bin(q, c.offset)
	return b
}

// in reports whether the spread of xs is in bin.
func (c ptrSpreadCase) in(xs []float64, bin ptrSpreadBin) bool {
	lo, hi := c.ranks(int64(len(xs)))
	o := ptrOrderOf(xs)
	q := ptrSpread(o.at(hi), o.at(lo))
	if bin.zero {
		return q == 0
	}
	return q >= bin.lower && q < bin.upper
}

// distance returns the capped distance of xs.
func (c ptrSpreadCase) distance(xs []float64, substitution bool) int64 {
	lo, hi := c.ranks(int64(len(xs)))
	if substitution {
		return ptrSpreadDistanceSubstitution(ptrOrderOf(xs), lo, hi, c.bin(xs), 10)
	}
	return ptrSpreadDistanceAddRemove(ptrOrderOf(xs), lo, hi, c.bin(xs), 10)
}

// ptrCandidates returns the values the brute force may add: the
// half-integers of the universe.
func ptrCandidates() []float64 {
	var c []float64
	for v := 0.0; v <= 6; v += 0.5 {
		c = append(c, v)
	}
	return c
}

// TestPTRSpreadDistanceProperties checks, against brute force on small
// datasets with ties and values at the bounds (n ≤ 7, distances ≤ 3):
// soundness (never above the true distance), exactness of the substitution
// distance, (P2) every neighbour is in the bin when the distance is ≥ 2,
// and (P1) neighbours' distances (each in its own bin of the same grid)
// differ by at most 1. Deterministic given the seed.
func TestPTRSpreadDistanceProperties(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0x5ca1e))
	cands := ptrCandidates()
	for trial := range 300 {
		alpha := 0.1 + 0.8*rng.Float64()
		tm := &TrimmedMean{alpha: alpha}
		ranks := []func(int64) (int64, int64){ptrQuartileRanks, tm.TrimmedRanks}[trial%2]
		c := ptrSpreadCase{ranks: ranks, grid: newPTRLogGrid([]float64{8, 30, 1e4}[rng.IntN(3)]), offset: ptrOffsets[rng.IntN(2)]}
		for _, substitution := range []bool{false, true} {
			n := rng.IntN(8)
			if substitution {
				n++
			}
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(rng.IntN(7))
			}
			slices.Sort(xs)
			bin, a := c.bin(xs), c.distance(xs, substitution)
			name := fmt.Sprintf("trial %d substitution=%v xs=%v bin=%+v", trial, substitution, xs, bin)
			brute := ptrBruteDistance(xs, cands, substitution, 3, func(d []float64) bool { return !c.in(d, bin) })
			if int(a) > brute {
				t.Fatalf("%s: distance %d above the true distance %d", name, a, brute)
			}
			if substitution && brute <= 3 && int(a) != brute {
				t.Errorf("%s: substitution distance: got %v, want %v", name, a, brute)
			}
			for _, nb := range ptrNeighbours(xs, cands, substitution) {
				if a >= 2 && !c.in(nb, bin) {
					t.Fatalf("%s: distance %d but neighbour %v leaves the bin", name, a, nb)
				}
				if b := c.distance(nb, substitution); b-a > 1 || a-b > 1 {
					t.Fatalf("%s: neighbour %v has distance %d, this %d", name, nb, b, a)
				}
			}
		}
	}
}

// TestPTRMedianDistanceProperties is the same check for the median's
// distance under add/remove (r = ⌈n/2⌉ of the true n) and substitution.
func TestPTRMedianDistanceProperties(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0x3ed1a))
	cands := ptrCandidates()
	for trial := range 300 {
		grid := ptrLinearGrid{origin: 0, width: []float64{0.3, 1, 2.5}[rng.IntN(3)]}
		offset := ptrOffsets[rng.IntN(2)]
		median := func(xs []float64) float64 { return ptrOrderOf(xs).at((int64(len(xs)) + 1) / 2) }
		distance := func(xs []float64) int64 {
			lower, upper := grid.bin(median(xs), offset)
			return ptrMedianDistance(ptrOrderOf(xs), (int64(len(xs))+1)/2, lower, upper, 10)
		}
		for _, substitution := range []bool{false, true} {
			xs := make([]float64, rng.IntN(8))
			for i := range xs {
				xs[i] = float64(rng.IntN(7))
			}
			slices.Sort(xs)
			lower, upper := grid.bin(median(xs), offset)
			in := func(d []float64) bool { m := median(d); return m >= lower && m < upper }
			a := distance(xs)
			name := fmt.Sprintf("trial %d substitution=%v xs=%v bin=[%v,%v)", trial, substitution, xs, lower, upper)
			brute := ptrBruteDistance(xs, cands, substitution, 3, func(d []float64) bool { return !in(d) })
			if int(a) > brute || (brute <= 3 && int(a) != brute && substitution) {
				t.Fatalf("%s: distance %d, true distance %d", name, a, brute)
			}
			for _, nb := range ptrNeighbours(xs, cands, substitution) {
				if a >= 2 && !in(nb) {
					t.Fatalf("%s: distance %d but neighbour %v leaves the bin", name, a, nb)
				}
				if b := distance(nb); b-a > 1 || a-b > 1 {
					t.Fatalf("%s: neighbour %v has distance %d, this %d", name, nb, b, a)
				}
			}
		}
	}
}

// TestPTRTrimmedMeanSensitivity checks the add/remove bound of TM's
// derivation, |m_α(D) − m_α(D+v)| ≤ W(D)/min(c, c'), by brute force over
// random small datasets with ties, every α and every added value.
func TestPTRTrimmedMeanSensitivity(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0x7a1e))
	mean := func(tm *TrimmedMean, xs []float64) (m float64, c int64, w float64) {
		lo, hi := tm.TrimmedRanks(int64(len(xs)))
		o := ptrOrderOf(xs)
		for i := lo + 1; i < hi; i++ {
			m += o.at(i)
		}
		return m / float64(hi-lo-1), hi - lo - 1, o.at(hi) - o.at(lo)
	}
	checked := 0
	for range 3000 {
		tm := &TrimmedMean{alpha: 0.02 + 0.9*rng.Float64()}
		xs := make([]float64, 3+rng.IntN(12))
		for i := range xs {
			xs[i] = float64(rng.IntN(10))
		}
		slices.Sort(xs)
		m, c, w := mean(tm, xs)
		for v := -0.5; v <= 10; v += 0.5 {
			m2, c2, _ := mean(tm, ptrInsert(xs, v))
			if c < 1 || c2 < 1 {
				continue
			}
			checked++
			if bound := w / float64(min(c, c2)); math.Abs(m-m2) > bound*(1+1e-12) {
				t.Fatalf("α=%v xs=%v + %v: |Δm| = %v above W/min(c,c') = %v", tm.alpha, xs, v, math.Abs(m-m2), bound)
			}
		}
	}
	t.Logf("%d pairs checked", checked)
}

// TestPTRSubstitutionDistanceFailsAddRemove documents why the column
// mechanisms move both ranks by k: under add/remove the substitution
// distance (a + b moves) breaks (P1) or (P2). The search must find a
// counterexample among random small datasets.
func TestPTRSubstitutionDistanceFailsAddRemove(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xbad))
	cands := ptrCandidates()
	c := ptrSpreadCase{ranks: ptrQuartileRanks, grid: newPTRLogGrid(30)}
	for trial := range 2000 {
		xs := make([]float64, 1+rng.IntN(8))
		for i := range xs {
			xs[i] = float64(rng.IntN(7))
		}
		slices.Sort(xs)
		bin, a := c.bin(xs), c.distance(xs, true)
		for _, nb := range ptrNeighbours(xs, cands, false) {
			if b := c.distance(nb, true); b-a > 1 || a-b > 1 || (a >= 2 && !c.in(nb, bin)) {
				t.Logf("trial %d: %v has substitution distance %d, its add/remove neighbour %v has %d (in the bin: %v)", trial, xs, a, nb, b, c.in(nb, bin))
				return
			}
		}
	}
	t.Errorf("no counterexample found: got none, want one")
}
