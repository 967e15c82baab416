// Package mech holds dpproxy's differentially private mechanisms and the
// secure noise samplers they draw from. It works on numbers only: counts,
// sums computed by the database, and windows of sorted values. It imports
// the standard library only (gonum is allowed) and nothing of dpproxy.
//
// # Guarantee
//
// Every mechanism is differentially private with respect to adding or
// removing one privacy unit (one row, DESIGN.md §2): pure ε-DP (δ = 0) for
// all but the Propose-Test-Release family (ptr_*.go: scale, median, trimmed
// mean, regression), which is (ε, δ)-DP with δ set by the caller. Each file
// states its guarantee and derives its noise scale. The number of rows n is
// private: mechanisms that use it take it as an input, or a noisy count
// paid separately, and their analysis accounts for n changing by one.
//
// # The mechanisms
//
//   - Baselines: Laplace on clamped counts and sums ([ReleaseCount] and
//     friends), the exponential mechanism for quantiles over a public grid
//     ([GridQuantile]) and on a rank window ([Quantile]).
//   - Instance-adaptive, for MEDIAN, quantiles, AVG, VARIANCE: sensitivity
//     preprocessing (preprocess*.go, Cummings and Durfee), the piecewise
//     Laplace and inverse sensitivity mechanisms (piecewise*.go, inverse.go,
//     Durfee), the smooth-sensitivity median (smooth.go).
//   - Robust statistics with "No Reply": Propose-Test-Release (ptr_*.go,
//     Dwork and Lei).
//   - Range-count synopses: DAWA and the Identity, H2 and Greedy-H
//     baselines (dawa*.go, hist_*.go, workload.go).
//   - Interactive counting queries: the Median Mechanism, MM-SVT (mm*.go,
//     Roth and Roughgarden, in the digest's practical variant).
//
// # Randomness
//
// All randomness comes from a [Source]. Production code uses
// [NewCryptoSource]; tests inject a seeded *rand.ChaCha8. Laplace noise is
// never sampled as a floating-point inverse CDF (Mironov 2012): [Laplace]
// and [DiscreteLaplace] use the exact discrete Laplace sampler of Canonne,
// Kamath and Steinke (2020) on a power-of-two grid, built from the exact
// [Uniform], [Bernoulli] and [BernoulliExp] samplers.
//
// # Sharing releases
//
// A statement such as SELECT COUNT(*), AVG(x), VARIANCE(x) needs only three
// primitive releases, each with its own ε: [ReleaseCount],
// [ReleaseCenteredSum] and [ReleaseCenteredSumOfSquares]. [DeriveCount],
// [DeriveMean], [DeriveVariance] and [DeriveStddev] turn them into answers by
// post-processing, which costs no privacy. [Count], [BoundedSum],
// [BoundedMean], [BoundedVariance] and [BoundedStddev] are the same
// mechanisms with a given ε split evenly over their primitives.
//
// # Errors
//
// Constructors and releases return plain errors that wrap one of the
// sentinels below ([ErrInvalidEpsilon], ...) with the offending value.
//
// # Concurrency
//
// Mechanism values ([Laplace], [DiscreteLaplace], [Quantile]) are immutable
// after construction and safe for concurrent use; a Source is safe for
// concurrent use only if its implementation says so (the crypto Source is).
package mech
