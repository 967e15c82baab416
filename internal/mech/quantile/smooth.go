package quantile

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// SmoothMedian is the smooth-sensitivity median of Nissim, Raskhodnikova
// and Smith (2007), a baseline: med(x) + (S(x)/α)·Z with Z standard Cauchy
// on a grid, S a β-smooth upper bound on the local sensitivity. Guarantee:
// ε-DP under add/remove of one row, n private, δ = 0.
//
// Statistic: the median of values clamped to [L, U] (average of the two
// middle ones for even n), med(∅) = (L+U)/2.
//
// Local sensitivity under add/remove (ours; the digests give only the swap
// version, which assumes a public n, digest §4.3a review note). With the
// sorted values of z padded by X(0) = L and X(N+1) = U, adding or removing
// one value moves the median by at most half of a gap between consecutive
// values next to the middle: LS(z) = ½·max gap (X(j), X(j+1)) over
// j ∈ {⌊N/2⌋, ⌈N/2⌉} (for N = 1 the removal reaches med(∅) = (L+U)/2, which
// is within that bound, and LS(∅) = (U−L)/2). Within k additions or
// removals of x, the widest such gap joins two values of x (padded) of
// ranks a < b once the b−a−1 values between are deleted and the two sides
// are balanced to within one by inserting L or U: cost (b−a−1) +
// max(0, |n+1−a−b| − 1). Solving cost ≤ k gives
//
//	A^(k)(x) = ½·max { X(b) − X(a) : 2a ≥ n−1−k, 2b ≤ n+k+3, b−a ≤ k+1 },
//
// attained at an extreme a or b (X is sorted), so O(1) per k. Tests check it
// against max LS over every dataset within distance k by brute force.
//
// Smoothing. S(x) = max(max_{k<K} e^(−kβ)·A^(k)(x), e^(−Kβ)·(U−L)/2) with a
// public depth K: the sequence A'^(k) = A^(k) for k < K and (U−L)/2 beyond
// satisfies A'^(k)(x) ≤ A'^(k+1)(x') for neighbours (balls nest, and
// A^(k) ≤ (U−L)/2), so S is a β-smooth upper bound on LS:
// S(x) ≤ e^β·S(x'). K = ⌈ln(2^40)/β⌉ makes the tail term 2^−40 of the range.
//
// Noise calibration. The release on x is the Cauchy law with centre
// f = med(x) and scale s = S(x)/α. For two Cauchy laws (f, s) and (f', s')
// the largest log-ratio of their densities, in either direction, is the
// hyperbolic distance between (f, s) and (f', s') in the upper half-plane:
//
//	sup_y |ln p(y) − ln p'(y)| = arccosh(1 + ((f − f')² + (s − s')²)/(2ss'))
//
// (the density ratio (s/s')·(s'² + (y−f')²)/(s² + (y−f)²) peaks at
// t + √(t² − 1), t the argument of arccosh). For neighbours x, x', name
// them so that S(x) ≥ S(x'), and let e^λ = s/s' ∈ [1, e^β] (β-smoothness).
// The median moves by at most the local sensitivity of either dataset (each
// is the other's neighbour), so |f − f'| ≤ LS(x') ≤ S(x') = α·s': the shift
// is bounded by the smaller scale, which is why a full shift and the widest
// dilation cannot both be measured against the larger one. Then
// t ≤ 1 + (α²s'² + (s − s')²)/(2ss') = cosh λ + (α²/2)·e^(−λ), convex in λ,
// so largest at λ = 0 or λ = β, and with arccosh(1 + 2u²) = 2 asinh(u):
//
//	loss ≤ D(α, β) = max( 2 asinh(α/2), 2 asinh(√(sinh²(β/2) + α²e^(−β)/4)) ).
//
// Both terms are attained (up to the grid): λ = 0 by adding one value to
// an evenly spaced column (the median moves by half a gap, which is LS and
// S on both sides), λ = β by pairs where S(x) = e^β·S(x') and the median
// moves by S(x'); TestSmoothMedianExactPrivacy finds both above 0.9ε. So
// D(α, β) ≤ ε is the exact condition, not a sufficient one. (The earlier
// calibration α + β ≤ ε bounded the two terms separately, by |α| and |λ|,
// and its worst loss was D(ε/2, ε/2): 0.63ε at ε = 1, 0.5ε at large ε.)
//
// The split. For a given β the largest admissible α is
// α(β) = min(2 sinh(ε/2), 2e^(β/2)·√(sinh²(ε/2) − sinh²(β/2))). Which β is
// best depends on the data; we take the one that minimises the noise
// S_β/α(β) on a column whose gaps near the median are even
// (A^(k) = (k+1)·A^(0), the shape of a continuous column), where
// S_β = M(β)·LS with M(β) = max_k (k+1)e^(−kβ), attained at
// k = ⌊1/(e^β − 1)⌋: the largest minimiser of M(β)/α(β) over 1024 public
// points of (0, min(ε, 10)]. M is 1 from β = ln 2 on, so from ε ≈ 0.96 the
// minimiser is the corner where both terms of D equal ε: α = 2 sinh(ε/2),
// β = ln(2 cosh ε − 1). For small ε, D is close to √(α² + β²) and the
// split is α ≈ β ≈ ε/√2. Examples (the old α = β = ε/2 in brackets):
// ε = 0.1: α = 0.074, β = 0.070; ε = 1: α = 1.04, β = 0.73; ε = 2:
// α = 2.35, β = 1.88 — on an evenly spaced column the noise falls 2× at
// small ε, 2.5× at ε = 1 and more beyond (Cauchy tails make a shift of a
// scales cost only 2 asinh(a/2)). Caps, both only lowering α or β (so D
// stays ≤ ε): β ≤ 10 keeps the grid Cauchy's scale below 2^58 grid steps
// (e^(Kβ) ≤ 2^40·e^10 below), α ≤ 2^20 keeps the grid step a normal float.
// α is computed in float64 and multiplied by 1 − 2^−40, which covers the
// rounding of sinh, exp and sqrt; S is computed in float64 too: its relative
// error of a few ulps moves D by less than 10^−14·ε, within the slack.
//
// Sampling. The output is the grid point k·h drawn with probability
// ∝ h((kh − f)/s) (gridCauchy, exact), then clamped to [L, U] and rounded
// to float64 (post-processing). The grid step h is a public power of two at
// most a quarter of the smallest possible scale e^(−Kβ)(U−L)/(2α); by
// Poisson summation, Σ_k h((kh−f)/s) = (s/h)·(1 + η) with
// |η| ≤ 2e^(−2πs/h)/(1 − e^(−2πs/h)) < 10^−10, so the discrete law keeps
// the continuous ratios up to e^(2·10^−10); D(α, β) ≤ ε − 10^−9 absorbs it.
//
// Window: the ranks between ⌈(n−K)/2⌉ and ⌊(n+K+2)/2⌋, about K + 3 values
// around the middle.
type SmoothMedian struct {
	bounds             mech.Bounds
	epsilon            float64
	alpha, beta        float64
	depth              int64
	step               float64
	minScale, maxScale float64
}

