package bench

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The centred mean and variance of centredCandidate: the planner's
// earlier auto-mean and auto-variance, kept for the benchmark only (the
// proxy no longer releases them: their sums are the database's float
// sums, whose rounding is outside their sensitivity analysis).

// validSummary checks a summary's count and sums.
func validSummary(s Summary) error {
	if s.Count < 0 || math.IsNaN(s.Sum) || math.IsInf(s.Sum, 0) || math.IsNaN(s.SumSquares) || math.IsInf(s.SumSquares, 0) {
		return fmt.Errorf("%w: summary %+v", mech.ErrInvalidInput, s)
	}
	return nil
}

// Mean around a released centre.
//
// Google's bounded mean (the proxy's forced laplace AVG: laplace.DeriveMean
// of a count and laplace.ReleaseUnitCenteredSumOnGrid) centres the sum at
// the middle of the bounds m = (L+U)/2: Σ(clamp(x) − m) has sensitivity (U−L)/2, and the
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
// Guarantee of releaseSumAround, for a public c ∈ [L, U]: one row
// contributes clamp(x) − c ∈ [L − c, U − c] to Σ(clamp(x) − c), so adding
// or removing it moves the sum by at most D(c) (rounded up, never down),
// and Laplace(D(c)/ε) on the grid (noise.Laplace) is ε-DP under add/remove
// of one row. meanAround is post-processing of that sum and of a noisy
// count released elsewhere. The whole AVG (centre with ε_c, count with ε_n,
// sum with ε_s) is (ε_c + ε_n + ε_s)-DP by sequential composition, each
// stage's privacy holding for every value of the earlier, released ones.
// Floating point: the sums come from the database in its arithmetic
// (Summary) and Sum − n·c is formed here; their rounding residue is not
// part of the sensitivity analysis (the proxy's own centred sums are formed
// exactly from the grid sums instead: laplace's centred_grid.go).
//
// The idea of a data-dependent centre with a small count share is the
// standard "centre, then add noise" of private mean estimation (e.g. the
// coarse-then-fine estimators of Karwa and Vadhan 2018 and CoinPress,
// Biswas et al. 2020); the variant here keeps the public bounds for
// clamping and only moves the centre.

// sensitivityAround returns D(c) = max(c − L, U − c), rounded up, the
// add/remove sensitivity of Σ(clamp(x) − c).
func sensitivityAround(b mech.Bounds, centre float64) float64 {
	return exact.RoundUp(math.Max(centre-b.Lower, b.Upper-centre))
}

// releaseSumAround releases Σ(clamp(x) − c) = Sum − n·c with Laplace noise
// for sensitivity sensitivityAround(b, c). c must lie in [L, U].
func releaseSumAround(src noise.Source, b mech.Bounds, centre float64, s Summary, epsilon float64) (value float64, l *noise.Laplace, err error) {
	if err := b.Validate(); err != nil {
		return 0, nil, err
	}
	if !(centre >= b.Lower && centre <= b.Upper) {
		return 0, nil, fmt.Errorf("%w: centre %v outside [%v, %v]", mech.ErrInvalidInput, centre, b.Lower, b.Upper)
	}
	if err := validSummary(s); err != nil {
		return 0, nil, err
	}
	d := sensitivityAround(b, centre)
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

// meanAround is the mean derived from a noisy sum around centre and a
// noisy count: clamp(c + S̃/max(ñ, 1), L, U). Post-processing.
func meanAround(b mech.Bounds, centre, noisySum, noisyCount float64) float64 {
	return b.Clamp(centre + noisySum/math.Max(noisyCount, 1))
}

// Variance around a released centre.
//
// The same idea for VAR_POP: with S = Σ(clamp(x) − c) and
// Q = Σ(clamp(x) − c)², the population variance is Q/n − (S/n)² for every
// c. Google's bounded variance takes c = (L+U)/2, where for data near a
// bound both terms are ≈ ((U−L)/2)² and their noise (and the count's)
// does not cancel; around a c near the data S/n ≈ 0, so the sum's noise
// enters only squared and the count's through Q/n² = Var/n, and nearly all
// of ε can go to Q, at the price of its sensitivity D(c)².
//
// Guarantee of releaseSquaresAround, for a public c ∈ [L, U]: one row
// contributes (clamp(x) − c)² ∈ [0, D(c)²], so adding or removing it moves
// Q by at most D(c)² (both factors rounded up, the product rounded up),
// and Laplace(D(c)²/ε) on the grid is ε-DP under add/remove of one row.
// varianceAround is post-processing.

// releaseSquaresAround releases Σ(clamp(x) − c)² = SumSquares − 2c·Sum +
// n·c², limited to [0, n·D(c)²], with Laplace noise for sensitivity D(c)².
func releaseSquaresAround(src noise.Source, b mech.Bounds, centre float64, s Summary, epsilon float64) (value float64, l *noise.Laplace, err error) {
	if err := b.Validate(); err != nil {
		return 0, nil, err
	}
	if !(centre >= b.Lower && centre <= b.Upper) {
		return 0, nil, fmt.Errorf("%w: centre %v outside [%v, %v]", mech.ErrInvalidInput, centre, b.Lower, b.Upper)
	}
	if err := validSummary(s); err != nil {
		return 0, nil, err
	}
	d := sensitivityAround(b, centre)
	if d == 0 {
		return 0, nil, fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	l, err = noise.NewLaplace(exact.RoundUp(d*d), epsilon)
	if err != nil {
		return 0, nil, err
	}
	n := float64(s.Count)
	q := mech.Clamp(s.SumSquares-2*centre*s.Sum+n*centre*centre, 0, n*d*d)
	return l.Release(src, q), l, nil
}

// varianceAround is the population variance derived from noisy sums around
// centre and a noisy count: clamp(Q̃/ñ₁ − (S̃/ñ₁)², 0, ((U−L)/2)²),
// ñ₁ = max(ñ, 1). Post-processing.
func varianceAround(b mech.Bounds, noisySum, noisySquares, noisyCount float64) float64 {
	n := math.Max(noisyCount, 1)
	m := noisySum / n
	h := b.HalfRange()
	return mech.Clamp(noisySquares/n-m*m, 0, h*h)
}
