package bench

import (
	"context"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// MeanCentreShare is the share of ε the centred mean spends on its centre
// (the planner's earlier autoMeanCentreShare).
const MeanCentreShare = 0.05

// centredCandidate is the centred mean (the planner's earlier auto-mean
// when ñ·ε ≥ 300): ñ with CountShare·ε, the grid exponential median with
// MeanCentreShare·ε as the centre c, then releaseSumAround(c) with
// the rest and meanAround; and the earlier auto-variance
// (centredVariance).
func centredCandidate() Candidate {
	return Candidate{
		Name:       "centred",
		Summary:    "around a private grid median: noisy count, median, then the sum (mean) or piecewise / the moments (variance)",
		NeedsCount: true,
		Supports:   func(s Statistic) bool { return s.Kind == MeanStat || s.Kind == VarianceStat },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			prepare := centredMean
			if s.Kind == VarianceStat {
				prepare = centredVariance
			}
			release, err := prepare(c, eps)
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
	draw, _, err := gridLaw(q, c.Histogram(lo, hi, bins))
	if err != nil {
		return nil, err
	}
	b, sum := c.bounds(), c.Summary()
	return func(src noise.Source, nTilde int64) (float64, error) {
		j := draw(src)
		centre := lo + float64(j)
		if !unit {
			centre = lo + (float64(j)+0.5)*(hi-lo)/float64(bins)
		}
		centre = b.Clamp(centre)
		s, _, err := releaseSumAround(src, b, centre, sum, eps*(1-CountShare-MeanCentreShare))
		if err != nil {
			return 0, err
		}
		return meanAround(b, centre, s, float64(nTilde)), nil
	}, nil
}

// ProbeShare is the share of ε of the probe count of the planner's earlier
// AVG and VARIANCE rule (the centred branches got the rest).
const ProbeShare = 0.02

// The constants of the planner's earlier autoVariance (a count, a grid
// median, then piecewise Laplace or the moments around it), which the
// "centred" candidate keeps measuring.
const (
	varianceMiddleBand        = 0.5
	varianceSumShare          = 0.15
	varianceMaxPiecewiseDepth = 300
)

// centredVariance prepares the earlier autoVariance above its threshold,
// after its count ñ: the grid median c (MeanCentreShare·ε), then piecewise Laplace with the rest if c
// is within varianceMiddleBand of the half-range around the middle and its
// depth is at most varianceMaxPiecewiseDepth, else the moments around c
// with ñ as the count.
func centredVariance(c *Column, eps float64) (func(src noise.Source, nTilde int64) (float64, error), error) {
	lo, hi, bins, unit := grid(c.d)
	q, err := quantile.NewGridExponential(0.5, eps*MeanCentreShare, bins)
	if err != nil {
		return nil, err
	}
	h := c.Histogram(lo, hi, bins)
	b, sum := c.bounds(), c.Summary()
	rest := eps * (1 - CountShare - MeanCentreShare)
	pw, err := piecewise.NewVariance(b, eps*(1-ProbeShare-MeanCentreShare), piecewiseVarianceRho(c))
	if err != nil {
		return nil, err
	}
	var sketch *piecewise.VarianceSketch
	moments := func(src noise.Source, centre, count, sumEps, squaresEps float64) (float64, error) {
		s, _, err := releaseSumAround(src, b, centre, sum, sumEps)
		if err != nil {
			return 0, err
		}
		sq, _, err := releaseSquaresAround(src, b, centre, sum, squaresEps)
		if err != nil {
			return 0, err
		}
		return varianceAround(b, s, sq, count), nil
	}
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
		if math.Abs(centre-b.Mid()) <= varianceMiddleBand*b.HalfRange() && pw.Depth() <= varianceMaxPiecewiseDepth {
			if sketch == nil {
				s := c.VarianceSketch(pw)
				sketch = &s
			}
			return pw.Release(context.Background(), src, *sketch)
		}
		return moments(src, centre, float64(nTilde), eps*varianceSumShare, rest-eps*varianceSumShare)
	}, nil
}

// piecewiseVarianceRho is the planner's ρ for the piecewise variance:
// DefaultRho on integer columns, else 0.
func piecewiseVarianceRho(c *Column) float64 {
	if c.d.Integer {
		return piecewise.DefaultRho(c.bounds(), true)
	}
	return 0
}
