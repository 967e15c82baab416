// Package histogram holds the range-count synopses: DAWA (Li, Hay, Miklau
// and Wang, "A data- and workload-aware algorithm for range queries under
// differential privacy", VLDB 2014; digest papers/dawa.md) and the
// Identity, H2 and Greedy-H baselines, with the workloads they are tuned
// for and the [Synopsis] they release.
//
// Guarantee: pure ε-DP under adding or removing one row: a histogram over
// public bins changes by 1 in one bin. DAWA spends ε1 on choosing a
// partition (the default deviation tree, or the paper's Algorithm 1 made
// exact) and ε2 on releasing the bucket totals through a workload-adapted
// strategy (stage 2); the baselines spend all of ε on their strategy.
// Answers from a synopsis are post-processing. On a table with a privacy
// unit, where the histogram keeps at most k rows per unit, BuildForUnits
// runs a mechanism at ε/k per row: ε-DP under adding or removing a unit
// (unit.go derives it). NoisyRowCount and NoisyCells are the plain
// discrete Laplace releases of a histogram's row count and cells that the
// interactive instance (package exec) makes.
package histogram
