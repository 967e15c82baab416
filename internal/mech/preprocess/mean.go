package preprocess

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Mean is the sensitivity-preprocessing mean: g(D) + Lap(Δ/ε)
// with g the preprocessing function of the mean (preprocess.go), ε-DP
// under add/remove of one row.
//
// The paper computes g in O(n²) (Algorithm 2 over all windows of the sorted
// data). This file computes it exactly in O(n log n), by the following
// result (ours, not the paper's; proof below, and checked against
// Algorithm 1 and Algorithm 2 in tests).
//
// Theorem. Let x₁ ≤ … ≤ x_n, S_i = x₁+…+x_i, and the points
// P_i = (i, y_i) with y_i = S_i − Δ·i², i = 0…n. For s < t let σ(s,t) =
// (y_t − y_s)/(t − s), the slope from P_s to P_t, and let σ(t,t) = E(t) =
// c − 2Δt. Then
//
//	g(D) = nΔ + min_{0≤t≤n} max_{0≤s≤t} σ(s,t).
//
// Proof. By Lemma 5.2 only windows W = (x_{s+1},…,x_t) matter, with
// g(W) = clamp(mean(W), g(W−min) − Δ, g(W−max) + Δ) and g(∅) = c. Since
// mean(W) = σ(s,t) + Δ(s+t), the substitution ĝ(s,t) = g(W) − Δ(s+t)
// (and ĝ(p,p) = E(p) for the empty windows) turns the recursion into
//
//	ĝ(s,t) = min(ĝ(s,t−1), max(ĝ(s+1,t), σ(s,t))),   Δ-free.
//
// In it σ(s,t) is the average of d_{s+1..t}, d_i = x_i − Δ(2i−1), and E is
// nonincreasing. For such arrays, on every sub-triangle s ≤ s' ≤ t' ≤ t,
// V⁺ = min_{t'} max_{s'≤t'} σ and V⁻ = max_{s'} min_{t'≥s'} σ satisfy:
//
//  1. V⁻ ≤ V⁺ (weak duality): for s' ≤ t” the pair (s', t”) links the two;
//     for s' > t”, E(s') ≤ E(t”) does.
//  2. V⁺ ≤ V⁻, by induction on t−s. Suppose V⁺(s,t) > τ = V⁻(s,t). Then
//     some row s₂ < t has σ(s₂,·) > τ on [s₂, t−1] (as V⁻(s,t−1) =
//     V⁺(s,t−1) ≥ V⁺(s,t) > τ), and some column t₂ > s has σ(·,t₂) ≤ τ on
//     [s+1, t₂] (as V⁺(s+1,t) = V⁻(s+1,t) ≤ τ). If s < s₂ ≤ t₂ < t,
//     σ(s₂,t₂) is both. If s₂ > t₂, E(s₂) > τ ≥ E(t₂) contradicts E
//     nonincreasing. If s₂ = s, some t₁ has σ(s,t₁) ≤ τ, forcing t₁ = t,
//     and some s₁ > s has σ(s₁,t) > τ; s₁ < t makes σ(s,t) an average of
//     σ(s,s₁) > τ and σ(s₁,t) > τ, and s₁ = t gives E(t) > τ ≥ V⁻(t,t).
//     t₂ = t is the mirror image. Every case is contradictory.
//  3. ĝ = V⁺ = V⁻, by induction: with ĝ(s,t−1) = V⁺(s,t−1) ≥ ĝ(s+1,t) =
//     V⁻(s+1,t) (1.), min(ĝ(s,t−1), max(ĝ(s+1,t), σ(s,t))) lies between
//     V⁻(s,t) and V⁺(s,t), which are equal (2.).
//
// Algorithm. For each t, max_{s<t} σ(s,t) is the steepest segment from an
// earlier point to P_t, attained at a vertex of the lower convex hull of
// P_0…P_{t−1}: a binary search on the hull (O(log n)), after which P_t is
// pushed (amortised O(1)). With the sort, O(n log n) in all.
//
// Exactness (one exact path). g is defined on the grid indices of the
// values (mech.Grid: k = ⌊(clamp(v) − L)/h + ½⌋, h a public power of two,
// 0 ≤ k ≤ 2^30, a fixed per-row map), with the centre and Δ on that grid
// (c = index of the centre, d = ⌊Δ/h⌋, so d·h ≤ Δ). Both ways of
// computing it use only exact integers from the database: when all indices
// fit in a window of length n·d inside [c − n·d, c + n·d] (Lemma 5.13,
// decided exactly in int128 from the exact minimum and maximum indices) g
// is the mean Σk/n, with Σk the database's exact integer sum
// (sqlrewrite.GridSums); otherwise the hull runs over the sorted indices,
// where y_i and every slope comparison are exact in int128 (n·d < 2^31 grid
// units there, so every cross product stays far below 2^127 for n < 2^35).
// Which branch runs depends on the data, but both compute the same exact
// g (the hull returns Σk/n whenever the lemma applies), so the branch
// decides only what is read (the plan says so), never the value. g is
// then L + g·h, rounded once to float64: neighbouring releases move apart
// by at most d·h ≤ Δ plus one ulp each, which the noise covers (Δ plus two
// ulps of the largest value, preprocess.go).
//
// Fetch (DESIGN.md §5). The database returns n and Σk exactly and the
// smallest and largest indices; NeedsRows decides from them whether the
// lemma settles g. Otherwise the mechanism needs the whole sorted column of
// indices: there is no exact row-sparse plan (digest §6.2).
type Mean struct {
	params        Params
	epsilon       float64
	grid          mech.Grid
	center, delta int64
	noise         *noise.Laplace
}

