package preprocess

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Median is the sensitivity-preprocessing median: g(D) + Lap(Δ/ε)
// with g the preprocessing function of the median (preprocess.go), ε-DP
// under add/remove of one row; the Laplace scale is Δ plus the two-ulp
// rounding allowance over ε. The median of an even number of values is the
// average of the two middle ones (PERCENTILE_CONT(0.5)), the paper's
// convention.
//
// Algorithm (Lemmas 5.2, 5.4, 5.5; walk formulation of digest §2.3, checked
// against the exponential Algorithm 1 in tests). Write a window [l, r] of
// sorted ranks by s = l + r: its median M(s) depends on s only. From the
// whole column (s = n+1) the walk drops the maximum (s−1) when M(s) ≥ c and
// the minimum (s+1) otherwise, down to one value; g is then the rate-limited
// tracker g ← clamp(M(s_j), g−Δ, g+Δ) run from g(∅) = c back up the path.
// The walk moves s monotonically to the first crossing of c, then
// alternates between the two windows on either side of it.
//
// Ranks read. Let S = ⌈|med − c|/Δ⌉. If the first S+1 windows of the walk
// stay on the side of med, g = min_{j<S}(M(s_j) + jΔ) (or the mirror max):
// deeper windows have g ≥ c and cannot win (digest, one-sided shortcut).
// Otherwise the crossing comes within S+1 steps. Either way the walk reads
// only ranks within S/2 + 2 of the middle. With values clamped to [L, U]
// and c inside, S ≤ ⌈(U−L)/Δ⌉, a public number, which gives Window. With
// the default Δ = (U−L)/ñ the window is about ñ ranks: the whole column.
// Only a larger Δ buys a narrower fetch (digest §6.1).
type Median struct{ preprocessCore }

// NewMedian returns the preprocessing median for p and ε.
func NewMedian(p Params, epsilon float64) (*Median, error) {
	core, err := newPreprocessCore(p, epsilon)
	if err != nil {
		return nil, err
	}
	return &Median{core}, nil
}

// Window returns the ranks the mechanism reads (see the type comment):
// ⌈S_max/2⌉ + 2 on each side of the lower middle rank, S_max = ⌈(U−L)/Δ⌉
// on the grid.
func (m *Median) Window() mech.RankWindowSpec {
	if m.delta == 0 {
		return mech.RankWindowSpec{Quantile: 0.5}
	}
	span := m.grid.value(m.params.Bounds.Upper) - m.grid.value(m.params.Bounds.Lower)
	half := (span+m.delta-1)/m.delta/2 + 3
	return mech.RankWindowSpec{Quantile: 0.5, Below: half, Above: half}
}

// Value returns g(D) for the column whose window is w: the deterministic
// part of the release, exported for tests and benchmarks.
func (m *Median) Value(w mech.SortedWindow) (float64, error) {
	if err := w.Check(m.params.Bounds, m.Window().Ranks(w.Count)); err != nil {
		return 0, err
	}
	g, err := preprocessMedianGrid(w.Count, func(r int64) (int64, error) {
		v, ok := w.At(m.params.Bounds, r)
		if !ok {
			return 0, fmt.Errorf("%w: the median walk reads rank %d of %d, outside [%d, %d]",
				mech.ErrWindowMismatch, r, w.Count, w.First, w.Ranks().Last)
		}
		return m.grid.value(v), nil
	}, m.center, m.delta)
	if err != nil {
		return 0, err
	}
	return m.grid.float(g), nil
}

// Release returns g(D) + Lap(Δ/ε) on the Laplace grid.
func (m *Median) Release(src noise.Source, w mech.SortedWindow) (float64, error) {
	g, err := m.Value(w)
	if err != nil {
		return 0, err
	}
	return m.noise.Release(src, g), nil
}

// preprocessMedianGrid computes g on grid integers: n values whose rank r
// (1-based) has value at(r), centre c and grid sensitivity d ≥ 0. It reads
// only the ranks the walk visits.
func preprocessMedianGrid(n int64, at func(int64) (int64, error), c, d int64) (int64, error) {
	if n == 0 || d == 0 {
		return c, nil
	}
	// mid returns M(s), the median of any window [l, r] with l + r = s.
	mid := func(s int64) (int64, error) {
		lo, err := at(s / 2)
		if err != nil || s%2 == 0 {
			return lo, err
		}
		hi, err := at(s/2 + 1)
		return (lo + hi) / 2, err // both even: exact
	}
	// next moves the walk: drop the maximum when M(s) ≥ c, else the minimum.
	next := func(s, v int64) int64 {
		if v >= c {
			return s - 1
		}
		return s + 1
	}
	s := n + 1
	med, err := mid(s)
	if err != nil || med == c {
		return c, err
	}
	up := med > c
	span := med - c
	if !up {
		span = -span
	}
	steps := (span + d - 1) / d // S ≥ 1
	// Monotone phase: windows j = 0..S while they stay on med's side.
	var meds []int64
	crossed := false
	for j := int64(0); j <= steps && j < n; j++ {
		v, err := mid(s)
		if err != nil {
			return 0, err
		}
		if (v >= c) != up {
			crossed = true
			break
		}
		meds = append(meds, v)
		s = next(s, v)
	}
	g := c
	switch {
	case !crossed && int64(len(meds)) == n:
		// The walk ended on med's side: run the tracker over all of it.
	case !crossed:
		// S+1 windows on med's side: the one-sided shortcut.
		best := meds[0]
		for j := int64(1); j < steps; j++ {
			if up {
				best = min(best, meds[j]+j*d)
			} else {
				best = max(best, meds[j]-j*d)
			}
		}
		return best, nil
	default:
		// Crossed at window jc = len(meds) with position s: from there the
		// walk alternates between s and the window it came from.
		jc := int64(len(meds))
		a, err := mid(s)
		if err != nil {
			return 0, err
		}
		b, err := mid(next(s, a))
		if err != nil {
			return 0, err
		}
		for j := n - 1; j >= jc; j-- {
			v := a
			if (j-jc)%2 == 1 {
				v = b
			}
			g = min(max(v, g-d), g+d)
		}
	}
	for j := len(meds) - 1; j >= 0; j-- {
		g = min(max(meds[j], g-d), g+d)
	}
	return g, nil
}
