package laplace

import (
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The sum, formed exactly.
//
// Σ clamp(x) summed by the database in float64 is not the sum whose
// sensitivity is max(|L|, |U|): each addition rounds, so neighbours' float
// sums can differ by more than one row's value (by up to about n²·2^−53
// times the largest value, in an order the database chooses; Casacuberta
// et al. 2022 show such sums' sensitivity exploited). Here the sum is that
// of the values snapped to the grid of the bounds (mech.Grid: L + k·Unit,
// k ∈ [0, Top]),
//
//	Σ (L + k·Unit) = n·L + Unit·Σk,
//
// an exact rational from the database's exact integers n and Σk. A row
// adds one term L + k·Unit ∈ [L, L + Top·Unit], so the sensitivity is
// max(|L|, |L + Top·Unit|) (rounded up; L + Top·Unit is within Unit/2 of
// U), k times that on a table bounded to k rows per unit; the release is
// noise.Laplace.ReleaseExact (pure ε-DP by the construction of
// noise.Laplace, which accounts for the rounding to its grid). Each value
// moves by at most Unit/2 < 2^−30·(U−L) on the grid: none on an integer
// column whose bounds are less than 2^30 apart (Unit ≤ 1 divides 1).

// ReleaseUnitSumOnGrid releases Σ clamp(x), as the sum of the values on
// the grid g of b, from the exact grid sums s over a table bounded to k
// rows per unit (k = 1 on a row-level table).
func ReleaseUnitSumOnGrid(src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, k int64, epsilon float64) (Noisy, error) {
	if err := gridReleaseInputs(b, g, s, k); err != nil {
		return Noisy{}, err
	}
	l, err := noise.NewLaplace(timesRows(k, gridSumSensitivity(g)), epsilon)
	if err != nil {
		return Noisy{}, err
	}
	return Noisy{value: l.ReleaseExact(src, gridSumOf(g, s)), stat: statSum, bounds: b, noise: l}, nil
}

// gridSumOf returns n·L + Unit·Σk exactly.
func gridSumOf(g mech.Grid, s mech.GridSums) *big.Rat {
	sum := new(big.Rat).Mul(new(big.Rat).SetInt(s.Sum), new(big.Rat).SetFloat64(g.Unit))
	return sum.Add(sum, new(big.Rat).Mul(new(big.Rat).SetInt64(s.Count), new(big.Rat).SetFloat64(g.Lower)))
}

// gridSumSensitivity returns max(|L|, |L + Top·Unit|), rounded up to a
// float64.
func gridSumSensitivity(g mech.Grid) float64 {
	top := new(big.Rat).Mul(new(big.Rat).SetInt64(g.Top), new(big.Rat).SetFloat64(g.Unit))
	top.Add(top, new(big.Rat).SetFloat64(g.Lower))
	low := new(big.Rat).SetFloat64(g.Lower)
	m := new(big.Rat).Abs(top)
	if low.Abs(low).Cmp(m) > 0 {
		m = low
	}
	f, _ := new(big.Float).SetPrec(53).SetMode(big.ToPositiveInf).SetRat(m).Float64()
	return f
}
