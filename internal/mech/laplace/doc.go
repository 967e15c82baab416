// Package laplace holds the Laplace baselines: COUNT, clamped SUM, AVG,
// VARIANCE/VAR_SAMP and STDDEV over public bounds [L, U].
//
// Guarantee: pure ε-DP under adding or removing one row. A statement's
// COUNT, AVG, VARIANCE and STDDEV of one column share three primitive
// releases ([ReleaseCount], [ReleaseCenteredSum],
// [ReleaseCenteredSumOfSquares]), each ε_i-DP with its own sensitivity
// (1 for the count; (U−L)/2 for the sum centred at (L+U)/2; ((U−L)/2)² for
// the centred sum of squares), so the statement is (Σε_i)-DP by sequential
// composition. [DeriveCount], [DeriveMean], [DeriveVariance] and
// [DeriveStddev] turn them into answers with 95% intervals by
// post-processing. [Count], [BoundedSum], [BoundedMean], [BoundedVariance]
// and [BoundedStddev] are the same with ε split evenly. [ReleaseEdgeSums]
// and [ReleaseEdgeSquares] (edges.go) release the same information measured
// from both bounds as one vector Laplace release with all of their ε, with
// about half the noise variance of the centred primitives (the planner's
// AVG and VARIANCE when n·ε is small). Each file derives
// its noise scale; the noise comes from package noise (exact discrete
// Laplace; Laplace on a power-of-two grid).
package laplace
