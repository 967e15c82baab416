// Package privtest is the test-side toolbox for package mech and every
// mechanism built on it: logged, overridable seeds, a chi-square goodness of
// fit test, and an empirical privacy audit on neighbouring datasets.
//
// The audit ([Audit], with the pure core [Run]) runs a mechanism many times
// on a dataset D and on a neighbour D' (one privacy unit added or removed),
// buckets the outcomes, and computes for every event E in a family (each
// bucket, every union of the lowest buckets, every union of the highest
// buckets, the NaN outcome, and the unions of the buckets of highest
// likelihood ratio in each direction, ranked on an independent pilot run)
// exact Clopper–Pearson bounds on P[M(D) ∈ E] and P[M(D') ∈ E]. With them
// it gives a lower confidence bound on the privacy loss,
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
// δ. (ε, δ)-DP bounds P(E) − e^ε·P'(E) ≤ δ for every event E: δ is a bound
// on the total mass of the region where the likelihood ratio exceeds e^ε,
// and it is subtracted once, from the probability of one event. Subtracting
// it from single buckets only would hide any leak spread over many buckets
// each lighter than δ; the ratio-ranked unions gather such a region into one
// event, so its whole mass is compared with δ. Conversely, a pair on which
// the mechanism answers (leaves ⊥) with probability below δ carries no
// information at that δ: audit pairs where the mechanism answers.
//
// False rejections. The family is fixed before the main run (the pilot's
// streams are independent of it), so the Bonferroni union bound holds over
// all of it: a mechanism that is (ε, δ)-DP on the pair fails the audit with
// probability at most 1 − Confidence (10⁻³ by default), whatever the seed.
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
