package laplace

import (
	"fmt"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The centred sums of the forced laplace mechanism, formed exactly.
//
// Guarantee: each release below is pure ε-DP under adding or removing one
// row, or all the rows of one unit on a table bounded to k rows per unit
// (unit.go), with the sensitivity derived here. They are the primitives
// of AVG, VARIANCE and STDDEV under the forced laplace mechanism (mean.go,
// variance.go).
//
// Σ(clamp(x) − m) and Σ(clamp(x) − m)², m = (L+U)/2, formed in float from
// the database's COUNT, SUM and sum of squares as Sum − n·m and
// SumSquares − 2m·Sum + n·m², lose to cancellation several ulps of n·m²:
// on a column far from 0 for its width (an hour of Unix seconds) that is
// many times the sensitivity ((U−L)/2)², and neighbours differ by far more
// than the noise is calibrated for (31ε measured). Here they come from the
// database's exact integer sums n, Σk, Σk² of the grid indices
// (mech.GridSums over mech.Grid of the bounds: L + k·Unit, k ∈ [0, Top]):
// with c = Top/2,
//
//	Σ(k − c) = Σk − n·c,   Σ(k − c)² = Σk² − Top·Σk + n·c²,
//
// exact rationals in grid units; a row adds k − c ∈ [−c, c] and
// (k − c)² ∈ [0, c²], so the sensitivities are c and c² (k·c and k·c² on a
// table bounded to k rows per unit). Each is released by
// noise.Laplace.ReleaseExact (m = the integer nearest f/γ, exactly; pure
// ε-DP by the construction of noise.Laplace, which accounts for the
// rounding to its grid) and scaled to the values' units (× Unit, × Unit²:
// post-processing). The statistic is that of the values snapped to the
// grid, each moved by at most Unit/2 < 2^−30·(U−L).

// scaledNoise is the noise model of a release made in grid units and
// scaled to the values' units by unit.
type scaledNoise struct {
	noise *noise.Laplace
	unit  float64
}

func (s scaledNoise) HalfWidth(confidence float64) float64 {
	return s.unit * s.noise.HalfWidth(confidence)
}

func (s scaledNoise) Scale() float64 { return s.unit * s.noise.Scale() }

// ReleaseUnitCenteredSumOnGrid releases Σ(clamp(x) − m) from the exact
// grid sums s over a table bounded to k rows per unit (k = 1 on a
// row-level table), with Laplace noise for sensitivity k·Top/2 in grid
// units (k·(U−L)/2 in the values' units, up to the grid's rounding): pure
// ε-DP under adding or removing one row, or one unit's rows.
func ReleaseUnitCenteredSumOnGrid(src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, k int64, epsilon float64) (Noisy, error) {
	if err := gridReleaseInputs(b, g, s, k); err != nil {
		return Noisy{}, err
	}
	l, err := noise.NewLaplace(timesRows(k, float64(g.Top)/2), epsilon)
	if err != nil {
		return Noisy{}, err
	}
	return Noisy{value: g.Unit * l.ReleaseExact(src, centredSumOf(g, s)), stat: statCenteredSum, bounds: b, noise: scaledNoise{l, g.Unit}}, nil
}

// centredSumOf returns Σ(k − Top/2) = Σk − n·Top/2 exactly, in grid units.
func centredSumOf(g mech.Grid, s mech.GridSums) *big.Rat {
	sum := new(big.Rat).SetInt(s.Sum)
	return sum.Sub(sum, new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(s.Count), big.NewInt(g.Top)), big.NewInt(2)))
}

// ReleaseUnitCenteredSumOfSquaresOnGrid releases Σ(clamp(x) − m)² from the
// exact grid sums s over a table bounded to k rows per unit, with Laplace
// noise for sensitivity k·(Top/2)² in grid units² (k·((U−L)/2)² in the
// values' units, up to the grid's rounding): pure ε-DP under adding or
// removing one row, or one unit's rows.
func ReleaseUnitCenteredSumOfSquaresOnGrid(src noise.Source, b mech.Bounds, g mech.Grid, s mech.GridSums, k int64, epsilon float64) (Noisy, error) {
	if err := gridReleaseInputs(b, g, s, k); err != nil {
		return Noisy{}, err
	}
	if err := s.CheckSquares(g); err != nil {
		return Noisy{}, err
	}
	l, err := noise.NewLaplace(timesRows(k, squareUp(g.Top)/4), epsilon)
	if err != nil {
		return Noisy{}, err
	}
	unit2 := g.Unit * g.Unit
	return Noisy{value: unit2 * l.ReleaseExact(src, centredSquaresOf(g, s)), stat: statCenteredSumOfSquares, bounds: b, noise: scaledNoise{l, unit2}}, nil
}

// centredSquaresOf returns Σ(k − Top/2)² = Σk² − Top·Σk + n·Top²/4
// exactly, in grid units².
func centredSquaresOf(g mech.Grid, s mech.GridSums) *big.Rat {
	top := big.NewInt(g.Top)
	q := new(big.Rat).SetInt(new(big.Int).Sub(s.SumSquares, new(big.Int).Mul(top, s.Sum)))
	return q.Add(q, new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(s.Count), new(big.Int).Mul(top, top)), big.NewInt(4)))
}

// gridReleaseInputs validates the inputs of the grid releases (the sum and
// the centred sums): the grid is the one of b, and the sums are consistent
// with it.
func gridReleaseInputs(b mech.Bounds, g mech.Grid, s mech.GridSums, k int64) error {
	if err := checkRows(k); err != nil {
		return err
	}
	want, err := mech.NewGrid(b)
	if err != nil {
		return err
	}
	if g != want {
		return fmt.Errorf("%w: grid %+v is not the grid of %v", mech.ErrInvalidInput, g, b)
	}
	return checkGridSums(g, s)
}
