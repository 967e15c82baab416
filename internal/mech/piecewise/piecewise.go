package piecewise

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The piecewise Laplace mechanism (PLM; Durfee, "Unifying Laplace Mechanism
// with Instance Optimality in Differential Privacy"; digest
// papers/piecewise-laplace.md) and, sharing its pieces, the inverse
// sensitivity mechanism (INV, inverse.go).
//
// Breakpoints. For a statistic f with range [A, B], u_ℓ(x) and d_ℓ(x) are
// the largest and smallest values f reaches on datasets within ℓ row
// additions or removals of x (u_0 = d_0 = f(x)). Any sequences that satisfy
// the validity contract of digest §2.4 will do: V1 u_0 = d_0 = f(x), the
// very float released as f; V2 u nondecreasing, d nonincreasing; V3 for
// neighbours x ~ x', u_ℓ(x) ≤ u_{ℓ+1}(x') and d_ℓ(x) ≥ d_{ℓ+1}(x'); V4 the
// same support for every dataset, which floating point only keeps if the
// last breakpoints are exactly B and A (the digest's pitfall P6: a last
// breakpoint of 9.9999999 instead of 10 leaves a sliver of zero density on
// one dataset and positive density on its neighbour, an infinite privacy
// loss). Exact breakpoints rounded with one monotone rounding (round to
// nearest, or directed) keep V2 and V3, since a monotone map preserves every
// inequality between them; the statistic files compute them that way.
//
// Score (the paper's Definition 3.1, with its "q(f(x);x) = 1" read as
// −q = 1, digest §10). For y in upper piece ℓ, (u_{ℓ−1}, u_ℓ] of positive
// length Δ_ℓ, the score is s(y) = ℓ + (y − u_{ℓ−1})/Δ_ℓ; mirrored below;
// s(f) = 1. The PLM density is ∝ exp(−(ε/2)·s(y)): in piece ℓ a Laplace
// slope of scale 2Δ_ℓ/ε, and exp(−ε/2) lost across every piece. By V3,
// |s_x(y) − s_x'(y)| ≤ 1 for neighbours (Theorem 1), so this exponential
// mechanism is ε-DP under add/remove when the breakpoints are the add/remove
// ones. INV uses s(y) = ℓ(y) (the number of rows to change, len_f), which is
// 1-sensitive by the same corollary, with density ∝ exp(−(ε/2)·ℓ(y)).
//
// ρ-smoothing (the paper's §4.2, needed for tied data, digest §2.7): every
// breakpoint moves outward by a public ρ ≥ 0, u_ℓ + ρ and d_ℓ − ρ, which
// opens a flat centre [f−ρ, f+ρ] with s = 1 (PLM) or ℓ = 0 (INV). Without it
// a median tied at c has no piece near c and the output spreads over the
// gaps to the next distinct values (all of [A, B] for constant data).
//
// Sampling on a grid (DESIGN.md §2: no float inverse CDF). Outputs are the
// multiples of a public power of two h in [A−ρ, B+ρ], with ρ rounded to a
// multiple of h: the discrete exponential mechanism with the same score,
// ε-DP by the same argument (digest §2.8). Membership of a grid point in a
// piece is decided exactly (y−ρ and y+ρ are exact on the grid). The draw is
// exact given the weights: the piece by a dyadicTable, then the point inside
// it, a truncated geometric (the geometric of ratio exp(−εh/(2Δ_ℓ)) reduced
// mod the piece's point count) drawn with the exact discrete-Laplace
// sampler of dlap.go, or a uniform point for INV and the centre. The piece
// weights are computed in float64; together with the scale rounding of
// dlap they are within a relative 10^−11 of the exact ones, so the
// mechanism is run at ε − 10^−9, which keeps every probability ratio below
// e^ε with the computation error included.
//
// Tail depth (the paper's §5.2): u_ℓ = B and d_ℓ = A for ℓ ≥ K, with K
// public, keeps V1–V4 and costs only the mass beyond depth K. The statistic
// files use DefaultDepth.

// Breakpoints are the sequences u_0 … u_K (Up) and d_0 … d_K (Down) of a
// statistic on one dataset, with Up[0] = Down[0] = f(x), Up[K] = B and
// Down[K] = A exactly.
type Breakpoints struct {
	Up, Down []float64
}

// F returns f(x), the released statistic's exact value rounded to float64.
func (b Breakpoints) F() float64 { return b.Up[0] }

// validate checks V1, V2, V4 and finiteness against the range r.
func (b Breakpoints) validate(r mech.Bounds) error {
	if len(b.Up) < 2 || len(b.Down) < 2 || b.Up[0] != b.Down[0] {
		return fmt.Errorf("%w: breakpoints need u_0 = d_0 and a last breakpoint on each side", mech.ErrInvalidInput)
	}
	if b.Up[len(b.Up)-1] != r.Upper || b.Down[len(b.Down)-1] != r.Lower {
		return fmt.Errorf("%w: last breakpoints %v, %v must be exactly the range ends %v, %v",
			mech.ErrInvalidInput, b.Down[len(b.Down)-1], b.Up[len(b.Up)-1], r.Lower, r.Upper)
	}
	for i, u := range b.Up {
		if !(u >= r.Lower && u <= r.Upper) || (i > 0 && u < b.Up[i-1]) {
			return fmt.Errorf("%w: upper breakpoint %d (%v) outside %v or decreasing", mech.ErrInvalidInput, i, u, r)
		}
	}
	for i, d := range b.Down {
		if !(d >= r.Lower && d <= r.Upper) || (i > 0 && d > b.Down[i-1]) {
			return fmt.Errorf("%w: lower breakpoint %d (%v) outside %v or increasing", mech.ErrInvalidInput, i, d, r)
		}
	}
	return nil
}

// piecewiseKind selects the in-piece distribution.
type piecewiseKind int

const (
	// plmKind: score ℓ + position in the piece (truncated exponential).
	plmKind piecewiseKind = iota + 1
	// invKind: score ℓ, constant in the piece (uniform).
	invKind
)

// piecewiseSlack is subtracted from ε to absorb the relative weight error
// (see the file comment); piecewiseMinEpsilon keeps it below 10^−4 of ε
// and the in-piece geometric scales below 2^60 (dlap.go).
const (
	piecewiseSlack      = 1e-9
	piecewiseMinEpsilon = 0x1p-16
	// maxTailExponent caps (ε/2)·K: pieces beyond are weighted below
	// e^−900 next to the centre, and log weights stay within 2^10 of each
	// other as dyadicTable requires.
	maxTailExponent = 900
	// piecewiseTau is the total-variation budget of the tail merge.
	piecewiseTau = 1e-9
)

// piecewiseSampler draws from the PLM or INV on a public grid.
type piecewiseSampler struct {
	kind     piecewiseKind
	epsilon  float64     // the claimed ε
	c        float64     // (ε − slack)/2
	step     float64     // the grid h, a power of two
	rhoSteps int64       // ρ/h
	rng      mech.Bounds // [A, B]
}

// newPiecewiseSampler validates ε, the range and ρ and fixes the grid:
// h is the smallest power of two that is at least 2^−40·(B−A+2ρ) and at
// least two ulps of max(|A|, |B|) + ρ (so every grid point is a float64),
// and ρ > 0 is rounded to the nearest positive multiple of h.
func newPiecewiseSampler(kind piecewiseKind, rng mech.Bounds, epsilon, rho float64) (piecewiseSampler, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return piecewiseSampler{}, err
	}
	if epsilon < piecewiseMinEpsilon {
		return piecewiseSampler{}, fmt.Errorf("%w: %v, the piecewise mechanisms need ε ≥ 2^-16", mech.ErrInvalidEpsilon, epsilon)
	}
	if err := rng.Validate(); err != nil {
		return piecewiseSampler{}, err
	}
	if !(rho >= 0) || math.IsInf(rho, 0) || rho > rng.Upper-rng.Lower {
		return piecewiseSampler{}, fmt.Errorf("%w: smoothing ρ = %v, must be in [0, %v], the width of the output's range", mech.ErrInvalidInput, rho, rng.Upper-rng.Lower)
	}
	step := noise.CeilPowerOfTwo(math.Max((rng.Upper-rng.Lower+2*rho)*0x1p-40, 2*exact.Ulp(rng.Magnitude()+rho)))
	rhoSteps := int64(math.Round(rho / step))
	if rho > 0 {
		rhoSteps = max(rhoSteps, 1)
	}
	return piecewiseSampler{
		kind: kind, epsilon: epsilon, c: (epsilon - piecewiseSlack) / 2,
		step: step, rhoSteps: rhoSteps, rng: rng,
	}, nil
}

