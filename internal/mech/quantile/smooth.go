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
// Noise calibration (decision, recorded here). NRS07 state admissible
// Cauchy-like noise with constants the digests could only quote from
// memory (α = ε/(4γ), β = ε/γ, or the public implementations' α = β =
// ε/(2(γ+1)), i.e. 6·S_{ε/6}/ε for the Cauchy, γ = 2); NRS07 is not among
// the seeds. We use the first-principles bound instead, which is tighter:
// for h(z) = 1/(π(1+z²)) and neighbours x, x', write y's position
// z = (y − f(x'))/s' and s = S(x)/α, s' = S(x')/α, e^λ = s/s'. Then
// ln p_x(y) − ln p_x'(y) = [ln h(e^(−λ)z + δ) − ln h(e^(−λ)z)] +
// [ln h(e^(−λ)z) − ln h(z) − λ], δ = (f(x') − f(x))/s. The first term is at
// most |δ| ≤ α, because |d ln h/dz| = 2|z|/(1+z²) ≤ 1 and
// |f(x) − f(x')| ≤ LS(x) ≤ S(x); the second is ln((1+z²)/(1+e^(−2λ)z²)) − λ,
// which lies in [−|λ|, |λ|], and |λ| ≤ β by smoothness. So any α + β ≤ ε
// is ε-DP, and α = β = ε/2 (the split that minimises S_β/α when A^(k) grows
// linearly) gives noise 2·S_{ε/2}(x)/ε · Z. TestSmoothMedianExactPrivacy
// bounds the exact loss in closed form on 1500 neighbouring pairs: at most
// 0.63ε at ε = 1 and 0.5ε at large ε. The bound is loose because the
// sliding term is tight only near z = 1 and the dilation term only as
// z → ∞ (and for large shifts |d ln h/dz| ≤ 1 overstates the Cauchy's
// log-tail, 2 ln δ); a full median shift also forces S(x') ≥ S(x). A
// tighter calibration could cut the noise by up to 1.6–2× (not done here).
//
// Sampling. The output is the grid point k·h drawn with probability
// ∝ h((kh − f)/s) (gridCauchy, exact), then clamped to [L, U] and rounded
// to float64 (post-processing). The grid step h is a public power of two at
// most a quarter of the smallest possible scale e^(−Kβ)(U−L)/(2α); by
// Poisson summation, Σ_k h((kh−f)/s) = (s/h)·(1 + η) with
// |η| ≤ 2e^(−2πs/h)/(1 − e^(−2πs/h)) < 10^−10, so the discrete law keeps
// the continuous ratios up to e^(2·10^−10); α + β = ε − 10^−9 absorbs it.
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
	alpha := (epsilon - smoothSlack) / 2
	beta := alpha
	depth := int64(math.Ceil(40 * math.Ln2 / beta))
	half := b.HalfRange()
	minScale := math.Exp(-float64(depth)*beta) * half / alpha
	step := math.Ldexp(1, math.Ilogb(minScale/4)) // a power of two ≤ minScale/4
	return &SmoothMedian{
		bounds: b, epsilon: epsilon, alpha: alpha, beta: beta, depth: depth,
		step: step, minScale: minScale, maxScale: half / alpha,
	}, nil
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
