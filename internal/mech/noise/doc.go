// Package noise holds dpproxy's samplers: the only place randomness is
// drawn. Production code draws from [NewCryptoSource] (crypto/rand); tests
// inject a seeded *rand.ChaCha8 through the same [Source] interface.
//
// Nothing is sampled as a floating-point inverse CDF (Mironov 2012). The
// exact samplers are [Uniform], [Bernoulli] and [BernoulliExp] (exact
// Bernoulli(exp(−num/den)) by Canonne, Kamath and Steinke 2020), from which
// [DiscreteLaplace] samples the discrete Laplace law exactly and [Laplace]
// releases x + noise on a power-of-two grid (the granularity construction of
// Google's library, with an exact discrete Laplace on the grid). The
// dyadic-table, log-weight and grid-Cauchy samplers draw from piecewise or
// exponential-mechanism laws with exact integer arithmetic on public grids.
// [Stream] is a deterministic generator for public choices, never noise.
//
// Each sampler's doc comment states the law it draws from exactly; the
// mechanisms that use them state their guarantees.
package noise