// Summary holds what the database computes on the grid before any row is
// fetched: the exact count and sums of the indices, and the smallest and
// largest index (ignored when the count is 0).
type Summary struct {
	Sums     mech.GridSums
	Min, Max int64
}

// SummaryOf returns the summary and the sorted indices of values on grid
// g, as the database computes them (for tests and benchmarks, which hold
// the data).
func SummaryOf(g mech.Grid, values []float64) (Summary, []int64) {
	idx, sums := g.Indices(values)
	s := Summary{Sums: sums}
	if len(idx) > 0 {
		s.Min, s.Max = idx[0], idx[len(idx)-1]
	}
	return s, idx
}

// NewMean returns the preprocessing mean for p and ε.
func NewMean(p Params, epsilon float64) (*Mean, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	grid, err := mech.NewGrid(p.Bounds)
	if err != nil {
		return nil, err
	}
	top := grid.Lower + float64(grid.Top)*grid.Unit
	noise, err := newPreprocessNoise(p.Delta, math.Max(p.Bounds.Magnitude(), math.Abs(top)), epsilon)
	if err != nil {
		return nil, err
	}
	return &Mean{params: p, epsilon: epsilon, grid: grid, center: grid.Index(p.Center),
		delta: gridDelta(p.Delta, grid.Unit), noise: noise}, nil
}

// gridDelta returns ⌊Δ/unit⌋ capped at 2^40: the grid sensitivity, never
// above Δ. Capping changes nothing: once d ≥ Top, which the cap exceeds,
// g equals the statistic for every dataset (it is then already
// d-sensitive, digest §1.4).
func gridDelta(delta, unit float64) int64 {
	return int64(math.Min(math.Floor(delta/unit), 0x1p40))
}

// Epsilon returns the ε of one release.
func (m *Mean) Epsilon() float64 { return m.epsilon }

// Scale returns the Laplace scale of the noise added to g.
func (m *Mean) Scale() float64 { return m.noise.Scale() }

// Grid returns the public grid the database maps values to.
func (m *Mean) Grid() mech.Grid { return m.grid }

// NeedsRows reports whether the sorted indices are needed, or whether the
// summary settles g exactly (Lemma 5.13 from n and the extreme indices).
func (m *Mean) NeedsRows(s Summary) (bool, error) {
	if err := s.check(m.grid); err != nil {
		return false, err
	}
	if s.Sums.Count == 0 {
		return false, nil
	}
	return !meanSettled(s.Sums.Count, s.Min, s.Max, m.center, m.delta), nil
}

// Value returns g(D): from the summary alone when NeedsRows is false
// (sorted may then be nil), else from the sorted indices.
func (m *Mean) Value(s Summary, sorted []int64) (float64, error) {
	needs, err := m.NeedsRows(s)
	if err != nil {
		return 0, err
	}
	n := s.Sums.Count
	var g *big.Rat
	switch {
	case n == 0:
		g = new(big.Rat).SetInt64(m.center)
	case !needs:
		g = new(big.Rat).SetFrac(s.Sums.Sum, big.NewInt(n))
	default:
		if err := s.checkRows(m.grid, sorted); err != nil {
			return 0, err
		}
		if g, err = preprocessMeanGrid(sorted, m.center, m.delta); err != nil {
			return 0, err
		}
	}
	v, _ := m.grid.Value(g).Float64()
	return v, nil
}

// Release returns g(D) + Lap(Δ/ε) on the Laplace grid.
func (m *Mean) Release(src noise.Source, s Summary, sorted []int64) (float64, error) {
	g, err := m.Value(s, sorted)
	if err != nil {
		return 0, err
	}
	return m.noise.Release(src, g), nil
}

