package laplace

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
)

// Privacy units (catalog: privacy_unit, max_rows_per_unit).
//
// Guarantee of the ReleaseUnit functions: pure ε-DP under adding or
// removing all the rows of one privacy unit (person), when the statistic
// is computed over the table bounded to k rows per unit
// (sqlrewrite.UnitBound). Derivation: the bounding keeps, of each unit,
// at most k rows, chosen from that unit's own rows and the statement's
// salt alone. Fix the salt (it is drawn independently of the data, so a
// mechanism that is ε-DP for every fixed salt is ε-DP). For neighbours
// D' = D ∪ U, with U the rows of one unit, the bounded tables satisfy
// B(D') = B(D) ∪ B(U) with |B(U)| ≤ k: the neighbours' bounded tables
// differ by adding at most k rows. Each added row changes
//
//	count:                  by 1            → Δ = k
//	Σ clamp(x):             by ≤ max(|L|,|U|) → Δ = k·max(|L|, |U|)
//	Σ (clamp(x) - m):       by ≤ (U-L)/2      → Δ = k·(U-L)/2
//	Σ (clamp(x) - m)²:      by ≤ ((U-L)/2)²   → Δ = k·((U-L)/2)²
//
// and the k changes add up (the triangle inequality), so Δ is the k-row
// sensitivity; discrete Laplace with integer sensitivity k (the count) and
// grid Laplace with the real Δ, rounded up (timesRows), are ε-DP for it
// (package noise). k = 1 is the row-level mechanism: a table without a
// privacy unit is the special case where each row is its own unit. AVG,
// VARIANCE and STDDEV derive from these primitives by post-processing, so
// they inherit the guarantee; their intervals use the k-scaled noise.

// MaxRowsPerUnit is the largest contribution bound k the ReleaseUnit
// functions accept (catalog.MaxRowsPerUnitLimit).
const MaxRowsPerUnit = 1 << 20

func checkRows(k int64) error {
	if k < 1 || k > MaxRowsPerUnit {
		return fmt.Errorf("%w: %d rows per unit, must be in [1, 2^20]", mech.ErrInvalidSensitivity, k)
	}
	return nil
}

// timesRows returns k·Δ rounded up: the product is computed in float64
// (rounded to nearest) and moved up one ulp unless it is exact (k = 1).
func timesRows(k int64, sensitivity float64) float64 {
	if k == 1 {
		return sensitivity
	}
	return exact.RoundUp(float64(k) * sensitivity)
}
