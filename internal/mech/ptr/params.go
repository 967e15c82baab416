package ptr

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Propose-Test-Release (PTR): Dwork and Lei, "Differential Privacy and
// Robust Statistics" (STOC 2009; seed 001, digest
// papers/propose-test-release.md). Five mechanisms: the scale S
// (Scale, the interquartile range), the median M (Median), the
// α-trimmed mean TM (TrimmedMean) and linear regression, short-cut R_S
// (ShortcutRegression) and Hampel's L1 estimator R_H
// (HampelRegression). Each may answer ⊥ ("No Reply": refused = true);
// ⊥ is an output like any other and costs the full (ε, δ) (DESIGN.md §2).
//
// # The paradigm
//
// Propose a bin width; test privately how many rows must change before the
// statistic leaves its bin (a distance A with sensitivity 1); if
// A + noise passes a threshold, release the statistic with noise scaled to
// the bin width, else try a second grid shifted by half a bin, else ⊥.
// When A ≥ 2 every neighbour's statistic is in the same bin, so the bin
// width bounds the local sensitivity; when A ≤ 1 the test passes with
// probability at most δ0, which is what δ pays for.
//
// # Adaptation to dpproxy's privacy model (decisions; the paper differs)
//
//   - Neighbours add or remove one row, and n is private (DESIGN.md §2);
//     the paper substitutes one row and treats n as public. Every
//     constant the paper computes from n (log base, bin width, thresholds,
//     the cap K) is computed here from a public size N: a noisy count
//     released beforehand with its own ε (the planner pays it), or a
//     configured size hint (Params.Size). Ranks are computed from the
//     true n inside the database fetch, as the analysis requires (digest
//     P12): order statistics at ranks r(n) of the true count.
//   - Distances are re-derived for add/remove (ptr_distance.go): the
//     median's distance keeps its form and sensitivity 1; the spread's
//     distance moves both quantile ranks by k in opposite directions
//     (the digest's halving, P12), since one added row can move the two
//     quartile ranks in opposite directions. TM needs one more term
//     (ptr_trimmed.go) because its sensitivity depends on the count.
//   - Thresholds are set from the target δ, not the paper's "negligible"
//     (ln n)² + 1 (digest §2.3). The test noise is the exact discrete
//     Laplace DLap(1/ε) on the integer distance, and the threshold is the
//     smallest integer T with P[A + Z ≥ T] ≤ δ0 whenever A ≤ 1
//     (ptr_stability.go), computed from the sampler's exact tail.
//   - Distances are capped at a public K, so only windows of order
//     statistics around the needed ranks are read (DESIGN.md §5); see
//     ptr_stability.go for why the cap is private.
//   - Budgets are the digest's corrected ones (§1.5). A step's ε is the
//     release's ε divided by the number of steps, rounded down so that
//     the steps' exact sum is at most the release's ε (mech.EvenShare);
//     δ0 is each test's δ, split the same way:
//
//     mechanism              steps        δ of the release
//     S (Scale)           3            2δ0
//     M, own scale           6            4δ0
//     M, public scale        3            2δ0
//     TM                     4 (paper 3)  2δ0 + δ_tail, δ0 = δ/4, δ_tail ≤ δ/2
//     R_S, L coefficients    6L           4L·δ0
//     R_H, p = 2             11           8δ0 (fix F2 applied; F1 is not
//     needed under add/remove, see ptr_hampel.go)
//   - Regressions: the paper's partition into ⌊n/p⌋ blocks of exactly p
//     rows is not stable under add/remove (one added row shifts every
//     later block); rows are assigned to a public number of blocks at
//     random instead (ptrBlockFits), which makes the blocks' datasets
//     substitution neighbours of public size, the paper's own setting.
//   - Noise: every continuous release goes through the secure Laplace
//     (NewLaplace), never a floating-point inverse CDF; the scale S
//     releases log_b(IQR) on the Laplace grid and exponentiates it
//     (post-processing).
//   - Lazy evaluation (the second grid only after the first failed) has the
//     same output distribution as the paper's eager form; its timing
//     channel is out of scope (DESIGN.md §2).

// Params are the public inputs of the PTR column mechanisms (Scale,
// Median, TrimmedMean).
type Params struct {
	// Epsilon is the ε of the whole release: every test and release step
	// together. Each step gets Epsilon divided by the mechanism's number
	// of steps (see each constructor).
	Epsilon float64
	// Delta is the δ of the whole release, in (0, 0.5]: the tests'
	// thresholds (and TM's exponent κ) are derived from it.
	Delta float64
	// Size is the public stand-in N for the private row count: a noisy
	// count released beforehand (its ε is not part of Epsilon) or a
	// configured size hint. Values below 8 count as 8.
	// Any public number keeps the guarantee; a poor one only costs ⊥.
	Size float64
	// Bounds are the column's public bounds. The database clamps values to
	// them (a per-row map, so neighbours stay neighbours); they are the
	// universe of the distance computations and the outputs' range.
	Bounds mech.Bounds
}

// ptrMinSize is the smallest size the constants are computed for: ln N
// must be well above 0 for the log base 1 + 1/ln N.
const ptrMinSize = 8

// ptrMaxRange bounds the width of a column's bounds (and of a
// coefficient's), so that bin widths over ε stay inside the Laplace
// sampler's scale range [2^-960, 2^960].
const ptrMaxRange = 0x1p900

