package bench

import "math"

// The recommended default rule for the planner, from the full benchmark
// (RESULTS-accuracy.md, "Findings"). It reads only public facts: the
// statistic, ε, whether the column is an integer column, its bounds, and —
// for the mean only — a noisy count ñ.
//
//   - Quantiles (MEDIAN, PERCENTILE_CONT): "exponential" (the grid
//     mechanism) when the planner's grid is unit bins, i.e. an integer
//     column with integer bounds less than 2^16 apart: ties then put the
//     target rank inside one bin, and the answer is exact or off by one
//     unit. Otherwise "piecewise" (piecewise Laplace on a rank window).
//   - AVG: release ñ with CountShare·ε; if ñ·ε ≥ MeanCentredMinCountEpsilon
//     use "centred" (a grid median as the centre, then the sum around it)
//     with that ñ, else "laplace" (laplace.BoundedMean) with the remaining
//     ε: the median is a useful centre only once n·ε is large
//     (RESULTS-google.md, issue 15).
//   - VARIANCE: "edges" (the squares from both bounds with all of ε,
//     laplace.ReleaseEdgeSquares): 0.5–0.65× Google's error on every cell
//     of RESULTS-google.md, where the earlier count-driven choice (a grid
//     median, then piecewise Laplace or the moments around it) reached
//     0.6–0.99×.

// MeanCentredMinCountEpsilon is the smallest ñ·ε for which the rule picks
// the centred mean for AVG (the planner's autoMeanThreshold).
const MeanCentredMinCountEpsilon = 300

// maxUnitGridWidth is the planner's limit for unit bins (U−L < 2^16).
const maxUnitGridWidth = maxUnitBins

// RuleNeedsCount reports whether Recommend reads ñ for s: the planner then
// releases ñ with CountShare·ε before choosing, and the chosen mechanism
// gets the rest of ε.
func RuleNeedsCount(s Statistic) bool { return s.Kind == MeanStat }

// Recommend returns the candidate the planner should use by default for s
// at ε on a column with the given public facts. noisyCount is ñ, read only
// when RuleNeedsCount(s).
func Recommend(s Statistic, epsilon float64, integer bool, lower, upper, noisyCount float64) string {
	switch s.Kind {
	case MeanStat:
		if noisyCount*epsilon >= MeanCentredMinCountEpsilon {
			return "centred"
		}
		return "laplace"
	case VarianceStat:
		return "edges"
	}
	if integer && lower == math.Trunc(lower) && upper == math.Trunc(upper) && upper-lower < maxUnitGridWidth {
		return "exponential"
	}
	return "piecewise"
}
