package histogram

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// ratDevUnits returns min(⌊dev(x̄, x[lo:hi])·2^a⌋, dawaCostCap) with big
// rationals: the reference for the integer cost code.
func ratDevUnits(x []int64, a int) uint64 {
	l := int64(len(x))
	sum := new(big.Rat)
	for _, v := range x {
		sum.Add(sum, new(big.Rat).SetInt64(min(v, dawaMaxBinForCost)))
	}
	mean := new(big.Rat).Quo(sum, new(big.Rat).SetInt64(l))
	dev := new(big.Rat)
	for _, v := range x {
		d := new(big.Rat).Sub(new(big.Rat).SetInt64(min(v, dawaMaxBinForCost)), mean)
		dev.Add(dev, d.Abs(d))
	}
	scale := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(max(a, 0))))
	if a < 0 {
		scale.Inv(new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(-a))))
	}
	dev.Mul(dev, scale)
	q := new(big.Int).Quo(dev.Num(), dev.Denom())
	if !q.IsUint64() || q.Uint64() > dawaCostCap {
		return dawaCostCap
	}
	return q.Uint64()
}

func TestDawaDevCostsExact(t *testing.T) {
	r := rand.New(privtest.NewSource(privtest.Seed(t, 0xe1), 0))
	for trial := range 60 {
		n := 1 + r.IntN(20)
		x := make([]int64, n)
		for j := range x {
			switch trial % 3 {
			case 0:
				x[j] = int64(r.IntN(4))
			case 1:
				x[j] = int64(r.IntN(1000000))
			default: // near and beyond the clamp
				x[j] = dawaMaxBinForCost - 2 + int64(r.IntN(5))
			}
		}
		a := []int{-30, -3, 0, 7, 31}[trial%5]
		for _, l := range dawaCandidateLengths(n, true) {
			costs := dawaDevCosts(x, l, a, dawaCostCap)
			for i, got := range costs {
				if want := ratDevUnits(x[i:i+l], a); got != want {
					t.Fatalf("x=%v a=%d window [%d,%d): got %d, want %d", x, a, i, i+l, got, want)
				}
				if block := dawaBlockDev(x[i:i+l], a); block != got {
					t.Fatalf("x=%v a=%d block [%d,%d): got %d, want %d", x, a, i, i+l, block, got)
				}
			}
		}
	}
}

func TestDawaScaledDevSaturates(t *testing.T) {
	for _, tc := range []struct {
		hi, lo, l uint64
		shift     int
		want      uint64
	}{
		{0, 10, 3, 0, 3},                      // ⌊10/3⌋
		{0, 10, 3, 2, 13},                     // ⌊40/3⌋
		{0, 10, 3, -1, 1},                     // ⌊10/6⌋
		{0, 10, 3, -64, 0},                    // far below one unit
		{3, 0, 3, 0, 1000},                    // quotient needs 65 bits
		{0, 1 << 40, 1, 20, 1000},             // shifted beyond the cap
		{0, 999, 1, 0, 999},                   // just under the cap
		{0, math.MaxUint64, 1 << 20, 0, 1000}, // (2^64-1)/2^20 > cap
	} {
		if got := dawaScaledDev(tc.hi, tc.lo, tc.l, tc.shift, 1000); got != tc.want {
			t.Errorf("dawaScaledDev(%d, %d, %d, %d): got %d, want %d", tc.hi, tc.lo, tc.l, tc.shift, got, tc.want)
		}
	}
}

// TestDawaDevSensitivity checks the sensitivity bound the privacy proof
// uses: adding or removing one row changes a length-l cost by at most
// D_l units, on every window of random histograms and their neighbours.
func TestDawaDevSensitivity(t *testing.T) {
	r := rand.New(privtest.NewSource(privtest.Seed(t, 0xe2), 0))
	for trial := range 400 {
		n := 1 + r.IntN(12)
		x := make([]int64, n)
		for j := range x {
			x[j] = int64(r.IntN(1 + trial%50))
		}
		p := r.IntN(n)
		neighbour := slices.Clone(x)
		if neighbour[p] > 0 && r.IntN(2) == 0 {
			neighbour[p]--
		} else {
			neighbour[p]++
		}
		a := r.IntN(40) - 5
		for _, l := range dawaCandidateLengths(n, true) {
			d := dawaDevSensitivity(uint64(l), a)
			c0, c1 := dawaDevCosts(x, l, a, dawaCostCap), dawaDevCosts(neighbour, l, a, dawaCostCap)
			for i := range c0 {
				if diff := max(c0[i], c1[i]) - min(c0[i], c1[i]); diff > d {
					t.Fatalf("x=%v → %v, a=%d, window [%d,%d): cost moved %d > D=%d", x, neighbour, a, i, i+l, diff, d)
				}
			}
		}
	}
	// Tightness at 0 → e_p (a = 3: 2(1-1/l)·8 is an integer for l | 16).
	for _, l := range []int{2, 4, 8, 16} {
		x := make([]int64, l)
		x[0] = 1
		if got, want := dawaDevCosts(x, l, 3, dawaCostCap)[0], dawaDevSensitivity(uint64(l), 3); got != want {
			t.Errorf("l=%d: dev of e_0 got %d units, want D_l = %d", l, got, want)
		}
	}
}

