package ptr

import (
	"cmp"
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// The line arrangement of Hampel's L1 regression with two coefficients
// (digest §3.5; paper §7.2, proof of Theorem 17(b)).
//
// The objective is f(β) = Σ_i |y_i − x_iᵀβ|/‖x_i‖ = Σ_i |c_i − u_iᵀβ| with
// u_i = x_i/‖x_i‖ and c_i = y_i/‖x_i‖: each row is the line
// ℓ_i = {β : u_iᵀβ = c_i}. At a point β the subdifferential is
//
//	∂f(β) = −Σ_{ℓ ∌ β} w_ℓ·sign(c_ℓ − u_ℓᵀβ)·u_ℓ + Σ_{ℓ ∋ β} w_ℓ·[−1, 1]·u_ℓ,
//
// a point plus a zonotope (w_ℓ the multiplicity of identical rows), and
// g(β) = dist(0, ∂f(β)). β minimizes f iff g(β) = 0 (Theorem 20), and
// Lemma 22 makes ⌈g(β)⌉ the number of rows to add or delete before β
// becomes a minimizer. g is constant on each face of the arrangement (open
// region, open edge, vertex), and a region's gradient belongs to the
// subdifferential of every point of its boundary, so the infimum of g over
// any set is attained on the vertices and edges that meet it (a region
// meeting a set whose complement is bounded has boundary points in it).
//
// Walk (digest [OURS]): for each line, sort its crossings with the other
// lines and walk along it, updating the constant part incrementally:
// crossing line j in direction v flips its sign, c += 2·w_j·sign(u_j·v)·u_j.
// Each line costs O(n log n): O(n² log n) time and O(n) memory in all, where
// the paper's computation is O(n³) (every feature recomputed in O(n)).
// Floating point: g is computed in float64; rounding errors (about n·2^-52
// relative) are far below the test's unit steps, but the exact Lipschitz
// property holds for the real-number g only (the same caveat as for
// database sums).

// ptrVec is a point or vector of β-space.
type ptrVec [2]float64

func (a ptrVec) add(b ptrVec) ptrVec              { return ptrVec{a[0] + b[0], a[1] + b[1]} }
func (a ptrVec) scale(s float64) ptrVec           { return ptrVec{s * a[0], s * a[1]} }
func (a ptrVec) dot(b ptrVec) float64             { return a[0]*b[0] + a[1]*b[1] }
func (a ptrVec) cross(b ptrVec) float64           { return a[0]*b[1] - a[1]*b[0] }
func (a ptrVec) norm() float64                    { return math.Hypot(a[0], a[1]) }
func (a ptrVec) finite() bool                     { return !math.IsNaN(a[0]+a[1]) && !math.IsInf(a[0]+a[1], 0) }
func (a ptrVec) lexLess(b ptrVec) bool            { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }
func ptrAlong(base, dir ptrVec, t float64) ptrVec { return base.add(dir.scale(t)) }

// ptrLine is the line {β : uᵀβ = c} with unit normal u (angle in
// (−π/2, π/2]) and the number w of rows on it.
type ptrLine struct {
	u    ptrVec
	c, w float64
}

// ptrLines returns the lines of rows (P = 2), identical lines merged, in
// a canonical order (so every result is a function of the rows' multiset).
// A row with x = 0 does not depend on β and is dropped, as is a row whose
// line is not representable (c overflows); both are per-row rules, so
// neighbours stay neighbours.
func ptrLines(rows RegressionRows) []ptrLine {
	lines := make([]ptrLine, 0, rows.n())
	for i := range rows.n() {
		x := ptrVec(rows.row(i))
		r := x.norm()
		if r == 0 {
			continue
		}
		l := ptrLine{u: x.scale(1 / r), c: rows.Y[i] / r, w: 1}
		if math.IsInf(l.c, 0) || !l.u.finite() {
			continue
		}
		if l.u[0] < 0 || (l.u[0] == 0 && l.u[1] < 0) {
			l.u, l.c = l.u.scale(-1), -l.c
		}
		lines = append(lines, l)
	}
	slices.SortFunc(lines, func(a, b ptrLine) int {
		return cmp.Or(cmp.Compare(a.u[0], b.u[0]), cmp.Compare(a.u[1], b.u[1]), cmp.Compare(a.c, b.c))
	})
	merged := lines[:0]
	for _, l := range lines {
		if k := len(merged) - 1; k >= 0 && merged[k].u == l.u && merged[k].c == l.c {
			merged[k].w++
			continue
		}
		merged = append(merged, l)
	}
	return merged
}

// ptrArrangementVisitor receives the faces of the walk with g on them.
type ptrArrangementVisitor struct {
	// bound returns the current pruning bound: a face whose g is certainly
	// above it (by the lower bound g ≥ ‖center‖ − Σ w of the lines
	// through it) is skipped, since it cannot change the visitor's result.
	bound func() float64
	// vertex receives a vertex (coordinates may be infinite or NaN for
	// crossings of nearly parallel lines).
	vertex func(p ptrVec, g float64)
	// edge receives an open edge from p to q, or an unbounded one
	// (bounded = false, p and q then meaningless). Nil skips edges.
	edge func(p, q ptrVec, bounded bool, g float64)
}

// ptrConcurrent is the relative distance within which crossings along a
// line count as one vertex. Lines through one point (three collinear data
// points, common with discrete data) cross at parameters that differ only
// by rounding; splitting them would give each copy a zonotope with fewer
// generators, a subset of the true subdifferential, and so overstate g.
// Grouping errs the other way: the merged vertex's zonotope is a superset
// of the subdifferential of each crossing and of the edges between them,
// so g can only be understated, which makes the test refuse more, never
// less.
const ptrConcurrent = 1e-9

// ptrCrossing is line j crossing the walked line at parameter t, with
// sgn = sign(u_j·v) for the direction of travel v.
type ptrCrossing struct {
	t   float64
	j   int32
	sgn int8
}

// ptrWalk visits every vertex (from the first line through it; the other
// lines' copies differ only by rounding) and every edge of the
// arrangement of lines, except those pruned by visit.bound.
func ptrWalk(lines []ptrLine, visit ptrArrangementVisitor) {
	crossings := make([]ptrCrossing, 0, len(lines))
	var z ptrZonotope
	for i, li := range lines {
		dir := ptrVec{-li.u[1], li.u[0]}
		base := li.u.scale(li.c)
		own := li.w // rows on the walked line, plus lines numerically equal to it
		// center is the constant part of ∂f on the edge being walked,
		// starting at t → −∞, where sign(c_j − u_jᵀβ(t)) = sign(u_j·v).
		var center ptrVec
		crossings = crossings[:0]
		for j, lj := range lines {
			if j == i {
				continue
			}
			d, off := lj.u.dot(dir), lj.c-lj.u.dot(base)
			if d == 0 {
				s := ptrSign(off)
				if s == 0 {
					own += lj.w
				}
				center = center.add(lj.u.scale(-lj.w * s))
				continue
			}
			s := ptrSign(d)
			center = center.add(lj.u.scale(-lj.w * s))
			crossings = append(crossings, ptrCrossing{t: off / d, sgn: int8(s), j: int32(j)})
		}
		// Ties need no order of their own: close parameters form one
		// vertex, and the sort is deterministic given the canonical lines.
		slices.SortFunc(crossings, func(a, b ptrCrossing) int {
			switch {
			case a.t < b.t:
				return -1
			case a.t > b.t:
				return 1
			}
			return 0
		})
		onLine := li.u.scale(own)
		from, scale := math.Inf(-1), base.norm()
		for k := 0; k < len(crossings); {
			t := crossings[k].t
			z.gens = append(z.gens[:0], onLine)
			vertexCenter, weight, first := center, own, true
			e := k
			for ; e < len(crossings) && crossings[e].t-t <= ptrConcurrent*(math.Abs(t)+scale); e++ {
				lj := lines[crossings[e].j]
				vertexCenter = vertexCenter.add(lj.u.scale(lj.w * float64(crossings[e].sgn)))
				z.gens = append(z.gens, lj.u.scale(lj.w))
				weight += lj.w
				first = first && int(crossings[e].j) > i
			}
			if visit.edge != nil && center.norm()-own <= visit.bound() {
				visit.edge(ptrAlong(base, dir, from), ptrAlong(base, dir, t), !math.IsInf(from, 0) && !math.IsInf(t, 0), ptrSegmentDistance(center, onLine))
			}
			if first && vertexCenter.norm()-weight <= visit.bound() {
				visit.vertex(ptrAlong(base, dir, t), z.distance(vertexCenter))
			}
			// After the vertex the crossed lines' terms have flipped sign.
			center = vertexCenter.add(vertexCenter.add(center.scale(-1)))
			from, k = t, e
		}
		if visit.edge != nil && center.norm()-own <= visit.bound() {
			visit.edge(ptrVec{}, ptrVec{}, false, ptrSegmentDistance(center, onLine))
		}
	}
}

// ptrSign returns the sign of x as −1, 0 or 1.
func ptrSign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// ptrSegmentDistance returns dist(0, {c + τ·g : |τ| ≤ 1}).
func ptrSegmentDistance(c, g ptrVec) float64 {
	gg := g.dot(g)
	if gg == 0 {
		return c.norm()
	}
	tau := mech.Clamp(-c.dot(g)/gg, -1, 1)
	return c.add(g.scale(tau)).norm()
}

// ptrZonotope holds the generators of a vertex's zonotope and a buffer
// for its polygon.
type ptrZonotope struct {
	gens, poly []ptrVec
}

// distance returns dist(0, c + Σ_k [−1, 1]·g_k) for generators with
// angles in (−π/2, π/2], at least two of them not parallel.
//
// Two generators (two lines through the vertex, the general position):
// 0 is in the parallelogram iff the solution of a·g1 + b·g2 = −c has
// |a|, |b| ≤ 1; otherwise the distance is the nearest of its four sides.
// More generators: the zonotope is the convex polygon whose vertices start
// at c − Σ g_k and add 2g_k, then subtract 2g_k, in angle order
// (counter-clockwise; within a half-turn a comes before b iff a × b > 0).
func (z *ptrZonotope) distance(c ptrVec) float64 {
	gens := z.gens
	if len(gens) == 2 {
		g1, g2 := gens[0], gens[1]
		det := g1.cross(g2)
		a, b := g2.cross(c)/det, c.cross(g1)/det
		if math.Abs(a) <= 1 && math.Abs(b) <= 1 {
			return 0
		}
		return math.Min(
			math.Min(ptrSegmentDistance(c.add(g1), g2), ptrSegmentDistance(c.add(g1.scale(-1)), g2)),
			math.Min(ptrSegmentDistance(c.add(g2), g1), ptrSegmentDistance(c.add(g2.scale(-1)), g1)))
	}
	for i := 1; i < len(gens); i++ {
		for j := i; j > 0 && gens[j].cross(gens[j-1]) > 0; j-- {
			gens[j], gens[j-1] = gens[j-1], gens[j]
		}
	}
	p := c
	for _, g := range gens {
		p = p.add(g.scale(-1))
	}
	z.poly = z.poly[:0]
	for _, sign := range [2]float64{2, -2} {
		for _, g := range gens {
			z.poly = append(z.poly, p)
			p = p.add(g.scale(sign))
		}
	}
	inside, best := true, math.Inf(1)
	for k, a := range z.poly {
		b := z.poly[(k+1)%len(z.poly)]
		edge := b.add(a.scale(-1))
		if edge.cross(a.scale(-1)) < 0 {
			inside = false
		}
		best = math.Min(best, ptrSegmentDistance(a.add(edge.scale(0.5)), edge.scale(0.5)))
	}
	if inside {
		return 0
	}
	return best
}