// rho returns the effective smoothing ρ, a multiple of the grid step.
func (p piecewiseSampler) rho() float64 { return float64(p.rhoSteps) * p.step }

// DefaultDepth returns the public tail depth
// K = 1 + ⌈(2/ε)·ln(2(B−A)/(ρ·τ))⌉, τ = 10^−9 (digest §3.0: merging the
// tail changes the output distribution by at most τ in total variation),
// with ρ replaced by 2^−30·(B−A) when smaller, and K ≤ 1800/ε.
func DefaultDepth(rng mech.Bounds, epsilon, rho float64) int64 {
	width := rng.Upper - rng.Lower
	rho = math.Max(rho, width*0x1p-30)
	k := 1 + math.Ceil(2/epsilon*math.Log(2*width/(rho*piecewiseTau)))
	return int64(math.Min(k, 2*maxTailExponent/epsilon))
}

// plmPiece is one piece of the output grid: count grid points starting at
// grid index first (the point nearest the piece's inner end) and moving
// outward by side (+1 up, −1 down; 0 for the centre, whose points run
// upward from first).
type plmPiece struct {
	level  int64   // ℓ; 0 for the centre
	side   int64   // +1, −1 or 0
	first  int64   // grid index of the first point
	count  int64   // number of grid points (≥ 1)
	offset float64 // distance from the inner end to the first point
	length float64 // Δ_ℓ (0 for the centre)
}

