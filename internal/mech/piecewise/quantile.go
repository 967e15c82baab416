package piecewise

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Quantile is the piecewise Laplace mechanism (or, built by
// NewInverseSensitivityQuantile, the inverse sensitivity mechanism) for
// PERCENTILE_CONT(q) of a column clamped to public bounds [L, U]; q = ½ is
// MEDIAN (average of the two middle values for even n). Guarantee: ε-DP
// under add/remove of one row, n private (piecewise.go; δ = 0).
//
// Statistic. With x_(1) ≤ … ≤ x_(n) padded as X(r) = L for r ≤ 0 and U for
// r > n, f(x) = Interp_X(1 + q(n−1)), Interp_X(p) = X(⌊p⌋) + {p}·(X(⌊p⌋+1)
// − X(⌊p⌋)); f(∅) = L (any public value works; L keeps the formulas below
// exact, digest §3.2 review note).
//
// Breakpoints (ours; the digest gives the nearest-rank version, this is the
// interpolated one, and tests check it against brute force over every
// dataset within distance 3 on a small grid). f is symmetric and
// nondecreasing in every value, so the largest f within ℓ additions or
// removals is reached by deleting the i smallest values and inserting ℓ−i
// copies of U: any other deletion leaves elementwise smaller order
// statistics, any other insertion a smaller value. That dataset has
// N = n+ℓ−2i values and its sorted k-th value is X(i+k), so its f is
// Interp_X(i + 1 + q(N−1)), whose position is linear in i: the maximum over
// the valid i (0 ≤ i ≤ min(ℓ, n), N ≥ 1) is at one end of the range. The
// empty dataset (reachable for ℓ ≥ n) has f = L, which never raises u.
// Mirrored: d_ℓ deletes the largest and inserts L, position
// (i−ℓ) + 1 + q(N−1), and d_ℓ = L once ℓ ≥ n. These are the exact sup and
// inf over the ball, so V3 holds; each candidate is computed exactly and
// rounded to nearest once, which commutes with max and min (monotone).
// Beyond the public depth K (DefaultDepth) the tail merges:
// u_K = U and d_K = L exactly.
//
// Window. Every position lies within (K−1)·max(q, 1−q) of 1 + q(n−1), so
// the ranks read lie in r−K … r+K, r = ⌊q(n−1)⌋ + 1: Window asks for one
// more on each side. At ε = 1, [L, U] = [0, 1000] and ρ = ½, K = 60.
type Quantile struct {
	bounds  mech.Bounds
	q       float64
	depth   int64
	sampler piecewiseSampler
}

// NewQuantile returns the piecewise Laplace mechanism for quantile
// q ∈ [0, 1] of values clamped to b, with ε ≥ 2^−16 and smoothing ρ ≥ 0
// (DefaultRho), at depth DefaultDepth.
func NewQuantile(b mech.Bounds, q, epsilon, rho float64) (*Quantile, error) {
	return newBreakpointQuantile(plmKind, b, q, epsilon, rho)
}

// newBreakpointQuantile builds the PLM or INV quantile.
func newBreakpointQuantile(kind piecewiseKind, b mech.Bounds, q, epsilon, rho float64) (*Quantile, error) {
	if !(q >= 0 && q <= 1) {
		return nil, fmt.Errorf("%w: %v, must be in [0, 1]", mech.ErrInvalidQuantile, q)
	}
	s, err := newPiecewiseSampler(kind, b, epsilon, rho)
	if err != nil {
		return nil, err
	}
	return &Quantile{bounds: b, q: q, depth: DefaultDepth(b, epsilon, s.rho()), sampler: s}, nil
}

// DefaultRho returns the smoothing the planner should use for a column:
// half the resolution of an integer column (½), else 2^−30·(U−L), which
// only separates exact ties (digest §2.7).
func DefaultRho(b mech.Bounds, integer bool) float64 {
	if integer {
		return 0.5
	}
	return (b.Upper - b.Lower) * 0x1p-30
}

// Epsilon returns the ε of one release.
func (m *Quantile) Epsilon() float64 { return m.sampler.epsilon }

// Rho returns the effective smoothing (ρ rounded to the output grid).
func (m *Quantile) Rho() float64 { return m.sampler.rho() }

// Depth returns the tail depth K.
func (m *Quantile) Depth() int64 { return m.depth }

// Window returns the ranks the mechanism reads: r−K−1 … r+K+2.
func (m *Quantile) Window() mech.RankWindowSpec {
	return mech.RankWindowSpec{Quantile: m.q, Below: m.depth + 1, Above: m.depth + 2}
}

// Breakpoints returns u_0…u_K and d_0…d_K for the column whose window is w.
func (m *Quantile) Breakpoints(w mech.SortedWindow) (Breakpoints, error) {
	if err := w.Check(m.bounds, m.Window().Ranks(w.Count)); err != nil {
		return Breakpoints{}, err
	}
	n, k := w.Count, m.depth
	at := func(r int64) (float64, error) {
		v, ok := w.At(m.bounds, r)
		if !ok {
			return 0, fmt.Errorf("%w: rank %d of %d outside the window", mech.ErrWindowMismatch, r, n)
		}
		return v, nil
	}
	up, down := make([]float64, k+1), make([]float64, k+1)
	f := m.bounds.Lower
	if n > 0 {
		var err error
		if f, err = m.interpolate(at, 0, n-1); err != nil {
			return Breakpoints{}, err
		}
	}
	up[0], down[0] = f, f
	for l := int64(1); l < k; l++ {
		up[l], down[l] = up[l-1], down[l-1]
		top := min(l, n, (n+l-1)/2) // largest valid number of deletions
		for _, i := range []int64{0, top} {
			if i < 0 || n+l-2*i < 1 {
				continue
			}
			hi, err := m.interpolate(at, i, n+l-2*i-1)
			if err != nil {
				return Breakpoints{}, err
			}
			lo, err := m.interpolate(at, i-l, n+l-2*i-1)
			if err != nil {
				return Breakpoints{}, err
			}
			up[l], down[l] = math.Max(up[l], hi), math.Min(down[l], lo)
		}
		if l >= n {
			down[l] = m.bounds.Lower // the empty dataset
		}
	}
	up[k], down[k] = m.bounds.Upper, m.bounds.Lower
	return Breakpoints{Up: up, Down: down}, nil
}

// interpolate returns Interp_X(i + 1 + q·c) rounded to nearest, computed
// exactly.
func (m *Quantile) interpolate(at func(int64) (float64, error), i, c int64) (float64, error) {
	// Fast path: q·c exact in float64 with fractional part 0 or ½.
	if qc := m.q * float64(c); math.FMA(m.q, float64(c), -qc) == 0 && qc < 0x1p52 {
		whole := math.Floor(qc)
		k := i + 1 + int64(whole)
		x0, err := at(k)
		if err != nil || qc == whole {
			return x0, err
		}
		if qc-whole == 0.5 {
			x1, err := at(k + 1)
			return (x0 + x1) / 2, err // rounds once: x0+x1 is rounded, /2 is exact
		}
	}
	qc := new(big.Rat).Mul(new(big.Rat).SetFloat64(m.q), new(big.Rat).SetInt64(c))
	whole := new(big.Int).Quo(qc.Num(), qc.Denom()) // ⌊qc⌋, qc ≥ 0
	k := i + 1 + whole.Int64()
	x0, err := at(k)
	if err != nil {
		return 0, err
	}
	frac := qc.Sub(qc, new(big.Rat).SetInt(whole))
	if frac.Sign() == 0 {
		return x0, nil
	}
	x1, err := at(k + 1)
	if err != nil {
		return 0, err
	}
	r0 := new(big.Rat).SetFloat64(x0)
	v := new(big.Rat).Sub(new(big.Rat).SetFloat64(x1), r0)
	v.Mul(v, frac).Add(v, r0)
	f, _ := v.Float64()
	return f, nil
}

// Release draws the quantile from the window: a point of [L, U] on the
// mechanism's grid.
func (m *Quantile) Release(src noise.Source, w mech.SortedWindow) (float64, error) {
	bp, err := m.Breakpoints(w)
	if err != nil {
		return 0, err
	}
	if err := bp.validate(m.bounds); err != nil {
		return 0, err
	}
	return m.sampler.sample(src, bp)
}

// ExpectedAbsError returns the analytic E|M − f| of the continuous
// mechanism on this column, before the clamp to [L, U] (for benchmarks and
// tests; it reads private data and must never be released).
func (m *Quantile) ExpectedAbsError(w mech.SortedWindow) (float64, error) {
	bp, err := m.Breakpoints(w)
	if err != nil {
		return 0, err
	}
	return m.sampler.expectedAbsError(bp), nil
}
