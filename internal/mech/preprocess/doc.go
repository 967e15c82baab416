// Package preprocess holds sensitivity preprocessing (Cummings and Durfee,
// "Individual sensitivity preprocessing for data privacy", digest
// papers/sensitivity-preprocessing.md) for the median, mean, variance and
// order statistics: a function g with g(∅) a public centre and
// |g(D) − g(D')| ≤ Δ for neighbours, equal to the statistic on stable data,
// released with Laplace noise of scale Δ/ε (plus rounding slack).
//
// Guarantee: pure ε-DP under adding or removing one row, because g has
// global sensitivity Δ by construction (Algorithm 1's clamping to the
// neighbours' values ± Δ); Δ and the centre come from public bounds and a
// noisy count paid by the caller. The O(n) and O(n log n) algorithms here
// are checked against the exponential-time Algorithm 1 of package oracle.
package preprocess
