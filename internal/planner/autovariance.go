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

// autoVariance is the default VARIANCE (VAR_POP; STDDEV and the sample
// forms are derived from it) mechanism (issue 15: never less accurate than
// Google's bounded variance, bench/RESULTS-google.md):
//
//  1. release the noisy count ñ with ε·CountShare;
//  2. if ñ·ε < autoVarianceThreshold: Google's three moments around
//     (L+U)/2 with the rest of ε in thirds (a fresh count, the sum and the
//     sum of squares around the middle; laplace.VarianceAround);
//  3. else release the median c with ε·autoMeanCentreShare (grid
//     exponential mechanism). If c lies within autoVarianceMiddleBand of
//     the half-range around (L+U)/2 (spread data), piecewise Laplace
//     (piecewiseMechanism) answers with the rest of ε; otherwise (data
//     near a bound) the moments around c: the sum with
//     ε·autoVarianceSumShare and the sum of squares with the rest
//     (laplace.ReleaseSumAround, ReleaseSquaresAround), with ñ as the count.
//
// Guarantee: pure ε-DP under add/remove of one row by sequential
// composition; every stage is ε_i-DP for every value of the released
// values it depends on (ñ, c), and the branches are functions of those
// released values only. The shares add up to ε in every branch.
type autoVariance struct{}

// autoVarianceThreshold is the ñ·ε from which the median-driven branches
// answer (measured on the anchors: at n·ε = 100 the median is too noisy).
const autoVarianceThreshold = 300

// autoVarianceMiddleBand is the largest |c − (L+U)/2| / ((U−L)/2) for
// which piecewise Laplace answers.
const autoVarianceMiddleBand = 0.5

// autoVarianceSumShare is the share of ε for the sum around c; the count
// matters little there (it enters through Var/n), the sum of squares most.
const autoVarianceSumShare = 0.15

func (autoVariance) Name() string              { return "auto-variance" }
func (autoVariance) NeedsDelta() bool          { return false }
func (autoVariance) Supports(s Statistic) bool { return s.Kind == StatVariance }

// Histogram is the quantile mechanism's: the centre is a grid median.
func (autoVariance) Histogram(r *Release) *sqlrewrite.Histogram {
	h, _ := exponentialMechanism{}.grid(r)
	return h
}

func (autoVariance) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: a noisy count (%g of ε); if ñ·ε < %d the Laplace moments around the middle of the bounds, else a grid median (%g of ε) and then piecewise Laplace if it lies in the middle half of the bounds, else the Laplace moments around it", CountShare, autoVarianceThreshold, autoMeanCentreShare)
}

func (autoVariance) Terms(r *Release) []sqlrewrite.SummaryTerm {
	return laplaceMechanism{}.Terms(&Release{Stat: Statistic{Kind: StatCenteredSumSquares, Column: r.Stat.Column}})
}

func (m autoVariance) Reads(r *Release) string {
	pr := *r
	pr.Epsilon = r.Epsilon * (1 - CountShare - autoMeanCentreShare)
	return fmt.Sprintf("3 summary aggregates and one GROUP BY histogram of %d bins computed by the database; for piecewise Laplace also %s",
		m.Histogram(r).Bins, piecewiseMechanism{}.Reads(&pr))
}

func (m autoVariance) Start(src noise.Source, r *Release, terms []float64, histogram []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	s := laplace.Summary{Count: n, Sum: terms[1], SumSquares: terms[2]}
	count, err := laplace.ReleaseCount(src, n, r.Epsilon*CountShare)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	if count.Value()*r.Epsilon < autoVarianceThreshold {
		third := r.Epsilon * (1 - CountShare) / 3
		c2, err := laplace.ReleaseCount(src, n, third)
		if err != nil {
			return nil, err
		}
		return momentsAround(src, b, b.Mid(), s, c2, third, third,
			fmt.Sprintf("the noisy count times epsilon is below %d, so the Laplace moments around the middle of the bounds answered", autoVarianceThreshold))
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
	rest := r.Epsilon * (1 - CountShare - autoMeanCentreShare)
	if math.Abs(centre-b.Mid()) <= autoVarianceMiddleBand*b.HalfRange() {
		pr := *r
		pr.Epsilon = rest
		return piecewiseMechanism{}.Start(src, &pr, terms, nil)
	}
	return momentsAround(src, b, centre, s, count, r.Epsilon*autoVarianceSumShare, rest-r.Epsilon*autoVarianceSumShare,
		fmt.Sprintf("moments around a private median %g", centre))
}

// momentsAround releases the sum (sumEps) and the sum of squares
// (squaresEps) around centre and derives the population variance with the
// noisy count and its interval.
func momentsAround(src noise.Source, b mech.Bounds, centre float64, s laplace.Summary, count laplace.Noisy, sumEps, squaresEps float64, note string) (Step, error) {
	sum, ls, err := laplace.ReleaseSumAround(src, b, centre, s, sumEps)
	if err != nil {
		return nil, err
	}
	squares, lq, err := laplace.ReleaseSquaresAround(src, b, centre, s, squaresEps)
	if err != nil {
		return nil, err
	}
	est, err := laplace.VarianceAroundEstimate(b, sum, squares, ls, lq, count, Confidence)
	if err != nil {
		return nil, err
	}
	return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval, Note: note}}, nil
}
