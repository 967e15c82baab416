package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// piecewiseMechanism is the piecewise Laplace mechanism (Durfee): for
// quantiles from a window of order statistics (piecewiseQuantile), and for
// the variance from the summary sums and the K smallest and K largest
// values (piecewise.Variance), never the whole column. Pure ε-DP under
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
	return preprocessMechanism{}.Terms(r) // count, clamped sum, clamped sum of squares
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
	return fmt.Sprintf("summary aggregates and the %d smallest and %d largest values", v.Extremes(), v.Extremes())
}

func (piecewiseMechanism) variance(r *Release) (*piecewise.Variance, error) {
	b := columnBounds(r)
	rho := 0.0
	if isInteger(r) {
		rho = piecewise.DefaultRho(b, true)
	}
	return piecewise.NewVariance(b, r.Epsilon, rho)
}

func (m piecewiseMechanism) Start(src noise.Source, r *Release, terms []float64, hist []int64) (Step, error) {
	if r.Stat.Kind == StatQuantile {
		return piecewiseQuantile.Start(src, r, terms, hist)
	}
	v, err := m.variance(r)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	n := int64(math.Round(terms[0]))
	mid := b.Lower/2 + b.Upper/2
	sketch := piecewise.VarianceSketch{Count: n}
	sketch.CenteredSum = terms[1] - float64(n)*mid
	sketch.CenteredSumSquares = math.Max(terms[2]-2*mid*terms[1]+float64(n)*mid*mid, 0)
	k := min(v.Extremes(), n)
	step := &once{finish: func(src noise.Source, fetched []Fetched) (Estimate, error) {
		if len(fetched) == 2 {
			sketch.Smallest, sketch.Largest = fetched[0].Values, fetched[1].Values
		}
		value, err := v.Release(src, sketch)
		return Estimate{Value: value}, err
	}}
	if k > 0 {
		step.requests = []sqlrewrite.Fetch{
			rankWindow(r, mech.RankRange{First: 1, Last: k}),
			rankWindow(r, mech.RankRange{First: n - k + 1, Last: n}),
		}
	}
	return step, nil
}