// smoothSlack is what the calibration leaves for the grid's Poisson error.
const smoothSlack = 1e-9

// smoothMinEpsilon is the smallest ε the smooth median accepts: below it
// the grid Cauchy's depth grows past what a release can afford.
const smoothMinEpsilon = 0x1p-16

// NewSmoothMedian returns the smooth-sensitivity median of values clamped
// to b with ε ≥ 2^−16.
func NewSmoothMedian(b mech.Bounds, epsilon float64) (*SmoothMedian, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if epsilon < smoothMinEpsilon {
		return nil, fmt.Errorf("%w: %v, the smooth-sensitivity median needs ε ≥ 2^-16", mech.ErrInvalidEpsilon, epsilon)
	}
	alpha, beta := smoothSplit(epsilon - smoothSlack)
	depth := int64(math.Ceil(40 * math.Ln2 / beta))
	half := b.HalfRange()
	minScale := math.Exp(-float64(depth)*beta) * half / alpha
	step := math.Ldexp(1, math.Ilogb(minScale/4)) // a power of two ≤ minScale/4
	return &SmoothMedian{
		bounds: b, epsilon: epsilon, alpha: alpha, beta: beta, depth: depth,
		step: step, minScale: minScale, maxScale: half / alpha,
	}, nil
}

// smoothMaxBeta and smoothMaxAlpha cap the split (see SmoothMedian).
const (
	smoothMaxBeta  = 10
	smoothMaxAlpha = 0x1p20
)

// smoothSplit returns α and β with D(α, β) ≤ eps: β the largest of the
// minimisers of M(β)/α(β) on 1024 points of (0, min(eps, 10)], α = α(β)
// (see SmoothMedian).
func smoothSplit(eps float64) (alpha, beta float64) {
	top := math.Min(eps, smoothMaxBeta)
	best := math.Inf(1)
	for i := 1; i <= 1024; i++ {
		b := top * float64(i) / 1024
		a := smoothAlphaFor(eps, b)
		if a <= 0 {
			continue
		}
		if c := smoothEvenGapFactor(b) / a; c <= best {
			best, alpha, beta = c, a, b
		}
	}
	return alpha, beta
}

// smoothAlphaFor returns the largest α with D(α, beta) ≤ eps, capped at
// 2^20 and lowered by 2^−40 relative for rounding (0 when beta ≥ eps).
func smoothAlphaFor(eps, beta float64) float64 {
	se, sb := math.Sinh(eps/2), math.Sinh(beta/2)
	r := se*se - sb*sb
	if r <= 0 {
		return 0
	}
	a := math.Min(2*se, 2*math.Exp(beta/2)*math.Sqrt(r))
	return math.Min(a, smoothMaxAlpha) * (1 - 0x1p-40)
}

// smoothEvenGapFactor returns M(β) = max_k (k+1)·e^(−kβ), S_β/LS on a
// column with even gaps near the median; the maximum is at
// k = ⌊1/(e^β − 1)⌋.
func smoothEvenGapFactor(beta float64) float64 {
	k := math.Floor(1 / math.Expm1(beta))
	return (k + 1) * math.Exp(-k*beta)
}

