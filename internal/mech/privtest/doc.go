// Package privtest is the test-side toolbox for package mech and every
// mechanism built on it: logged, overridable seeds, a chi-square goodness of
// fit test, and an empirical privacy audit on neighbouring datasets.
//
// The audit ([Audit], with the pure core [Run]) runs a mechanism many times
// on a dataset D and on a neighbour D' (one privacy unit added or removed),
// buckets the outcomes, and computes for every event E in a family (each
// bucket, every union of the lowest buckets, every union of the highest
// buckets, and the NaN outcome) exact Clopper–Pearson bounds on
// P[M(D) ∈ E] and P[M(D') ∈ E]. With them it gives a lower confidence bound
// on the privacy loss,
//
//	ε̂_lb = max over E and both directions of ln((p̲ - δ) / p̄'),
//
// where p̲ is a lower bound for one dataset and p̄' an upper bound for the
// other. All bounds hold together with probability at least Confidence
// (each is one-sided at level (1-Confidence)/(4·#events): Bonferroni), and
// an (ε, δ)-DP mechanism satisfies p - δ ≤ e^ε·p' for every event, so
// ε̂_lb > ε refutes the claim with that confidence. A correct mechanism
// therefore fails an audit with probability at most 1 - Confidence; with a
// fixed seed the outcome is deterministic.
//
// The audit can only refute: it checks one pair of datasets and one family
// of events, so choose the pair where the mechanism's analysis is tight
// (the point estimate then comes close to ε) and give Edges where the
// privacy loss concentrates if the pilot's quantile buckets would blur it.
//
// privtest imports no dpproxy package, so package mech's own white-box tests
// can use it: a mechanism is a func taking math/rand/v2's Source, which has
// the method set of mech.Source.
package privtest
