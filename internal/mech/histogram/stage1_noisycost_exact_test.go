package histogram

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// Exact privacy check of the noisy-cost partition (the paper's stage 1,
// dawaNoisyCostPartition) on 2 and 3 bins, and its mutation check.
//
// The output is the argmin, under the fixed tie order of
// dawaLeastCostPartition, of Σ_{b∈B} (c_b + Z_b) over the partitions B,
// with independent discrete Laplace Z_b. Conditioned on the draws of the
// candidates shared by several partitions (and on all but one draw of a
// partition with several private ones), the partitions' costs are
// independent integers, each a point or a shifted discrete Laplace, and
// P[B wins] = Σ_v P[V_B = v]·Π_{B' before B} P[V_B' > v]·Π_{B' after B}
// P[V_B' ≥ v] in closed form. Every draw is summed over ±12 noise scales:
// the mass left out, 2r^(12β+1)/(1+r) ≈ e^-12 ≈ 6·10⁻⁶ per draw, bounds
// the error of each probability (below 10⁻⁴ with every draw counted), so
// the losses are exact to about 10⁻³ on partitions of probability ≥ 0.1,
// far inside the margins asserted (the mutation exceeds ε1 by ~7%).
//
// To make those sums short the check runs the production algorithm
// (newDawaCostTable and the same argmin order) with a coarse cost unit
// (unitBits = 1: noise scales of 3 to 6 units instead of 2^25): the
// privacy proof holds for every unit (the deviation's floor moves by at
// most ⌈2(1−1/l)/u⌉ = D_l units), so this checks the algorithm and its
// tie order exactly, at a unit where the law is summable. The check
// asserts max |ln P[B | x]/P[B | x']| ≤ ε1 over the partitions B, on every
// pair x, x' = x + e_p of the enumerated histograms; with the noise built
// for ε1·4/3 and the claim unchanged it must fail.

// ncPartition is one partition: its buckets as (length index, start).
type ncPartition struct {
	buckets [][2]int
	starts  []int
}

// ncPartitions returns every partition of n bins into candidate lengths,
// in the tie order of dawaLeastCostPartition (the start of the last
// bucket, larger first, then the one before, ...): earlier wins ties.
func ncPartitions(n int, lengths []int) []ncPartition {
	var out []ncPartition
	var rec func(at int, cur [][2]int)
	rec = func(at int, cur [][2]int) {
		if at == n {
			p := ncPartition{buckets: slices.Clone(cur)}
			for _, b := range cur {
				p.starts = append(p.starts, b[1])
			}
			out = append(out, p)
			return
		}
		for li, l := range lengths {
			if at+l <= n {
				rec(at+l, append(cur, [2]int{li, at}))
			}
		}
	}
	rec(0, nil)
	slices.SortFunc(out, func(a, b ncPartition) int {
		for i, j := len(a.starts)-1, len(b.starts)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
			if a.starts[i] != b.starts[j] {
				return b.starts[j] - a.starts[i] // larger start first
			}
		}
		return len(b.starts) - len(a.starts)
	})
	return out
}

// ncDlap is a discrete Laplace (pmf and tail tables t) shifted by
// centre, or a point mass at centre (t nil).
type ncDlap struct {
	centre float64
	t      *ncTable
}

// ncSpan is the half-width of the summed support, in noise scales.
const ncSpan = 12

// ncTable holds the pmf P[Z = k] and the tail P[Z ≥ k] of DLap(β) for
// |k| ≤ span, each from its closed form (r^k/(1+r) for the tail at
// k ≥ 1, 1 − r^(1−k)/(1+r) below).
type ncTable struct {
	beta      float64
	span      int
	pmf, tail []float64
}

