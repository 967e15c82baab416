// Package piecewise holds Durfee's instance-adaptive mechanisms on the
// order statistics: the piecewise Laplace mechanism (PLM) and the inverse
// sensitivity mechanism (INV) for quantiles and PERCENTILE_CONT
// ([Quantile], [NewInverseSensitivityQuantile]) and the piecewise Laplace
// variance ([Variance]), from "Instance-optimal mechanisms" (digest
// papers/piecewise-laplace.md).
//
// Guarantee: pure ε-DP under adding or removing one row. Each mechanism
// computes breakpoints b_k — how far the statistic can move with k rows
// added or removed — and samples a law whose density is a function of the
// breakpoints only; the breakpoints of neighbours interleave
// (b_k(D') ∈ [b_{k−1}(D), b_{k+1}(D)]), which bounds the density ratio by
// e^ε. The interleaving is a statement about exact values, so every
// breakpoint is computed exactly and rounded once, monotonically: the
// quantiles from the fetched order statistics, the variance from exact
// integer sums of grid indices that the database computes (mech.Grid,
// variance.go), never from float sums. Sampling is exact on a power-of-two
// grid (package noise).
package piecewise
