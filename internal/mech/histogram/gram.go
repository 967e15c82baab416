package histogram

import (
	"slices"
	"sort"
)

// dawaGram evaluates the workload quantities DAWA's greedy scaling needs
// (digest §3.5) without ever forming the transformed workload Ŵ (m×k, the
// paper's Def. 4.4: Ŵ[r][c] = |range r ∩ bucket c| / |bucket c|) or any k×k
// matrix. For a tree node q and a weight vector v over q's buckets it
// returns ‖Ŵ_q v‖², the squared norm of the workload's answers on the
// vector that is v on q's buckets and 0 elsewhere: with v = e_c this is
// the leaf's trace ‖Ŵ[:,c]‖², and with v the concatenation of the
// children's v-vectors it is the ‖u_a + u_b‖² of the corrected Eq. (17).
type dawaGram interface {
	// norm returns ‖Ŵ_q v‖² for node q; len(v) is q's number of buckets.
	norm(q int, v []float64) float64
	// constant reports whether every query covers all of q's bins or
	// none of them, so that the workload cannot tell q's buckets apart.
	constant(q int) bool
}

// newDawaGram returns the evaluator of workload w for the partition of its
// n bins into buckets starting at starts (ascending, starts[0] = 0) and the
// tree tr over those buckets.
func newDawaGram(w Workload, starts []int, tr *dawaTree) dawaGram {
	bounds := append(slices.Clone(starts), w.n)
	switch w.kind {
	case workloadPrefix, workloadAllRanges:
		return &dawaImplicitGram{n: w.n, all: w.kind == workloadAllRanges, bounds: bounds, tr: tr}
	}
	return newDawaExplicitGram(w, bounds, tr)
}

// dawaImplicitGram is the closed form for the prefix and all-ranges
// workloads. Spread v over the bins (bucket c's weight v_c becomes v_c/|c|
// on each of its bins) and let W_a be its cumulative sum before position a,
// a = 0..n. The prefix [0, e] answers W_{e+1}, so ‖Ŵ_q v‖² = Σ_{a=1..n} W_a².
// The range [a, b-1] answers W_b - W_a, so over all ranges
// ‖Ŵ_q v‖² = Σ_{a<b} (W_b - W_a)² = (n+1)·Σ_a (W_a - W̄)², computed around
// the mean for accuracy. W is linear inside a bucket, so each bucket adds
// a closed-form term: O(#buckets of q) per call.
type dawaImplicitGram struct {
	n      int
	all    bool  // all ranges; otherwise prefix
	bounds []int // bucket c is bins [bounds[c], bounds[c+1])
	tr     *dawaTree
}

func (g *dawaImplicitGram) constant(int) bool { return false }

func (g *dawaImplicitGram) norm(q int, v []float64) float64 {
	lo, hi := g.tr.lo[q], g.tr.hi[q]
	// Positions after the node's bins, where W is the node total.
	after := float64(g.n - g.bounds[hi])
	total := 0.0
	for _, x := range v {
		total += x
	}
	center := 0.0
	if g.all {
		sum := 0.0 // Σ_a W_a
		w0 := 0.0
		for c := lo; c < hi; c++ {
			l := float64(g.bounds[c+1] - g.bounds[c])
			sum += l*w0 + v[c-lo]*(l+1)/2
			w0 += v[c-lo]
		}
		center = (sum + after*total) / float64(g.n+1)
	}
	// Σ over positions of (W_a - center)²: before the node W = 0, inside
	// bucket c (length l, start value w0, step d) W = w0 + t·d for
	// t = 1..l, after the node W = total.
	sq := 0.0
	if g.all {
		sq = float64(g.bounds[lo]+1) * center * center
	}
	w0 := 0.0
	for c := lo; c < hi; c++ {
		l := float64(g.bounds[c+1] - g.bounds[c])
		d := v[c-lo] / l
		e := w0 - center
		sq += l*e*e + e*d*l*(l+1) + d*d*l*(l+1)*(2*l+1)/6
		w0 += v[c-lo]
	}
	sq += after * (total - center) * (total - center)
	if g.all {
		return float64(g.n+1) * sq
	}
	return sq
}

// dawaExplicitGram handles an explicit list of ranges. For node q covering
// bins [A, B], a range either misses q, covers it (its answer on v is
// Σv), or is partial: it starts in (A, B] or ends in [A, B). Partial
// ranges are found by binary search in the ranges sorted by start and by
// end, and each costs O(1) with prefix sums of v; a range is partial at
// no more than two nodes per tree level. The number of covering ranges of
// every node is counted once, offline.
type dawaExplicitGram struct {
	bounds []int
	tr     *dawaTree
	// Per range: first and last bin, first and last bucket, and the
	// coefficients Ŵ of those two buckets (first holds the only one when
	// the range lies inside one bucket).
	first, last           []int
	firstBkt, lastBkt     []int
	firstCoef, lastCoef   []float64
	byFirst, byLast       []int // range indices sorted by first / last bin
	firstSorted, lastSort []int // first[byFirst[i]], last[byLast[i]]
	covering              []float64
	prefix                []float64 // scratch: prefix sums of v
}

