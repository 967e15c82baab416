package ptr

import (
	"fmt"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// TrimmedMean is the PTR α-trimmed mean (AVG(col) with
// @dp_mechanism = 'trimmed'): algorithm TM of Dwork and Lei (digest §3.2),
// adapted to a private row count. With ranks lo = ⌈nα/2⌉, hi = ⌊n(1−α/2)⌋
// and c = hi − lo − 1 (α is the total trimmed fraction), it releases
//
//	m_α = (x_(lo+1) + … + x_(hi−1))/c  +  Lap(s·N^κ/(c_min·ε))
//
// with s the scale S of the spread x_(hi) − x_(lo), or ⊥ if S refuses. It
// estimates the trimmed mean, which equals the mean only for symmetric
// data.
//
// Guarantee: (Epsilon, Delta)-DP under add/remove of one row, with four
// steps of ε = Epsilon/4 (the paper claims 3ε; the digest's corrected
// count is 4: two tests, the scale's release, the mean's release) and
// Delta = 2δ0 + δ_tail, δ0 = Delta/4 per test, δ_tail ≤ Delta/2.
//
// Derivation (ours: the paper's bound (8) is for substitution with n public,
// and is even violated there, digest §3.2):
//
//  1. Sensitivity under add/remove. For D of size n and D' = D + v, with
//     c = c(n), c' = c(n+1) ≥ 1 and W = x_(hi) − x_(lo) of D,
//     |m_α(D) − m_α(D')| ≤ W/min(c, c'). Both trimmed windows are sets of
//     order statistics of D' within its ranks [lo+1, hi], whose values lie
//     in [x_(lo), x_(hi)]; they differ by at most two elements at the ends
//     and v; in each case (lo and hi moving by 0 or 1, v below, inside
//     or above the window) the difference of the means is
//     (a − μ)/c″ for one element a and a mean μ of the window, or
//     (a + z − v − μ)/c with a ≤ v, μ ≤ z, each at most W/min(c, c') in
//     absolute value. The property test checks it by brute force.
//  2. The count. c depends on the private n, so the noise cannot use it.
//     The test statistic is min(A_S, n − n_min + 1), both 1-Lipschitz, with
//     A_S the spread's distance and n_min = ⌈0.9·N⌉ public: a pass with
//     A ≥ 2 implies that D and every neighbour have at least n_min rows,
//     hence c ≥ c_min = ⌊(1−α)·n_min⌋ − 6 ≥ 2 (c(m) ≥ (1−α)m − 3 with
//     float rounding well inside the margin; checked at construction), and
//     that their spreads are in the bin of D, below its upper edge U.
//  3. The release. Given the scale s (not released) the mean's release
//     with Δ = s·N^κ/c_min is ε-DP whenever s·N^κ ≥ U, because the
//     sensitivity is below U/c_min by 1 and 2. Since the spread is at least
//     U/b, that fails only if the scale's Laplace noise z < 1 − κ·log_b N
//     (plus 2 grid steps for rounding): probability
//     δ_tail ≤ ½·exp(−(κ·log_b N − 1 − 2g)/β) for every dataset, β the
//     noise's scale. Per grid: a failed test costs ε, a passed one ε, the
//     scale's release ε and the mean's release ε, and the mass of the
//     failure events enters δ: (4ε, 2δ0 + δ_tail), as the digest derives.
//  4. κ. With kappa = 0 the constructor takes the smallest κ with
//     δ_tail ≤ Delta/2; a given κ must meet that bound. κ < 1 is required:
//     the noise shrinks like N^(κ−1).
//
// Zero spread: if the zero bin passes with A ≥ 2, every neighbour's
// trimmed window is the single value x_(lo), which is released exactly.
//
// Exact arithmetic. The mean is computed on the grid of the bounds
// (mech.Grid): each value x maps to y = L + Unit·Index(x), a fixed,
// non-decreasing map of the row, within Unit of x (Unit/2 for the
// rounding to the grid plus at most 2^−53·(U−L) for that of x − L), and
// m_α is the exact rational mean of the y of ranks lo+1 … hi−1, from the
// windows' indices and the database's exact integer sum Σk of the indices
// between them. Step 1 holds for the y, whose spread is at most W + 2·Unit,
// so the noise's Δ is s·N^κ/c_min + 2·Unit/c_min (at most the grid
// values' span Top·Unit, which bounds every difference), and the mean
// enters the noise exactly
// (noise.Laplace.ReleaseExact). A float sum would not do: on values far
// from 0 for their spread its rounding exceeds Δ, and neighbours' means
// then differ by more than the noise was calibrated for (an independent
// review found datasets whose outputs differed deterministically).
//
// Data: windows of about 2K+7 ranks around lo and hi and the database's
// exact sum of the grid indices ranked between the windows (Fetch): no row
// of the middle crosses the wire.
type TrimmedMean struct {
	bounds      mech.Bounds
	grid        mech.Grid
	alpha       float64
	kappa       float64
	epsilon     float64
	minCount    int64
	minTrimmed  float64
	scale       ptrScaleCore
	deltaTail   float64
	noiseFactor float64
}

// ptrTrimmedFloor is the fraction of the public size N below which TM's
// test refuses (step 2 of the derivation).
const ptrTrimmedFloor = 0.9

// NewTrimmedMean returns the PTR α-trimmed mean for p, α ∈ (0, 1) the
// total trimmed fraction, and κ ∈ [0, 1) (0: derived from Delta).
func NewTrimmedMean(p Params, alpha, kappa float64) (*TrimmedMean, error) {
	if err := p.validate(4); err != nil {
		return nil, err
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("%w: trimmed fraction %v, must be in (0, 1)", mech.ErrInvalidQuantile, alpha)
	}
	if !(kappa >= 0 && kappa < 1) {
		return nil, fmt.Errorf("%w: κ = %v, must be in [0, 1)", mech.ErrInvalidInput, kappa)
	}
	grid, err := mech.NewGrid(p.Bounds)
	if err != nil {
		return nil, err
	}
	epsilon := mech.EvenShare(p.Epsilon, 4)
	scale, err := newPTRScaleCore(p.Size, epsilon, mech.EvenShare(p.Delta, 4), false)
	if err != nil {
		return nil, err
	}
	size := ptrSize(p.Size)
	minCount := int64(math.Ceil(ptrTrimmedFloor * size))
	minTrimmed := math.Floor((1-alpha)*float64(minCount)) - 6
	if minTrimmed < 2 {
		return nil, fmt.Errorf("%w: size %v and α = %v leave fewer than 2 trimmed values", mech.ErrInvalidInput, p.Size, alpha)
	}
	// log_b N in bin units; β and g of the scale's release noise.
	logSize := math.Log(size) / scale.grid.w
	beta, g := scale.release.Scale(), scale.release.Granularity()
	minKappa := (1 + 2*g + beta*math.Log(1/p.Delta)) / logSize * (1 + 1e-9)
	if kappa == 0 {
		kappa = minKappa
	}
	if kappa < minKappa || kappa >= 1 {
		return nil, fmt.Errorf("%w: κ = %v, need κ in [%v, 1) for δ = %v at size %v and ε = %v",
			mech.ErrInvalidInput, kappa, minKappa, p.Delta, p.Size, p.Epsilon)
	}
	return &TrimmedMean{
		bounds: p.Bounds, grid: grid, alpha: alpha, kappa: kappa, epsilon: epsilon,
		minCount: minCount, minTrimmed: minTrimmed, scale: scale,
		deltaTail:   0.5 * math.Exp(-(kappa*logSize-1-2*g)/beta),
		noiseFactor: math.Pow(size, kappa) / minTrimmed * (1 + 0x1p-30),
	}, nil
}

// Kappa returns κ, given or derived.
func (t *TrimmedMean) Kappa() float64 { return t.kappa }

// DeltaTail returns the bound on δ_tail, at most Delta/2.
func (t *TrimmedMean) DeltaTail() float64 { return t.deltaTail }

// TrimmedRanks returns lo = ⌈nα/2⌉ and hi = ⌊n(1−α/2)⌋: the mean is over
// ranks lo+1 … hi−1.
func (t *TrimmedMean) TrimmedRanks(n int64) (lo, hi int64) {
	return int64(math.Ceil(float64(n) * t.alpha / 2)), int64(math.Floor(float64(n) * (1 - t.alpha/2)))
}

// Fetch returns what Release reads: windows of K+3 ranks on each side of
// the quantiles α/2 and 1−α/2 (RankWindowSpec's rank is within one of lo
// and hi), and the sum of the values ranked strictly between them.
func (t *TrimmedMean) Fetch() Fetch {
	k := t.scale.test.cap + 3
	return Fetch{
		Windows: []mech.RankWindowSpec{
			{Quantile: t.alpha / 2, Below: k, Above: k},
			{Quantile: 1 - t.alpha/2, Below: k, Above: k},
		},
		SumBetween: true,
		Grid:       t.grid,
	}
}

// Release returns the private trimmed mean, within the bounds, or refused
// = true for ⊥. It fails with ErrWindowMismatch or ErrInvalidInput if d is
// not what Fetch asked for.
func (t *TrimmedMean) Release(src noise.Source, d Data) (value float64, refused bool, err error) {
	if len(d.Windows) != 2 {
		return 0, false, fmt.Errorf("%w: %d windows given, 2 needed", mech.ErrWindowMismatch, len(d.Windows))
	}
	n, k := d.Windows[0].Count, t.scale.test.cap
	lo, hi := t.TrimmedRanks(n)
	o, err := ptrCheckWindows(d, t.bounds, []mech.RankRange{ptrAround(lo, k), ptrAround(hi, k)})
	if err != nil {
		return 0, false, err
	}
	lw, uw := d.Windows[0].Ranks(), d.Windows[1].Ranks()
	between := new(big.Int)
	if d.SumBetween != nil {
		between.Set(d.SumBetween)
	}
	if maxBetween := new(big.Int).Mul(big.NewInt(max(uw.First-lw.Last-1, 0)), big.NewInt(t.grid.Top)); between.Sign() < 0 || between.Cmp(maxBetween) > 0 {
		return 0, false, fmt.Errorf("%w: grid sum %v between windows of ranks ≤ %d and ≥ %d", mech.ErrInvalidInput, between, lw.Last, uw.First)
	}
	out, ok := t.scale.run(src, o, lo, hi, n-t.minCount+1)
	if !ok {
		return 0, true, nil
	}
	if out.zero {
		return o.at(lo), false, nil
	}
	release, err := t.releaseNoise(out.scale)
	if err != nil {
		return 0, false, err
	}
	return t.bounds.Clamp(release.ReleaseExact(src, t.trimmedMean(o, lw, uw, between, lo, hi))), false, nil
}

// releaseNoise returns the noise of the mean's release given the released
// scale s: Laplace of sensitivity meanSensitivity(s) at the step's ε
// (step 3 of the derivation). The step checks read exactly this noise.
func (t *TrimmedMean) releaseNoise(scale float64) (*noise.Laplace, error) {
	return noise.NewLaplace(t.meanSensitivity(scale), t.epsilon)
}

// meanSensitivity returns the Δ of the mean's release given the scale s:
// s·N^κ/c_min plus 2·Unit/c_min for the grid, at most Top·Unit (exact: the
// span of the grid values, which bounds every difference of their means;
// it may exceed the float U − L by up to Unit/2), and at least 2^−900,
// the smallest the noise takes.
func (t *TrimmedMean) meanSensitivity(scale float64) float64 {
	return math.Max(math.Min(scale*t.noiseFactor+2*t.grid.Unit/t.minTrimmed, float64(t.grid.Top)*t.grid.Unit), 0x1p-900)
}

// trimmedMean returns m_α exactly, on the grid: L + Unit·(Σk)/c over the
// grid indices k of ranks lo+1 … hi−1, from the windows' values and the
// sum of indices between them, kept within the grid values of x_(lo) and
// x_(hi); or their midpoint when c < 1 (possible only in the δ-event of a
// test passed with n below the floor).
func (t *TrimmedMean) trimmedMean(o ptrOrder, lw, uw mech.RankRange, between *big.Int, lo, hi int64) *big.Rat {
	index := func(i int64) *big.Int { return big.NewInt(t.grid.Index(o.at(i))) }
	low, high := index(lo), index(hi)
	c := hi - lo - 1
	if c < 1 {
		return t.grid.Value(new(big.Rat).SetFrac(new(big.Int).Add(low, high), big.NewInt(2)))
	}
	sum := new(big.Int)
	for i := lo + 1; i <= min(hi-1, lw.Last); i++ {
		sum.Add(sum, index(i))
	}
	if lw.Last+1 < uw.First {
		sum.Add(sum, between)
	}
	for i := max(lo+1, lw.Last+1, uw.First); i <= hi-1; i++ {
		sum.Add(sum, index(i))
	}
	mean := new(big.Rat).SetFrac(sum, big.NewInt(c))
	if mean.Cmp(new(big.Rat).SetInt(low)) < 0 {
		mean.SetInt(low)
	} else if mean.Cmp(new(big.Rat).SetInt(high)) > 0 {
		mean.SetInt(high)
	}
	return t.grid.Value(mean)
}
