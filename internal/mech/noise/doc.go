// Package noise holds dpproxy's samplers: the only place randomness is
// drawn. Production code draws from [NewCryptoSource] (crypto/rand); tests
// inject a seeded *rand.ChaCha8 through the same [Source] interface.
//
// Nothing is sampled as a floating-point inverse CDF (Mironov 2012). The
// exact samplers are [Uniform], [Bernoulli] and [BernoulliExp] (exact
// Bernoulli(exp(−num/den)) by Canonne, Kamath and Steinke 2020), with
// their big-integer forms [UniformBig], [BernoulliBig] and
// [BernoulliExpRat] (any rational x, for permute-and-flip), from which
// [DiscreteLaplace] samples the discrete Laplace law exactly and [Laplace]
// releases x + noise on a power-of-two grid (the granularity construction of
// Google's library, with an exact discrete Laplace on the grid).
// [ExpTable] draws index i with probability exactly c_i·w_i/Σ for dyadic
// weights w_i within a relative [ExpWeightError] = 2^−62 of exp(−x_i)
// ([ExpNeg], [ExpNegPowers]; exact rational x_i), however small: the
// exponential mechanisms use it and take [ExpWeightSlack] = 2^−55 from ε
// to pay for the weights' error. [GridCauchy] draws the Cauchy law on a
// grid exactly (its float comparison only short-cuts an exact one), and
// [DyadicTable] draws its dyadic weights exactly (their error is stated
// there). No sampler compares a float uniform with a float probability.
// [Stream] is a deterministic generator for public choices, never noise.
//
// Each sampler's doc comment states the law it draws from exactly; the
// mechanisms that use them state their guarantees.
package noise