// check validates a summary against the grid.
func (s Summary) check(g mech.Grid) error {
	if err := s.Sums.CheckSquares(g); err != nil {
		return err
	}
	if s.Sums.Count > 0 && !(0 <= s.Min && s.Min <= s.Max && s.Max <= g.Top) {
		return fmt.Errorf("%w: extreme indices %d, %d outside [0, %d]", mech.ErrInvalidInput, s.Min, s.Max, g.Top)
	}
	return nil
}

// checkRows validates the sorted indices against the summary: all n of
// them, ascending, in [0, Top], with the summary's extremes and sum.
func (s Summary) checkRows(g mech.Grid, sorted []int64) error {
	n := s.Sums.Count
	if int64(len(sorted)) != n {
		return fmt.Errorf("%w: %d sorted indices needed, got %d", mech.ErrInvalidInput, n, len(sorted))
	}
	if err := g.CheckIndices(sorted); err != nil {
		return err
	}
	var sum exact.Int128
	for _, k := range sorted {
		sum = sum.Add(exact.Int(k))
	}
	if n > 0 && (sorted[0] != s.Min || sorted[n-1] != s.Max || sum.BigInt().Cmp(s.Sums.Sum) != 0) {
		return fmt.Errorf("%w: sorted indices disagree with the summary", mech.ErrInvalidInput)
	}
	return nil
}

// meanSettled reports the Lemma 5.13 condition on the grid: all values fit
// in a window of length n·d inside [c − n·d, c + n·d].
func meanSettled(n, lo, hi, c, d int64) bool {
	nd := exact.Int(n).Mul64(d)
	return exact.Int(hi-lo).Cmp(nd) <= 0 && exact.Int(c-lo).Cmp(nd) <= 0 && exact.Int(hi-c).Cmp(nd) <= 0
}

// maxHullRows is the largest n for which the hull's int128 products cannot
// overflow (Exactness in the type comment).
const maxHullRows = 1 << 35

// preprocessMeanGrid returns g(D) in grid units, exactly, for sorted grid
// values xs, centre c and grid sensitivity d.
func preprocessMeanGrid(xs []int64, c, d int64) (*big.Rat, error) {
	n := int64(len(xs))
	if n == 0 || d == 0 {
		return new(big.Rat).SetInt64(c), nil
	}
	var total exact.Int128
	for _, x := range xs {
		total = total.Add(exact.Int(x))
	}
	if meanSettled(n, xs[0], xs[n-1], c, d) {
		return new(big.Rat).SetFrac(total.BigInt(), big.NewInt(n)), nil
	}
	if n >= maxHullRows {
		return nil, fmt.Errorf("%w: %d rows exceed the exact preprocessing limit 2^35", mech.ErrInvalidInput, n)
	}
	// y[i] = S_i − d·i².
	y := make([]exact.Int128, n+1)
	var sum exact.Int128
	for i := int64(1); i <= n; i++ {
		sum = sum.Add(exact.Int(xs[i-1]))
		y[i] = sum.Sub(exact.Int(i).Mul64(i).Mul64(d))
	}
	// slope returns σ(a, b) for a < b.
	slope := func(a, b int64) exact.Ratio { return exact.Ratio{Num: y[b].Sub(y[a]), Den: b - a} }
	hull := make([]int64, 0, 64)
	best := exact.Ratio{Num: exact.Int(c), Den: 1} // H(0) = E(0) = c
	for t := int64(0); t <= n; t++ {
		if t > 0 {
			// Steepest segment from the hull to P_t: the first vertex k
			// whose outgoing edge is at least as steep as its segment to P_t.
			lo, hi := 0, len(hull)-1
			for lo < hi {
				k := (lo + hi) / 2
				if slope(hull[k], hull[k+1]).Cmp(slope(hull[k], t)) < 0 {
					lo = k + 1
				} else {
					hi = k
				}
			}
			h := exact.Ratio{Num: exact.Int(c).Sub(exact.Int(2 * t).Mul64(d)), Den: 1} // E(t)
			if s := slope(hull[lo], t); s.Cmp(h) > 0 {
				h = s
			}
			if h.Cmp(best) < 0 {
				best = h
			}
		}
		// Push P_t onto the lower hull, dropping vertices on or above the
		// chord from their predecessor to P_t.
		for len(hull) >= 2 && slope(hull[len(hull)-2], hull[len(hull)-1]).Cmp(slope(hull[len(hull)-1], t)) >= 0 {
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, t)
	}
	// g = n·d + best.
	num := best.Num.Add(exact.Int(n).Mul64(d).Mul64(best.Den))
	return new(big.Rat).SetFrac(num.BigInt(), big.NewInt(best.Den)), nil
}
