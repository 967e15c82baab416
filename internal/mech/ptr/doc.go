// Package ptr holds Propose-Test-Release (Dwork and Lei, "Differential
// Privacy and Robust Statistics", STOC 2009; digest
// papers/propose-test-release.md): the interquartile-range scale
// ([Scale]), the median ([Median]), the α-trimmed mean ([TrimmedMean]) and
// linear regression ([ShortcutRegression] and [HampelRegression]).
//
// Guarantee: (ε, δ)-DP under adding or removing one row. Each mechanism
// tests privately (discrete Laplace on a distance of sensitivity 1) that
// its statistic is stable on a proposed bin, and releases with noise scaled
// to the bin width or answers ⊥ ("No Reply", which costs the full budget);
// δ bounds the probability of passing a test on unstable data. See
// params.go for the adaptation to add/remove and to a private row count.
package ptr
