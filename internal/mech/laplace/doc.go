// Package laplace holds the Laplace baselines: COUNT, clamped SUM, AVG,
// VARIANCE/VAR_SAMP and STDDEV over public bounds [L, U].
//
// Guarantee: pure ε-DP under adding or removing one row, or all the rows
// of one privacy unit on a table bounded to k rows per unit (unit.go).
// The primitive releases are [ReleaseUnitCount] (sensitivity k, discrete
// Laplace), [ReleaseUnitSumOnGrid] (sum_grid.go: sensitivity
// k·max(|L|, |U|)), [ReleaseUnitCenteredSumOnGrid] and
// [ReleaseUnitCenteredSumOfSquaresOnGrid] (centred_grid.go: sensitivity
// k·(U−L)/2 for the sum centred at m = (L+U)/2, k·((U−L)/2)² for the
// centred sum of squares), the sums' sensitivities up to the grid's
// rounding; [ReleaseCount] is the count with k = 1. The
// sums are formed exactly from the database's integer sums n, Σk, Σk² of
// the values on the grid of the bounds (mech.Grid, mech.GridSums), never
// from float sums. Each release is ε_i-DP with its own sensitivity, so a
// statement's releases are (Σε_i)-DP by sequential composition.
// [DeriveCount], [DeriveSum], [DeriveMean], [DeriveVariance] and
// [DeriveStddev] turn them into answers with 95% intervals by
// post-processing: AVG, VARIANCE and STDDEV from a count and the centred
// sums (Google's construction, mean.go and variance.go; the planner's
// forced laplace mechanism). [ReleaseEdgeSums] and [ReleaseEdgeSquares]
// (edges.go) release the same information measured from both bounds as
// one vector Laplace release with all of their ε, with about half the
// noise variance of the centred primitives (the planner's AVG and
// VARIANCE when n·ε is small). Each file derives its noise scale; the
// noise comes from package noise (exact discrete Laplace; Laplace on a
// power-of-two grid).
package laplace