func newNCTable(beta float64, span int) *ncTable {
	r := math.Exp(-1 / beta)
	t := &ncTable{beta: beta, span: span, pmf: make([]float64, 2*span+1), tail: make([]float64, 2*span+1)}
	for k := -span; k <= span; k++ {
		t.pmf[k+span] = (1 - r) / (1 + r) * math.Pow(r, math.Abs(float64(k)))
		if k >= 1 {
			t.tail[k+span] = math.Pow(r, float64(k)) / (1 + r)
		} else {
			t.tail[k+span] = 1 - math.Pow(r, float64(1-k))/(1+r)
		}
	}
	return t
}

// pmf returns P[V = v].
func (d ncDlap) pmf(v float64) float64 {
	k := int(v - d.centre)
	if d.t == nil {
		if k == 0 {
			return 1
		}
		return 0
	}
	if k < -d.t.span || k > d.t.span {
		return 0 // below 10⁻¹⁵⁰: outside every table span used
	}
	return d.t.pmf[k+d.t.span]
}

// atLeast returns P[V ≥ v].
func (d ncDlap) atLeast(v float64) float64 {
	k := int(v - d.centre)
	if d.t == nil {
		if k <= 0 {
			return 1
		}
		return 0
	}
	switch {
	case k < -d.t.span:
		return 1
	case k > d.t.span:
		return 0
	}
	return d.t.tail[k+d.t.span]
}

// ncLaw returns the exact law of the noisy-cost partition on x, keyed by
// the partition's starts.
func ncLaw(t *testing.T, x []int64, p dawaNoisyCostParams) map[string]float64 {
	table, err := newDawaCostTable(x, p)
	if err != nil {
		t.Fatal(err)
	}
	parts := ncPartitions(len(x), table.lengths)
	// Each partition keeps one free draw not shared with another
	// partition; every other draw is conditioned on.
	uses := map[[2]int]int{}
	for _, b := range parts {
		for _, k := range b.buckets {
			uses[k]++
		}
	}
	free := make([][2]int, len(parts))
	conditioned := map[[2]int]bool{}
	for i, b := range parts {
		free[i] = [2]int{-1, -1}
		for _, k := range b.buckets {
			if uses[k] == 1 && free[i][0] < 0 {
				free[i] = k
				continue
			}
			conditioned[k] = true
		}
	}
	var keys [][2]int
	for k := range conditioned {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return (a[0]-b[0])*100 + a[1] - b[1] })
	beta := func(k [2]int) float64 { return table.noise[k[0]].Scale() }
	tables := map[float64]*ncTable{}
	tableOf := func(b float64) *ncTable {
		if tables[b] == nil {
			tables[b] = newNCTable(b, int(400*b))
		}
		return tables[b]
	}
	cost := func(k [2]int) float64 { return float64(table.cost[k[0]][k[1]]) }
	law := map[string]float64{}
	draws := map[[2]int]float64{}
	var rec func(i int, prob float64)
	rec = func(i int, prob float64) {
		if i < len(keys) {
			k := keys[i]
			w := math.Ceil(ncSpan * beta(k))
			d := ncDlap{t: tableOf(beta(k))}
			for z := -w; z <= w; z++ {
				draws[k] = z
				rec(i+1, prob*d.pmf(z))
			}
			return
		}
		vs := make([]ncDlap, len(parts))
		for j, b := range parts {
			c := 0.0
			for _, k := range b.buckets {
				c += cost(k)
				if k != free[j] {
					c += draws[k]
				}
			}
			vs[j] = ncDlap{centre: c}
			if free[j][0] >= 0 {
				vs[j] = ncDlap{centre: c, t: tableOf(beta(free[j]))}
			}
		}
		for j := range parts {
			lo, hi := vs[j].centre, vs[j].centre
			if vs[j].t != nil {
				w := math.Ceil(ncSpan * vs[j].t.beta)
				lo, hi = lo-w, hi+w
			}
			win := 0.0
			for v := lo; v <= hi; v++ {
				pv := vs[j].pmf(v)
				for o := range parts {
					switch {
					case o < j:
						pv *= vs[o].atLeast(v + 1)
					case o > j:
						pv *= vs[o].atLeast(v)
					}
				}
				win += pv
			}
			law[fmt.Sprint(parts[j].starts)] += prob * win
		}
	}
	rec(0, 1)
	return law
}

