package bench

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// confidence is the interval level asked of mechanisms that report one.
const confidence = 0.95

// Grid sizes of the proxy's exponential mechanism
// (internal/planner/exponential.go; replicated, not imported, so that the
// benchmark does not depend on the planner).
const (
	maxUnitBins = 1 << 16
	realBins    = 1 << 14
)

// laplaceCandidate is the global-sensitivity Laplace baseline. Mean and
// variance: what the proxy's forced laplace mechanism releases (Google's
// construction), composed here from the production releases with their
// own count inside ε. The mean is laplace.ReleaseCount and
// laplace.ReleaseUnitCenteredSumOnGrid (k = 1) at ε/2 each, then
// laplace.DeriveMean; the variance is laplace.ReleaseCount,
// ReleaseUnitCenteredSumOnGrid and ReleaseUnitCenteredSumOfSquaresOnGrid at
// ε/3 each, then laplace.DeriveVariance (population). The centred sums are
// formed exactly from the column's grid sums (Column.GridSums), as the
// planner forms them. Quantiles: PERCENTILE_CONT(q) of the clamped column
// lies in [L, U], so its add/remove sensitivity is at most U−L; the
// release is clamp(f + Lap((U−L)/ε), L, U) (the papers' "Laplace with
// global sensitivity").
func laplaceCandidate() Candidate {
	return Candidate{
		Name:     "laplace",
		Summary:  "global-sensitivity Laplace on clamped data (mean, variance: the proxy's noisy sums and count)",
		Supports: func(Statistic) bool { return true },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			b := c.bounds()
			switch s.Kind {
			case MeanStat:
				g, sums, err := c.GridSums()
				if err != nil {
					return nil, err
				}
				return drawOnly(func(src noise.Source) (float64, error) {
					e, err := laplaceMean(src, b, g, sums, eps)
					return e.Value, err
				}), nil
			case VarianceStat:
				g, sums, err := c.GridSums()
				if err != nil {
					return nil, err
				}
				return drawOnly(func(src noise.Source) (float64, error) {
					e, err := laplaceVariance(src, b, g, sums, eps)
					return e.Value, err
				}), nil
			}
			l, err := noise.NewLaplace(b.Upper-b.Lower, eps)
			if err != nil {
				return nil, err
			}
			truth := Truth(s, c.d)
			return drawOnly(func(src noise.Source) (float64, error) {
				return b.Clamp(l.Release(src, truth)), nil
			}), nil
		},
	}
}

// laplaceMean is the forced laplace mechanism's AVG at ε: a count and the
// centred sum on the grid g of b at ε/2 each (sequential composition),
// then laplace.DeriveMean (post-processing).
func laplaceMean(src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, eps float64) (mech.Estimate, error) {
	count, err := laplace.ReleaseCount(src, s.Count, eps/2)
	if err != nil {
		return mech.Estimate{}, err
	}
	sum, err := laplace.ReleaseUnitCenteredSumOnGrid(src, b, g, s, 1, eps/2)
	if err != nil {
		return mech.Estimate{}, err
	}
	return laplace.DeriveMean(b, count, sum, confidence)
}

// laplaceVariance is the forced laplace mechanism's VAR_POP at ε: a count
// and both centred sums on the grid g of b at ε/3 each, then
// laplace.DeriveVariance.
func laplaceVariance(src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, eps float64) (mech.Estimate, error) {
	count, err := laplace.ReleaseCount(src, s.Count, eps/3)
	if err != nil {
		return mech.Estimate{}, err
	}
	sum, err := laplace.ReleaseUnitCenteredSumOnGrid(src, b, g, s, 1, eps/3)
	if err != nil {
		return mech.Estimate{}, err
	}
	squares, err := laplace.ReleaseUnitCenteredSumOfSquaresOnGrid(src, b, g, s, 1, eps/3)
	if err != nil {
		return mech.Estimate{}, err
	}
	return laplace.DeriveVariance(b, laplace.PopulationVariance, count, sum, squares, confidence)
}

