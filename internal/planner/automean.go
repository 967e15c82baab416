package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
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
//  2. if ñ₀·ε < autoMeanThreshold: the sums from both bounds,
//     Σ(clamp(x) − L) and Σ(U − clamp(x)), released together with the
//     remaining 98% of ε (laplace.ReleaseEdgeSums, L1 sensitivity U − L)
//     and the mean L + (U−L)·S̃_L/(S̃_L + S̃_U). Few rows for the ε: a
//     centre would cost more than it saves. The same information as
//     Google's bounded mean (a count and the sum around (L+U)/2, ε/2
//     each) with half its noise variance: 0.67–0.75× its error
//     (bench/RESULTS-google.md);
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
// before it: probe ε·autoProbeShare, then either the edge sums with the
// rest, or count, median and sum whose shares add up to the rest. The
// branch is a function of ñ₀ and the centre a released value:
// post-processing.
type autoMean struct{ medianCentred }

// autoMeanThreshold is the ñ·ε from which the centred mean answers; below
// it the median's noise makes the centre poor (measured: at ñ·ε ≈ 100 the
// centred mean is 2× Google's error, at ≥ 1000 it is 0.7–0.9×).
const autoMeanThreshold = 300

// autoMeanCentreShare is the share of ε spent on the centre.
const autoMeanCentreShare = 0.05

// autoProbeShare is the share of ε spent on the probe count that chooses
// the branch of autoMean.
const autoProbeShare = 0.02

func (autoMean) Name() string              { return "auto-mean" }
func (autoMean) Supports(s Statistic) bool { return s.Kind == StatMean }

func (autoMean) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: a probe count (%g of ε); if ñ·ε < %d the sums from both bounds (the rest), else a noisy count (%g of ε), a grid median (%g of ε) and the sum around it (the rest)", autoProbeShare, autoMeanThreshold, CountShare-autoProbeShare, autoMeanCentreShare)
}

func (m autoMean) Reads(r *Release) string {
	h := m.Histogram(r)
	return fmt.Sprintf("3 summary aggregates and one GROUP BY histogram of %d bins computed by the database, no rows", h.Bins)
}

// medianCentred is what autoMean fetches: pure ε (no δ),
// the three summary terms (count, clamped sum, clamped sum of squares) and
// the quantile histogram their grid median is released from.
type medianCentred struct{}

func (medianCentred) NeedsDelta() bool { return false }

func (medianCentred) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return laplaceMechanism{}.Terms(&Release{Stat: Statistic{Kind: StatCenteredSumSquares, Column: r.Stat.Column}})
}

// Histogram is the quantile mechanism's: the centre is a grid median.
func (medianCentred) Histogram(r *Release) *sqlrewrite.Histogram {
	h, _ := exponentialMechanism{}.grid(r)
	return h
}

// autoShares are the exact shares of ε in autoMean, each split by
// mech.SplitShare so that the shares of every branch add up to at most ε
// as real numbers: the probe, the rest after it (the low-count branch's),
// and in the centred branch the centre, the count and the sum.
type autoShares struct {
	probe, rest         float64 // ε·p, ε·(1 − p)
	centre, afterCentre float64 // ε·c, ε·(1 − p − c)
	count, body         float64 // ε·(CountShare − p), ε·(1 − CountShare − c)
}

func autoSharesOf(eps float64) autoShares {
	var s autoShares
	s.probe, s.rest = mech.SplitShare(eps, autoProbeShare)
	s.centre, s.afterCentre = mech.SplitShare(s.rest, autoMeanCentreShare/(1-autoProbeShare))
	s.count, s.body = mech.SplitShare(s.afterCentre, (CountShare-autoProbeShare)/(1-autoProbeShare-autoMeanCentreShare))
	return s
}

func (m autoMean) Start(src noise.Source, r *Release, terms []float64, histogram []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	s := laplace.Summary{Count: n, Sum: terms[1], SumSquares: terms[2]}
	eps := autoSharesOf(r.Epsilon)
	probe, err := laplace.ReleaseCount(src, n, eps.probe)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	if probe.Value()*r.Epsilon < autoMeanThreshold {
		sums, err := laplace.ReleaseEdgeSums(src, b, s, eps.rest)
		if err != nil {
			return nil, err
		}
		est, err := laplace.EdgeMeanEstimate(b, sums, Confidence)
		if err != nil {
			return nil, err
		}
		return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval,
			Note: fmt.Sprintf("the noisy count times epsilon is below %d, so the sums from both bounds answered", autoMeanThreshold)}}, nil
	}
	count, err := laplace.ReleaseCount(src, n, eps.count)
	if err != nil {
		return nil, err
	}
	centre, err := gridMedianCentre(src, r, eps.centre, histogram)
	if err != nil {
		return nil, err
	}
	sum, l, err := laplace.ReleaseSumAround(src, b, centre, s, eps.body)
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

// Check builds, without data, what every branch of Start would: its ε
// shares, the bounds the Laplace releases clamp to, and the grid median.
func (autoMean) Check(r *Release) error {
	eps := autoSharesOf(r.Epsilon)
	if err := checkShares(eps.probe, eps.rest, eps.count, eps.centre, eps.body); err != nil {
		return err
	}
	if err := laplace.CheckEdgeSums(columnBounds(r), eps.rest); err != nil {
		return err
	}
	return checkGridMedian(r, eps.centre)
}

// checkGridMedian builds the grid median gridMedianCentre releases.
func checkGridMedian(r *Release, eps float64) error {
	h, _ := exponentialMechanism{}.grid(r)
	_, err := quantile.NewGridExponential(0.5, eps, h.Bins)
	return err
}

// gridMedianCentre releases the median with eps (the centre's share) by the
// grid exponential mechanism on the quantile histogram, as a value in the
// column's bounds (the bin's integer for unit bins, else its midpoint).
func gridMedianCentre(src noise.Source, r *Release, eps float64, histogram []int64) (float64, error) {
	h, unit := exponentialMechanism{}.grid(r)
	q, err := quantile.NewGridExponential(0.5, eps, h.Bins)
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
