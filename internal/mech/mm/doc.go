// Package mm holds the Median Mechanism for interactive counting queries
// (Roth and Roughgarden, "Interactive privacy via the median mechanism",
// STOC 2010; digest papers/median-mechanism.md) in its MM-SVT form: a pool
// of candidate databases answers "easy" queries for free; a sparse-vector
// test decides whether a query is hard, and a hard query is answered with
// discrete Laplace noise and cuts the pool.
//
// Guarantee: pure ε-DP under adding or removing one row over the whole
// interaction: the noisy row count (unless the caller released it, see
// Config.RowCountEpsilon), at most HardCap hard answers and the
// sparse-vector tests compose to ε (plan.go derives the split). Easy
// answers are post-processing of the released values and the pool, whose
// randomness (a noise.Stream keyed at creation) is independent of the
// data. Every tested answer's state change is committed before the answer
// is released (MedianMechanism.Answer), and a shared state must have one
// writer. On a table with a privacy unit the planner runs it at ε/k per
// row on counts bounded to k rows per unit: ε-DP per unit (mm.go, "Privacy
// units").
package mm