// ncWorst returns the worst exact loss over every pair (h, h + e_p) for
// h in [0, maxV]^n, stage 1 built for eps1·mutate.
func ncWorst(t *testing.T, n int, maxV int64, p dawaNoisyCostParams, mutate float64) (float64, string) {
	built := p
	built.eps1 *= mutate
	var hists [][]int64
	total := int(math.Pow(float64(maxV+1), float64(n)))
	for code := range total {
		h := make([]int64, n)
		for i, c := 0, code; i < n; i, c = i+1, c/int(maxV+1) {
			h[i] = int64(c % int(maxV+1))
		}
		hists = append(hists, h)
	}
	laws := map[string]map[string]float64{}
	lawOf := func(h []int64) map[string]float64 {
		k := fmt.Sprint(h)
		if laws[k] == nil {
			laws[k] = ncLaw(t, h, built)
		}
		return laws[k]
	}
	worst, where := 0.0, ""
	for _, h := range hists {
		law := lawOf(h)
		for j := range n {
			y := slices.Clone(h)
			y[j]++
			if l := devTreeLoss(law, lawOf(y)); l > worst {
				worst, where = l, fmt.Sprintf("%v → +1 at bin %d", h, j)
			}
		}
	}
	return worst, where
}

// ncCases are the stage-1 configurations checked. With a large per-bucket
// penalty (small ε2) the all-singletons output sits in the noise's tail,
// where the proof's bound is nearly attained on 3 bins (0.91 and 0.99 of
// ε1), so a 25% cut of the noise shows (mutation); on 2 bins, or with
// ε2 = ε1, the loss stays near ε1/2 and no mutation check is possible.
var ncCases = []struct {
	n        int
	maxV     int64
	p        dawaNoisyCostParams
	mutation bool
}{
	{2, 4, dawaNoisyCostParams{eps1: 1, eps2: 1, unitBits: 1}, false},
	{3, 1, dawaNoisyCostParams{eps1: 1, eps2: 0.1, unitBits: 1}, true},
	{3, 1, dawaNoisyCostParams{eps1: 1, eps2: 0.05, allIntervals: true, unitBits: 1}, true},
}

// TestNoisyCostExactPrivacy: the paper's stage 1 loses at most ε1 on every
// enumerated pair.
func TestNoisyCostExactPrivacy(t *testing.T) {
	for _, c := range ncCases {
		law := ncLaw(t, make([]int64, c.n), c.p)
		total := 0.0
		for _, p := range law {
			total += p
		}
		if math.Abs(total-1) > 1e-4 {
			t.Fatalf("%+v: the law sums to %v", c.p, total)
		}
		worst, where := ncWorst(t, c.n, c.maxV, c.p, 1)
		t.Logf("n = %d, %+v: worst exact loss %.4f (ε1 = %v) at %s", c.n, c.p, worst, c.p.eps1, where)
		if worst > c.p.eps1*(1+1e-3) {
			t.Errorf("n = %d, %+v: exact loss %v > ε1 at %s", c.n, c.p, worst, where)
		}
	}
}

// TestNoisyCostMutationFails: with every noise scale cut by 25% the exact
// loss exceeds ε1 on some pair.
func TestNoisyCostMutationFails(t *testing.T) {
	for _, c := range ncCases {
		if !c.mutation {
			continue
		}
		worst, where := ncWorst(t, c.n, c.maxV, c.p, 4.0/3)
		t.Logf("n = %d, %+v, noise ×3/4: worst exact loss %.4f (ε1 = %v) at %s", c.n, c.p, worst, c.p.eps1, where)
		if worst <= c.p.eps1 {
			t.Errorf("n = %d, %+v: with the noise cut by 25%% the exact loss %v stays within ε1", c.n, c.p, worst)
		}
	}
}
