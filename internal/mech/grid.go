package mech

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
)

// Grid is a public fixed-point grid on which the database computes exact
// integer sums (sqlrewrite.GridSums): a value v maps to its index
//
//	k = ⌊(clamp(v, Lower, Upper) − Lower)/Unit + ½⌋ ∈ [0, Top],
//
// with float64 operations that are the same IEEE expression in the
// database and in Index, Unit a power of two (so the division is exact) and
// Top ≤ 2^30. The map is fixed per row, so neighbouring datasets map to
// neighbouring multisets of indices; it moves no value by more than about
// Unit/2 < 2^−30·(Upper−Lower) (plus the rounding of clamp(v) − Lower).
// Mechanisms whose proofs need exact arithmetic define their statistic on
// the indices and never see a float sum.
type Grid struct {
	Lower, Upper float64
	Unit         float64
	Top          int64
}

// GridSteps is the largest Top of a grid.
const GridSteps = 1 << 30

// NewGrid returns the grid of bounds b: the smallest power of two
// Unit ≥ 2^−30·(U−L), so Top ≤ 2^30.
func NewGrid(b Bounds) (Grid, error) {
	if err := b.Validate(); err != nil {
		return Grid{}, err
	}
	width := b.Upper - b.Lower
	frac, e := math.Frexp(width * 0x1p-30)
	if frac == 0.5 {
		e-- // already a power of two
	}
	unit := math.Ldexp(1, e)
	if math.IsInf(width, 0) || unit < 0x1p-1000 {
		return Grid{}, fmt.Errorf("%w: [%v, %v] has no fixed-point grid (width overflows or underflows)", ErrInvalidBounds, b.Lower, b.Upper)
	}
	g := Grid{Lower: b.Lower, Upper: b.Upper, Unit: unit}
	g.Top = g.Index(b.Upper)
	return g, nil
}

// Index returns the grid index of v, computed as the database computes it:
// clamp, subtract Lower, divide by Unit, add ½, floor.
func (g Grid) Index(v float64) int64 {
	return int64(math.Floor((Clamp(v, g.Lower, g.Upper)-g.Lower)/g.Unit + 0.5))
}

// Value returns Lower + k·Unit exactly, for an exact grid quantity k.
func (g Grid) Value(k *big.Rat) *big.Rat {
	v := new(big.Rat).Mul(k, new(big.Rat).SetFloat64(g.Unit))
	return v.Add(v, new(big.Rat).SetFloat64(g.Lower))
}

// GridSums are the exact sums the database returns for a grid: the number
// of non-NULL values n and Σk, Σk² over their indices.
type GridSums struct {
	Count           int64
	Sum, SumSquares *big.Int
}

// Check validates sums against the grid: n ≥ 0 indices in [0, Top] have
// 0 ≤ Σk ≤ n·Top, 0 ≤ Σk² ≤ n·Top² and n·Σk² ≥ (Σk)² (Cauchy–Schwarz);
// Σk² only when it was fetched (SumSquares nil: a sum-only fetch, which
// CheckSquares refuses). A failure is a backend bug, never a property of
// the data.
func (s GridSums) Check(g Grid) error {
	if s.Count < 0 || s.Sum == nil {
		return fmt.Errorf("%w: grid sums incomplete (n = %d)", ErrInvalidInput, s.Count)
	}
	n := big.NewInt(s.Count)
	maxSum := new(big.Int).Mul(n, big.NewInt(g.Top))
	if s.Sum.Sign() < 0 || s.Sum.Cmp(maxSum) > 0 {
		return fmt.Errorf("%w: grid sum %v inconsistent with %d indices in [0, %d]", ErrInvalidInput, s.Sum, s.Count, g.Top)
	}
	if s.SumSquares == nil {
		return nil
	}
	maxSquares := new(big.Int).Mul(maxSum, big.NewInt(g.Top))
	if s.SumSquares.Sign() < 0 || s.SumSquares.Cmp(maxSquares) > 0 ||
		new(big.Int).Mul(n, s.SumSquares).Cmp(new(big.Int).Mul(s.Sum, s.Sum)) < 0 {
		return fmt.Errorf("%w: grid sums %v, %v inconsistent with %d indices in [0, %d]", ErrInvalidInput, s.Sum, s.SumSquares, s.Count, g.Top)
	}
	return nil
}

// CheckSquares is Check for a use of Σk²: it must have been fetched.
func (s GridSums) CheckSquares(g Grid) error {
	if s.SumSquares == nil {
		return fmt.Errorf("%w: grid sums without Σk² (n = %d)", ErrInvalidInput, s.Count)
	}
	return s.Check(g)
}

// CheckIndices validates fetched indices: in [0, Top] and ascending.
func (g Grid) CheckIndices(ks []int64) error {
	for i, k := range ks {
		if k < 0 || k > g.Top || (i > 0 && k < ks[i-1]) {
			return fmt.Errorf("%w: grid index %d unsorted or outside [0, %d]", ErrInvalidInput, k, g.Top)
		}
	}
	return nil
}

// Indices maps values to their sorted grid indices and their exact sums,
// as the database would (for tests and benchmarks, which hold the data).
func (g Grid) Indices(values []float64) ([]int64, GridSums) {
	idx := make([]int64, len(values))
	// k ≤ 2^30: Σk fits 64 bits for n < 2^33, Σk² is kept in 128 bits.
	var sum, hi, lo uint64
	for i, v := range values {
		idx[i] = g.Index(v)
		k := uint64(idx[i])
		sum += k
		var carry uint64
		lo, carry = bits.Add64(lo, k*k, 0)
		hi += carry
	}
	squares := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	squares.Add(squares, new(big.Int).SetUint64(lo))
	slices.Sort(idx)
	return idx, GridSums{Count: int64(len(values)), Sum: new(big.Int).SetUint64(sum), SumSquares: squares}
}
