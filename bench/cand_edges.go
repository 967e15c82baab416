package bench

import (
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// edgesCandidate is the moments from both bounds with all of ε and no
// probe: laplace.ReleaseEdgeSums (AVG) and laplace.ReleaseEdgeSquares
// (VARIANCE), the rule's branch for small ñ·ε, measured at every n.
func edgesCandidate() Candidate {
	return Candidate{
		Name:     "edges",
		Summary:  "sums (mean) or squares (variance) from both bounds, one vector Laplace release",
		Supports: func(s Statistic) bool { return s.Kind == MeanStat || s.Kind == VarianceStat },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			b := c.bounds()
			g, sums, err := c.GridSums()
			if err != nil {
				return nil, err
			}
			if s.Kind == MeanStat {
				return drawOnly(func(src noise.Source) (float64, error) {
					e, err := laplace.ReleaseEdgeSums(src, g, sums, eps)
					return e.Mean(b), err
				}), nil
			}
			return drawOnly(func(src noise.Source) (float64, error) {
				e, err := laplace.ReleaseEdgeSquares(src, g, sums, eps)
				return e.Variance(b, laplace.PopulationVariance), err
			}), nil
		},
	}
}
