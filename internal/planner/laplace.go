package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// laplaceMechanism releases counts and clamped sums with Laplace noise of
// scale Δ/ε (mech.DiscreteLaplace for counts, mech.Laplace otherwise), pure
// ε-DP under add/remove one row. Sensitivities, for a column with public
// bounds [L, U] and midpoint m = (L+U)/2:
//
//	count:                       1
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

func (laplaceMechanism) Supports(k StatKind) bool {
	switch k {
	case StatCount, StatSum, StatCenteredSum, StatCenteredSumSquares:
		return true
	}
	return false
}

func (laplaceMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	col := r.Stat.Column
	if col == nil {
		return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	}
	lo, hi, _ := col.Bounds()
	count := sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountNonNull, Column: col.Source}
	sum := sqlrewrite.SummaryTerm{Kind: sqlrewrite.ClampedSum, Column: col.Source, Lower: lo, Upper: hi}
	squares := sqlrewrite.SummaryTerm{Kind: sqlrewrite.ClampedSumSquares, Column: col.Source, Lower: lo, Upper: hi}
	switch r.Stat.Kind {
	case StatCount:
		return []sqlrewrite.SummaryTerm{count}
	case StatSum:
		return []sqlrewrite.SummaryTerm{sum}
	case StatCenteredSum:
		return []sqlrewrite.SummaryTerm{count, sum}
	default: // StatCenteredSumSquares
		return []sqlrewrite.SummaryTerm{count, sum, squares}
	}
}

func (laplaceMechanism) Window(*Release, []float64) *sqlrewrite.Window { return nil }

func (m laplaceMechanism) Reads(r *Release) string {
	return fmt.Sprintf("%d summary aggregate(s) computed by the database, no rows", len(m.Terms(r)))
}

func (laplaceMechanism) Release(src mech.Source, r *Release, in Input) (Estimate, error) {
	const confidence = 0.95
	if r.Stat.Kind == StatCount {
		dl, err := mech.NewDiscreteLaplace(1, r.Epsilon)
		if err != nil {
			return Estimate{}, err
		}
		n := int64(math.Round(in.Terms[0]))
		v := float64(dl.Release(src, n))
		w := dl.HalfWidth(confidence)
		return Estimate{Value: v, Low: v - w, High: v + w, HasInterval: true, LaplaceScale: dl.Scale()}, nil
	}
	lo, hi, _ := r.Stat.Column.Bounds()
	mid, half := (lo+hi)/2, (hi-lo)/2
	var truth, sensitivity float64
	switch r.Stat.Kind {
	case StatSum:
		truth, sensitivity = in.Terms[0], math.Max(math.Abs(lo), math.Abs(hi))
	case StatCenteredSum:
		n, s := in.Terms[0], in.Terms[1]
		truth, sensitivity = s-n*mid, half
	case StatCenteredSumSquares:
		n, s, q := in.Terms[0], in.Terms[1], in.Terms[2]
		// Σ(x-m)² = Σx² - 2mΣx + nm², never negative in exact arithmetic.
		truth, sensitivity = math.Max(q-2*mid*s+n*mid*mid, 0), half*half
	default:
		return Estimate{}, fmt.Errorf("laplace cannot release %s", r.Stat)
	}
	l, err := mech.NewLaplace(sensitivity, r.Epsilon)
	if err != nil {
		return Estimate{}, err
	}
	v := l.Release(src, truth)
	w := l.HalfWidth(confidence)
	return Estimate{Value: v, Low: v - w, High: v + w, HasInterval: true, LaplaceScale: l.Scale()}, nil
}