// gridExponentialCandidate is the grid exponential mechanism:
// quantile.GridExponential over the histogram the planner fetches. An integer
// column with integer bounds less than 2^16 apart gets unit bins
// [L+j, L+j+1) over [L, U+1) and the answer L+j; any other column 2^14
// equal bins over [L, U] and the answer the bin's midpoint.
func gridExponentialCandidate() Candidate {
	return Candidate{
		Name:     "exponential",
		Summary:  "exponential mechanism over a public grid of bins",
		Supports: isQuantile,
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			lo, hi, bins, unit := grid(c.d)
			m, err := quantile.NewGridExponential(s.Quantile, eps, bins)
			if err != nil {
				return nil, err
			}
			draw, saved, err := gridLaw(m, c.Histogram(lo, hi, bins))
			if err != nil {
				return nil, err
			}
			value := gridValue(lo, hi, bins, unit)
			return &Prepared{Draw: func(src noise.Source) (float64, error) {
				return value(draw(src)), nil
			}, Saved: saved}, nil
		},
	}
}

// gridPermuteFlipCandidate is the permute-and-flip mechanism
// (quantile.GridPermuteFlip) over the same grid, histogram and utility as
// "exponential"; the planner's default on unit-bin integer columns. It
// has no law to cache: every draw is a full release.
func gridPermuteFlipCandidate() Candidate {
	return Candidate{
		Name:     "permute-flip",
		Summary:  "permute-and-flip (McKenna and Sheldon 2020) over the exponential mechanism's grid and utility",
		Supports: isQuantile,
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			lo, hi, bins, unit := grid(c.d)
			m, err := quantile.NewGridPermuteFlip(s.Quantile, eps, bins)
			if err != nil {
				return nil, err
			}
			h := c.Histogram(lo, hi, bins)
			value := gridValue(lo, hi, bins, unit)
			return drawOnly(func(src noise.Source) (float64, error) {
				j, err := m.Release(src, h)
				if err != nil {
					return 0, err
				}
				return value(j), nil
			}), nil
		},
	}
}

// gridValue maps a released bin of grid's bins over [lo, hi) to the
// answer, as the planner does: L+j on unit bins, the midpoint otherwise.
func gridValue(lo, hi float64, bins int, unit bool) func(j int) float64 {
	width := (hi - lo) / float64(bins)
	return func(j int) float64 {
		if unit {
			return lo + float64(j)
		}
		return lo + (float64(j)+0.5)*width
	}
}

// gridLaw computes m's law on the histogram h once
// (quantile.GridExponential.Law: every draw from it is one release) and
// returns a draw of a bin with the Saved function that adds back the time
// of rebuilding the law for every draw but the first, so reported times
// are those of uncached releases.
func gridLaw(m *quantile.GridExponential, h []int64) (func(noise.Source) int, func() time.Duration, error) {
	start := time.Now()
	law, err := m.Law(h)
	if err != nil {
		return nil, nil, err
	}
	build := time.Since(start)
	var draws atomic.Int64
	draw := func(src noise.Source) int {
		draws.Add(1)
		return law.Draw(src)
	}
	return draw, func() time.Duration { return time.Duration(max(draws.Load()-1, 0)) * build }, nil
}

// grid returns the planner's histogram for d: its range, bin count, and
// whether the bins are the column's integers.
func grid(d *Dataset) (lo, hi float64, bins int, unit bool) {
	width := d.Upper - d.Lower
	if d.Integer && d.Lower == math.Trunc(d.Lower) && d.Upper == math.Trunc(d.Upper) && width < maxUnitBins {
		return d.Lower, d.Upper + 1, int(width) + 1, true
	}
	return d.Lower, d.Upper, realBins, false
}

// windowExponentialCandidate is the exponential mechanism on a window of
// order statistics (quantile.WindowExponential): the continuous exponential mechanism on
// [L, U] with utility clipped at the window half-width k. Kept to show
// that clipping makes it degrade on heavily tied data (every tied block is
// an interval of zero length, so the mass goes to the gaps around it).
func windowExponentialCandidate() Candidate {
	return Candidate{
		Name:     "exponential-window",
		Summary:  "exponential mechanism on a rank window, utility clipped at k (degrades on ties)",
		Supports: isQuantile,
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			q, err := quantile.NewWindowExponential(c.bounds(), s.Quantile, eps, quantile.DefaultWindow(eps, s.Quantile))
			if err != nil {
				return nil, err
			}
			w := mech.WindowOf(q.Window(), c.d.Values)
			return drawOnly(func(src noise.Source) (float64, error) {
				e, err := q.Release(src, w)
				return e.Value, err
			}), nil
		},
	}
}