func newDawaExplicitGram(w Workload, bounds []int, tr *dawaTree) *dawaExplicitGram {
	m := len(w.ranges)
	g := &dawaExplicitGram{
		bounds: bounds, tr: tr,
		first: make([]int, m), last: make([]int, m),
		firstBkt: make([]int, m), lastBkt: make([]int, m),
		firstCoef: make([]float64, m), lastCoef: make([]float64, m),
	}
	bucketOf := func(bin int) int { return sort.SearchInts(bounds, bin+1) - 1 }
	length := func(c int) float64 { return float64(bounds[c+1] - bounds[c]) }
	for r, rg := range w.ranges {
		g.first[r], g.last[r] = rg.Lo, rg.Hi
		cs, ce := bucketOf(rg.Lo), bucketOf(rg.Hi)
		g.firstBkt[r], g.lastBkt[r] = cs, ce
		if cs == ce {
			g.firstCoef[r] = float64(rg.Hi-rg.Lo+1) / length(cs)
			continue
		}
		g.firstCoef[r] = float64(bounds[cs+1]-rg.Lo) / length(cs)
		g.lastCoef[r] = float64(rg.Hi-bounds[ce]+1) / length(ce)
	}
	g.byFirst, g.firstSorted = sortedBy(g.first)
	g.byLast, g.lastSort = sortedBy(g.last)
	g.covering = g.countCovering()
	return g
}

// sortedBy returns the indices of keys in ascending key order and the
// sorted keys.
func sortedBy(keys []int) (order, sorted []int) {
	order = make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return keys[a] - keys[b] })
	sorted = make([]int, len(keys))
	for i, r := range order {
		sorted[i] = keys[r]
	}
	return order, sorted
}

// countCovering returns, for every node, the number of ranges with
// first ≤ A and last ≥ B, by a sweep over A with a Fenwick tree of the
// last bins of the ranges started so far.
func (g *dawaExplicitGram) countCovering() []float64 {
	nodes := make([]int, g.tr.size())
	for q := range nodes {
		nodes[q] = q
	}
	startBin := func(q int) int { return g.bounds[g.tr.lo[q]] }
	slices.SortFunc(nodes, func(a, b int) int { return startBin(a) - startBin(b) })
	n := g.bounds[len(g.bounds)-1]
	ends := newDawaFenwick(n)
	covering := make([]float64, g.tr.size())
	started := 0
	for _, q := range nodes {
		a, b := startBin(q), g.bounds[g.tr.hi[q]]-1
		for started < len(g.byFirst) && g.firstSorted[started] <= a {
			ends.add(g.last[g.byFirst[started]], 1)
			started++
		}
		covering[q] = float64(int64(started) - ends.prefix(b)) // minus those ending before b
	}
	return covering
}

// partial calls f for every range partial at node q (each once).
func (g *dawaExplicitGram) partial(q int, f func(r int)) {
	a, b := g.bounds[g.tr.lo[q]], g.bounds[g.tr.hi[q]]-1
	for i := sort.SearchInts(g.firstSorted, a+1); i < len(g.byFirst) && g.firstSorted[i] <= b; i++ {
		f(g.byFirst[i])
	}
	for i := sort.SearchInts(g.lastSort, a); i < len(g.byLast) && g.lastSort[i] < b; i++ {
		if r := g.byLast[i]; g.first[r] <= a || g.first[r] > b { // not seen above
			f(r)
		}
	}
}

func (g *dawaExplicitGram) constant(q int) bool {
	none := true
	g.partial(q, func(int) { none = false })
	return none
}

func (g *dawaExplicitGram) norm(q int, v []float64) float64 {
	lo, hi := g.tr.lo[q], g.tr.hi[q]
	g.prefix = append(g.prefix[:0], 0)
	for _, x := range v {
		g.prefix = append(g.prefix, g.prefix[len(g.prefix)-1]+x)
	}
	total := g.prefix[len(v)]
	sq := g.covering[q] * total * total
	g.partial(q, func(r int) {
		u := g.answer(r, lo, hi, v)
		sq += u * u
	})
	return sq
}

// answer returns range r's answer on the vector v over buckets [lo, hi)
// (zero elsewhere), using the prefix sums of v in g.prefix.
func (g *dawaExplicitGram) answer(r, lo, hi int, v []float64) float64 {
	cs, ce := g.firstBkt[r], g.lastBkt[r]
	a, b := max(cs, lo), min(ce, hi-1)
	if a > b {
		return 0
	}
	if cs == ce {
		return g.firstCoef[r] * v[cs-lo]
	}
	u := g.prefix[b+1-lo] - g.prefix[a-lo]
	if a == cs {
		u -= (1 - g.firstCoef[r]) * v[a-lo]
	}
	if b == ce {
		u -= (1 - g.lastCoef[r]) * v[b-lo]
	}
	return u
}

// dawaFenwick is a Fenwick (binary indexed) tree of int64 over positions
// 0..n-1.
type dawaFenwick []int64

func newDawaFenwick(n int) dawaFenwick { return make(dawaFenwick, n+1) }

// add adds d at position i.
func (f dawaFenwick) add(i int, d int64) {
	for i++; i < len(f); i += i & -i {
		f[i] += d
	}
}

// prefix returns the sum over positions < i.
func (f dawaFenwick) prefix(i int) int64 {
	s := int64(0)
	for ; i > 0; i -= i & -i {
		s += f[i]
	}
	return s
}
