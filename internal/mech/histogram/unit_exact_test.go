package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Exact privacy checks of the synopses under unit neighbours: D' adds all
// the rows of one unit, up to k of them after bounding, in one bin or
// spread over several (every multiset of k bins is enumerated). The
// mechanisms run at UnitEpsilon(ε, k) (what BuildForUnits passes), and the
// checks assert the exact loss is at most the claimed per-unit ε. Each has
// two mutation checks that must fail: the noise scale cut by 25% (built
// for 4/3 of UnitEpsilon), and k ignored (built at ε itself, as a
// row-level synopsis would be).
//
// Stages whose law is computable: stage 2 and the baselines (the tree
// measurements, stage2_exact_test.go's closed form generalised to a shift
// d_q per node), stage 1's noisy histogram (the Laplace vector over the
// bins, the same closed form on the identity) and stage 1's deviation
// tree (stage1_exact_test.go's enumeration of its output law).

// binMultisets returns every multiset of k bins out of n, as sorted lists.
func binMultisets(n, k int) [][]int {
	var out [][]int
	var rec func(from int, cur []int)
	rec = func(from int, cur []int) {
		if len(cur) == k {
			out = append(out, slices.Clone(cur))
			return
		}
		for j := from; j < n; j++ {
			rec(j, append(cur, j))
		}
	}
	rec(0, nil)
	return out
}

// laplaceShiftLoss is the exact worst loss of noise.Laplace l for centres
// d apart (d ≥ 0): the rounded centres are at most ⌊d/g⌋ + 1 grid steps
// apart (0 for d = 0), and a discrete Laplace of integer scale β loses
// steps/β.
func laplaceShiftLoss(l *noise.Laplace, d int) float64 {
	if d == 0 {
		return 0
	}
	g := l.Granularity()
	return (math.Floor(float64(d)/g) + 1) / (l.Scale() / g)
}

// stage2UnitLoss returns the worst loss of strategy st released at
// epsilon over every placement of k rows in its buckets.
func stage2UnitLoss(st dawaStrategy, epsilon float64, k int) (float64, error) {
	tr := st.tr
	active := dawaActive(tr, st.pseudo)
	laps := make([]*noise.Laplace, tr.size())
	for q := range tr.size() {
		if !active[q] || st.weight[q] == 0 {
			continue
		}
		l, err := dawaNodeNoise(st.weight[q], epsilon)
		if err != nil {
			return 0, err
		}
		laps[q] = l
	}
	worst := 0.0
	for _, rows := range binMultisets(tr.hi[0], k) {
		sum := 0.0
		for q, l := range laps {
			if l == nil {
				continue
			}
			d := 0
			for _, c := range rows {
				if tr.lo[q] <= c && c < tr.hi[q] {
					d++
				}
			}
			sum += laplaceShiftLoss(l, d)
		}
		worst = max(worst, sum)
	}
	return worst, nil
}

// TestStage2UnitExactPrivacy: the tree measurements of DAWA's stage 2 and
// of the baselines, and stage 1's noisy histogram (the identity: one
// Laplace per bin), run at UnitEpsilon(ε, k), lose at most ε on every
// placement of a unit's k rows, for k = 2, 3 and 5 up to 24, 14 and 8 buckets; built
// for 4/3 of UnitEpsilon, or at ε (k ignored), some placement loses more.
func TestStage2UnitExactPrivacy(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, k := range []int{2, 3, 5} {
		maxBuckets := map[int]int{2: 24, 3: 14, 5: 8}[k]
		for _, eps := range []float64{0.05, 1, 8} {
			rowEps := UnitEpsilon(eps, int64(k))
			worst, mutatedLeast, ignoredLeast := 0.0, math.Inf(1), math.Inf(1)
			for buckets := 1; buckets <= maxBuckets; buckets++ {
				strategies := stage2Strategies(t, buckets, rng)
				strategies[fmt.Sprintf("noisy-histogram/%d", buckets)] = dawaStrategy{}
				for name, st := range strategies {
					loss := func(e float64) float64 {
						var l float64
						var err error
						if st.tr == nil {
							l, err = noisyHistogramUnitLoss(buckets, e, k)
						} else {
							l, err = stage2UnitLoss(st, e, k)
						}
						if err != nil {
							t.Fatal(err)
						}
						return l
					}
					l := loss(rowEps)
					if l > eps {
						t.Errorf("%s, k = %d, ε = %v: exact unit loss %v > ε", name, k, eps, l)
					}
					worst = max(worst, l)
					mutated, ignored := loss(rowEps*4/3), loss(eps)
					if mutated <= eps {
						t.Errorf("%s, k = %d, ε = %v built for 4/3·ε/k: loss %v within ε, the check cannot see it", name, k, eps, mutated)
					}
					if ignored <= eps {
						t.Errorf("%s, k = %d, ε = %v built at ε (k ignored): loss %v within ε, the check cannot see it", name, k, eps, ignored)
					}
					mutatedLeast, ignoredLeast = min(mutatedLeast, mutated), min(ignoredLeast, ignored)
				}
			}
			t.Logf("k = %d, ε = %v: worst exact unit loss %.6f; noise cut 25%% least %.6f; k ignored least %.6f", k, eps, worst, mutatedLeast, ignoredLeast)
		}
	}
}

