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
type laplaceMechanism struct{}

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
	if r.Stat.Kind == StatCountDistinct {
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountDistinctValues, Column: col.Source}}
	}
	lo, hi, _ := col.Bounds()
	// The centred sums count the values the clamped sums read (an
	// unreadable value, e.g. text in a SQLite REAL column, counts as NULL).
	count := sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountNumbers, Column: col.Source}
	sum := sqlrewrite.SummaryTerm{Kind: sqlrewrite.ClampedSum, Column: col.Source, Lower: lo, Upper: hi}
	squares := sqlrewrite.SummaryTerm{Kind: sqlrewrite.ClampedSumSquares, Column: col.Source, Lower: lo, Upper: hi}
	switch r.Stat.Kind {
	case StatCount:
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNonNull, Column: col.Source}}
	case StatSum:
		return []sqlrewrite.SummaryTerm{sum}
	case StatCenteredSum:
		return []sqlrewrite.SummaryTerm{count, sum}
	default: // StatCenteredSumSquares
		return []sqlrewrite.SummaryTerm{count, sum, squares}
	}
}

func (laplaceMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (m laplaceMechanism) Reads(r *Release) string {
	return fmt.Sprintf("%d summary aggregate(s) computed by the database, no rows", len(m.Terms(r)))
}

func (laplaceMechanism) Start(src noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	var (
		noisy laplace.Noisy
		err   error
	)
	count := func() int64 { return int64(math.Round(terms[0])) }
	switch r.Stat.Kind {
	case StatCount, StatCountDistinct:
		noisy, err = laplace.ReleaseCount(src, count(), r.Epsilon)
	case StatSum:
		noisy, err = laplace.ReleaseSum(src, columnBounds(r), terms[0], r.Epsilon)
	case StatCenteredSum:
		noisy, err = laplace.ReleaseCenteredSum(src, columnBounds(r), laplace.Summary{Count: count(), Sum: terms[1]}, r.Epsilon)
	case StatCenteredSumSquares:
		s := laplace.Summary{Count: count(), Sum: terms[1], SumSquares: terms[2]}
		noisy, err = laplace.ReleaseCenteredSumOfSquares(src, columnBounds(r), s, r.Epsilon)
	default:
		err = fmt.Errorf("laplace cannot release %s", r.Stat)
	}
	if err != nil {
		return nil, err
	}
	w := noisy.HalfWidth(Confidence)
	return finished{Estimate{Value: noisy.Value(), Low: noisy.Value() - w, High: noisy.Value() + w, HasInterval: true, Primitive: &noisy}}, nil
}

// columnBounds returns the public bounds of the release's column.
func columnBounds(r *Release) mech.Bounds {
	lo, hi, _ := r.Stat.Column.Bounds()
	return mech.Bounds{Lower: lo, Upper: hi}
}
