package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestDawaTreeShape(t *testing.T) {
	// Hand-derived from the rule of dawaTree's comment.
	for _, tc := range []struct {
		k, branching int
		want         string // breadth-first node ranges
	}{
		{1, 2, "[0,1)"},
		{2, 2, "[0,2) [0,1) [1,2)"},
		{3, 2, "[0,3) [0,1) [1,3) [1,2) [2,3)"},
		{5, 2, "[0,5) [0,2) [2,5) [0,1) [1,2) [2,3) [3,5) [3,4) [4,5)"},
		{5, 3, "[0,5) [0,1) [1,3) [3,5) [1,2) [2,3) [3,4) [4,5)"},
		{3, 4, "[0,3) [0,1) [1,2) [2,3)"},
	} {
		tr := newDawaTree(tc.k, tc.branching)
		var got []string
		for q := range tr.size() {
			got = append(got, fmt.Sprintf("[%d,%d)", tr.lo[q], tr.hi[q]))
		}
		if s := fmt.Sprint(got); s != "["+tc.want+"]" {
			t.Errorf("k=%d t=%d: got %v, want [%v]", tc.k, tc.branching, s, tc.want)
		}
	}
	if h := newDawaTree(4096, 2).height(); h != 13 {
		t.Errorf("height of the binary tree over 4096 leaves: got %d, want 13", h)
	}
}

// denseCase is a small random stage-2 instance with its dense matrices.
type denseCase struct {
	name   string
	n      int
	starts []int
	w      Workload
	what   *mat.Dense // Ŵ: one row per query, one column per bucket
}

// randomStarts returns a random partition of n bins (starts[0] = 0).
func randomStarts(r *rand.Rand, n int) []int {
	starts := []int{0}
	for j := 1; j < n; j++ {
		if r.IntN(3) == 0 {
			starts = append(starts, j)
		}
	}
	return starts
}

// denseWhat builds Ŵ[q][c] = |range q ∩ bucket c| / |bucket c| by
// enumerating the workload's queries.
func denseWhat(w Workload, starts []int) *mat.Dense {
	bounds := append(slices.Clone(starts), w.N())
	what := mat.NewDense(int(w.Len()), len(starts), nil)
	for i := range w.Len() {
		rg := w.At(i)
		for c := range starts {
			overlap := min(rg.Hi+1, bounds[c+1]) - max(rg.Lo, bounds[c])
			if overlap > 0 {
				what.Set(int(i), c, float64(overlap)/float64(bounds[c+1]-bounds[c]))
			}
		}
	}
	return what
}

// denseCases returns random instances of every workload kind, with and
// without ranges that make pseudo-leaves.
func denseCases(t *testing.T, seed uint64, count int) []denseCase {
	r := rand.New(privtest.NewSource(seed, 0))
	var cases []denseCase
	for i := range count {
		n := 2 + r.IntN(11)
		starts := randomStarts(r, n)
		var w Workload
		var err error
		switch i % 4 {
		case 0:
			w, err = AllRangesWorkload(n)
		case 1:
			w, err = PrefixWorkload(n)
		case 2:
			w, err = UniformIntervalsWorkload(n, 1+r.IntN(12), r.Uint64())
		default:
			// Ranges on a coarse grid of bins: whole regions that no
			// query splits, hence pseudo-leaves.
			cuts := slices.Compact([]int{0, n / 3, 2 * n / 3, n})
			var rs []Range
			for range 1 + r.IntN(4) {
				a, b := r.IntN(len(cuts)-1), r.IntN(len(cuts)-1)
				rs = append(rs, Range{cuts[min(a, b)], cuts[max(a, b)+1] - 1})
			}
			w, err = RangesWorkload(n, rs)
		}
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, denseCase{name: fmt.Sprintf("%v starts=%v", w, starts), n: n, starts: starts, w: w, what: denseWhat(w, starts)})
	}
	return cases
}