// noisyHistogramUnitLoss is the worst loss of stage 1's noisy histogram
// (dawaNoisyHistogramNoise on every bin, dawaPartition) over every
// placement of k rows in n bins.
func noisyHistogramUnitLoss(n int, epsilon float64, k int) (float64, error) {
	l, err := dawaNoisyHistogramNoise(epsilon)
	if err != nil {
		return 0, err
	}
	worst := 0.0
	for _, rows := range binMultisets(n, k) {
		sum := 0.0
		for j := range n {
			sum += laplaceShiftLoss(l, countOf(rows, j))
		}
		worst = max(worst, sum)
	}
	return worst, nil
}

// dlapShiftLoss is the exact worst loss of the discrete Laplace d for
// integer centres shift apart: P[Z = z] ∝ exp(−|z|/β), so the log-ratio of
// the laws at any output is at most shift/β, attained at every output
// beyond both centres.
func dlapShiftLoss(d *noise.DiscreteLaplace, shift int64) float64 {
	return float64(shift) / d.Scale()
}

// countOf counts the occurrences of j in rows.
func countOf(rows []int, j int) int {
	c := 0
	for _, r := range rows {
		if r == j {
			c++
		}
	}
	return c
}

// TestIdentityUnitExactPrivacy: Identity's discrete Laplace at
// UnitEpsilon(ε, k) loses k/β ≤ ε when the k rows share a bin (the worst
// placement: spread rows lose 1/β each, the same sum); built for 4/3 of it
// or at ε it loses more.
func TestIdentityUnitExactPrivacy(t *testing.T) {
	for _, k := range []int64{2, 7, 1000} {
		for _, eps := range []float64{0.01, 1, 8} {
			loss := func(e float64) float64 {
				d, err := countNoise(e)
				if err != nil {
					t.Fatal(err)
				}
				return dlapShiftLoss(d, k)
			}
			rowEps := UnitEpsilon(eps, k)
			if l := loss(rowEps); l > eps {
				t.Errorf("identity, k = %d, ε = %v: loss %v > ε", k, eps, l)
			}
			if l := loss(rowEps * 4 / 3); l <= eps {
				t.Errorf("identity, k = %d, ε = %v, noise cut 25%%: loss %v within ε", k, eps, l)
			}
			if l := loss(eps); l <= eps {
				t.Errorf("identity, k = %d, ε = %v, k ignored: loss %v within ε", k, eps, l)
			}
		}
	}
}

// devTreeUnitWorst returns the worst loss over every pair (h, h + the k
// rows at bins rows) of the histograms and every multiset rows, for the
// tree built with noise for epsilon.
func devTreeUnitWorst(t *testing.T, n, k int, p dawaDevTreeParams, epsilon float64, hists [][]int64) (float64, string) {
	built := p
	built.eps = epsilon
	m, err := newDawaDevTreeMeasure(n, built)
	if err != nil {
		t.Fatal(err)
	}
	placements := binMultisets(n, k)
	worst, where := 0.0, ""
	for _, h := range hists {
		law := devTreeLaw(h, p, m)
		for _, rows := range placements {
			y := slices.Clone(h)
			for _, j := range rows {
				y[j]++
			}
			if l := devTreeLoss(law, devTreeLaw(y, p, m)); l > worst {
				worst, where = l, fmt.Sprintf("%v → +1 at bins %v", h, rows)
			}
		}
	}
	return worst, where
}

