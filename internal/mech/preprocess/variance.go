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
// Exactness (one exact path). g is defined on the grid indices of the
// values (mech.Grid: k = ⌊(clamp(v) − L)/h + ½⌋ ∈ [0, 2^30], h a public
// power of two, a fixed per-row map), in units of h², with d = ⌊Δ/h²⌋ (so
// d·h² ≤ Δ). Window sums and m·Q − S² are exact in int128 for n < 2^31;
// candidates are compared in float64 with a relative error bound of
// 10^−14, and the few within it of the best are compared exactly. When
// the aggregate check below settles g = Var, Var is computed exactly from
// the database's exact integer sums n, Σk, Σk² (sqlrewrite.GridSums) as
// (nΣk² − (Σk)²)/n²: the same exact value the window enumeration returns
// then, so the branch (which depends on the data) decides only what is
// read, never the value. g·h² is rounded once to float64.
//
// Fetch (DESIGN.md §5). NeedsRows settles g = Var from the exact sums and
// the extreme indices when the digest's aggregate check passes: V ≤ nΔ and
// min(V, R²(H_n − H_w)) ≤ (n−w)Δ for every w < n, with R = max − min and
// H the harmonic numbers (Lemma 6.10 bounds what any trim can remove). It
// is evaluated in float64 on V and R rounded from their exact values, with
// a relative margin of 10^−6 (and d·h² in place of Δ), so that rounding
// cannot pass it falsely. Otherwise the sorted indices are needed.
type Variance struct {
	params  Params
	epsilon float64
	grid    mech.Grid
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
	grid, err := mech.NewGrid(p.Bounds)
	if err != nil {
		return nil, err
	}
	half := math.Max(p.Bounds.HalfRange(), float64(grid.Top)*grid.Unit/2)
	noise, err := newPreprocessNoise(p.Delta, half*half, epsilon)
	if err != nil {
		return nil, err
	}
	return &Variance{params: p, epsilon: epsilon, grid: grid, delta: varianceDelta(p.Delta, grid.Unit), noise: noise}, nil
}

// varianceDelta returns ⌊Δ/h²⌋ capped at 2^62 > Top²/4, the largest
// variance on the grid: a Δ beyond it makes g the variance itself either
// way.
func varianceDelta(delta, unit float64) int64 {
	d := new(big.Rat).Quo(new(big.Rat).SetFloat64(delta), new(big.Rat).Mul(new(big.Rat).SetFloat64(unit), new(big.Rat).SetFloat64(unit)))
	q := new(big.Int).Quo(d.Num(), d.Denom())
	if q.Cmp(big.NewInt(1<<62)) > 0 {
		return 1 << 62
	}
	return q.Int64()
}

// Epsilon returns the ε of one release.
func (m *Variance) Epsilon() float64 { return m.epsilon }

// Scale returns the Laplace scale of the noise added to g.
func (m *Variance) Scale() float64 { return m.noise.Scale() }

// Grid returns the public grid the database maps values to.
func (m *Variance) Grid() mech.Grid { return m.grid }

// unitRat returns h² as a rational.
func (m *Variance) unit2() *big.Rat {
	u := new(big.Rat).SetFloat64(m.grid.Unit)
	return u.Mul(u, u)
}

// exactVariance returns (nQ − S²)/n² in grid units², exactly.
func exactVariance(s mech.GridSums) *big.Rat {
	n := big.NewInt(s.Count)
	num := new(big.Int).Mul(n, s.SumSquares)
	num.Sub(num, new(big.Int).Mul(s.Sum, s.Sum))
	return new(big.Rat).SetFrac(num, n.Mul(n, n))
}

// NeedsRows reports whether the sorted indices are needed, or whether the
// summary settles g = Var.
func (m *Variance) NeedsRows(s Summary) (bool, error) {
	if err := s.check(m.grid); err != nil {
		return false, err
	}
	n := s.Sums.Count
	if n <= 1 {
		return false, nil
	}
	u2 := m.unit2()
	v, _ := new(big.Rat).Mul(exactVariance(s.Sums), u2).Float64()
	r, _ := new(big.Rat).Mul(new(big.Rat).SetInt64(s.Max-s.Min), new(big.Rat).SetFloat64(m.grid.Unit)).Float64()
	delta, _ := new(big.Rat).Mul(new(big.Rat).SetInt64(m.delta), u2).Float64()
	return !varianceSettled(n, v, r, delta), nil
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

// Value returns g(D): the exact variance of the indices when NeedsRows is
// false (sorted may then be nil), else the closed form over the sorted
// indices; either way rounded once from the exact value.
func (m *Variance) Value(s Summary, sorted []int64) (float64, error) {
	needs, err := m.NeedsRows(s)
	if err != nil {
		return 0, err
	}
	var g *big.Rat
	switch {
	case s.Sums.Count <= 1:
		g = new(big.Rat)
	case !needs:
		g = exactVariance(s.Sums)
	default:
		if err := s.checkRows(m.grid, sorted); err != nil {
			return 0, err
		}
		if g, err = preprocessVarianceGrid(sorted, m.delta); err != nil {
			return 0, err
		}
	}
	v, _ := g.Mul(g, m.unit2()).Float64()
	return v, nil
}

// Release returns g(D) + Lap(Δ/ε) on the Laplace grid.
func (m *Variance) Release(src noise.Source, s Summary, sorted []int64) (float64, error) {
	g, err := m.Value(s, sorted)
	if err != nil {
		return 0, err
	}
	return m.noise.Release(src, g), nil
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