func TestDawaGramMatchesDense(t *testing.T) {
	r := rand.New(privtest.NewSource(privtest.Seed(t, 0xd1), 0))
	for _, tc := range denseCases(t, r.Uint64(), 200) {
		for _, branching := range []int{2, 3} {
			tr := newDawaTree(len(tc.starts), branching)
			gram := newDawaGram(tc.w, tc.starts, tr)
			for q := range tr.size() {
				lo, hi := tr.lo[q], tr.hi[q]
				v := make([]float64, hi-lo)
				for i := range v {
					v[i] = r.Float64()
				}
				// Dense ‖Ŵ[:, lo:hi]·v‖² and row constancy.
				sub := tc.what.Slice(0, int(tc.w.Len()), lo, hi)
				var u mat.VecDense
				u.MulVec(sub, mat.NewVecDense(len(v), v))
				want := mat.Dot(&u, &u)
				if got := gram.norm(q, v); math.Abs(got-want) > 1e-9*(1+want) {
					t.Errorf("%s t=%d node [%d,%d): norm got %v, want %v", tc.name, branching, lo, hi, got, want)
				}
				constant := true
				for i := range int(tc.w.Len()) {
					for c := lo + 1; c < hi; c++ {
						if tc.what.At(i, c) != tc.what.At(i, lo) {
							constant = false
						}
					}
				}
				// constant() may miss a constant row (a partial range
				// with equal fractions) but must never claim one wrongly.
				if got := gram.constant(q); got && !constant {
					t.Errorf("%s node [%d,%d): constant got true, want false", tc.name, lo, hi)
				}
			}
		}
	}
}

// denseNodeMatrix returns the k×k matrix Σ_{q' in subtree(q)} c_{q'}² 1 1ᵀ
// (restricted to q's buckets, as a (hi-lo)² matrix) for weights relative to
// q with λ at q and the chosen λs below.
func denseNodeMatrix(tr *dawaTree, lambdas []float64, q int, lambdaQ float64) *mat.SymDense {
	lo, hi := tr.lo[q], tr.hi[q]
	m := mat.NewSymDense(hi-lo, nil)
	var walk func(p int, mult float64)
	walk = func(p int, mult float64) {
		c := mult
		if !tr.isLeaf(p) {
			l := lambdas[p]
			if p == q {
				l = lambdaQ
			}
			c = mult * l
			for ch := tr.child[p]; ch < tr.child[p]+tr.children[p]; ch++ {
				walk(ch, mult*(1-l))
			}
		}
		for i := tr.lo[p]; i < tr.hi[p]; i++ {
			for j := i; j < tr.hi[p]; j++ {
				m.SetSym(i-lo, j-lo, m.At(i-lo, j-lo)+c*c)
			}
		}
	}
	walk(q, 1)
	return m
}

// denseTrace returns tr(G·M⁻¹).
func denseTrace(t *testing.T, g mat.Matrix, m *mat.SymDense) float64 {
	var inv mat.Dense
	if err := inv.Inverse(m); err != nil {
		t.Fatalf("singular strategy: %v", err)
	}
	var prod mat.Dense
	prod.Mul(g, &inv)
	return mat.Trace(&prod)
}

// lambdasOf recovers each internal node's λ from the final weights.
func lambdasOf(st dawaStrategy) []float64 {
	tr := st.tr
	lambdas := make([]float64, tr.size())
	mult := make([]float64, tr.size())
	mult[0] = 1
	for q := range tr.size() {
		if tr.isLeaf(q) || mult[q] == 0 {
			continue
		}
		lambdas[q] = st.weight[q] / mult[q]
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			mult[c] = mult[q] * (1 - lambdas[q])
		}
	}
	return lambdas
}

