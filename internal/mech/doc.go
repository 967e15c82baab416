// Package mech is the vocabulary shared by dpproxy's differentially private
// mechanisms: public clamping [Bounds], order-statistic windows
// ([RankWindowSpec], [SortedWindow]), released answers ([Estimate]), the
// range of ε a release accepts ([MinEpsilon], [MaxEpsilon]), the error
// sentinels every mechanism wraps, and [Poll], which stops a long loop when
// its statement's context ends. It draws no randomness and imports
// nothing of dpproxy. The mechanisms live in one package per family, each
// stating its guarantee and source in its package comment:
//
//   - [github.com/dpproxy/dpproxy/internal/mech/noise]: the samplers (exact
//     discrete Laplace, Laplace on a power-of-two grid, dyadic and log-weight
//     sampling, grid Cauchy) and the crypto Source; the only place
//     randomness is drawn.
//   - [github.com/dpproxy/dpproxy/internal/mech/exact]: 128-bit integers,
//     rationals and directed rounding for the proofs that need exact
//     arithmetic.
//   - [github.com/dpproxy/dpproxy/internal/mech/laplace]: the Laplace
//     baselines: COUNT, clamped SUM, AVG, VARIANCE and STDDEV from shared
//     primitive releases, with analytical intervals (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/quantile]: the exponential
//     mechanism for quantiles over a public grid and over a rank window, and
//     the smooth-sensitivity median (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/piecewise]: Durfee's
//     piecewise Laplace and inverse sensitivity mechanisms for quantiles and
//     the variance (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/preprocess]: Cummings and
//     Durfee's sensitivity preprocessing for the median, mean, variance and
//     order statistics (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/ptr]: Dwork and Lei's
//     Propose-Test-Release: scale, median, trimmed mean and regression
//     ((ε, δ), may answer "No Reply").
//   - [github.com/dpproxy/dpproxy/internal/mech/histogram]: DAWA and the
//     Identity, H2 and Greedy-H baselines: range-count synopses (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/mm]: the Median Mechanism
//     (MM-SVT) for interactive counting queries (pure ε).
//   - [github.com/dpproxy/dpproxy/internal/mech/privtest] and
//     [github.com/dpproxy/dpproxy/internal/mech/oracle]: for tests only, the
//     privacy audits and exact reference computations.
//
// # Guarantee
//
// Every mechanism is differentially private with respect to adding or
// removing one privacy unit (one row, DESIGN.md §2). The number of rows n
// is private: mechanisms that use it take it as an input, or a noisy count
// paid separately, and their analysis accounts for n changing by one.
//
// # Errors
//
// Constructors and releases return plain errors that wrap one of the
// sentinels ([ErrInvalidEpsilon], ...) with the offending value.
package mech