// devTreeUnitCases are the deviation trees checked under units: those of
// stage1_exact_test.go with k = 2 (and k = 3 on 4 bins).
var devTreeUnitCases = []struct {
	n, k   int
	p      dawaDevTreeParams
	maxV   int64
	sample int
}{
	{4, 2, dawaDevTreeParams{eps: 1, fanout: 2, refine: 1, tau: 1}, 3, 256},
	{4, 3, dawaDevTreeParams{eps: 1, fanout: 2, refine: 1, tau: 1}, 3, 256},
	{4, 2, dawaDevTreeParams{eps: 0.3, fanout: 2, refine: 1, tau: 2}, 3, 256},
	{8, 2, dawaDevTreeParams{eps: 1, fanout: 2, refine: 1, tau: 1}, 2, 120},
	{8, 2, dawaDevTreeParams{eps: 2, fanout: 4, refine: 1, tau: 3}, 2, 120},
	{6, 2, dawaDevTreeParams{eps: 1, fanout: 2, refine: 2, tau: 1}, 2, 120},
}

// TestDevTreeUnitExactPrivacy: the deviation tree built at
// UnitEpsilon(ε, k) loses at most ε (p.eps here) on every enumerated pair
// of histograms differing by k rows; built for 4/3 of UnitEpsilon, or at ε
// (k ignored), it loses more than ε on some pair of every case.
func TestDevTreeUnitExactPrivacy(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates about 10^5 output laws")
	}
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range devTreeUnitCases {
		hists := devTreeHistograms(rng, c.n, c.maxV, c.sample)
		rowEps := UnitEpsilon(c.p.eps, int64(c.k))
		worst, where := devTreeUnitWorst(t, c.n, c.k, c.p, rowEps, hists)
		mutated, _ := devTreeUnitWorst(t, c.n, c.k, c.p, rowEps*4/3, hists)
		ignored, _ := devTreeUnitWorst(t, c.n, c.k, c.p, c.p.eps, hists)
		t.Logf("n = %d, k = %d, %+v: worst exact unit loss %.4f at %s; noise cut 25%%: %.4f; k ignored: %.4f", c.n, c.k, c.p, worst, where, mutated, ignored)
		if worst > c.p.eps*(1+1e-9) {
			t.Errorf("n = %d, k = %d, %+v: exact unit loss %v > ε = %v at %s", c.n, c.k, c.p, worst, c.p.eps, where)
		}
		if mutated <= c.p.eps {
			t.Errorf("n = %d, k = %d, %+v: with the noise scale cut by 25%% the loss %v stays within ε", c.n, c.k, c.p, mutated)
		}
		if ignored <= c.p.eps {
			t.Errorf("n = %d, k = %d, %+v: built at ε (k ignored) the loss %v stays within ε", c.n, c.k, c.p, ignored)
		}
	}
}

// TestBuildForUnits: the synopsis is released at UnitEpsilon (the same
// draws as the mechanism at that ε) and records the per-unit ε.
func TestBuildForUnits(t *testing.T) {
	hist := []int64{3, 0, 7, 7, 1, 0, 0, 2}
	w, err := AllRangesWorkload(len(hist))
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	syn, err := BuildForUnits(1, 4, func(e float64) (*Synopsis, error) {
		got = e
		return DAWA(privtest.NewSource(5, 0), hist, w, e, DAWAOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := DAWA(privtest.NewSource(5, 0), hist, w, 0.25, DAWAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got != 0.25 || syn.Epsilon() != 1 || !slices.Equal(syn.Estimate(), ref.Estimate()) {
		t.Errorf("BuildForUnits(1, 4): ran at %v, records ε = %v, estimate %v; want 0.25, 1, %v", got, syn.Epsilon(), syn.Estimate(), ref.Estimate())
	}
	for _, k := range []int64{1, 3, 7, 1 << 20} {
		for _, eps := range []float64{0.1, 1, 1.0 / 3} {
			if e := UnitEpsilon(eps, k); e*float64(k) > eps || e < eps/float64(k)*(1-1e-15) {
				t.Errorf("UnitEpsilon(%v, %d) = %v", eps, k, e)
			}
		}
	}
	if _, err := BuildForUnits(1, 0, nil); err == nil {
		t.Error("BuildForUnits with 0 rows per unit: no error")
	}
}
