package histogram

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Synopses on tables with a privacy unit (a person with many rows).
//
// Neighbouring relation: add or remove all the rows of one unit. The
// histogram a synopsis is built from is read from the bounded table, in
// which each unit keeps at most k = max_rows_per_unit of its rows, chosen
// in the database independently of the values (sqlrewrite.UnitBound, one
// secret salt per build). Adding or removing a unit therefore changes the
// histogram by a vector of non-negative bin counts with L1 norm at most k,
// in any bins: k rows in one bin, or one row in each of k bins.
//
// Noise scale. Every mechanism of this package is ε-DP under adding or
// removing one row (L1 sensitivity 1). BuildForUnits runs it at
// ε_row = ε/k, rounded down so that k·ε_row ≤ ε exactly (mech.EvenShare).
// A unit step is a chain of at most k one-row steps through histograms
// (add its rows one by one), each of which costs at most ε_row, and pure
// DP losses add along a chain (group privacy): the release is
// k·ε_row ≤ ε-DP per unit. For DAWA this scales both stages: stage 1 runs
// at ρ·ε/k (its deviation tree and noisy histogram are Laplace releases of
// sensitivity 1 at ε/k, i.e. scale k/ε, the scale of the same releases at
// L1 sensitivity k and ε) and stage 2 at ε2 = (1 − ρ)·ε/k (node q is
// Laplace(1, c_q·ε2); a unit with d_q of its rows under q moves q by d_q,
// so the loss is Σ_q d_q·c_q·ε2 = Σ_rows Σ_{q on the row's path} c_q·ε2
// ≤ k·ε2, the weights on every root path summing to ≤ 1). The
// baselines (Identity, H2, Greedy-H) are the special case of stage 2
// without a partition. unit_exact_test.go checks the loss on neighbours
// that differ by k rows, in one bin and spread over bins, for the stages
// whose law is computable.

// UnitEpsilon is the ε at which a mechanism of this package runs on a
// histogram where each unit has at most rowsPerUnit rows, for the release
// to be epsilon-DP per unit: the largest ε_row with rowsPerUnit·ε_row ≤
// epsilon exactly. rowsPerUnit must be ≥ 1.
func UnitEpsilon(epsilon float64, rowsPerUnit int64) float64 {
	if rowsPerUnit < 1 || rowsPerUnit > 1<<30 {
		panic(fmt.Sprintf("histogram: UnitEpsilon needs rowsPerUnit in [1, 2^30], got %d", rowsPerUnit))
	}
	return mech.EvenShare(epsilon, int(rowsPerUnit))
}

// BuildForUnits releases a synopsis that is epsilon-DP per unit on a
// histogram in which each unit has at most rowsPerUnit rows: build, one
// of this package's mechanisms (ε-DP under one-row add/remove) bound to
// its histogram and options, runs at UnitEpsilon(epsilon, rowsPerUnit),
// and the synopsis records epsilon, what the release costs per unit. See
// the derivation above.
func BuildForUnits(epsilon float64, rowsPerUnit int64, build func(rowEpsilon float64) (*Synopsis, error)) (*Synopsis, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if rowsPerUnit < 1 || rowsPerUnit > 1<<30 {
		return nil, fmt.Errorf("%w: %d rows per unit, must be in [1, 2^30]", mech.ErrInvalidInput, rowsPerUnit)
	}
	syn, err := build(UnitEpsilon(epsilon, rowsPerUnit))
	if err != nil {
		return nil, err
	}
	return newSynopsis(syn.mechanism, epsilon, syn.n, syn.starts, syn.totals), nil
}
