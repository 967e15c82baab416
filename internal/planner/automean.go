package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// autoMean is the default AVG mechanism (issue 15: never less accurate
// than Google's bounded mean, bench/RESULTS-google.md):
//
//  1. release a probe count ñ₀ with ε·autoProbeShare (2%): coarse, but
//     enough to tell n·ε ≈ 100 from n·ε ≥ 1000;
//  2. if ñ₀·ε < autoMeanThreshold: the Laplace bounded mean
//     (laplace.BoundedMean, Google's construction: a count and the sum
//     around (L+U)/2, ε/2 each of the remaining 98%). Few rows for the ε:
//     a centre would cost more than it saves;
//  3. else the count ñ with ε·(CountShare − autoProbeShare), the median c
//     with ε·autoMeanCentreShare (the grid exponential mechanism on the
//     quantile histogram, exponentialMechanism), then the sum around it,
//     Σ(clamp(x) − c), with the rest (laplace.ReleaseSumAround, sensitivity
//     max(c − L, U − c)), answering laplace.MeanAroundEstimate:
//     clamp(c + S̃/ñ, L, U). Centring near the data makes the count's
//     noise nearly irrelevant, so the sum gets 85% of ε where the bounded
//     mean gives it half.
//
// Guarantee: pure ε-DP under add/remove of one row by sequential
// composition, each stage ε_i-DP for every value of the released ones
// before it: probe ε·autoProbeShare, then either the bounded mean with the
// rest, or count, median and sum whose shares add up to the rest. The
// branch is a function of ñ₀ and the centre a released value:
// post-processing.
type autoMean struct{}

// autoMeanThreshold is the ñ·ε from which the centred mean answers; below
// it the median's noise makes the centre poor (measured: at ñ·ε ≈ 100 the
// centred mean is 2× Google's error, at ≥ 1000 it is 0.7–0.9×).
const autoMeanThreshold = 300

// autoMeanCentreShare is the share of ε spent on the centre.
const autoMeanCentreShare = 0.05

// autoProbeShare is the share of ε spent on the probe count that chooses
// the branch of autoMean and autoVariance.
const autoProbeShare = 0.02

func (autoMean) Name() string              { return "auto-mean" }
func (autoMean) NeedsDelta() bool          { return false }
func (autoMean) Supports(s Statistic) bool { return s.Kind == StatMean }

// Histogram is the quantile mechanism's: the centre is a grid median.
func (autoMean) Histogram(r *Release) *sqlrewrite.Histogram {
	h, _ := exponentialMechanism{}.grid(r)
	return h
}

func (autoMean) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: a probe count (%g of ε); if ñ·ε < %d the Laplace bounded mean, else a noisy count (%g of ε), a grid median (%g of ε) and the sum around it (the rest)", autoProbeShare, autoMeanThreshold, CountShare-autoProbeShare, autoMeanCentreShare)
}

func (autoMean) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return laplaceMechanism{}.Terms(&Release{Stat: Statistic{Kind: StatCenteredSumSquares, Column: r.Stat.Column}})
}

func (m autoMean) Reads(r *Release) string {
	h := m.Histogram(r)
	return fmt.Sprintf("3 summary aggregates and one GROUP BY histogram of %d bins computed by the database, no rows", h.Bins)
}

func (m autoMean) Start(src noise.Source, r *Release, terms []float64, histogram []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	s := laplace.Summary{Count: n, Sum: terms[1], SumSquares: terms[2]}
	probe, err := laplace.ReleaseCount(src, n, r.Epsilon*autoProbeShare)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	if probe.Value()*r.Epsilon < autoMeanThreshold {
		est, err := laplace.BoundedMean(src, b, s, r.Epsilon*(1-autoProbeShare), Confidence)
		if err != nil {
			return nil, err
		}
		return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval,
			Note: fmt.Sprintf("the noisy count times epsilon is below %d, so the Laplace bounded mean answered", autoMeanThreshold)}}, nil
	}
	count, err := laplace.ReleaseCount(src, n, r.Epsilon*(CountShare-autoProbeShare))
	if err != nil {
		return nil, err
	}
	centre, err := gridMedianCentre(src, r, histogram)
	if err != nil {
		return nil, err
	}
	sum, l, err := laplace.ReleaseSumAround(src, b, centre, s, r.Epsilon*(1-CountShare-autoMeanCentreShare))
	if err != nil {
		return nil, err
	}
	est, err := laplace.MeanAroundEstimate(b, centre, sum, l, count, Confidence)
	if err != nil {
		return nil, err
	}
	return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval,
		Note: fmt.Sprintf("centred at a private median %g", centre)}}, nil
}

// gridMedianCentre releases the median with ε·autoMeanCentreShare by the
// grid exponential mechanism on the quantile histogram, as a value in the
// column's bounds (the bin's integer for unit bins, else its midpoint).
func gridMedianCentre(src noise.Source, r *Release, histogram []int64) (float64, error) {
	h, unit := exponentialMechanism{}.grid(r)
	q, err := quantile.NewGridExponential(0.5, r.Epsilon*autoMeanCentreShare, h.Bins)
	if err != nil {
		return 0, err
	}
	bin, err := q.Release(src, histogram)
	if err != nil {
		return 0, err
	}
	centre := h.Lower + float64(bin)
	if !unit {
		centre = h.Lower + (float64(bin)+0.5)*(h.Upper-h.Lower)/float64(h.Bins)
	}
	return columnBounds(r).Clamp(centre), nil
}
