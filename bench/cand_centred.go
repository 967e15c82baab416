package bench

import (
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// MeanCentreShare is the share of ε the centred mean spends on its centre
// (the planner's autoMeanCentreShare).
const MeanCentreShare = 0.05

// centredCandidate is the centred mean (the planner's auto-mean when
// ñ·ε ≥ MeanCentredMinCountEpsilon): ñ with CountShare·ε, the grid
// exponential median with MeanCentreShare·ε as the centre c, then
// laplace.ReleaseSumAround(c) with the rest and laplace.MeanAround.
func centredCandidate() Candidate {
	return Candidate{
		Name:       "centred",
		Summary:    "mean around a private grid median: noisy count, median, sum around it (the rest of ε)",
		NeedsCount: true,
		Supports:   func(s Statistic) bool { return s.Kind == MeanStat },
		Prepare: func(_ Statistic, c *Column, eps float64) (*Prepared, error) {
			release, err := centredMean(c, eps)
			if err != nil {
				return nil, err
			}
			return drawOnly(func(src noise.Source) (float64, error) {
				nTilde, err := noisyCount(src, c.d, eps)
				if err != nil {
					return 0, err
				}
				return release(src, nTilde)
			}), nil
		},
	}
}

// centredMean prepares the centred mean's releases after the count: the
// median on the planner's histogram, then the sum around it.
func centredMean(c *Column, eps float64) (func(src noise.Source, nTilde int64) (float64, error), error) {
	lo, hi, bins, unit := grid(c.d)
	q, err := quantile.NewGridExponential(0.5, eps*MeanCentreShare, bins)
	if err != nil {
		return nil, err
	}
	h := c.Histogram(lo, hi, bins)
	b, sum := c.bounds(), c.Summary()
	return func(src noise.Source, nTilde int64) (float64, error) {
		j, err := q.Release(src, h)
		if err != nil {
			return 0, err
		}
		centre := lo + float64(j)
		if !unit {
			centre = lo + (float64(j)+0.5)*(hi-lo)/float64(bins)
		}
		centre = b.Clamp(centre)
		s, _, err := laplace.ReleaseSumAround(src, b, centre, sum, eps*(1-CountShare-MeanCentreShare))
		if err != nil {
			return 0, err
		}
		return laplace.MeanAround(b, centre, s, float64(nTilde)), nil
	}, nil
}
