package noise

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Noise of a sum of releases (WITH ROLLUP's totals add up the releases of
// their groups: post-processing).
//
// A sum of m independent releases of Laplace or DiscreteLaplace errs by
// the sum of their noises. Each DLap(β) noise is ⌊E₁⌋ − ⌊E₂⌋ with E₁, E₂
// independent Exp(β) (P[⌊E⌋ ≥ k] = e^(−k/β), the geometric law), so it is
// a continuous Laplace(β) variable X = E₁ − E₂ moved by less than one
// lattice step; Laplace also rounds its input to its grid g (≤ g/2). The
// error of the sum is therefore within m·slack of a sum of m independent
// continuous Laplace variables, slack = 1.5·g for Laplace and 1 for
// DiscreteLaplace. Scales that differ are replaced by the largest: a
// Laplace variable scaled down is more peaked, and sums of independent
// symmetric log-concave variables keep peakedness (Proschan 1965), so
// P[|ΣX| > t] only grows. The sum of m iid Laplace(b) is b·(G₁ − G₂) with
// G₁, G₂ ~ Gamma(m, 1), whose tail
//
//	P[|G₁ − G₂| > t] = 2·∫₀^∞ f_m(y)·Q(m, y + t) dy
//
// (f_m the Gamma(m, 1) density, Q the regularised upper incomplete gamma)
// is integrated numerically and inverted by bisection (laplaceSumQuantile).
// For DiscreteLaplace terms of one scale β the slack of one step each is
// coarse when β is small (counts at ε near 1), so there the law of the
// sum, N₁ − N₂ with N negative binomial, is used exactly instead
// (dlapSumHalfWidth). One release (m = 1) keeps its own exact HalfWidth.

// Sum is the public description of the noise of a sum of independent
// releases of Laplace or DiscreteLaplace mechanisms: enough to bound the
// error of the sum. The zero Sum describes no release.
type Sum struct {
	count int
	scale float64 // the largest Laplace scale of a term
	slack float64 // the largest distance of a term's error from a continuous Laplace variable
	// lattice is set when every term is DiscreteLaplace of the one scale
	// (the sum is exactly N₁ − N₂ with N negative binomial).
	lattice bool
	// single is the release when count is 1: its own exact HalfWidth.
	single interface{ HalfWidth(float64) float64 }
}

// Sum returns the description of the noise of one release of l.
func (l *Laplace) Sum() Sum {
	return Sum{count: 1, scale: l.Scale(), slack: 1.5 * l.granularity, single: l}
}

// Sum returns the description of the noise of one release of d.
func (d *DiscreteLaplace) Sum() Sum {
	return Sum{count: 1, scale: d.Scale(), slack: 1, lattice: true, single: d}
}

// Plus returns the description of the noise of the sum of s's and o's
// releases, which are independent.
func (s Sum) Plus(o Sum) Sum {
	switch {
	case s.count == 0:
		return o
	case o.count == 0:
		return s
	}
	return Sum{
		count:   s.count + o.count,
		scale:   math.Max(s.scale, o.scale),
		slack:   math.Max(s.slack, o.slack),
		lattice: s.lattice && o.lattice && s.scale == o.scale,
	}
}

// Count returns the number of releases summed.
func (s Sum) Count() int { return s.count }

// HalfWidth returns w with P[|Σ releases − Σ true values| ≤ w] ≥
// confidence for all inputs: the release's own HalfWidth for one release,
// the exact quantile of the sum for DiscreteLaplace terms of one scale
// where it is cheap to compute, else the quantile of the sum of continuous
// Laplace variables of the largest scale plus count·slack (an integer for
// DiscreteLaplace terms). confidence must be in (0, 1) and s not zero.
func (s Sum) HalfWidth(confidence float64) float64 {
	if s.count == 1 && s.single != nil {
		return s.single.HalfWidth(confidence)
	}
	if s.lattice {
		if w, ok := cachedDlapSumHalfWidth(s.count, s.scale, confidence); ok {
			return w
		}
	}
	w := s.scale*laplaceSumQuantile(s.count, confidence) + float64(s.count)*s.slack
	if s.slack == 1 { // integer noise: |sum| ≤ w exactly when |sum| ≤ ⌊w⌋
		w = math.Floor(w)
	}
	return w
}

// laplaceSumTail returns P[|X₁ + … + X_m| > t] for X_i iid Laplace(1):
// e^(−t) for m = 1, else 2·∫ f_m(y)·Q(m, y + t) dy over y within 12
// standard deviations of the Gamma(m, 1) mean (and 40 beyond it for small
// m; the mass left out is below 10^−12), by 256-point Gauss–Legendre
// quadrature. For m = 2 it agrees with e^(−t)·(1 + t/2) to 10^−12.
func laplaceSumTail(m int, t float64) float64 {
	if m == 1 {
		return math.Exp(-t)
	}
	fm, sd := float64(m), math.Sqrt(float64(m))
	g := distuv.Gamma{Alpha: fm, Beta: 1}
	f := func(y float64) float64 { return g.Prob(y) * mathext.GammaIncRegComp(fm, y+t) }
	lo, hi := math.Max(0, fm-12*sd), fm+12*sd+40
	// The integrand falls off from the mode at y ≈ m: integrating each side
	// separately keeps the nodes dense where the mass is.
	mid := math.Max(fm-1, lo)
	return 2 * (quad.Fixed(f, lo, mid, 256, quad.Legendre{}, 0) + quad.Fixed(f, mid, hi, 256, quad.Legendre{}, 0))
}

// quantileKey identifies a quantile of a sum of m iid Laplace(1) (beta
// 0) or of m iid DLap(beta).
type quantileKey struct {
	m                int
	beta, confidence float64
}

// quantiles caches laplaceSumQuantile and dlapSumHalfWidth (milliseconds
// each, tens of them for the largest lattices; a WITH ROLLUP statement
// asks for the same few on every super-aggregate row, whose groups are
// alike). It holds at most maxCachedQuantiles entries.
var quantiles = struct {
	sync.Mutex
	of map[quantileKey]float64
}{of: map[quantileKey]float64{}}

// cached returns the value of compute for key, from the cache if there.
func cached(key quantileKey, compute func() float64) float64 {
	quantiles.Lock()
	t, ok := quantiles.of[key]
	quantiles.Unlock()
	if !ok {
		t = compute()
		quantiles.Lock()
		if len(quantiles.of) < maxCachedQuantiles {
			quantiles.of[key] = t
		}
		quantiles.Unlock()
	}
	return t
}

// cachedDlapSumHalfWidth is dlapSumHalfWidth through the cache (a
// negative entry records ok = false).
func cachedDlapSumHalfWidth(m int, beta, confidence float64) (float64, bool) {
	w := cached(quantileKey{m, beta, confidence}, func() float64 {
		if w, ok := dlapSumHalfWidth(m, beta, confidence); ok {
			return w
		}
		return -1
	})
	return w, w >= 0
}

const maxCachedQuantiles = 1 << 14

// laplaceSumQuantile returns the smallest t with
// P[|X₁ + … + X_m| > t] ≤ 1 − confidence for X_i iid Laplace(1), to a
// relative 10^−12 (rounded up): ln(1/(1 − confidence)) for m = 1, about
// z·√(2m) (z the normal quantile) for large m. m ≥ 1.
func laplaceSumQuantile(m int, confidence float64) float64 {
	alpha := 1 - confidence
	if m == 1 {
		return math.Log(1 / alpha)
	}
	return cached(quantileKey{m, 0, confidence}, func() float64 { return bisectLaplaceSum(m, alpha) })
}

// bisectLaplaceSum returns the smallest t with P[|X₁ + … + X_m| > t] ≤
// alpha (laplaceSumTail) to a relative 10^−12, rounded up.
func bisectLaplaceSum(m int, alpha float64) float64 {
	// Chebyshev: P[|ΣX| > t] ≤ 2m/t², so the quantile is below √(2m/α).
	lo, hi := 0.0, math.Sqrt(2*float64(m)/alpha)
	for hi-lo > 1e-12*hi {
		mid := (lo + hi) / 2
		if laplaceSumTail(m, mid) > alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// maxLatticeTerms bounds the terms of the exact law of a sum of discrete
// Laplace noises that dlapSumHalfWidth computes.
const maxLatticeTerms = 1 << 20

// dlapSumHalfWidth returns the smallest integer w ≥ 0 with
// P[|Z₁ + … + Z_m| > w] ≤ 1 − confidence, Z_i iid DLap(β) on the integers,
// from the exact law: ΣZ = N₁ − N₂ with N₁, N₂ independent negative
// binomial (m successes of probability p = 1 − r, r = e^(−1/β), counting
// failures), so for j ≥ 1
//
//	P[ΣZ ≥ j] = Σ_k P[N₂ = k]·P[N₁ ≥ k + j].
//
// k runs over the mean ± 12 standard deviations of N (and 40β beyond),
// and the mass left out on either side is added to the tail, so the tail
// is an upper bound and w covers. ok is false when that range exceeds
// maxLatticeTerms terms (β√m above about 40,000; there the continuous
// bound's slack of m is below m/120,000 of the half-width: under 9% for
// the 10,000 groups a statement may have, far less for fewer).
func dlapSumHalfWidth(m int, beta, confidence float64) (w float64, ok bool) {
	fm := float64(m)
	p := -math.Expm1(-1 / beta)
	r := 1 - p
	mean, sd := fm*r/p, math.Sqrt(fm*r)/p
	kLo := math.Max(0, math.Floor(mean-12*sd))
	kHi := math.Ceil(mean + 12*sd + 40*beta)
	if kHi-kLo+1 > maxLatticeTerms {
		return 0, false
	}
	n := int(kHi-kLo) + 1
	below := 0.0 // P[N ≤ kLo − 1]
	if kLo > 0 {
		below = mathext.RegIncBeta(fm, kLo, p)
	}
	above := mathext.RegIncBeta(kHi+1, fm, r) // P[N ≥ kHi + 1]
	pmf := make([]float64, n)
	lgm, _ := math.Lgamma(fm)
	for i := range pmf {
		k := kLo + float64(i)
		a, _ := math.Lgamma(k + fm)
		b, _ := math.Lgamma(k + 1)
		pmf[i] = math.Exp(a - lgm - b + fm*math.Log(p) - k/beta)
	}
	// survival[i] = P[N ≥ kLo + i], the mass above kHi included.
	survival := make([]float64, n+1)
	survival[n] = above
	for i := n - 1; i >= 0; i-- {
		survival[i] = survival[i+1] + pmf[i]
	}
	// tail(j) bounds P[ΣZ ≥ j] for j ≥ 1: k + j > kLo always.
	tail := func(j int) float64 {
		t := below
		for i, q := range pmf {
			t += q * survival[min(i+j, n)]
		}
		return t
	}
	alpha := 1 - confidence
	lo, hi := 0, n // 2·tail(n+1) is the mass left out: far below α
	if 2*tail(hi+1) > alpha {
		return 0, false
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if 2*tail(mid+1) <= alpha {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return float64(lo), true
}
