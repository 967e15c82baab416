package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// exponentialMechanism releases quantiles with the exponential mechanism
// over the column's bounded range, utility -min(|rank - q·n|, k), pure ε-DP
// under add/remove (mech.Quantile derives it). It reads the exact count of
// non-NULL values and a window of about 2k+3 order statistics around rank
// q·n, with k = mech.DefaultQuantileWindow(ε, q), never the whole column.
type exponentialMechanism struct{}

func (exponentialMechanism) Name() string { return "exponential" }

func (exponentialMechanism) Guarantee() string {
	return "pure ε-DP: exponential mechanism on ranks over the public range"
}

func (exponentialMechanism) NeedsDelta() bool { return false }

func (exponentialMechanism) Supports(k StatKind) bool { return k == StatQuantile }

func (exponentialMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNonNull, Column: r.Stat.Column.Source}}
}

func (m exponentialMechanism) build(r *Release) (*mech.Quantile, error) {
	lo, hi, _ := r.Stat.Column.Bounds()
	q := r.Stat.Quantile
	return mech.NewQuantile(mech.Bounds{Lower: lo, Upper: hi}, q, r.Epsilon, mech.DefaultQuantileWindow(r.Epsilon, q))
}

func (m exponentialMechanism) Window(r *Release, terms []float64) *sqlrewrite.Window {
	q, err := m.build(r)
	if err != nil {
		return nil // Release reports the error
	}
	first, count := q.Window(int64(math.Round(terms[0])))
	lo, hi, _ := r.Stat.Column.Bounds()
	return &sqlrewrite.Window{Column: r.Stat.Column.Source, Lower: lo, Upper: hi, Offset: first, Limit: count}
}

func (m exponentialMechanism) Reads(r *Release) string {
	k := mech.DefaultQuantileWindow(r.Epsilon, r.Stat.Quantile)
	return fmt.Sprintf("the non-NULL count, then at most %d order statistics around rank %g·n", 2*k+3, r.Stat.Quantile)
}

func (m exponentialMechanism) Release(src mech.Source, r *Release, in Input) (Estimate, error) {
	q, err := m.build(r)
	if err != nil {
		return Estimate{}, err
	}
	est, err := q.Release(src, mech.OrderWindow{N: int64(math.Round(in.Terms[0])), First: in.WindowOffset, Values: in.Window})
	if err != nil {
		return Estimate{}, err
	}
	return Estimate{Value: est.Value}, nil
}
