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
//  1. release the noisy count ñ with ε·CountShare;
//  2. if ñ·ε ≥ autoMeanThreshold (enough rows that a centre is cheap):
//     release the median c with ε·autoMeanCentreShare (the grid
//     exponential mechanism on the quantile histogram, exponentialMechanism),
//     then the sum around it, Σ(clamp(x) − c), with the rest of ε
//     (laplace.ReleaseSumAround, sensitivity max(c − L, U − c)), and answer
//     laplace.MeanAround: clamp(c + S̃/ñ, L, U). Centring near the data
//     makes the count's noise nearly irrelevant, so the sum gets 85% of ε
//     where the bounded mean gives it half;
//  3. else the Laplace bounded mean (laplace.BoundedMean: a second count
//     and the sum around (L+U)/2, ε/2 each of the rest).
//
// Guarantee: pure ε-DP under add/remove of one row by sequential
// composition, each stage ε-DP for every value of the released ones before
// it: count ε·CountShare, then either median ε·autoMeanCentreShare plus sum
// the rest, or the bounded mean with the rest. The branch is a function of
// ñ and the centre a released value: post-processing.
type autoMean struct{}

// autoMeanThreshold is the ñ·ε from which the centred mean answers; below
// it the median's noise makes the centre poor (measured: at ñ·ε ≈ 100 the
// centred mean is 2× Google's error, at ≥ 1000 it is 0.7–0.9×).
const autoMeanThreshold = 300

// autoMeanCentreShare is the share of ε spent on the centre.
const autoMeanCentreShare = 0.05

func (autoMean) Name() string              { return "auto-mean" }
func (autoMean) NeedsDelta() bool          { return false }
func (autoMean) Supports(s Statistic) bool { return s.Kind == StatMean }

// Histogram is the quantile mechanism's: the centre is a grid median.
func (autoMean) Histogram(r *Release) *sqlrewrite.Histogram {
	h, _ := exponentialMechanism{}.grid(r)
	return h
}

func (autoMean) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: a noisy count (%g of ε), then if ñ·ε ≥ %d a grid median (%g of ε) and the sum around it (the rest), else the Laplace bounded mean", CountShare, autoMeanThreshold, autoMeanCentreShare)
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
	count, err := laplace.ReleaseCount(src, n, r.Epsilon*CountShare)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	if count.Value()*r.Epsilon < autoMeanThreshold {
		est, err := laplace.BoundedMean(src, b, s, r.Epsilon*(1-CountShare), Confidence)
		if err != nil {
			return nil, err
		}
		return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval,
			Note: fmt.Sprintf("the noisy count times epsilon is below %d, so the Laplace bounded mean answered", autoMeanThreshold)}}, nil
	}
	h, unit := exponentialMechanism{}.grid(r)
	q, err := quantile.NewGridExponential(0.5, r.Epsilon*autoMeanCentreShare, h.Bins)
	if err != nil {
		return nil, err
	}
	bin, err := q.Release(src, histogram)
	if err != nil {
		return nil, err
	}
	centre := h.Lower + float64(bin)
	if !unit {
		centre = h.Lower + (float64(bin)+0.5)*(h.Upper-h.Lower)/float64(h.Bins)
	}
	centre = b.Clamp(centre)
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