// Epsilon returns the ε of one release.
func (m *SmoothMedian) Epsilon() float64 { return m.epsilon }

// Window returns the ranks the mechanism reads: ⌈K/2⌉ + 3 on each side of
// the lower middle rank.
func (m *SmoothMedian) Window() mech.RankWindowSpec {
	half := (m.depth+1)/2 + 3
	return mech.RankWindowSpec{Quantile: 0.5, Below: half, Above: half}
}

// SmoothSensitivity returns S(x) (a private quantity: for tests and
// benchmarks only).
func (m *SmoothMedian) SmoothSensitivity(w mech.SortedWindow) (float64, error) {
	_, s, err := m.medianAndSensitivity(w)
	return s, err
}

// NoiseScale returns S(x)/α, the scale of the Cauchy noise: the median
// absolute error before clamping (private; for tests and benchmarks).
func (m *SmoothMedian) NoiseScale(w mech.SortedWindow) (float64, error) {
	_, s, err := m.medianAndSensitivity(w)
	return s / m.alpha, err
}

// medianAndSensitivity returns med(x), exactly, and S(x) from the window.
// S is computed in float64: its relative error (a few ulps) only scales
// the sliding and dilation bounds by 1 + 10^−15, within the slack.
func (m *SmoothMedian) medianAndSensitivity(w mech.SortedWindow) (*big.Rat, float64, error) {
	if err := w.Check(m.bounds, m.Window().Ranks(w.Count)); err != nil {
		return nil, 0, err
	}
	n := w.Count
	x := func(r int64) (float64, error) {
		v, ok := w.At(m.bounds, r)
		if !ok {
			return 0, fmt.Errorf("%w: rank %d of %d outside the window", mech.ErrWindowMismatch, r, n)
		}
		return v, nil
	}
	med := new(big.Rat).SetFloat64(m.bounds.Lower)
	med.Add(med, new(big.Rat).SetFloat64(m.bounds.Upper))
	if n > 0 {
		lo, err := x((n + 1) / 2)
		if err != nil {
			return nil, 0, err
		}
		hi, err := x(n/2 + 1)
		if err != nil {
			return nil, 0, err
		}
		med.SetFloat64(lo).Add(med, new(big.Rat).SetFloat64(hi))
	}
	med.Quo(med, big.NewRat(2, 1))
	s := math.Exp(-float64(m.depth)*m.beta) * m.bounds.HalfRange()
	for k := int64(0); k < m.depth; k++ {
		a, err := medianLSAtDistance(n, k, x)
		if err != nil {
			return nil, 0, err
		}
		s = math.Max(s, math.Exp(-float64(k)*m.beta)*a)
	}
	return med, s, nil
}

// Release returns med(x) + (S(x)/α)·Z on the grid, clamped to [L, U].
func (m *SmoothMedian) Release(src noise.Source, w mech.SortedWindow) (float64, error) {
	d, err := m.prepare(w)
	if err != nil {
		return 0, err
	}
	return d.draw(src), nil
}

// smoothDraw is the output law of one release.
type smoothDraw struct {
	m      *SmoothMedian
	cauchy noise.GridCauchy // in grid steps
	step   *big.Rat
	lo, hi *big.Rat // the bounds
}

// prepare computes the release's law from the window.
func (m *SmoothMedian) prepare(w mech.SortedWindow) (smoothDraw, error) {
	med, s, err := m.medianAndSensitivity(w)
	if err != nil {
		return smoothDraw{}, err
	}
	scale := math.Min(math.Max(s/m.alpha, m.minScale), m.maxScale)
	step := new(big.Rat).SetFloat64(m.step)
	return smoothDraw{
		m: m, cauchy: noise.NewGridCauchy(med.Quo(med, step), scale/m.step), step: step,
		lo: new(big.Rat).SetFloat64(m.bounds.Lower), hi: new(big.Rat).SetFloat64(m.bounds.Upper),
	}, nil
}

// draw returns one output: the grid point, clamped and rounded to float64.
func (d smoothDraw) draw(src noise.Source) float64 {
	y := new(big.Rat).SetInt(d.cauchy.Draw(src))
	f, _ := exact.ClampRat(y.Mul(y, d.step), d.lo, d.hi).Float64()
	return f
}

// medianLSAtDistance returns A^(k)(x), the largest local sensitivity of the
// median over datasets within k additions or removals of the n values
// whose padded rank r has value x(r) (see SmoothMedian).
func medianLSAtDistance(n, k int64, x func(int64) (float64, error)) (float64, error) {
	a := max(0, (n-k)/2)     // ⌈(n−1−k)/2⌉
	b := min(n+1, (n+k+3)/2) // ⌊(n+k+3)/2⌋
	gap := 0.0
	for _, pair := range [2][2]int64{{a, min(b, a+k+1)}, {max(a, b-k-1), b}} {
		lo, err := x(pair[0])
		if err != nil {
			return 0, err
		}
		hi, err := x(pair[1])
		if err != nil {
			return 0, err
		}
		gap = math.Max(gap, hi-lo)
	}
	return gap / 2, nil
}
