package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Mean around a released centre.
//
// Google's bounded mean (mean.go) centres the sum at the middle of the
// bounds m = (L+U)/2: Σ(clamp(x) − m) has sensitivity (U−L)/2, and the
// mean m + S̃/ñ then errs by about (|N_S| + |μ − m|·|N_n|)/n, N_S and N_n
// the noise of the sum and of the count. When the data sit far from m
// (|μ − m| close to (U−L)/2, common in skewed columns) the count's noise
// costs as much as the sum's, which is why that mechanism splits ε
// equally. Centring at a point c near the data instead makes the count's
// term |μ − c|·|N_n|/n small, so the count needs only a small share of ε
// and the sum gets almost all of it, at the price of a larger sensitivity
// D(c) = max(c − L, U − c) ∈ [(U−L)/2, U−L]. The centre must be public:
// the planner releases it first with a little ε (the grid exponential
// median), so c is a released value and everything below is conditioned
// on it (adaptive sequential composition).
//
// Guarantee of ReleaseSumAround, for a public c ∈ [L, U]: one row
// contributes clamp(x) − c ∈ [L − c, U − c] to Σ(clamp(x) − c), so adding
// or removing it moves the sum by at most D(c) (rounded up, never down),
// and Laplace(D(c)/ε) on the grid (noise.Laplace) is ε-DP under add/remove
// of one row. MeanAround is post-processing of that sum and of a noisy
// count released elsewhere. The whole AVG (centre with ε_c, count with ε_n,
// sum with ε_s) is (ε_c + ε_n + ε_s)-DP by sequential composition, each
// stage's privacy holding for every value of the earlier, released ones.
// The idea of a data-dependent centre with a small count share is the
// standard "centre, then add noise" of private mean estimation (e.g. the
// coarse-then-fine estimators of Karwa and Vadhan 2018 and CoinPress,
// Biswas et al. 2020); the variant here keeps the public bounds for
// clamping and only moves the centre.

// SensitivityAround returns D(c) = max(c − L, U − c), rounded up, the
// add/remove sensitivity of Σ(clamp(x) − c).
func SensitivityAround(b mech.Bounds, centre float64) float64 {
	return exact.RoundUp(math.Max(centre-b.Lower, b.Upper-centre))
}

// ReleaseSumAround releases Σ(clamp(x) − c) = Sum − n·c with Laplace noise
// for sensitivity SensitivityAround(b, c). c must lie in [L, U].
func ReleaseSumAround(src noise.Source, b mech.Bounds, centre float64, s Summary, epsilon float64) (value float64, l *noise.Laplace, err error) {
	if err := b.Validate(); err != nil {
		return 0, nil, err
	}
	if !(centre >= b.Lower && centre <= b.Upper) {
		return 0, nil, fmt.Errorf("%w: centre %v outside [%v, %v]", mech.ErrInvalidInput, centre, b.Lower, b.Upper)
	}
	if err := s.validate(); err != nil {
		return 0, nil, err
	}
	d := SensitivityAround(b, centre)
	if d == 0 { // L = U = c: every row contributes 0
		return 0, nil, fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	l, err = noise.NewLaplace(d, epsilon)
	if err != nil {
		return 0, nil, err
	}
	n := float64(s.Count)
	return l.Release(src, mech.Clamp(s.Sum-n*centre, n*(b.Lower-centre), n*(b.Upper-centre))), l, nil
}

// MeanAround is the mean derived from a noisy sum around centre and a
// noisy count: clamp(c + S̃/max(ñ, 1), L, U). Post-processing.
func MeanAround(b mech.Bounds, centre, noisySum, noisyCount float64) float64 {
	return b.Clamp(centre + noisySum/math.Max(noisyCount, 1))
}