// bruteForcePartition enumerates every partition into candidate buckets
// and returns the least-cost one, ties broken by dawaLeastCostPartition's
// documented order (compare bucket starts from the last, larger first).
func bruteForcePartition(t *dawaNoisyCosts) []int {
	lengthIndex := map[int]int{}
	for li, l := range t.lengths {
		lengthIndex[l] = li
	}
	var best []int
	var bestCost exact.Int128
	var walk func(starts []int, cost exact.Int128)
	walk = func(starts []int, cost exact.Int128) {
		end := t.n
		if len(starts) > 0 {
			end = starts[0]
		}
		if end == 0 {
			if best == nil || cost.Cmp(bestCost) < 0 || cost.Cmp(bestCost) == 0 && laterStartsFirst(starts, best) {
				best, bestCost = slices.Clone(starts), cost
			}
			return
		}
		for _, l := range t.lengths {
			if l <= end {
				walk(append([]int{end - l}, starts...), cost.Add(t.at(lengthIndex[l], end-l)))
			}
		}
	}
	walk(nil, exact.Int128{})
	return best
}

// laterStartsFirst reports whether partition a precedes b in the tie
// order: at the first difference from the last bucket, a's start is larger.
func laterStartsFirst(a, b []int) bool {
	for i, j := len(a)-1, len(b)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if a[i] != b[j] {
			return a[i] > b[j]
		}
	}
	return false
}

func TestDawaLeastCostPartitionIsTheOrderedArgmin(t *testing.T) {
	r := rand.New(privtest.NewSource(privtest.Seed(t, 0xe3), 0))
	for trial := range 500 {
		n := 1 + r.IntN(8)
		costs := newDawaNoisyCosts(n, dawaCandidateLengths(n, trial%2 == 0))
		for li := range costs.cost {
			for i := range costs.cost[li] {
				// Few distinct values: many ties.
				costs.set(li, i, exact.Int(int64(r.IntN(4)-1)))
			}
		}
		if trial%50 == 0 { // exercise the overflow store
			costs.set(0, 0, exact.Int128{Hi: 1, Lo: 5})
		}
		got, want := dawaLeastCostPartition(costs), bruteForcePartition(costs)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("n=%d costs=%v: got %v, want %v", n, costs.cost, got, want)
		}
	}
}

func TestDawaNoiseFirstPartition(t *testing.T) {
	p := dawaDefaultNoiseFirst
	p.maxBucket = 16
	// Noise scale tiny relative to the steps: the pieces are found, long
	// runs are cut at the public chunks of 16, and a failing block below
	// 8 bins becomes single bins (the digest's Lmin rule).
	noisy := make([]float64, 64)
	for j := range noisy {
		switch {
		case j < 32:
			noisy[j] = 0
		case j < 40:
			noisy[j] = 50
		default:
			noisy[j] = 10
		}
	}
	noisy[57] = 900
	got := dawaNoiseFirstPartition(noisy, 1e-3, p)
	want := []int{0, 16, 32, 40, 48, 56, 57, 58, 59, 60, 61, 62, 63}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Pure noise at the stated scale: most chunks pass all tests. Each of
	// the 5 tests rejects a uniform chunk with probability ≤ ~0.05, so a
	// chunk is kept whole with probability ≥ 0.75; over 64 chunks fewer
	// than 36 whole ones has probability < 10⁻⁶ (binomial tail).
	src := privtest.NewSource(privtest.Seed(t, 0xe4), 0)
	lap, _ := noise.NewLaplace(1, 0.5)
	noisy = make([]float64, 64*128)
	for j := range noisy {
		noisy[j] = lap.Release(src, 100)
	}
	starts := dawaNoiseFirstPartition(noisy, lap.Scale(), dawaDefaultNoiseFirst)
	whole := 0
	for c := 0; c < 64; c++ {
		i, _ := slices.BinarySearch(starts, 128*c)
		if i+1 == len(starts) || starts[i+1] == 128*(c+1) {
			whole++
		}
	}
	if whole < 36 {
		t.Errorf("chunks kept whole: got %d of 64, want ≥ 36", whole)
	}
}

func TestDawaDeviationTree(t *testing.T) {
	src := privtest.NewSource(privtest.Seed(t, 0xe5), 0)
	p := dawaDefaultDevTree
	// Noise ≈ 0.08 count and a merge threshold of 20 noise scales: a
	// uniform node fails to merge with probability ½e^-20 ≈ 10⁻⁹.
	p.eps, p.tau = 50, 20
	x := make([]int64, 1024)
	for j := 512; j < 768; j++ {
		x[j] = 7 // a plateau
	}
	x[900] = 40 // a spike: deviation ≈ 80 counts in [768, 1024)
	spans, err := dawaDeviationTree(src, x, p)
	if err != nil {
		t.Fatal(err)
	}
	// The root and [768, 1024) are split; the uniform 256-bin nodes are
	// merged; nodes of 64 bins are never measured.
	want := "[{0 256 true} {256 512 true} {512 768 true} {768 832 false} {832 896 false} {896 960 false} {960 1024 false}]"
	if got := fmt.Sprint(spans); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if spans, _ := dawaDeviationTree(src, make([]int64, 64), p); fmt.Sprint(spans) != "[{0 64 false}]" {
		t.Errorf("64 bins: got %v, want one unmeasured span", spans)
	}
}