// TestDawaGreedyMatchesDense checks the greedy scaling against dense
// linear algebra on instances without pseudo-leaves: at every internal
// node the chosen λ minimizes the decayed objective tr(G_q M_q(λ)⁻¹)
// (Eq. 9) over the grid, computed from explicit inverses, and the root's
// trace equals tr(ŴᵀŴ (YᵀD²Y)⁻¹).
func TestDawaGreedyMatchesDense(t *testing.T) {
	seed := privtest.Seed(t, 0xd2)
	checked := 0
	for _, tc := range denseCases(t, seed, 120) {
		tr := newDawaTree(len(tc.starts), 2)
		st := dawaGreedyScaling(tr, newDawaGram(tc.w, tc.starts, tr), 2)
		if slices.Contains(st.pseudo, true) {
			continue
		}
		checked++
		lambdas := lambdasOf(st)
		var gram mat.Dense
		gram.Mul(tc.what.T(), tc.what)
		for q := range tr.size() {
			if tr.isLeaf(q) {
				continue
			}
			lo, hi := tr.lo[q], tr.hi[q]
			mu := math.Pow(2, -float64(tr.depth[q])/2)
			g := mat.NewDense(hi-lo, hi-lo, nil)
			for i := lo; i < hi; i++ {
				for j := lo; j < hi; j++ {
					g.Set(i-lo, j-lo, mu*gram.At(i, j))
				}
			}
			for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
				for i := tr.lo[c]; i < tr.hi[c]; i++ {
					for j := tr.lo[c]; j < tr.hi[c]; j++ {
						g.Set(i-lo, j-lo, g.At(i-lo, j-lo)+(1-mu)*gram.At(i, j))
					}
				}
			}
			bestF := math.Inf(1)
			for i := range dawaLambdaSteps {
				f := denseTrace(t, g, denseNodeMatrix(tr, lambdas, q, float64(i)/dawaLambdaSteps))
				bestF = min(bestF, f)
			}
			chosen := denseTrace(t, g, denseNodeMatrix(tr, lambdas, q, lambdas[q]))
			if chosen > bestF*(1+1e-9)+1e-12 {
				t.Errorf("%s node [%d,%d): λ=%v gives %v, the grid's best is %v", tc.name, lo, hi, lambdas[q], chosen, bestF)
			}
		}
		want := denseTrace(t, &gram, denseNodeMatrix(tr, lambdas, 0, lambdas[0]))
		if tr.isLeaf(0) {
			want = gram.At(0, 0)
		}
		if math.Abs(st.trace-want) > 1e-9*want {
			t.Errorf("%s: trace got %v, want %v", tc.name, st.trace, want)
		}
	}
	if checked < 60 {
		t.Errorf("instances without pseudo-leaves: got %d, want ≥ 60", checked)
	}
}

func TestDawaGreedyPseudoLeaves(t *testing.T) {
	// Two ranges that never split [0,4) or [4,8): both halves are
	// pseudo-leaves and the root splits between them.
	w, _ := RangesWorkload(8, []Range{{0, 3}, {0, 7}, {4, 7}})
	starts := identityStarts(8)
	tr := newDawaTree(8, 2)
	st := dawaGreedyScaling(tr, newDawaGram(w, starts, tr), 2)
	var pseudo []string
	for q := range tr.size() {
		if st.pseudo[q] {
			pseudo = append(pseudo, fmt.Sprintf("[%d,%d)", tr.lo[q], tr.hi[q]))
		}
	}
	if got := fmt.Sprint(pseudo); got != "[[0,4) [4,8)]" {
		t.Errorf("pseudo-leaves: got %v, want [[0,4) [4,8)]", got)
	}
	// Each pseudo-leaf's column in the merged domain is (1, 1, 0) or
	// (0, 1, 1): the merged strategy is a 2-leaf tree, whose trace the
	// dense formula gives.
	lambda := st.weight[0]
	m := mat.NewSymDense(2, []float64{lambda*lambda + (1-lambda)*(1-lambda), lambda * lambda, lambda * lambda, lambda*lambda + (1-lambda)*(1-lambda)})
	what := mat.NewDense(3, 2, []float64{1, 0, 1, 1, 0, 1})
	var gram mat.Dense
	gram.Mul(what.T(), what)
	if want := denseTrace(t, &gram, m); math.Abs(st.trace-want) > 1e-12*want {
		t.Errorf("trace got %v, want %v", st.trace, want)
	}
	if w := st.weight[1] + st.weight[0]; math.Abs(w-1) > 1e-15 {
		t.Errorf("weights on a path: got %v, want 1", w)
	}
}

