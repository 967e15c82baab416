package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// autoVariance is the default VARIANCE (VAR_POP; STDDEV and the sample
// forms are derived from it) mechanism (issue 15: never less accurate than
// Google's bounded variance, bench/RESULTS-google.md):
//
//  1. release a probe count ñ₀ with ε·autoProbeShare (as autoMean);
//  2. if ñ₀·ε < autoVarianceThreshold: Σ(x − L)², Σ(U − x)² and
//     2Σ(x − L)(U − x) released together with the rest of ε
//     (laplace.ReleaseEdgeSquares, L1 sensitivity (U − L)²), from which
//     the count, the sum and the sum of squares follow. The same
//     information as Google's three moments around (L+U)/2 (ε/3 each),
//     with about 0.55–0.6× their error (bench/RESULTS-google.md);
//  3. else release the median c with ε·autoMeanCentreShare (grid
//     exponential mechanism). If c lies within autoVarianceMiddleBand of
//     the half-range around (L+U)/2 (spread data) and piecewise Laplace is
//     fast at that ε (its public depth at most
//     autoVarianceMaxPiecewiseDepth), piecewise Laplace
//     (piecewiseMechanism) answers with the rest of ε; otherwise (data
//     near a bound, or small ε) a count ñ with ε·(CountShare −
//     autoProbeShare) and the moments around c: the sum with
//     ε·autoVarianceSumShare and the sum of squares with the rest
//     (laplace.ReleaseSumAround, ReleaseSquaresAround), with ñ as the count.
//
// Guarantee: pure ε-DP under add/remove of one row by sequential
// composition; every stage is ε_i-DP for every value of the released
// values it depends on (ñ₀, c), and the branches are functions of those
// released values only. The shares add up to ε in every branch.
type autoVariance struct{ medianCentred }

// autoVarianceThreshold is the ñ·ε from which the median-driven branches
// answer (measured on the anchors: at n·ε = 100 the median is too noisy).
const autoVarianceThreshold = 300

// autoVarianceMiddleBand is the largest |c − (L+U)/2| / ((U−L)/2) for
// which piecewise Laplace answers.
const autoVarianceMiddleBand = 0.5

// autoVarianceMaxPiecewiseDepth is the largest tail depth K (public: a
// function of ε, the bounds and ρ) at which piecewise Laplace answers; its
// release time grows faster than K, and at K = 300 it stays under 50 ms at
// n = 10^6 (bench: go test ./bench -run '^$' -bench WindowedRelease).
const autoVarianceMaxPiecewiseDepth = 300

// piecewiseIsFast reports whether the piecewise variance of r has a depth
// of at most autoVarianceMaxPiecewiseDepth.
func piecewiseIsFast(r *Release) bool {
	v, err := piecewiseMechanism{}.variance(r)
	return err == nil && v.Depth() <= autoVarianceMaxPiecewiseDepth
}

// autoVarianceSumShare is the share of ε for the sum around c; the count
// matters little there (it enters through Var/n), the sum of squares most.
const autoVarianceSumShare = 0.15

func (autoVariance) Name() string              { return "auto-variance" }
func (autoVariance) Supports(s Statistic) bool { return s.Kind == StatVariance }

func (autoVariance) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: a probe count (%g of ε); if ñ·ε < %d the squares from both bounds (the rest), else a grid median (%g of ε), then piecewise Laplace (the rest) if it lies in the middle half of the bounds and piecewise's depth is at most %d, else a noisy count (%g of ε) and the Laplace moments around the median (the rest)", autoProbeShare, autoVarianceThreshold, autoMeanCentreShare, autoVarianceMaxPiecewiseDepth, CountShare-autoProbeShare)
}

func (m autoVariance) Reads(r *Release) string {
	reads := fmt.Sprintf("3 summary aggregates and one GROUP BY histogram of %d bins computed by the database", m.Histogram(r).Bins)
	if pr := autoVariancePiecewise(r); piecewiseIsFast(pr) {
		reads += "; for piecewise Laplace also " + piecewiseMechanism{}.Reads(pr)
	}
	return reads
}

// autoVariancePiecewise is r with the ε piecewise Laplace gets in
// autoVariance: all but the probe and the centre (it needs no count).
func autoVariancePiecewise(r *Release) *Release {
	pr := *r
	pr.Epsilon = autoSharesOf(r.Epsilon).afterCentre
	return &pr
}

func (m autoVariance) Start(src noise.Source, r *Release, terms []float64, histogram []int64) (Step, error) {
	n := int64(math.Round(terms[0]))
	s := laplace.Summary{Count: n, Sum: terms[1], SumSquares: terms[2]}
	eps := autoSharesOf(r.Epsilon)
	probe, err := laplace.ReleaseCount(src, n, eps.probe)
	if err != nil {
		return nil, err
	}
	b := columnBounds(r)
	if probe.Value()*r.Epsilon < autoVarianceThreshold {
		squares, err := laplace.ReleaseEdgeSquares(src, b, s, eps.rest)
		if err != nil {
			return nil, err
		}
		est, err := laplace.EdgeVarianceEstimate(b, squares, Confidence)
		if err != nil {
			return nil, err
		}
		return finished{Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval,
			Note: fmt.Sprintf("the noisy count times epsilon is below %d, so the squares from both bounds answered", autoVarianceThreshold)}}, nil
	}
	centre, err := gridMedianCentre(src, r, eps.centre, histogram)
	if err != nil {
		return nil, err
	}
	if pr := autoVariancePiecewise(r); math.Abs(centre-b.Mid()) <= autoVarianceMiddleBand*b.HalfRange() && piecewiseIsFast(pr) {
		return piecewiseMechanism{}.Start(src, pr, terms, nil)
	}
	count, err := laplace.ReleaseCount(src, n, eps.count)
	if err != nil {
		return nil, err
	}
	sum, squares := autoVarianceMomentShares(eps)
	return momentsAround(src, b, centre, s, count, sum, squares, fmt.Sprintf("moments around a private median %g", centre))
}

// autoVarianceMomentShares splits the body of ε after the count between
// the sum (ε·autoVarianceSumShare) and the sum of squares (the rest).
func autoVarianceMomentShares(eps autoShares) (sum, squares float64) {
	return mech.SplitShare(eps.body, autoVarianceSumShare/(1-CountShare-autoMeanCentreShare))
}

// Check builds, without data, what every branch of Start would: its ε
// shares, the bounds, the grid median and, where it may answer, piecewise
// Laplace.
func (autoVariance) Check(r *Release) error {
	eps := autoSharesOf(r.Epsilon)
	sum, squares := autoVarianceMomentShares(eps)
	if err := checkShares(eps.probe, eps.rest, eps.centre, eps.count, sum, squares); err != nil {
		return err
	}
	if err := laplace.CheckEdgeSquares(columnBounds(r), eps.rest); err != nil {
		return err
	}
	if err := checkGridMedian(r, eps.centre); err != nil {
		return err
	}
	if pr := autoVariancePiecewise(r); piecewiseIsFast(pr) {
		return piecewiseMechanism{}.Check(pr)
	}
	return nil
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