// pieces lays the grid points of [A−ρ, B+ρ] out in the pieces of bp.
func (p piecewiseSampler) pieces(bp Breakpoints) []plmPiece {
	h, r := p.step, p.rhoSteps
	idx := func(v float64, up bool) int64 { // ⌊v/h⌋ or ⌈v/h⌉, exact
		if up {
			return int64(math.Ceil(v / h))
		}
		return int64(math.Floor(v / h))
	}
	f := bp.F()
	var ps []plmPiece
	if lo, hi := idx(f, true)-r, idx(f, false)+r; hi >= lo {
		ps = append(ps, plmPiece{first: lo, count: hi - lo + 1})
	}
	for l := 1; l < len(bp.Up); l++ {
		prev, cur := bp.Up[l-1], bp.Up[l]
		lo, hi := idx(prev, false)+1+r, idx(cur, false)+r // u_{ℓ−1} < y−ρ ≤ u_ℓ
		if cur > prev && hi >= lo {
			ps = append(ps, plmPiece{level: int64(l), side: 1, first: lo, count: hi - lo + 1,
				offset: float64(lo-r)*h - prev, length: cur - prev})
		}
	}
	for l := 1; l < len(bp.Down); l++ {
		prev, cur := bp.Down[l-1], bp.Down[l]
		lo, hi := idx(cur, true)-r, idx(prev, true)-1-r // d_ℓ ≤ y+ρ < d_{ℓ−1}
		if cur < prev && hi >= lo {
			ps = append(ps, plmPiece{level: int64(l), side: -1, first: hi, count: hi - lo + 1,
				offset: prev - float64(hi+r)*h, length: prev - cur})
		}
	}
	return ps
}

// ratio returns the in-piece ratio exponent εh/(2Δ_ℓ): a PLM piece's
// point j (from the inner end) has weight ∝ exp(−ratio·j).
func (p piecewiseSampler) ratio(pc plmPiece) float64 { return p.c * p.step / pc.length }

// logWeight returns the log of the total weight of the piece's points.
func (p piecewiseSampler) logWeight(pc plmPiece) float64 {
	n := float64(pc.count)
	switch {
	case pc.side == 0 && p.kind == plmKind:
		return -p.c + math.Log(n)
	case pc.side == 0:
		return math.Log(n)
	case p.kind == invKind:
		return -p.c*float64(pc.level) + math.Log(n)
	}
	// PLM: exp(−c(ℓ + offset/Δ)) · Σ_{j<n} r^j, r = exp(−ratio).
	a := p.ratio(pc)
	geometric := 0.0 // log Σ r^j = log(expm1(−n·a)/expm1(−a))
	if pc.count > 1 {
		geometric = math.Log(math.Expm1(-n*a) / math.Expm1(-a))
	}
	return -p.c*(float64(pc.level)+pc.offset/pc.length) + geometric
}

// sample draws one output for the breakpoints bp (validated by the caller).
func (p piecewiseSampler) sample(src noise.Source, bp Breakpoints) (float64, error) {
	pp, err := p.prepare(bp)
	if err != nil {
		return 0, err
	}
	return pp.draw(src)
}

