package noise

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Laplace is the Laplace mechanism for a real-valued statistic with
// sensitivity Δ (|f(D) - f(D')| ≤ Δ for neighbours): ε-DP.
//
// Construction (Google's DP library's, with the exact sampler of Canonne,
// Kamath and Steinke 2020). Let b = Δ/ε and the granularity g = 2^⌈log2 b⌉·2^-40,
// the smallest power of two ≥ b/2^40, so b/g ∈ (2^39, 2^40]. Release
//
//	M(x) = g·(m + Z),  m = round(x/g),  Z ~ DLap(β) on the integers,
//
// computed exactly and rounded once to float64 (post-processing). Rounding
// to the grid moves x by at most g/2, so neighbouring m differ by at most
// Δg = ⌊Δ/g⌋ + 1 grid steps, and DLap with β ≥ Δg/ε makes M ε-DP. β is
// Δg/ε rounded up to a rational t/s (newDlap), never down. The effective
// scale g·β exceeds b by a factor below 1 + g/Δ + 2^-54 ≤ 1 + 2^-39/ε + 2^-54:
// for ε ≥ 2^-20 the noise is larger than the textbook Laplace(Δ/ε) by less
// than 2 parts in 10^6 (for tinier ε accuracy degrades, never privacy).
// Outputs lie on the grid gℤ, so their low bits carry no information about
// x (Mironov 2012).
type Laplace struct {
	sensitivity, epsilon float64
	granularity          float64
	noise                Dlap
}

// Laplace scales must stay in [minScale, maxScale] so that the grid, its
// multiples and x/g stay normal float64 values and every grid operation is exact.
const (
	minScale = 0x1p-960
	maxScale = 0x1p960
)

// NewLaplace returns the Laplace mechanism for sensitivity Δ and ε. Δ must
// be finite and positive and Δ/ε within [2^-960, 2^960].
func NewLaplace(sensitivity, epsilon float64) (*Laplace, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	b := sensitivity / epsilon
	if !(sensitivity > 0) || math.IsInf(sensitivity, 0) || !(b >= minScale && b <= maxScale) {
		return nil, fmt.Errorf("%w: %v, must be finite and positive with sensitivity/epsilon in [2^-960, 2^960]",
			mech.ErrInvalidSensitivity, sensitivity)
	}
	g := CeilPowerOfTwo(b) * 0x1p-40
	gridSensitivity := uint64(math.Floor(sensitivity/g)) + 1
	noise, err := NewDlap(gridSensitivity, epsilon)
	if err != nil {
		return nil, err
	}
	return &Laplace{sensitivity: sensitivity, epsilon: epsilon, granularity: g, noise: noise}, nil
}

// ceilPowerOfTwo returns the smallest power of two ≥ x for a positive normal x.
func CeilPowerOfTwo(x float64) float64 {
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [0.5, 1)
	if frac == 0.5 {
		return x
	}
	return math.Ldexp(1, exp)
}

// Release returns x plus noise, a multiple of Granularity. x must be
// finite (callers validate data first); Release panics otherwise.
func (l *Laplace) Release(src Source, x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		panic("mech.Laplace.Release: non-finite input")
	}
	negative, magnitude := l.noise.Sample(src)
	return addOnGrid(roundToGrid(x, l.granularity), negative, magnitude, l.granularity)
}

// ReleaseExact returns the exact value x plus noise, as Release does for a
// float64: g·(m + Z) with m the integer nearest x/g (halves away from 0),
// computed exactly and rounded once to the nearest float64 (±Inf beyond
// range), so that a statistic computed in exact arithmetic (integer sums
// on a grid) meets the noise without a float rounding that neighbours
// could tell apart.
func (l *Laplace) ReleaseExact(src Source, x *big.Rat) float64 {
	negative, magnitude := l.noise.Sample(src)
	g := new(big.Rat).SetFloat64(l.granularity)
	q := new(big.Rat).Quo(x, g)
	// m = sign(q)·⌊|q| + ½⌋
	twice := new(big.Int).Mul(new(big.Int).Abs(q.Num()), big.NewInt(2))
	twice.Add(twice, q.Denom())
	m := twice.Quo(twice, new(big.Int).Mul(q.Denom(), big.NewInt(2)))
	if q.Sign() < 0 {
		m.Neg(m)
	}
	if negative {
		m.Sub(m, magnitude.bigInt())
	} else {
		m.Add(m, magnitude.bigInt())
	}
	f, _ := new(big.Rat).Mul(new(big.Rat).SetInt(m), g).Float64()
	return f
}

// roundToGrid returns the multiple of g nearest to x (halves away from 0),
// exactly. A float64 at least 2^52·g in magnitude is already a multiple of g.
func roundToGrid(x, g float64) float64 {
	if math.Abs(x) >= g*0x1p52 {
		return x
	}
	return math.Round(x/g) * g
}

// addOnGrid returns xr ± g·y rounded once to the nearest float64 (±Inf when
// beyond range), so the result is a function of the exact grid value
// xr ± g·y alone. Both operands of the common case are exact float64
// values, so IEEE addition already rounds the exact sum once.
func addOnGrid(xr float64, negative bool, y uint128, g float64) float64 {
	if y.below(53) {
		step := g * float64(y.Lo)
		if negative {
			step = -step
		}
		return xr + step
	}
	// 2200 bits hold every sum of a float64 and a 128-bit multiple of
	// g ≥ 2^-1000 exactly.
	const prec = 2200
	step := new(big.Float).SetPrec(prec).SetInt(y.bigInt())
	step.SetMantExp(step, math.Ilogb(g))
	if negative {
		step.Neg(step)
	}
	sum := new(big.Float).SetPrec(prec).SetFloat64(xr)
	f, _ := sum.Add(sum, step).Float64()
	return f
}

// Epsilon returns the ε the mechanism was built for.
func (l *Laplace) Epsilon() float64 { return l.epsilon }

// Sensitivity returns Δ.
func (l *Laplace) Sensitivity() float64 { return l.sensitivity }

// Granularity returns the grid step g: every output is a multiple of it.
func (l *Laplace) Granularity() float64 { return l.granularity }

// Scale returns the effective Laplace scale g·t/s of the noise, at least Δ/ε.
func (l *Laplace) Scale() float64 { return l.granularity * l.noise.Scale() }

// HalfWidth returns w with P[|Release(x) - x| ≤ w] ≥ confidence for every x:
// the discrete quantile g·k of the noise plus g/2 for the rounding of x.
// For large β it is Scale()·ln(1/(1-confidence)) up to a few grid steps.
// confidence must be in (0, 1).
func (l *Laplace) HalfWidth(confidence float64) float64 {
	return l.granularity * (l.noise.halfWidth(confidence) + 0.5)
}
