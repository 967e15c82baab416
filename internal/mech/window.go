package mech

import (
	"fmt"
	"math"
)

// Windows of order statistics (DESIGN.md §5). The median and quantile
// mechanisms need the row count n and a block of sorted values around a
// target rank, never the whole column. The planner asks each mechanism for
// its RankWindowSpec (a function of public inputs only: the quantile, ε,
// the bounds, a noisy count), has the database compute n and the ranks
// Spec.Ranks(n) in one statement (so both come from the same snapshot),
// and passes them as a SortedWindow; the mechanism checks that the window
// covers every rank it reads and fails with ErrWindowMismatch otherwise.

// RankRange is the inclusive range of 1-based ranks [First, Last]; it is
// empty when Last < First.
type RankRange struct {
	First, Last int64
}

// Len returns the number of ranks in r.
func (r RankRange) Len() int64 { return max(r.Last-r.First+1, 0) }

// RankWindowSpec describes the ranks a windowed mechanism reads on a column
// of n values: r(n)−Below … r(n)+Above, clipped to [1, n], around the
// target rank r(n) = ⌊Quantile·(n−1)⌋ + 1 of PERCENTILE_CONT (the lower of
// the two ranks it interpolates; for the median, ⌊(n+1)/2⌋). Below and
// Above are public: they depend on the mechanism's parameters only, so the
// width of every fetch is public. They include one rank of margin on each
// side, so a database that computes r(n) with a rounding slip still covers
// the ranks.
type RankWindowSpec struct {
	Quantile     float64
	Below, Above int64
}

// Ranks returns the ranks the mechanism reads when the column has n values.
func (s RankWindowSpec) Ranks(n int64) RankRange {
	if n <= 0 {
		return RankRange{First: 1, Last: 0}
	}
	r := PercentileRank(s.Quantile, n)
	return RankRange{First: max(r-s.Below, 1), Last: min(r+s.Above, n)}
}

// Width returns the largest number of ranks the spec can ask for.
func (s RankWindowSpec) Width() int64 { return s.Below + s.Above + 1 }

// percentileRank returns r = ⌊q·(n−1)⌋ + 1 exactly, for q ∈ [0, 1], n ≥ 1.
func PercentileRank(q float64, n int64) int64 {
	h := q * float64(n-1)
	f := math.Floor(h)
	// q·(n−1) may have rounded up onto an integer: the fused q·(n−1) − f
	// has the sign of the exact difference.
	if math.FMA(q, float64(n-1), -f) < 0 {
		f--
	}
	return int64(f) + 1
}

// SortedWindow is what the database returns for a windowed mechanism: the
// number n of (non-NULL) values selected, and the clamped values of ranks
// First … First+len(Values)−1 in ascending order, all from one snapshot.
type SortedWindow struct {
	Count  int64
	First  int64
	Values []float64
}

// Ranks returns the ranks the window holds.
func (w SortedWindow) Ranks() RankRange {
	return RankRange{First: w.First, Last: w.First + int64(len(w.Values)) - 1}
}

// WindowOf returns the window of sorted that spec needs: a helper for
// tests, benchmarks and callers that hold the whole sorted column.
func WindowOf(spec RankWindowSpec, sorted []float64) SortedWindow {
	n := int64(len(sorted))
	r := spec.Ranks(n)
	if r.Len() == 0 {
		return SortedWindow{Count: n, First: 1}
	}
	return SortedWindow{Count: n, First: r.First, Values: sorted[r.First-1 : r.Last]}
}

// check validates w against bounds b and the ranks the mechanism needs.
func (w SortedWindow) Check(b Bounds, need RankRange) error {
	if w.Count < 0 {
		return fmt.Errorf("%w: negative count %d", ErrInvalidInput, w.Count)
	}
	have := w.Ranks()
	if len(w.Values) > 0 && (w.First < 1 || have.Last > w.Count) {
		return fmt.Errorf("%w: window ranks [%d, %d] outside [1, %d]", ErrInvalidInput, have.First, have.Last, w.Count)
	}
	if need.Len() > 0 && (need.First < have.First || need.Last > have.Last) {
		return fmt.Errorf("%w: need ranks [%d, %d] of %d, got [%d, %d]",
			ErrWindowMismatch, need.First, need.Last, w.Count, have.First, have.Last)
	}
	for i, v := range w.Values {
		if !(v >= b.Lower && v <= b.Upper) || (i > 0 && v < w.Values[i-1]) {
			return fmt.Errorf("%w: window value %d (%v) unsorted or outside %v", ErrInvalidInput, i, v, b)
		}
	}
	return nil
}

// at returns the value of rank r (1-based) padded with the bounds: L for
// r ≤ 0, U for r > n. It reports false for a rank inside [1, n] that the
// window does not hold.
func (w SortedWindow) At(b Bounds, r int64) (float64, bool) {
	switch {
	case r <= 0:
		return b.Lower, true
	case r > w.Count:
		return b.Upper, true
	case r < w.First || r >= w.First+int64(len(w.Values)):
		return 0, false
	}
	return w.Values[r-w.First], true
}
