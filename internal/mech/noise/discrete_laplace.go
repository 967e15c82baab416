package noise

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// DiscreteLaplace is the Laplace mechanism for an integer statistic with
// integer sensitivity Δ (a count has Δ = 1): it releases n + Z with
// Z ~ DLap(β) on the integers, P[Z = z] ∝ exp(-|z|/β), and β = Δ/ε rounded
// up to a rational (newDlap). The ratio of output probabilities on
// neighbours is at most exp(Δ/β) ≤ exp(ε): exactly ε-DP, with no grid and no
// floating point in the noise.
type DiscreteLaplace struct {
	sensitivity uint64
	epsilon     float64
	noise       Dlap
}

// NewDiscreteLaplace returns the discrete Laplace mechanism for integer
// sensitivity Δ ≥ 1 and ε, with Δ/ε ≤ 2^60.
func NewDiscreteLaplace(sensitivity int64, epsilon float64) (*DiscreteLaplace, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if sensitivity < 1 {
		return nil, fmt.Errorf("%w: %d, must be at least 1", mech.ErrInvalidSensitivity, sensitivity)
	}
	noise, err := NewDlap(uint64(sensitivity), epsilon)
	if err != nil {
		return nil, err
	}
	return &DiscreteLaplace{sensitivity: uint64(sensitivity), epsilon: epsilon, noise: noise}, nil
}

// Release returns n + Z computed exactly and clamped to the int64 range;
// the clamp is post-processing of the exact sum, so it keeps the guarantee.
func (d *DiscreteLaplace) Release(src Source, n int64) int64 {
	negative, magnitude := d.noise.Sample(src)
	if magnitude.below(62) && n > math.MinInt64/2 && n < math.MaxInt64/2 {
		if negative {
			return n - int64(magnitude.Lo)
		}
		return n + int64(magnitude.Lo)
	}
	z := magnitude.bigInt()
	if negative {
		z.Neg(z)
	}
	z.Add(z, big.NewInt(n))
	switch {
	case z.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case z.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return z.Int64()
}

// Epsilon returns the ε the mechanism was built for.
func (d *DiscreteLaplace) Epsilon() float64 { return d.epsilon }

// Sensitivity returns Δ.
func (d *DiscreteLaplace) Sensitivity() int64 { return int64(d.sensitivity) }

// Scale returns β = t/s ≥ Δ/ε, the scale of the noise.
func (d *DiscreteLaplace) Scale() float64 { return d.noise.Scale() }

// HalfWidth returns the smallest integer k with P[|Release(n) - n| ≤ k] ≥
// confidence: k = ⌈β·ln(2/((1-confidence)(1+e^(-1/β))))⌉ - 1, at least 0.
// confidence must be in (0, 1).
func (d *DiscreteLaplace) HalfWidth(confidence float64) float64 {
	return d.noise.halfWidth(confidence)
}
