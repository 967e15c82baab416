package bench

import (
	"context"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// The instance-adaptive mechanisms that need no noisy count: each reads a
// public-width window (quantiles) or sketch (variance) and gets all of ε.

// piecewiseCandidate is the piecewise Laplace mechanism (Durfee): quantiles
// with the column's DefaultRho (½ for integer columns, so ties are
// smoothed), and the population variance with ρ = 0.
func piecewiseCandidate() Candidate {
	return Candidate{
		Name:     "piecewise",
		Summary:  "piecewise Laplace (Durfee), ρ = DefaultRho for quantiles, 0 for the variance",
		Supports: func(s Statistic) bool { return s.Kind == QuantileStat || s.Kind == VarianceStat },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			if s.Kind == VarianceStat {
				m, err := piecewise.NewVariance(c.bounds(), eps, 0)
				if err != nil {
					return nil, err
				}
				sketch := c.VarianceSketch(m)
				return &Prepared{
					Draw:     func(src noise.Source) (float64, error) { return m.Release(context.Background(), src, sketch) },
					Expected: func() (float64, error) { return m.ExpectedAbsError(sketch) },
				}, nil
			}
			m, err := piecewise.NewQuantile(c.bounds(), s.Quantile, eps, piecewise.DefaultRho(c.bounds(), c.d.Integer))
			if err != nil {
				return nil, err
			}
			return breakpointQuantile(m, c), nil
		},
	}
}

// inverseCandidate is the ρ-smooth inverse sensitivity mechanism (Asi and
// Duchi) on the piecewise mechanism's breakpoints, same ρ.
func inverseCandidate() Candidate {
	return Candidate{
		Name:     "inverse",
		Summary:  "inverse sensitivity (Asi–Duchi), same breakpoints and ρ as piecewise",
		Supports: isQuantile,
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			m, err := piecewise.NewInverseSensitivityQuantile(c.bounds(), s.Quantile, eps, piecewise.DefaultRho(c.bounds(), c.d.Integer))
			if err != nil {
				return nil, err
			}
			return breakpointQuantile(m, c), nil
		},
	}
}

// smoothCandidate is the smooth-sensitivity median (Nissim, Raskhodnikova
// and Smith) with Cauchy noise, clamped to [L, U]. Unclamped Cauchy noise
// has no mean; clamped it does, but the tables also give the median |error|.
func smoothCandidate() Candidate {
	return Candidate{
		Name:     "smooth",
		Summary:  "smooth-sensitivity median (NRS07), Cauchy noise, clamped to [L, U]",
		Supports: isMedian,
		Prepare: func(_ Statistic, c *Column, eps float64) (*Prepared, error) {
			m, err := quantile.NewSmoothMedian(c.bounds(), eps)
			if err != nil {
				return nil, err
			}
			return windowed(m.Window(), c, m.Release), nil
		},
	}
}

// windowed prepares a windowed mechanism: the window is cut once, and each
// draw is a full release on it.
func windowed(spec mech.RankWindowSpec, c *Column, release func(noise.Source, mech.SortedWindow) (float64, error)) *Prepared {
	w := mech.WindowOf(spec, c.d.Values)
	return drawOnly(func(src noise.Source) (float64, error) { return release(src, w) })
}

// breakpointQuantile prepares a piecewise or inverse sensitivity quantile,
// with its analytic expected error.
func breakpointQuantile(m *piecewise.Quantile, c *Column) *Prepared {
	w := mech.WindowOf(m.Window(), c.d.Values)
	return &Prepared{
		Draw:     func(src noise.Source) (float64, error) { return m.Release(src, w) },
		Expected: func() (float64, error) { return m.ExpectedAbsError(w) },
	}
}