func TestDawaWeightsSumToOne(t *testing.T) {
	for _, tc := range denseCases(t, privtest.Seed(t, 0xd3), 80) {
		tr := newDawaTree(len(tc.starts), 2+len(tc.starts)%3)
		st := dawaGreedyScaling(tr, newDawaGram(tc.w, tc.starts, tr), 2+len(tc.starts)%3)
		active := dawaActive(tr, st.pseudo)
		// Path sums from the root to every used leaf.
		sum := make([]float64, tr.size())
		for q := range tr.size() {
			if !active[q] {
				continue
			}
			if q > 0 {
				sum[q] += st.weight[q]
			} else {
				sum[q] = st.weight[q]
			}
			if tr.isLeaf(q) || st.pseudo[q] {
				if math.Abs(sum[q]-1) > 1e-12 || st.weight[q] < dawaMinLeafWeight {
					t.Errorf("%s leaf [%d,%d): path sum %v, weight %v", tc.name, tr.lo[q], tr.hi[q], sum[q], st.weight[q])
				}
				continue
			}
			for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
				sum[c] = sum[q]
			}
		}
	}
}

// TestDawaTreeLeastSquaresMatchesDense compares the two-pass solver with
// dense weighted least squares (AᵀPA)⁻¹AᵀPz on random trees with random
// unmeasured internal nodes.
func TestDawaTreeLeastSquaresMatchesDense(t *testing.T) {
	r := rand.New(privtest.NewSource(privtest.Seed(t, 0xd4), 0))
	for trial := range 100 {
		k := 1 + r.IntN(12)
		tr := newDawaTree(k, 2+trial%3)
		active := make([]bool, tr.size())
		leaf := make([]bool, tr.size())
		value := make([]float64, tr.size())
		precision := make([]float64, tr.size())
		var rows []int
		for q := range tr.size() {
			active[q], leaf[q] = true, tr.isLeaf(q)
			value[q] = 100 * r.NormFloat64()
			if leaf[q] || r.IntN(3) > 0 {
				precision[q] = 0.01 + r.Float64()
				rows = append(rows, q)
			}
		}
		a := mat.NewDense(len(rows), k, nil)
		p := mat.NewDiagDense(len(rows), nil)
		z := mat.NewVecDense(len(rows), nil)
		for i, q := range rows {
			for c := tr.lo[q]; c < tr.hi[q]; c++ {
				a.Set(i, c, 1)
			}
			p.SetDiag(i, precision[q])
			z.SetVec(i, value[q])
		}
		var ap, normal mat.Dense
		ap.Mul(a.T(), p)
		normal.Mul(&ap, a)
		var rhs, want mat.VecDense
		rhs.MulVec(&ap, z)
		if err := want.SolveVec(&normal, &rhs); err != nil {
			t.Fatal(err)
		}
		fit := dawaTreeLeastSquares(tr, active, leaf, value, precision)
		for q := range tr.size() {
			if leaf[q] && math.Abs(fit[q]-want.AtVec(tr.lo[q])) > 1e-8*(1+math.Abs(want.AtVec(tr.lo[q]))) {
				t.Errorf("trial %d leaf %d: got %v, want %v", trial, tr.lo[q], fit[q], want.AtVec(tr.lo[q]))
			}
		}
	}
}
