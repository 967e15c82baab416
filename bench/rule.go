package bench

import "math"

// The recommended default rule for the planner, from the full benchmark
// (RESULTS-accuracy.md, "Findings") and RESULTS-google.md. It reads only
// public facts: the statistic, whether the column is an integer column and
// its bounds.
//
//   - Quantiles (MEDIAN, PERCENTILE_CONT): "permute-flip" (permute-and-flip
//     over the grid exponential mechanism's grid and utility) when the
//     planner's grid is unit bins, i.e. an integer column with integer
//     bounds less than 2^16 apart: ties then put the target rank inside one
//     bin, and the answer is exact or off by one unit. On the quantile
//     cells of RESULTS-google.md it is never worse than "exponential"
//     beyond 1.3 standard errors and better beyond 2 on 21 of the 84
//     (down to 0.47× its error; bench/RESULTS.md, "Permute-and-flip").
//     Otherwise "piecewise" (piecewise Laplace on a rank window),
//     but for the median with ε ≥ smoothMinEpsilon "smooth" (the
//     smooth-sensitivity median): on the real-valued columns its error over
//     piecewise's has geometric mean 0.67 at ε = 2, 0.43 at 3 and 0.37 at
//     5, and 0.97 at ε = 1.5 with a worst cell ×17.
//   - AVG and VARIANCE: "edges" (the sums, or the squares, from both bounds
//     with all of ε; laplace.ReleaseEdgeSums, ReleaseEdgeSquares):
//     0.67–0.78× (mean) and 0.5–0.65× (variance) Google's error on every
//     cell of RESULTS-google.md, where the earlier choice driven by a probe
//     count (Google's constructions below ñ·ε = 300, a grid median and the
//     sum, piecewise Laplace or the moments around it above) lost at
//     n·ε = 100 and reached 0.66–0.99× above (issue 15).

// maxUnitGridWidth is the planner's limit for unit bins (U−L < 2^16).
const maxUnitGridWidth = maxUnitBins

// smoothMinEpsilon is the ε from which the median of a column without
// unit bins is "smooth" (the planner's smoothMinEpsilon;
// TestRecommendIsThePlannersRule checks that the two agree).
const smoothMinEpsilon = 2

// Recommend returns the candidate the planner uses by default for s with
// ε on a column with the given public facts.
func Recommend(s Statistic, integer bool, lower, upper, epsilon float64) string {
	if s.Kind == MeanStat || s.Kind == VarianceStat {
		return "edges"
	}
	if integer && lower == math.Trunc(lower) && upper == math.Trunc(upper) && upper-lower < maxUnitGridWidth {
		return "permute-flip"
	}
	if s.Quantile == 0.5 && epsilon >= smoothMinEpsilon {
		return "smooth"
	}
	return "piecewise"
}
