package preprocess

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Sensitivity preprocessing (Cummings and Durfee, "Individual Sensitivity
// Preprocessing for Data Privacy"; digest papers/sensitivity-preprocessing.md).
//
// For a statistic f (median, mean, variance, ...) and a target sensitivity
// Δ > 0 the sensitivity-preprocessing function g is built bottom-up from the
// empty dataset:
//
//	g(∅) = c (a public centre; 0 for the variance)
//	g(D) = clamp(f(D), max_{x∈D} g(D−x) − Δ, min_{x∈D} g(D−x) + Δ)
//
// The interval is never empty (Lemma 3.5) and |g(D) − g(D+x)| ≤ Δ for every
// dataset D and row x, whatever f is. Adding or removing one row is exactly
// the neighbour relation of dpproxy (DESIGN.md §2), and the paper proves its
// bound for it (its Definition 2.1 says "differ in one entry", but every
// proof is over D and D+x: we read it as add/remove, digest §1.2). So g has
// global sensitivity Δ under add/remove and
//
//	release(D) = g(D) + Lap(Δ/ε)
//
// is ε-DP. (Under substitution it would need Lap(2Δ/ε).) g is a fixed
// deterministic function: computing it costs no privacy.
//
// Public inputs (digest P1). g is only Δ-sensitive if Δ and c do not depend
// on the private data, and the row count n is private (DESIGN.md §2). The
// rule (DefaultParams): Δ and c come from the column's public
// bounds [L, U] and a noisy count ñ released beforehand with its own ε:
// Δ = (U−L)/max(ñ,1) and c = (L+U)/2 for the median and the mean (the
// paper's choice; its "med(∅) = (max−min)/2" is a typo for the midpoint,
// digest §8.1), Δ = (U−L)²/max(ñ,1) for the variance.
//
// Exactness. g must be computed exactly: a fast path that is sometimes
// slightly off breaks the Δ bound. Values are first mapped to a public
// power-of-two grid, a per-row map that preserves the neighbour relation:
// for the median and the ordered statistics the fine grid of fixedPoint
// (multiples of one float64 ulp of max(|L|,|U|), so no value moves by more
// than half an ulp), for the mean and the variance the database's grid
// mech.Grid (at most 2^30 steps over [L, U], so a value moves by less
// than 2^−30·(U−L)), on which the database computes the exact integer sums the
// summary path uses (mean.go, variance.go). On its grid every algorithm
// below computes g with exact integer or rational arithmetic, on every
// branch, and g is rounded once to float64 (to nearest). Δ on the grid is
// rounded down, so g's sensitivity stays at most Δ; the final rounding
// moves each release by at most half an ulp of the largest value g can
// take, so neighbouring releases move apart by at most one ulp more, and
// the Laplace noise is calibrated to Δ plus two ulps of that magnitude.
// What is not covered: the database's own float64 map of a value to its
// index (clamp, subtract, divide, round) is part of the fixed per-row map,
// identical on neighbours, so it needs no bound.

// Params are the public inputs of a sensitivity-preprocessing
// mechanism.
type Params struct {
	// Bounds are the column's public bounds; values are clamped to them.
	Bounds mech.Bounds
	// Delta is the target add/remove sensitivity Δ > 0 of g.
	Delta float64
	// Center is g(∅), inside Bounds. The variance ignores it (g(∅) = 0 is
	// required by its algorithm, digest P13).
	Center float64
}

// Statistic names the statistic a default rule is for.
type Statistic int

// The statistics of DefaultParams.
const (
	MedianStatistic Statistic = iota + 1
	MeanStatistic
	VarianceStatistic
)

// DefaultParams returns the documented rule for Δ and the centre
// from public facts only: the bounds b and a noisy count ñ (a released
// value, or a configured size hint), ñ₁ = max(round(ñ), 1):
//
//	median, mean: Δ = (U−L)/ñ₁,  centre (L+U)/2
//	variance:     Δ = (U−L)²/ñ₁, centre 0
//
// For the median this is the paper's choice; Theorem 1.6 then makes g the
// exact median whenever the middle half of the data is spread no more
// densely than a ramp. For the mean, Lemma 5.13 makes g the exact mean of
// data that fit in a window of length ñ₁·Δ = U−L. For the variance,
// Theorem 1.8 leaves no bias from a row at distance d from the mean once
// 4(d² + Var)/n ≤ Δ, so (U−L)²/ñ₁ covers rows anywhere in the bounds at
// the price of noise of the order of the range; a smaller Δ trades bias on
// spread data for less noise (benchmark question).
func DefaultParams(stat Statistic, b mech.Bounds, noisyCount float64) (Params, error) {
	if err := b.Validate(); err != nil {
		return Params{}, err
	}
	if math.IsNaN(noisyCount) {
		return Params{}, fmt.Errorf("%w: noisy count is NaN", mech.ErrInvalidInput)
	}
	n := math.Max(math.Round(noisyCount), 1)
	width := b.Upper - b.Lower
	switch stat {
	case MedianStatistic, MeanStatistic:
		return Params{Bounds: b, Delta: width / n, Center: b.Mid()}, nil
	case VarianceStatistic:
		return Params{Bounds: b, Delta: width * width / n}, nil
	}
	return Params{}, fmt.Errorf("%w: unknown preprocessing statistic %d", mech.ErrInvalidInput, stat)
}

// validate checks the parameters.
func (p Params) validate() error {
	if err := p.Bounds.Validate(); err != nil {
		return err
	}
	if !(p.Delta > 0) || math.IsInf(p.Delta, 0) {
		return fmt.Errorf("%w: Δ = %v, must be finite and positive", mech.ErrInvalidSensitivity, p.Delta)
	}
	if !(p.Center >= p.Bounds.Lower && p.Center <= p.Bounds.Upper) {
		return fmt.Errorf("%w: centre %v outside %v", mech.ErrInvalidInput, p.Center, p.Bounds)
	}
	return nil
}

// newPreprocessNoise returns the Laplace mechanism of a preprocessing
// release: sensitivity Δ plus two ulps of the largest value g can take in
// magnitude (the final rounding of g to float64).
func newPreprocessNoise(delta, magnitude, epsilon float64) (*noise.Laplace, error) {
	return noise.NewLaplace(exact.RoundUp(delta+2*exact.Ulp(magnitude)), epsilon)
}

// fixedPoint maps values in public bounds to integers: v ↦ k = 2·round(v/(2u)),
// so v ≈ k·u with k even, |k| < 2^54. The half unit u = 2^(e−54), where
// 2^(e−1) ≤ max(|L|,|U|) < 2^e, is public. Even grid values make the
// average of two of them an integer, and 2^54 leaves room for sums and
// products in int64 and int128.
type fixedPoint struct {
	unit float64
}

// newFixedPoint returns the fixed-point grid of bounds b.
func newFixedPoint(b mech.Bounds) fixedPoint {
	_, e := math.Frexp(b.Magnitude())
	return fixedPoint{unit: math.Ldexp(1, max(e-54, -1000))}
}

// value returns the grid integer of v (v within the bounds).
func (f fixedPoint) value(v float64) int64 {
	return 2 * int64(math.RoundToEven(v/(2*f.unit)))
}

// delta returns ⌊Δ/u⌋ capped at 2^56: the grid sensitivity, never above Δ.
// Capping changes nothing: once Δ ≥ U−L, which the cap exceeds, g equals f
// for every statistic here (f is then already Δ-sensitive, digest §1.4).
func (f fixedPoint) delta(d float64) int64 {
	return int64(math.Min(math.Floor(d/f.unit), 0x1p56))
}

// float returns k·u rounded to float64.
func (f fixedPoint) float(k int64) float64 { return float64(k) * f.unit }

// values maps sorted values to grid integers, checking they are finite,
// sorted and within the bounds.
func (f fixedPoint) values(b mech.Bounds, sorted []float64) ([]int64, error) {
	out := make([]int64, len(sorted))
	for i, v := range sorted {
		if !(v >= b.Lower && v <= b.Upper) || (i > 0 && v < sorted[i-1]) {
			return nil, fmt.Errorf("%w: value %d (%v) unsorted or outside %v", mech.ErrInvalidInput, i, v, b)
		}
		out[i] = f.value(v)
	}
	return out, nil
}

// preprocessCore is what the preprocessing median and mean share: the
// public parameters, the fixed-point grid that makes g exact, the centre
// and Δ on that grid, and the Laplace noise for Δ/ε.
type preprocessCore struct {
	params        Params
	epsilon       float64
	grid          fixedPoint
	center, delta int64
	noise         *noise.Laplace
}

func newPreprocessCore(p Params, epsilon float64) (preprocessCore, error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return preprocessCore{}, err
	}
	if err := p.validate(); err != nil {
		return preprocessCore{}, err
	}
	noise, err := newPreprocessNoise(p.Delta, p.Bounds.Magnitude(), epsilon)
	if err != nil {
		return preprocessCore{}, err
	}
	grid := newFixedPoint(p.Bounds)
	return preprocessCore{
		params: p, epsilon: epsilon, grid: grid,
		center: grid.value(p.Center), delta: grid.delta(p.Delta), noise: noise,
	}, nil
}

// Epsilon returns the ε of one release.
func (c *preprocessCore) Epsilon() float64 { return c.epsilon }

// Scale returns the Laplace scale of the noise added to g.
func (c *preprocessCore) Scale() float64 { return c.noise.Scale() }
