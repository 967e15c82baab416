package planner

import (
	"context"
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// countTerm is the exact count of the values of the release's column that
// its windows return (NULL and unreadable values excluded), which every
// windowed mechanism needs to place its window.
func countTerm(r *Release) sqlrewrite.SummaryTerm {
	return sqlrewrite.SummaryTerm{Kind: sqlrewrite.CountNumbers, Column: r.Stat.Column.Source}
}

// rankWindow is the request for the values of the 1-based ranks [first,
// last] among the column's values (a 0-based OFFSET/LIMIT for the database).
func rankWindow(r *Release, ranks mech.RankRange) sqlrewrite.Fetch {
	b := columnBounds(r)
	return sqlrewrite.Fetch{Window: &sqlrewrite.Window{Column: r.Stat.Column.Source, Lower: b.Lower, Upper: b.Upper, Offset: ranks.First - 1, Limit: ranks.Len()}}
}

// isInteger reports whether the release's column holds integers (ties are
// then common and the piecewise mechanisms smooth over them).
func isInteger(r *Release) bool { return r.Stat.Column.Type == catalog.Integer }

// quantileMechanism adapts the windowed quantile mechanisms of package mech
// (piecewise Laplace, inverse sensitivity, the smooth-sensitivity median):
// each reads the exact non-NULL count n and a public-width window of order
// statistics around rank ⌊q·(n−1)⌋+1, never the whole column. It is plain
// data (kind names the mechanism, build dispatches on it), so a plan that
// holds it has a canonical encoding, which the repeat window keys answers
// by: a func field had none, and every MEDIAN was answered afresh.
type quantileMechanism struct {
	name, guarantee string
	// medianOnly is set for mechanisms defined for the median alone.
	medianOnly bool
	kind       quantileKind
}

// quantileKind names a windowed quantile mechanism of package mech.
type quantileKind int

const (
	quantilePiecewise quantileKind = iota + 1
	quantileInverse
	quantileSmooth
)

// build returns the mechanism of m's kind for a release.
func (m quantileMechanism) build(r *Release) (windowedQuantile, error) {
	b := columnBounds(r)
	switch m.kind {
	case quantilePiecewise:
		return piecewise.NewQuantile(b, r.Stat.Quantile, r.Epsilon, piecewise.DefaultRho(b, isInteger(r)))
	case quantileInverse:
		return piecewise.NewInverseSensitivityQuantile(b, r.Stat.Quantile, r.Epsilon, piecewise.DefaultRho(b, isInteger(r)))
	case quantileSmooth:
		return quantile.NewSmoothMedian(b, r.Epsilon)
	}
	return nil, fmt.Errorf("planner: unknown windowed quantile mechanism %q", m.name)
}

// windowedQuantile is what the mech quantile mechanisms have in common.
type windowedQuantile interface {
	Window() mech.RankWindowSpec
	Release(src noise.Source, w mech.SortedWindow) (float64, error)
}

func (m quantileMechanism) Name() string      { return m.name }
func (m quantileMechanism) Guarantee() string { return m.guarantee }
func (m quantileMechanism) NeedsDelta() bool  { return false }

func (m quantileMechanism) Supports(s Statistic) bool {
	return s.Kind == StatQuantile && (!m.medianOnly || s.Quantile == 0.5)
}

func (m quantileMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return []sqlrewrite.SummaryTerm{countTerm(r)}
}

func (quantileMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (m quantileMechanism) Reads(r *Release) string {
	q, err := m.build(r)
	if err != nil {
		return "nothing (invalid parameters)"
	}
	return fmt.Sprintf("the non-NULL count, then at most %d order statistics around the quantile's rank", q.Window().Width())
}

func (m quantileMechanism) Start(_ noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	q, err := m.build(r)
	if err != nil {
		return nil, err
	}
	n := int64(math.Round(terms[0]))
	ranks := q.Window().Ranks(n)
	step := &once{finish: func(_ context.Context, src noise.Source, fetched []Fetched) (Estimate, error) {
		w := mech.SortedWindow{Count: n, First: ranks.First}
		if len(fetched) > 0 {
			w.Values = fetched[0].Values
		}
		v, err := q.Release(src, w)
		return Estimate{Value: v}, err
	}}
	if ranks.Len() > 0 { // with no values the mechanism answers from the empty window
		step.requests = []sqlrewrite.Fetch{rankWindow(r, ranks)}
	}
	return step, nil
}

var (
	piecewiseQuantile = quantileMechanism{
		name:      "piecewise",
		guarantee: "pure ε-DP: piecewise Laplace on exact breakpoints from a window of order statistics",
		kind:      quantilePiecewise,
	}
	inverseQuantile = quantileMechanism{
		name:      "inverse",
		guarantee: "pure ε-DP: inverse sensitivity mechanism on a window of order statistics",
		kind:      quantileInverse,
	}
	smoothMedian = quantileMechanism{
		name:       "smooth",
		guarantee:  "pure ε-DP: smooth sensitivity of the median with Cauchy noise",
		medianOnly: true,
		kind:       quantileSmooth,
	}
)
