package mm

import (
	"math"
	"math/bits"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The candidate pool of the median mechanism (the digest's §7.6, the
// practical form of the paper's fractional databases C_i): N probability
// vectors over X, approximately uniform on the region
//
//	C = { F ∈ ℝ^|X| : F ≥ 0, Σ_x F[x] = 1, lo_j ≤ Σ_{x∈φ_j} F[x] ≤ hi_j for every cut j }.
//
// Decision (paper vs digest): the paper's C_0 is {F ≥ 0, ‖F‖₁ ≤ m} with
// answers (1/m)·Σ F; we follow the digest and use the probability simplex,
// so a candidate's answer to φ is the fraction Σ_{x∈φ} F[x] of its mass in
// φ. The paper samples with the Dyer–Frieze–Kannan grid walk; we use the
// digest's pairwise-coordinate hit-and-run, which is exact for the uniform
// law on the polytope and costs O(#cuts) per step.
//
// Privacy does not depend on anything in this file: the pool sees only
// released answers (the cuts), and its randomness is a public noise.Stream
// keyed at creation, independent of the data. A poor sampler costs
// utility (more hard queries), never privacy.

// mmFeasibleTolerance is how far (in fraction units) a candidate may sit
// outside a cut and still count as inside it: floating-point drift of the
// incremental hit-and-run updates stays orders of magnitude below it.
const mmFeasibleTolerance = 1e-9

// mmRepairIterations bounds the alternating projections that look for a
// feasible point when a cut leaves no candidate (mmFeasiblePoint).
const mmRepairIterations = 500

// mmConstraint is one consistency cut: the candidates whose count
// n̂·Σ_{x∈pred} F[x] lies within halfWidth of the released answer center.
type mmConstraint struct {
	pred              Predicate
	center, halfWidth int64
	scale             float64 // n̂
}

// bounds returns the cut in fraction units: [(center−w)/n̂, (center+w)/n̂].
func (c mmConstraint) bounds() (lo, hi float64) {
	return float64(c.center-c.halfWidth) / c.scale, float64(c.center+c.halfWidth) / c.scale
}

// mmPool is the candidate pool. The fields after rng are derived from the
// points and the cuts (rebuild recomputes them).
type mmPool struct {
	cells, size  int
	stepsPerCell int       // hit-and-run steps per candidate and cell after a cut
	points       []float64 // size×cells, candidate-major
	cuts         []mmConstraint
	repairs      int // cuts widened because no point satisfied them
	rng          *noise.Stream

	prefix []float64 // size×(cells+1): prefix sums of each candidate
	values []float64 // size×len(cuts): each candidate's fraction in each cut
	lo, hi []float64 // the cuts' bounds
	member []uint64  // cells×words: bit j of cell x's words is 1 iff x ∈ cut j
	words  int
}

// newMMPool returns size candidates drawn i.i.d. uniformly from the simplex
// over cells cells (Dirichlet(1,…,1): normalised Exp(1) draws), keyed by
// seed. No data is used.
func newMMPool(cells, size, stepsPerCell int, seed uint64) *mmPool {
	p := &mmPool{cells: cells, size: size, stepsPerCell: stepsPerCell, rng: noise.NewStream(seed)}
	p.points = make([]float64, size*cells)
	for i := range size {
		pt := p.point(i)
		total := 0.0
		for x := range pt {
			pt[x] = p.rng.ExpFloat64()
			total += pt[x]
		}
		for x := range pt {
			pt[x] /= total
		}
	}
	p.rebuild()
	return p
}

// point returns candidate i.
func (p *mmPool) point(i int) []float64 { return p.points[i*p.cells : (i+1)*p.cells] }

// rebuild recomputes the derived fields from the points and the cuts.
func (p *mmPool) rebuild() {
	k := len(p.cuts)
	p.words = (k + 63) / 64
	p.member = make([]uint64, p.cells*p.words)
	p.lo, p.hi = make([]float64, k), make([]float64, k)
	for j, c := range p.cuts {
		p.lo[j], p.hi[j] = c.bounds()
		for _, r := range c.pred.runs {
			for x := r.lo; x < r.hi; x++ {
				p.member[x*p.words+j/64] |= 1 << (j % 64)
			}
		}
	}
	p.prefix = make([]float64, p.size*(p.cells+1))
	p.values = make([]float64, p.size*k)
	for i := range p.size {
		p.refreshCandidate(i)
	}
}

// refreshCandidate recomputes candidate i's prefix sums and cut values.
func (p *mmPool) refreshCandidate(i int) {
	pre := p.prefix[i*(p.cells+1) : (i+1)*(p.cells+1)]
	s := 0.0
	for x, f := range p.point(i) {
		pre[x] = s
		s += f
	}
	pre[p.cells] = s
	for j, c := range p.cuts {
		p.values[i*len(p.cuts)+j] = c.pred.sumOf(pre)
	}
}

// answers returns every candidate's fraction in q.
func (p *mmPool) answers(q Predicate) []float64 {
	v := make([]float64, p.size)
	for i := range v {
		v[i] = q.sumOf(p.prefix[i*(p.cells+1) : (i+1)*(p.cells+1)])
	}
	return v
}

// median returns the lower median of the candidates' fractions in q (the
// ⌈N/2⌉-th smallest), so at least half the pool lies on each side of it
// (inclusive): the property the halving argument needs.
func (p *mmPool) median(q Predicate) float64 {
	v := p.answers(q)
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

// feasible reports whether candidate i satisfies every cut (within tolerance).
func (p *mmPool) feasible(i int) bool {
	for j := range p.cuts {
		v := p.values[i*len(p.cuts)+j]
		if v < p.lo[j]-mmFeasibleTolerance || v > p.hi[j]+mmFeasibleTolerance {
			return false
		}
	}
	return true
}

// cut adds the constraint c after a hard answer and refreshes the pool: the
// candidates inside c survive (uniform on the new region if the pool was
// uniform on the old one), clones of random survivors refill the pool, and
// stepsPerCell·|X| hit-and-run steps per candidate decorrelate the clones.
// If no candidate satisfies c, the pool restarts from one feasible point
// found by alternating projections; if there is none (the cuts are
// inconsistent, possible only outside the accuracy event), c is widened
// (its half-width doubled) until there is. Every input is public, so the
// repair costs no privacy. It returns c as stored (possibly widened).
func (p *mmPool) cut(c mmConstraint) mmConstraint {
	lo, hi := c.bounds()
	var seeds [][]float64
	for i, v := range p.answers(c.pred) {
		if v >= lo-mmFeasibleTolerance && v <= hi+mmFeasibleTolerance {
			seeds = append(seeds, slices.Clone(p.point(i)))
		}
	}
	if len(seeds) == 0 {
		start := p.nearest(c)
		for {
			if x, ok := mmFeasiblePoint(start, append(slices.Clone(p.cuts), c)); ok {
				seeds = [][]float64{x}
				break
			}
			c.halfWidth = max(2*c.halfWidth, 1)
			p.repairs++
		}
	}
	for i := range p.size {
		from := i
		if i >= len(seeds) {
			from = p.rng.IntN(len(seeds))
		}
		copy(p.point(i), seeds[from])
	}
	p.cuts = append(p.cuts, c)
	p.rebuild()
	p.mix()
	return c
}

// nearest returns a copy of the candidate whose fraction in c.pred is
// closest to c's bounds.
func (p *mmPool) nearest(c mmConstraint) []float64 {
	lo, hi := c.bounds()
	best, bestDist := 0, math.Inf(1)
	for i, v := range p.answers(c.pred) {
		if d := max(lo-v, v-hi); d < bestDist {
			best, bestDist = i, d
		}
	}
	return slices.Clone(p.point(best))
}

// mix runs the hit-and-run steps on every candidate, then recomputes the
// derived values exactly (removing the drift of the incremental updates).
func (p *mmPool) mix() {
	if p.cells < 2 {
		return
	}
	steps := p.stepsPerCell * p.cells
	k := len(p.cuts)
	for i := range p.size {
		pt, vals := p.point(i), p.values[i*k:(i+1)*k]
		for range steps {
			p.step(pt, vals)
		}
		p.refreshCandidate(i)
	}
}

// step is one pairwise-coordinate hit-and-run step on the candidate pt
// with cut values vals: pick an ordered pair of cells (a, b), a ≠ b, and
// move λ of mass from b to a, λ uniform on the interval that keeps the
// candidate in the region. The moves are reversible for the uniform law on
// the region, and the directions e_a − e_b span the simplex's tangent
// space. One 64-bit draw gives both cells (multiply-shift on 32-bit
// halves: a bias below |X|/2^32, immaterial for a sampler that only
// affects utility).
func (p *mmPool) step(pt, vals []float64) {
	u := p.rng.Uint64()
	a := int((u >> 32) * uint64(p.cells) >> 32)
	b := int((u & math.MaxUint32) * uint64(p.cells-1) >> 32)
	if b >= a {
		b++
	}
	ma, mb := p.member[a*p.words:(a+1)*p.words], p.member[b*p.words:(b+1)*p.words]
	lo, hi := -pt[a], pt[b]
	for w := range p.words {
		for d := ma[w] ^ mb[w]; d != 0; d &= d - 1 {
			bit := bits.TrailingZeros64(d)
			j := w*64 + bit
			if ma[w]>>bit&1 == 1 { // the cut's value gains λ
				lo, hi = max(lo, p.lo[j]-vals[j]), min(hi, p.hi[j]-vals[j])
			} else { // it loses λ
				lo, hi = max(lo, vals[j]-p.hi[j]), min(hi, vals[j]-p.lo[j])
			}
		}
	}
	if !(lo < hi) {
		return
	}
	lambda := min(max(lo+(hi-lo)*p.rng.Float64(), lo), hi)
	pt[a] += lambda
	pt[b] -= lambda
	for w := range p.words {
		for d := ma[w] ^ mb[w]; d != 0; d &= d - 1 {
			bit := bits.TrailingZeros64(d)
			if ma[w]>>bit&1 == 1 {
				vals[w*64+bit] += lambda
			} else {
				vals[w*64+bit] -= lambda
			}
		}
	}
}

// mmFeasiblePoint looks for a point of the simplex satisfying every cut by
// alternating projections from start: each violated cut is met by moving
// mass between its cells and the others (the Euclidean projection within
// the hyperplane Σ F = 1, aiming a tenth of the cut's width inside it),
// then the point is projected onto the simplex. Projections onto convex
// sets converge to their intersection when it is not empty; it gives up
// after mmRepairIterations rounds.
func mmFeasiblePoint(start []float64, cuts []mmConstraint) ([]float64, bool) {
	x := slices.Clone(start)
	cells := len(x)
	for range mmRepairIterations {
		for _, c := range cuts {
			k := c.pred.size
			lo, hi := c.bounds()
			v := c.pred.sumDirect(x)
			if (v >= lo && v <= hi) || k == 0 || k == cells {
				continue
			}
			margin := (hi - lo) / 10
			shift := min(max(v, lo+margin), hi-margin) - v
			out := -shift / float64(cells-k)
			in := shift/float64(k) - out
			for j := range x {
				x[j] += out
			}
			for _, r := range c.pred.runs {
				for j := r.lo; j < r.hi; j++ {
					x[j] += in
				}
			}
		}
		mmProjectSimplex(x)
		if mmSatisfies(x, cuts) {
			return x, true
		}
	}
	return nil, false
}

// mmSatisfies reports whether x satisfies every cut within tolerance.
func mmSatisfies(x []float64, cuts []mmConstraint) bool {
	for _, c := range cuts {
		lo, hi := c.bounds()
		if v := c.pred.sumDirect(x); v < lo-mmFeasibleTolerance/2 || v > hi+mmFeasibleTolerance/2 {
			return false
		}
	}
	return true
}

// mmProjectSimplex replaces x by its Euclidean projection onto the simplex
// {F ≥ 0, Σ F = 1} (Duchi et al. 2008): F = max(x − θ, 0) with θ from the
// sorted values.
func mmProjectSimplex(x []float64) {
	u := slices.Clone(x)
	slices.Sort(u)
	slices.Reverse(u)
	sum, theta := 0.0, 0.0
	for j, v := range u {
		sum += v
		if t := (sum - 1) / float64(j+1); v-t > 0 {
			theta = t
		}
	}
	for j := range x {
		x[j] = max(x[j]-theta, 0)
	}
}
