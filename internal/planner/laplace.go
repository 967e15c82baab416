package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// laplaceMechanism releases counts and clamped sums with Laplace noise of
// scale Δ/ε (noise.DiscreteLaplace for counts, noise.Laplace otherwise), pure
// ε-DP under add/remove one row. Sensitivities, for a column with public
// bounds [L, U] and midpoint m = (L+U)/2:
//
//	count:                       1
//	count of distinct values:    1 (one row adds or removes at most one value)
//	Σ clamp(x):                  max(|L|, |U|)
//	Σ (clamp(x) - m):            (U-L)/2
//	Σ (clamp(x) - m)²:           ((U-L)/2)²
//
// (adding or removing one row adds or removes one term, bounded as shown).
// AVG and VARIANCE derive from these by post-processing (planner.Output).
//
// On a table with a privacy unit it reads max_rows_per_unit = k rows of
// each unit (Release.RowsPerUnit) and every sensitivity above is k times
// larger (laplace.ReleaseUnitCount and its siblings derive it): ε-DP under
// adding or removing all rows of one unit.
type laplaceMechanism struct{}

// scalesWithRows: the Laplace baselines are analysed for k-row changes.
func (laplaceMechanism) scalesWithRows() {}

func (laplaceMechanism) Name() string { return "laplace" }

func (laplaceMechanism) Guarantee() string {
	return "pure ε-DP: Laplace noise with global sensitivity on clamped values"
}

func (laplaceMechanism) NeedsDelta() bool { return false }

func (laplaceMechanism) Supports(s Statistic) bool {
	switch s.Kind {
	case StatCount, StatSum, StatCenteredSum, StatCenteredSumSquares, StatCountDistinct:
		return true
	}
	return false
}

func (laplaceMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	col := r.Stat.Column
	if col == nil {
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	}
	// COUNT(col) and COUNT(DISTINCT col) count the values col's reading
	// rule reads (SummaryTerm.Type), as col IS NULL reads the others.
	if r.Stat.Kind == StatCountDistinct {
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountDistinctValues, Column: col.Source, Type: col.Type}}
	}
	if r.Stat.Kind == StatCount {
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNonNull, Column: col.Source, Type: col.Type}}
	}
	return nil // the sum and the centred sums come exactly from the grid sums (Start)
}

func (laplaceMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (m laplaceMechanism) Reads(r *Release) string {
	if terms := m.Terms(r); len(terms) > 0 {
		return fmt.Sprintf("%d summary aggregate(s) computed by the database, no rows", len(terms))
	}
	if r.Stat.Kind == StatCenteredSumSquares {
		return "the exact integer sums n, Σk, Σk² of the values on the grid of the bounds, computed by the database (one query), no rows"
	}
	return "the exact integer sums n, Σk of the values on the grid of the bounds, computed by the database (one query), no rows"
}

func (laplaceMechanism) Start(src noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	var (
		noisy laplace.Noisy
		err   error
	)
	count := func() int64 { return int64(math.Round(terms[0])) }
	switch r.Stat.Kind {
	case StatCount, StatCountDistinct:
		noisy, err = laplace.ReleaseUnitCount(src, count(), r.rows(), r.Epsilon)
	case StatSum, StatCenteredSum, StatCenteredSumSquares:
		return onGrid(r)
	default:
		err = fmt.Errorf("laplace cannot release %s", r.Stat)
	}
	if err != nil {
		return nil, err
	}
	w := noisy.HalfWidth(Confidence)
	return finished{Estimate{Value: noisy.Value(), Low: noisy.Value() - w, High: noisy.Value() + w, HasInterval: true, Primitive: &noisy}}, nil
}

// onGrid is the step of a sum, a centred sum or a centred sum of squares:
// the exact grid sums of the column, then the release made from them
// exactly (laplace.ReleaseUnitSumOnGrid, ReleaseUnitCenteredSumOnGrid and
// ReleaseUnitCenteredSumOfSquaresOnGrid): the database's float sum rounds
// on every row, so neighbours' sums could differ by more than one row's
// value, and float sums differenced here would lose to cancellation more
// than the sensitivity.
func onGrid(r *Release) (Step, error) {
	return onGridSums(r, func(src noise.Source, g mech.Grid, s mech.GridSums) (Estimate, error) {
		release := laplace.ReleaseUnitSumOnGrid
		switch r.Stat.Kind {
		case StatCenteredSum:
			release = laplace.ReleaseUnitCenteredSumOnGrid
		case StatCenteredSumSquares:
			release = laplace.ReleaseUnitCenteredSumOfSquaresOnGrid
		}
		noisy, err := release(src, columnBounds(r), g, s, r.rows(), r.Epsilon)
		if err != nil {
			return Estimate{}, err
		}
		w := noisy.HalfWidth(Confidence)
		return Estimate{Value: noisy.Value(), Low: noisy.Value() - w, High: noisy.Value() + w, HasInterval: true, Primitive: &noisy}, nil
	})
}

// columnBounds returns the public bounds of the release's column.
func columnBounds(r *Release) mech.Bounds {
	lo, hi, _ := r.Stat.Column.Bounds()
	return mech.Bounds{Lower: lo, Upper: hi}
}