// validate checks p for a mechanism of the given number of steps.
func (p Params) validate(steps int) error {
	if err := ptrCheckBudget(p.Epsilon, p.Delta, p.Size, steps); err != nil {
		return err
	}
	return ptrCheckBounds(p.Bounds)
}

// ptrCheckBudget validates a release's ε, δ and public size for a
// mechanism of the given number of steps.
func ptrCheckBudget(epsilon, delta, size float64, steps int) error {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return err
	}
	if err := mech.CheckEpsilon(mech.EvenShare(epsilon, steps)); err != nil {
		return fmt.Errorf("per-step ε of %d steps: %w", steps, err)
	}
	if !(delta > 0 && delta <= 0.5) {
		return fmt.Errorf("%w: δ = %v, must be in (0, 0.5]", mech.ErrInvalidEpsilon, delta)
	}
	if math.IsNaN(size) || math.IsInf(size, 0) {
		return fmt.Errorf("%w: public size %v, must be finite", mech.ErrInvalidInput, size)
	}
	return nil
}

// ptrCheckBounds validates bounds for the PTR grids.
func ptrCheckBounds(b mech.Bounds) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if !(b.Upper-b.Lower <= ptrMaxRange) {
		return fmt.Errorf("%w: [%v, %v], width must be at most 2^900", mech.ErrInvalidBounds, b.Lower, b.Upper)
	}
	return nil
}

// ptrSize returns the size the constants are computed for.
func ptrSize(size float64) float64 { return math.Max(size, ptrMinSize) }

// Fetch says what a PTR mechanism reads from the database, all from one
// snapshot (digest P13). It depends on public inputs only.
type Fetch struct {
	// Windows are the rank windows of the sorted, clamped, non-NULL
	// column, resolved by the database with the true count n
	// (RankWindowSpec.Ranks); Data.Windows holds one SortedWindow per
	// spec, in this order. Their width is public (about 2K+7 ranks each,
	// K the distance cap): never the whole column.
	Windows []mech.RankWindowSpec
	// SumBetween asks for the exact sum Σk of the grid indices on Grid
	// (mech.Grid.Index) of the values ranked strictly between the last
	// rank of the first window and the first rank of the second (the
	// trimmed mean's middle), computed by the database in integers
	// (sqlrewrite.GridSums with Ranks).
	SumBetween bool
	// Grid is the grid of SumBetween: that of the column's bounds.
	Grid mech.Grid
	// AllRows means the mechanism needs every row (regression: each pair
	// with both values non-NULL, clamped to the columns' bounds). The
	// estimators need every row's values; no aggregate suffices.
	AllRows bool
}

// Data is what the database returned for a Fetch.
type Data struct {
	// Windows are the fetched windows, one per spec, same order, all with
	// the same Count n.
	Windows []mech.SortedWindow
	// SumBetween is the sum of grid indices the fetch asked for (nil or 0
	// when the windows touch or overlap).
	SumBetween *big.Int
}

// ptrOrder gives the order statistics x_(i) of a dataset of n values,
// padded with the universe's ends: x_(i) = lower for i ≤ 0 and upper for
// i > n (digest §2.1 uses ±∞; with values clamped to [lower, upper] every
// modified dataset stays in that universe, so the padding is exact).
type ptrOrder struct {
	n            int64
	lower, upper float64
	windows      []mech.SortedWindow
}

// ptrSortedOrder returns the order of a whole sorted slice.
func ptrSortedOrder(sorted []float64, b mech.Bounds) ptrOrder {
	n := int64(len(sorted))
	return ptrOrder{n: n, lower: b.Lower, upper: b.Upper, windows: []mech.SortedWindow{{Count: n, First: 1, Values: sorted}}}
}

// at returns x_(i). Callers check beforehand that the windows hold every
// rank they read (ptrCheckWindows); a rank outside them is a bug.
func (o ptrOrder) at(i int64) float64 {
	switch {
	case i <= 0:
		return o.lower
	case i > o.n:
		return o.upper
	}
	for _, w := range o.windows {
		if i >= w.First && i < w.First+int64(len(w.Values)) {
			return w.Values[i-w.First]
		}
	}
	panic(fmt.Sprintf("mech: PTR read rank %d of %d outside the checked windows", i, o.n))
}

// ptrCheckWindows validates the fetched windows against the specs' count
// and bounds, checks that window i covers the ranks need[i] (clipped to
// [1, n]), and returns the order statistics they give.
func ptrCheckWindows(d Data, b mech.Bounds, need []mech.RankRange) (ptrOrder, error) {
	if len(d.Windows) != len(need) {
		return ptrOrder{}, fmt.Errorf("%w: %d windows given, %d needed", mech.ErrWindowMismatch, len(d.Windows), len(need))
	}
	n := int64(0)
	if len(d.Windows) > 0 {
		n = d.Windows[0].Count
	}
	for i, w := range d.Windows {
		if w.Count != n {
			return ptrOrder{}, fmt.Errorf("%w: windows from different counts %d and %d", mech.ErrInvalidInput, n, w.Count)
		}
		r := need[i]
		r.First, r.Last = max(r.First, 1), min(r.Last, n)
		if err := w.Check(b, r); err != nil {
			return ptrOrder{}, err
		}
	}
	return ptrOrder{n: n, lower: b.Lower, upper: b.Upper, windows: d.Windows}, nil
}

// ptrAround returns the ranks [r−k, r+k].
func ptrAround(r, k int64) mech.RankRange { return mech.RankRange{First: r - k, Last: r + k} }
