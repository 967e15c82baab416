package preprocess

import (
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Variance is the sensitivity-preprocessing population variance
// (VAR_POP): g(D) + Lap(Δ/ε), ε-DP under add/remove of one row. g(∅) = 0
// is fixed (the algorithm needs it, digest P13), so Center is ignored.
//
// Algorithm. Lemma 6.4 gives g(D) = min(Var D, g(D−min) + Δ, g(D−max) + Δ)
// (Algorithm 3, O(n²)). Unrolled (digest §2.6, checked against Algorithm 1
// in tests) it is a minimum over the windows of the sorted data:
//
//	g(D) = min( nΔ, min_{a,b ≥ 0, a+b < n} Var(x_{a+1..n−b}) + (a+b)Δ ).
//
// Only trims t = a+b ≤ T can win, where T is found by the refined pruning of
// the digest: with U ≥ g the best value of a greedy peeling, every window
// with a, b ≤ T contains the core x_{T+1..n−T}, so its variance is at least
// L_T = ((n−2T)/n)·Var(core) (Fact 6.3), and T ← ⌊(U − L_T)/Δ⌋ can only
// shrink. The enumeration then costs O(T²) after O(n) prefix sums.
//
// No exact sub-quadratic algorithm is known to us: unlike the mean
// (preprocess_mean.go) the window variances have no Monge structure and the
// best left end is not monotone in the right end (both checked by brute
// force in tests), which rules out the standard speed-ups (SMAWK,
// divide-and-conquer optimisation). BenchmarkPreprocessVariance shows where
// the pruning keeps T small (concentrated data, Δ of the order of 10·Var/n)
// and where it degenerates to O(n²) (spread data, small Δ).
//
// Exactness. Values go to a 32-bit fixed-point grid (a per-row map, moving
// a value by at most 2^−32·max(|L|,|U|)); window sums and m·Q − S² are exact
// in int128 for n < 2^31; candidates are compared in float64 with a
// relative error bound of 10^−14, and the few within it of the best are
// compared exactly.
//
// Fetch (DESIGN.md §5). NeedsRows settles g = VAR_POP from COUNT, MIN, MAX
// and VAR_POP when the digest's aggregate check passes: V ≤ nΔ and
// min(V, R²(H_n − H_w)) ≤ (n−w)Δ for every w < n, with R = max − min and
// H the harmonic numbers (Lemma 6.10 bounds what any trim can remove); it is
// evaluated with a relative margin of 10^−6 so that rounding cannot pass it
// falsely. Otherwise the sorted column is needed.
type Variance struct {
	params  Params
	epsilon float64
	grid    varianceGrid
	delta   int64
	noise   *noise.Laplace
}

// NewVariance returns the preprocessing variance for p and ε.
func NewVariance(p Params, epsilon float64) (*Variance, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	p.Center = p.Bounds.Lower // unused; keeps validate's centre check quiet
	if err := p.validate(); err != nil {
		return nil, err
	}
	vmax := p.Bounds.HalfRange() * p.Bounds.HalfRange()
	noise, err := newPreprocessNoise(p.Delta, vmax, epsilon)
	if err != nil {
		return nil, err
	}
	grid := newVarianceGrid(p.Bounds)
	return &Variance{params: p, epsilon: epsilon, grid: grid, delta: grid.delta(p.Delta), noise: noise}, nil
}

// Epsilon returns the ε of one release.
func (m *Variance) Epsilon() float64 { return m.epsilon }

// Scale returns the Laplace scale of the noise added to g.
func (m *Variance) Scale() float64 { return m.noise.Scale() }

// NeedsRows reports whether the sorted column is needed, or whether the
// aggregates (COUNT, MIN, MAX, VAR_POP) settle g = VAR_POP.
func (m *Variance) NeedsRows(s Summary) (bool, error) {
	if err := s.check(m.params.Bounds); err != nil {
		return false, err
	}
	if !(s.VarPop >= 0) {
		return false, fmt.Errorf("%w: VAR_POP %v", mech.ErrInvalidInput, s.VarPop)
	}
	return s.Count > 1 && !varianceSettled(s.Count, s.VarPop, s.Max-s.Min, m.params.Delta), nil
}

// varianceSettled is the aggregate check of the type comment.
func varianceSettled(n int64, v, r, delta float64) bool {
	const margin = 1e-6
	v *= 1 + margin
	if v > float64(n)*delta*(1-margin) {
		return false
	}
	// Walk w down from n−1, accumulating H_n − H_w = Σ_{i=w+1..n} 1/i.
	// Once R²(H_n − H_w) ≥ V the minimum is V, and V ≤ (n−w)Δ holds for
	// every smaller w too.
	r2 := r * r * (1 + margin)
	h := 0.0
	for w := n - 1; w >= 1; w-- {
		h += 1 / float64(w+1)
		bound := math.Min(v, r2*h*(1+margin))
		if bound > float64(n-w)*delta*(1-margin) {
			return false
		}
		if bound == v {
			return true
		}
	}
	return true
}

// Value returns g(D): VAR_POP when NeedsRows is false (sorted may then be
// nil), else the exact closed form over the sorted clamped column.
func (m *Variance) Value(s Summary, sorted []float64) (float64, error) {
	needs, err := m.NeedsRows(s)
	if err != nil {
		return 0, err
	}
	switch {
	case s.Count <= 1:
		return 0, nil
	case !needs:
		return s.VarPop, nil
	case int64(len(sorted)) != s.Count:
		return 0, fmt.Errorf("%w: the variance needs all %d sorted values, got %d", mech.ErrInvalidInput, s.Count, len(sorted))
	}
	xs, err := m.grid.values(m.params.Bounds, sorted)
	if err != nil {
		return 0, err
	}
	g, err := preprocessVarianceGrid(xs, m.delta)
	if err != nil {
		return 0, err
	}
	return exact.ScaledFloat(g, m.grid.unit2), nil
}

// Release returns g(D) + Lap(Δ/ε) on the Laplace grid.
func (m *Variance) Release(src noise.Source, s Summary, sorted []float64) (float64, error) {
	g, err := m.Value(s, sorted)
	if err != nil {
		return 0, err
	}
	return m.noise.Release(src, g), nil
}

// varianceGrid maps values to integers k = round(v/u), |k| ≤ 2^31, with
// the public unit u = 2^(e−31), 2^(e−1) ≤ max(|L|,|U|) < 2^e. Variances
// are then in units of u² (unit2).
type varianceGrid struct {
	unit, unit2 float64
}

// newVarianceGrid returns the variance grid of bounds b.
func newVarianceGrid(b mech.Bounds) varianceGrid {
	_, e := math.Frexp(b.Magnitude())
	u := math.Ldexp(1, max(e-31, -500))
	return varianceGrid{unit: u, unit2: u * u}
}

// delta returns ⌊Δ/u²⌋ capped at 2^62 ≥ (U−L)²/(4u²), the largest variance
// in [L, U]: a Δ beyond it makes g the variance itself either way.
func (g varianceGrid) delta(d float64) int64 {
	return int64(math.Min(math.Floor(d/g.unit2), 0x1p62))
}

// values maps sorted values to grid integers, checking them.
func (g varianceGrid) values(b mech.Bounds, sorted []float64) ([]int64, error) {
	out := make([]int64, len(sorted))
	for i, v := range sorted {
		if !(v >= b.Lower && v <= b.Upper) || (i > 0 && v < sorted[i-1]) {
			return nil, fmt.Errorf("%w: value %d (%v) unsorted or outside %v", mech.ErrInvalidInput, i, v, b)
		}
		out[i] = int64(math.RoundToEven(v / g.unit))
	}
	return out, nil
}

// maxVarianceRows bounds n so that m·Q − S² fits in int128.
const maxVarianceRows = 1 << 31

// windowSums holds prefix sums of values and squares (int128, exact).
type windowSums struct {
	s, q []exact.Int128
}

// newWindowSums returns the prefix sums of xs.
func newWindowSums(xs []int64) windowSums {
	w := windowSums{s: make([]exact.Int128, len(xs)+1), q: make([]exact.Int128, len(xs)+1)}
	for i, x := range xs {
		w.s[i+1] = w.s[i].Add(exact.Int(x))
		w.q[i+1] = w.q[i].Add(exact.Int(x).Mul64(x))
	}
	return w
}

// ssdm returns m·SSD = m·Σx² − (Σx)² of the window [lo, hi) (m = hi−lo ≥ 1).
func (w windowSums) ssdm(lo, hi int64) exact.Int128 {
	m := hi - lo
	s := w.s[hi].Sub(w.s[lo])
	// |s| < 2^62 for n < 2^31, so s·s fits after splitting off the sign.
	sh, sl := s.Abs()
	if sh != 0 || sl>>62 != 0 {
		panic("mech: window sum out of range")
	}
	s2 := exact.Int(int64(sl)).Mul64(int64(sl))
	return w.q[hi].Sub(w.q[lo]).Mul64(m).Sub(s2)
}

// approxVar returns the window variance in float64 (relative error
// below 2^−50).
func (w windowSums) approxVar(lo, hi int64) float64 {
	m := float64(hi - lo)
	return w.ssdm(lo, hi).Float64() / (m * m)
}

// trimCandidate is one term of the closed form: window [lo, hi) with
// t = n − (hi−lo) values trimmed, or the empty window (hi == lo).
type trimCandidate struct{ lo, hi int64 }

// preprocessVarianceGrid returns g(D) in units of u², exactly, for sorted
// grid values xs and grid sensitivity d.
func preprocessVarianceGrid(xs []int64, d int64) (*big.Rat, error) {
	n := int64(len(xs))
	if n <= 1 || d == 0 {
		return new(big.Rat), nil // Var of one value, or of any single-value window
	}
	if n >= maxVarianceRows {
		return nil, fmt.Errorf("%w: %d rows exceed the exact preprocessing limit 2^31", mech.ErrInvalidInput, n)
	}
	w := newWindowSums(xs)
	df := float64(d)
	cost := func(c trimCandidate) float64 {
		t := float64(n - (c.hi - c.lo))
		if c.hi == c.lo {
			return t * df
		}
		return w.approxVar(c.lo, c.hi) + t*df
	}
	// Greedy peeling for an upper bound U: drop the end whose removal
	// lowers the variance more, while the trim cost stays below U.
	bestC := trimCandidate{lo: 0, hi: 0}
	best := cost(bestC)
	for c := (trimCandidate{lo: 0, hi: n}); c.hi-c.lo >= 1; {
		if v := cost(c); v < best {
			best, bestC = v, c
		}
		if float64(n-(c.hi-c.lo))*df >= best || c.hi-c.lo == 1 {
			break
		}
		if w.approxVar(c.lo+1, c.hi) <= w.approxVar(c.lo, c.hi-1) {
			c.lo++
		} else {
			c.hi--
		}
	}
	trim := pruneVarianceTrim(w, n, best, df)
	// One pass over every window with at most trim values removed, keeping
	// the candidates whose float cost is within the error bound of the
	// smallest so far (each float cost is within a relative 10^−15 of the
	// exact one, so the exact minimum is among those kept).
	const tol = 1e-14
	type scored struct {
		c trimCandidate
		v float64
	}
	near := []scored{{bestC, best}}
	consider := func(c trimCandidate) {
		v := cost(c)
		if v > best*(1+3*tol) {
			return
		}
		if v < best {
			best = v
			near = slices.DeleteFunc(near, func(s scored) bool { return s.v > best*(1+3*tol) })
		}
		near = append(near, scored{c, v})
	}
	for t := int64(0); t <= trim; t++ {
		for a := int64(0); a <= t; a++ {
			consider(trimCandidate{lo: a, hi: n - (t - a)})
		}
	}
	var exact *big.Rat
	for _, s := range near {
		v := exactTrimCost(w, n, d, s.c)
		if exact == nil || v.Cmp(exact) < 0 {
			exact = v
		}
	}
	return exact, nil
}

// pruneVarianceTrim returns a trim depth T such that no window with more
// than T values removed costs less than upper (the refined pruning of the
// type comment, with margins so that float rounding can only enlarge T).
func pruneVarianceTrim(w windowSums, n int64, upper, d float64) int64 {
	const margin = 1e-9
	limit := func(lower float64) int64 {
		t := (upper*(1+margin) - lower*(1-margin)) / d
		return int64(math.Min(math.Floor(t)+1, float64(n-1)))
	}
	trim := limit(0)
	for {
		if 2*trim >= n-1 {
			return trim
		}
		core := w.approxVar(trim, n-trim)
		lower := float64(n-2*trim) / float64(n) * core
		next := min(trim, limit(lower))
		if next == trim {
			return trim
		}
		trim = next
	}
}

// exactTrimCost returns Var(window) + t·d exactly.
func exactTrimCost(w windowSums, n, d int64, c trimCandidate) *big.Rat {
	m := c.hi - c.lo
	v := new(big.Rat).SetInt(new(big.Int).Mul(big.NewInt(n-m), big.NewInt(d)))
	if m == 0 {
		return v
	}
	mm := new(big.Int).Mul(big.NewInt(m), big.NewInt(m))
	return v.Add(v, new(big.Rat).SetFrac(w.ssdm(c.lo, c.hi).BigInt(), mm))
}
