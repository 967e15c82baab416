package quantile

import (
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// GridPermuteFlip: the permute-and-flip mechanism (McKenna and Sheldon,
// "Permute-and-Flip: A new mechanism for differentially private
// selection", NeurIPS 2020) for a quantile over a public grid of bins,
// with GridExponential's grid, histogram and utility (MEDIAN,
// PERCENTILE_CONT; the proxy's default on integer columns).
//
// Definition. dist_j is GridExponential's rank distance of bin j from
// PERCENTILE_CONT's target t = q·(n − 1) (utility u_j = −dist_j,
// sensitivity Δu = max(q, 1 − q), both derived there), d* = min_j dist_j
// and x_j = ε·(dist_j − d*)/(2Δu) ≥ 0. The mechanism visits the bins in a
// uniformly random order and accepts bin j with probability
// p_j = exp(−x_j) = exp(ε·(u_j − u*)/(2Δu)), u* = max_j u_j; it releases
// the first bin accepted. A bin at d* has p_j = 1, so a release ends
// within B visits. Since the order is independent of the coins, the
// release is uniform on the set of bins whose coin would succeed, and
//
//	P[release r] = p_r · ∫_0^1 Π_{s≠r} (1 − τ·p_s) dτ
//
// (r's position in the order is uniform: averaging over it, each other
// bin comes before r with probability τ and then must reject).
//
// Guarantee: pure ε-DP (δ = 0) under adding or removing one row, n
// private and used exactly. Derivation: McKenna and Sheldon's Theorem 1
// proves that permute-and-flip with p_r = exp(ε·(u_r − u*)/(2Δ)) is ε-DP
// for every utility whose value at every candidate moves by at most Δ
// between neighbouring datasets (u* then moves by at most Δ too; their
// proof bounds the ratio of the law above through its monotonicity in
// each p_s). Here the candidates are the public bins, u_j = −dist_j, and
// GridExponential's sensitivity argument shows each u_j moves by at most
// Δu = max(q, 1 − q) on adding or removing a row, for every n ≥ 0, empty
// bins included; so with Δ = Δu the mechanism is ε-DP. Utility: their
// Theorem 2 shows its expected utility is never below the exponential
// mechanism's at the same ε (GridExponential's), and since a release of r
// needs r's coin, P[release r] ≤ p_r: the exponential mechanism's tail
// bound holds, P[dist − d* ≥ (2Δu/ε)·(ln B + s)] ≤ e^(−s).
//
// What is exact: everything. Each x_j is an exact rational (q and ε read
// as the rationals their float64 values are, t = q·(n − 1)); the order is
// a lazy Fisher–Yates shuffle drawn with noise.Uniform; each coin is
// Bernoulli(exp(−x_j)) drawn exactly in integer arithmetic as k trials of
// Bernoulli(exp(−1)) (noise.BernoulliExp) for an integer k ≤ x_j read off
// the bin's rank offset, then Bernoulli(exp(−(x_j − k)))
// (noise.BernoulliExpRat; the product of independent exact coins). So the
// law released is exactly the law above at ε itself: unlike
// GridExponential, which draws from weights rounded to 2^−62 and takes
// noise.ExpWeightSlack from ε for it, nothing here is rounded and no slack
// is needed. No floating point decides anything. TestPermuteFlipExactPrivacy
// computes both laws of thousands of neighbouring histograms from the
// formula above at 512 bits and checks the worst log-ratio ≤ ε.
//
// Cost: a visit is a noise.Uniform and, for a bin k or more units of x
// away (k ≤ 64, from integer thresholds), at most k Bernoulli(exp(−1))
// trials (about 1.6 on average) before any big-integer arithmetic, which
// it reaches with probability e^(−k). The number of visits is about B
// over the number of bins whose coin succeeds (BenchmarkPermuteFlip).
type GridPermuteFlip struct {
	q, epsilon  float64
	bins        int
	sensitivity *big.Rat // Δu = max(q, 1−q)
	scale       *big.Rat // ε/(2Δu): the exponent per unit of rank distance
	// whole[k−1] = ⌈k/scale⌉: a bin at least that many ranks farther
	// than d* has x_j ≥ k (math.MaxInt64 when beyond every distance).
	whole []int64
}

// NewGridPermuteFlip returns the permute-and-flip mechanism for quantile
// q ∈ [0, 1] with ε over bins ∈ [1, 2^20] bins.
func NewGridPermuteFlip(q, epsilon float64, bins int) (*GridPermuteFlip, error) {
	sensitivity, err := gridSensitivity(q, epsilon, bins)
	if err != nil {
		return nil, err
	}
	m := &GridPermuteFlip{q: q, epsilon: epsilon, bins: bins, sensitivity: sensitivity}
	m.setScale()
	return m, nil
}

// setScale computes the exponent per unit of rank distance from ε and Δu,
// and the thresholds whole.
func (m *GridPermuteFlip) setScale() {
	m.scale = new(big.Rat).SetFloat64(m.epsilon)
	m.scale.Quo(m.scale, new(big.Rat).Mul(big.NewRat(2, 1), m.sensitivity))
	m.whole = make([]int64, maxWholeExponent)
	for k := range m.whole {
		w := new(big.Rat).Quo(big.NewRat(int64(k+1), 1), m.scale)
		c := new(big.Int).Div(w.Num(), w.Denom()) // ⌊k/scale⌋
		if !w.IsInt() {
			c.Add(c, big.NewInt(1))
		}
		m.whole[k] = math.MaxInt64
		if c.IsInt64() {
			m.whole[k] = c.Int64()
		}
	}
}

// Bins returns the number of bins the histogram must have.
func (m *GridPermuteFlip) Bins() int { return m.bins }

// Release picks a bin index from the histogram counts (one per bin, of the
// clamped non-NULL values).
func (m *GridPermuteFlip) Release(src noise.Source, counts []int64) (int, error) {
	e, err := m.exponents(counts)
	if err != nil {
		return 0, err
	}
	// Lazy Fisher–Yates: slot i of the unvisited prefix [0, left) holds
	// bin moved[i] − 1, or bin i while moved[i] is 0.
	moved := make([]int32, m.bins)
	slot := func(i int) int {
		if moved[i] != 0 {
			return int(moved[i]) - 1
		}
		return i
	}
	for left := m.bins; left > 0; left-- {
		i := int(noise.Uniform(src, uint64(left)))
		j := slot(i)
		moved[i] = int32(slot(left-1)) + 1
		if e.accept(src, j) {
			return j, nil
		}
	}
	return 0, fmt.Errorf("%w: permute-and-flip accepted no bin", mech.ErrInvalidInput) // unreachable: a bin at d* accepts
}

// maxWholeExponent is the largest integer lower bound of x_j that a visit
// reads off the bin's rank offset: e^−64 < 2^−92, so a bin that far away
// reaches big-integer arithmetic about never.
const maxWholeExponent = 64

// pfExponents gives x_j for every bin of one histogram.
type pfExponents struct {
	d     *rankDistances
	scale *big.Rat
	min   *big.Rat // d* = min_j dist_j
	// minBelow and minAbove are the smallest multiples on each side (bins
	// lo − 1 and hi), baseBelow and baseAbove the integer parts of their
	// distances' excess over d* (d* is at most either): a bin's
	// dist_j − d* is at least its side's base plus its multiple's offset
	// from the side's smallest, an integer.
	minBelow, minAbove   int64
	baseBelow, baseAbove int64
	whole                []int64 // GridPermuteFlip.whole
}

// exponents checks counts and returns their exponents.
func (m *GridPermuteFlip) exponents(counts []int64) (*pfExponents, error) {
	d, err := newRankDistances(counts, m.bins, m.q)
	if err != nil {
		return nil, err
	}
	e := &pfExponents{d: d, scale: m.scale, min: new(big.Rat), whole: m.whole}
	if d.lo > 0 {
		e.minBelow = d.belowMultiple(d.lo - 1)
	}
	if d.hi < m.bins {
		e.minAbove = d.aboveMultiple(d.hi)
	}
	if d.lo == d.hi { // no bin at distance 0: d* is a side's smallest
		var sides []*big.Rat
		if d.lo > 0 {
			sides = append(sides, new(big.Rat).Add(d.belowGap, new(big.Rat).SetInt64(e.minBelow)))
		}
		if d.hi < m.bins {
			sides = append(sides, new(big.Rat).Add(d.aboveGap, new(big.Rat).SetInt64(e.minAbove)))
		}
		e.min = sides[0]
		if len(sides) == 2 && sides[1].Cmp(sides[0]) < 0 {
			e.min = sides[1]
		}
	}
	base := func(gap *big.Rat, multiple int64) int64 { // ⌊gap + multiple − d*⌋ ≥ 0
		x := new(big.Rat).Add(gap, new(big.Rat).SetInt64(multiple))
		x.Sub(x, e.min)
		return new(big.Int).Quo(x.Num(), x.Denom()).Int64()
	}
	if d.lo > 0 {
		e.baseBelow = base(d.belowGap, e.minBelow)
	}
	if d.hi < m.bins {
		e.baseAbove = base(d.aboveGap, e.minAbove)
	}
	return e, nil
}

// exponent returns x_j = scale·(dist_j − d*), exactly.
func (e *pfExponents) exponent(j int) *big.Rat {
	x := new(big.Rat)
	switch {
	case j < e.d.lo:
		x.Add(e.d.belowGap, new(big.Rat).SetInt64(e.d.belowMultiple(j)))
	case j >= e.d.hi:
		x.Add(e.d.aboveGap, new(big.Rat).SetInt64(e.d.aboveMultiple(j)))
	}
	x.Sub(x, e.min)
	return x.Mul(x, e.scale)
}

// lower returns an integer k ≤ x_j, k ≤ maxWholeExponent, from an integer
// lower bound on dist_j − d*: x_j ≥ scale·bound ≥ k when
// bound ≥ ⌈k/scale⌉.
func (e *pfExponents) lower(j int) int {
	var offset int64 // ≤ dist_j − d*
	switch {
	case j < e.d.lo:
		offset = e.baseBelow + e.d.belowMultiple(j) - e.minBelow
	case j >= e.d.hi:
		offset = e.baseAbove + e.d.aboveMultiple(j) - e.minAbove
	}
	return sort.Search(len(e.whole), func(k int) bool { return e.whole[k] > offset })
}

// accept flips bin j's coin, Bernoulli(exp(−x_j)) exactly: exp(−x_j) =
// exp(−1)^k · exp(−(x_j − k)) for k = lower(j), one independent exact
// coin per factor.
func (e *pfExponents) accept(src noise.Source, j int) bool {
	k := e.lower(j)
	for range k {
		if !noise.BernoulliExp(src, 1, 1) {
			return false
		}
	}
	x := e.exponent(j)
	return noise.BernoulliExpRat(src, x.Sub(x, big.NewRat(int64(k), 1)))
}