// preparedPiecewise is the distribution of one release, ready for draws:
// the pieces, their weights, and the in-piece geometric laws built as
// pieces are drawn. It is not safe for concurrent use.
type preparedPiecewise struct {
	p         piecewiseSampler
	pieces    []plmPiece
	table     noise.DyadicTable
	geometric map[int]noise.Dlap
}

// prepare lays out the pieces of bp and weighs them.
func (p piecewiseSampler) prepare(bp Breakpoints) (*preparedPiecewise, error) {
	ps := p.pieces(bp)
	lw := make([]float64, len(ps))
	for i, pc := range ps {
		lw[i] = p.logWeight(pc)
	}
	t, err := noise.NewDyadicTable(lw)
	if err != nil {
		return nil, err
	}
	return &preparedPiecewise{p: p, pieces: ps, table: t, geometric: map[int]noise.Dlap{}}, nil
}

// draw returns one output, clamped to the range (post-processing).
func (pp *preparedPiecewise) draw(src noise.Source) (float64, error) {
	i, j, err := pp.drawPoint(src)
	if err != nil {
		return 0, err
	}
	pc := pp.pieces[i]
	step := pc.side
	if step == 0 {
		step = 1
	}
	y := float64(pc.first+step*j) * pp.p.step
	return mech.Clamp(y, pp.p.rng.Lower, pp.p.rng.Upper), nil
}

// drawPoint returns the drawn piece and the index j of the point in it,
// counted from the inner end (from the lowest point in the centre).
func (pp *preparedPiecewise) drawPoint(src noise.Source) (int, int64, error) {
	i := pp.table.Draw(src)
	pc := pp.pieces[i]
	switch {
	case pc.count == 1:
		return i, 0, nil
	case pc.side == 0 || pp.p.kind == invKind:
		return i, int64(noise.Uniform(src, uint64(pc.count))), nil
	}
	d, ok := pp.geometric[i]
	if !ok {
		var err error
		if d, err = noise.NewDlap(1, pp.p.ratio(pc)); err != nil {
			return 0, 0, err
		}
		pp.geometric[i] = d
	}
	return i, truncatedGeometric(src, d, pc.count), nil
}

// truncatedGeometric returns j ∈ [0, n) with P[j] ∝ exp(−j/β), β the scale
// of d: a geometric variable of ratio exp(−1/β) reduced mod n (exactly the
// truncated law, as Σ_m r^(j+mn) ∝ r^j), drawn as the non-negative half of
// the exact discrete Laplace d (dlap.go). d is built for the in-piece
// ratio a = εh/(2Δ_ℓ) with its scale 1/a rounded up by at most a relative
// 2^−54, which moves the point weights by at most n·a·2^−54 ≈ ε·2^−55.
func truncatedGeometric(src noise.Source, d noise.Dlap, n int64) int64 {
	for {
		negative, y := d.Sample(src)
		if negative {
			continue
		}
		_, rem := bits.Div64(y.Hi%uint64(n), y.Lo, uint64(n))
		return int64(rem)
	}
}

// expectedAbsError returns E|M(x) − f(x)| of the continuous mechanism for
// bp before the final clamp (digest §2.3): Σ_pieces P(piece)·(distance
// from f to its inner end + mean offset inside it), with mean offset
// Δ·(1/c − 1/(e^c − 1)) for PLM, Δ/2 for INV and ρ/2 in the centre. The
// grid mechanism differs from it by O(h).
func (p piecewiseSampler) expectedAbsError(bp Breakpoints) float64 {
	c, rho, f := p.c, p.rho(), bp.F()
	inPiece := 0.5
	mass := 1.0 // common factor of a unit-length piece at level 0
	if p.kind == plmKind {
		inPiece = 1/c - 1/math.Expm1(c)
		mass = -math.Expm1(-c) / c
	}
	centre := 2 * rho
	if p.kind == plmKind {
		centre *= math.Exp(-c)
	}
	total, sum := centre, centre*rho/2
	add := func(level int, inner, length float64) {
		if length <= 0 {
			return
		}
		w := math.Exp(-c*float64(level)) * length * mass
		total += w
		sum += w * (math.Abs(inner-f) + length*inPiece)
	}
	for l := 1; l < len(bp.Up); l++ {
		add(l, bp.Up[l-1]+rho, bp.Up[l]-bp.Up[l-1])
	}
	for l := 1; l < len(bp.Down); l++ {
		add(l, bp.Down[l-1]-rho, bp.Down[l-1]-bp.Down[l])
	}
	return sum / total
}
