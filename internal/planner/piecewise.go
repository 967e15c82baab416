package planner

import (
	"context"
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// piecewiseMechanism is the piecewise Laplace mechanism (Durfee): for
// quantiles from a window of order statistics (piecewiseQuantile), and for
// the variance from exact integer sums on a public fixed-point grid and the
// K smallest and K largest grid indices (piecewise.Variance, whose proof
// needs the sums exact), never the whole column. Pure ε-DP under
// add/remove one row.
type piecewiseMechanism struct{}

func (piecewiseMechanism) Name() string      { return piecewiseQuantile.Name() }
func (piecewiseMechanism) Guarantee() string { return piecewiseQuantile.Guarantee() }
func (piecewiseMechanism) NeedsDelta() bool  { return false }

func (piecewiseMechanism) Supports(s Statistic) bool {
	return s.Kind == StatVariance || piecewiseQuantile.Supports(s)
}

func (piecewiseMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	if r.Stat.Kind == StatQuantile {
		return piecewiseQuantile.Terms(r)
	}
	return []sqlrewrite.SummaryTerm{countTerm(r)} // n, for the ranks of the extremes
}

func (piecewiseMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (m piecewiseMechanism) Reads(r *Release) string {
	if r.Stat.Kind == StatQuantile {
		return piecewiseQuantile.Reads(r)
	}
	v, err := m.variance(r)
	if err != nil {
		return "nothing (invalid parameters)"
	}
	return fmt.Sprintf("exact sums of grid indices and the %d smallest and %d largest grid indices", v.Extremes(), v.Extremes())
}

// variance returns the piecewise variance of r, smoothed by the variance's
// own ρ in squared units (piecewise.DefaultVarianceRho), not the
// quantile's, which is in the column's units.
func (piecewiseMechanism) variance(r *Release) (*piecewise.Variance, error) {
	b := columnBounds(r)
	return piecewise.NewVariance(b, r.Epsilon, piecewise.DefaultVarianceRho(b))
}

func (m piecewiseMechanism) Start(src noise.Source, r *Release, terms []float64, hist []int64) (Step, error) {
	if r.Stat.Kind == StatQuantile {
		return piecewiseQuantile.Start(src, r, terms, hist)
	}
	v, err := m.variance(r)
	if err != nil {
		return nil, err
	}
	g := v.Grid()
	n := int64(math.Round(terms[0]))
	k := min(v.Extremes(), n)
	step := &once{
		requests: []sqlrewrite.Fetch{gridSumsRequest(r, g)},
		finish: func(ctx context.Context, src noise.Source, fetched []Fetched) (Estimate, error) {
			sketch, err := varianceSketch(n, k, fetched)
			if err != nil {
				return Estimate{}, err
			}
			value, err := v.Release(ctx, src, sketch)
			return Estimate{Value: value}, err
		},
	}
	if k > 0 {
		step.requests = append(step.requests, gridWindow(r, g, mech.RankRange{First: 1, Last: k}), gridWindow(r, g, mech.RankRange{First: n - k + 1, Last: n}))
	}
	return step, nil
}

// varianceSketch assembles the piecewise variance's sketch from its
// fetches: the grid sums and, when k > 0, the two windows of indices.
func varianceSketch(n, k int64, fetched []Fetched) (piecewise.VarianceSketch, error) {
	want := 1
	if k > 0 {
		want = 3
	}
	if len(fetched) != want {
		return piecewise.VarianceSketch{}, fmt.Errorf("piecewise variance: grid sums and windows not fetched for n = %d", n)
	}
	sums, err := gridSumsOf(n, fetched[0])
	sketch := piecewise.VarianceSketch{Sums: sums}
	if err != nil || k == 0 {
		return sketch, err
	}
	if sketch.Smallest, err = gridIndices(fetched[1].Values); err != nil {
		return sketch, err
	}
	sketch.Largest, err = gridIndices(fetched[2].Values)
	return sketch, err
}

// gridSumsRequest is the fetch of the exact sums on grid g.
func gridSumsRequest(r *Release, g mech.Grid) sqlrewrite.Fetch {
	return sqlrewrite.Fetch{GridSums: &sqlrewrite.GridSums{Column: r.Stat.Column.Source, Lower: g.Lower, Upper: g.Upper, Unit: g.Unit}}
}

// gridWindow is rankWindow returning the grid indices of grid g.
func gridWindow(r *Release, g mech.Grid, ranks mech.RankRange) sqlrewrite.Fetch {
	f := rankWindow(r, ranks)
	f.Window.GridUnit = g.Unit
	return f
}

// gridSumsOf returns the exact sums of a GridSums fetch, checking their
// count against the summary's n (the same rows on one snapshot).
func gridSumsOf(n int64, f Fetched) (mech.GridSums, error) {
	if f.Grid == nil {
		return mech.GridSums{}, fmt.Errorf("grid sums not fetched for n = %d", n)
	}
	if f.Grid.Count != n {
		return mech.GridSums{}, fmt.Errorf("grid sums of %d values do not match n = %d", f.Grid.Count, n)
	}
	return mech.GridSums{Count: n, Sum: f.Grid.Sum, SumSquares: f.Grid.SumSquares}, nil
}

// gridIndices converts fetched grid indices (integers, exact in float64).
func gridIndices(values []float64) ([]int64, error) {
	out := make([]int64, len(values))
	for i, v := range values {
		if v != math.Trunc(v) || math.Abs(v) > 1<<31 {
			return nil, fmt.Errorf("piecewise variance: grid index %v is not an integer", v)
		}
		out[i] = int64(v)
	}
	return out, nil
}
