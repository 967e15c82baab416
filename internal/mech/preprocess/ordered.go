package preprocess

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// OrderedStatistic names a database-ordered statistic without a faster
// algorithm than the paper's: Ordered computes it with Algorithm 2.
type OrderedStatistic int

// The statistics of Ordered.
const (
	// TrimmedMean is the α-trimmed mean: on k sorted values, the mean of
	// the values left after dropping the t = ⌊α·k⌋ smallest and t largest.
	// The paper never defines it (digest §8.8); this is the digest's
	// definition, monotone in every value, so database-ordered.
	TrimmedMean OrderedStatistic = iota + 1
	// Minimum is the smallest value.
	Minimum
	// Maximum is the largest value.
	Maximum
)

// Ordered is the sensitivity-preprocessing release of a trimmed
// mean, minimum or maximum: g(D) + Lap(Δ/ε), ε-DP under add/remove of one
// row (preprocess.go), g(∅) = Center.
//
// Algorithm 2 of the paper: for a database-ordered f, Lemma 5.2 makes
// g(D−max) the binding upper constraint and g(D−min) the lower one, so g
// only needs the n(n+1)/2 contiguous windows of the sorted data, row by row
// (O(n) memory). It runs in exact rational arithmetic on the fixed-point
// grid, O(n²) operations: meant for the modest n these statistics are
// used with (no SQL aggregate reaches them yet), and a per-query cost the
// caller must budget for (the time depends on n, which DESIGN.md §2 leaves
// out of scope as a side channel).
type Ordered struct {
	stat          OrderedStatistic
	alpha         float64
	params        Params
	epsilon       float64
	grid          fixedPoint
	center, delta int64
	noise         *noise.Laplace
}

// NewOrdered returns the mechanism for stat (alpha ∈ [0, ½) is
// the trimming fraction of TrimmedMean, ignored otherwise), p and ε.
func NewOrdered(stat OrderedStatistic, alpha float64, p Params, epsilon float64) (*Ordered, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if stat < TrimmedMean || stat > Maximum {
		return nil, fmt.Errorf("%w: unknown ordered statistic %d", mech.ErrInvalidInput, stat)
	}
	if stat == TrimmedMean && !(alpha >= 0 && alpha < 0.5) {
		return nil, fmt.Errorf("%w: trimming fraction %v, must be in [0, 1/2)", mech.ErrInvalidQuantile, alpha)
	}
	noise, err := newPreprocessNoise(p.Delta, p.Bounds.Magnitude(), epsilon)
	if err != nil {
		return nil, err
	}
	grid := newFixedPoint(p.Bounds)
	return &Ordered{
		stat: stat, alpha: alpha, params: p, epsilon: epsilon, grid: grid,
		center: grid.value(p.Center), delta: grid.delta(p.Delta), noise: noise,
	}, nil
}

// Epsilon returns the ε of one release.
func (m *Ordered) Epsilon() float64 { return m.epsilon }

// Value returns g(D) for the sorted clamped column.
func (m *Ordered) Value(sorted []float64) (float64, error) {
	xs, err := m.grid.values(m.params.Bounds, sorted)
	if err != nil {
		return 0, err
	}
	f := m.windowStatistic(xs)
	g := preprocessOrderedGrid(int64(len(xs)), f, new(big.Rat).SetInt64(m.center), new(big.Rat).SetInt64(m.delta))
	return exact.ScaledFloat(g, m.grid.unit), nil
}

// Release returns g(D) + Lap(Δ/ε) on the Laplace grid.
func (m *Ordered) Release(src noise.Source, sorted []float64) (float64, error) {
	g, err := m.Value(sorted)
	if err != nil {
		return 0, err
	}
	return m.noise.Release(src, g), nil
}

// windowStatistic returns f on the window of k values starting at index i
// (0-based) of xs, exactly.
func (m *Ordered) windowStatistic(xs []int64) func(i, k int64) *big.Rat {
	switch m.stat {
	case Minimum:
		return func(i, _ int64) *big.Rat { return new(big.Rat).SetInt64(xs[i]) }
	case Maximum:
		return func(i, k int64) *big.Rat { return new(big.Rat).SetInt64(xs[i+k-1]) }
	}
	prefix := make([]exact.Int128, len(xs)+1)
	for i, x := range xs {
		prefix[i+1] = prefix[i].Add(exact.Int(x))
	}
	return func(i, k int64) *big.Rat {
		t := trimCount(m.alpha, k)
		sum := prefix[i+k-t].Sub(prefix[i+t])
		return new(big.Rat).SetFrac(sum.BigInt(), big.NewInt(k-2*t))
	}
}

// trimCount returns ⌊α·k⌋ exactly (α·k may round up onto an integer).
func trimCount(alpha float64, k int64) int64 {
	t := math.Floor(alpha * float64(k))
	if math.FMA(alpha, float64(k), -t) < 0 {
		t--
	}
	return int64(t)
}

// preprocessOrderedGrid is Algorithm 2: g of the n sorted values for a
// database-ordered f given on windows (start i, length k), centre c and
// sensitivity d, exactly.
func preprocessOrderedGrid(n int64, f func(i, k int64) *big.Rat, c, d *big.Rat) *big.Rat {
	prev := make([]*big.Rat, n+1) // g of the windows of length k−1
	for i := range prev {
		prev[i] = c
	}
	up, lo := new(big.Rat), new(big.Rat)
	for k := int64(1); k <= n; k++ {
		cur := make([]*big.Rat, n-k+1)
		for i := int64(0); i+k <= n; i++ {
			up.Add(prev[i], d)   // g(W − max) + Δ
			lo.Sub(prev[i+1], d) // g(W − min) − Δ
			v := f(i, k)
			switch {
			case v.Cmp(up) > 0:
				v.Set(up)
			case v.Cmp(lo) < 0:
				v.Set(lo)
			}
			cur[i] = v
		}
		prev = cur
	}
	return prev[0]
}
