package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/ptr"
)

// PTRRegressionCell is one regression mechanism on one data source at one
// ε and size.
type PTRRegressionCell struct {
	// Data is the noise of the synthetic model ("gaussian",
	// "student-t3") or the name of the real pair.
	Data string
	// Real is set for a real pair: its data are fixed and the errors are
	// against its least-squares fit; synthetic data are drawn afresh in
	// every trial and the errors are against the model's coefficients.
	Real      bool
	N         int
	Mechanism string // "R_S" or "R_H"
	Epsilon   float64
	// Intercept and Slope are the released coefficients' errors; for R_H
	// both are ⊥ together.
	Intercept, Slope PTRErrors
	// OLSIntercept and OLSSlope are the non-private least-squares errors
	// on the same data (synthetic only): the statistical floor.
	OLSIntercept, OLSSlope PTRErrors
	// Reference is the non-private (intercept, slope) the errors are
	// against; TheilSen the non-private robust fit (real pair only);
	// Released the median of the answered releases.
	Reference, TheilSen, Released [2]float64
	// Bounds are the public (intercept, slope) bounds.
	Bounds []mech.Bounds
	// Seconds is the mean wall time of one mechanism run (R_S: one
	// coefficient; R_H: both), measured while the other workers run.
	Seconds float64
}

// ptrRegressionCell accumulates the per-trial outcomes of a cell while the
// trials run concurrently (each trial writes only its own index).
type ptrRegressionCell struct {
	cell     PTRRegressionCell
	pair     *ptrPair // the real pair, or nil for synthetic data
	coef     [2][]ptrOutcome
	ols      [2][]ptrOutcome
	released [2][]float64
	seconds  []float64
}

// newPTRRegressionCell returns the accumulator of c for trials trials on
// pair (nil: synthetic data).
func newPTRRegressionCell(c PTRRegressionCell, pair *ptrPair, trials int) *ptrRegressionCell {
	r := &ptrRegressionCell{cell: c, pair: pair, seconds: make([]float64, trials)}
	for d := range 2 {
		r.coef[d] = make([]ptrOutcome, trials)
		r.ols[d] = make([]ptrOutcome, trials)
		r.released[d] = make([]float64, trials)
	}
	return r
}

// ptrCoefficientBounds returns the proxy's public coefficient bounds
// (internal/planner/ptr.go, ptrRegressionStep): |slope| ≤ 10·(Uy−Ly)/(Ux−Lx)
// and the intercept within [Ly, Uy] widened by that slope times max|x|.
func ptrCoefficientBounds(p *ptrPair) []mech.Bounds {
	slope := 10 * (p.yUpper - p.yLower) / (p.xUpper - p.xLower)
	reach := slope * math.Max(math.Abs(p.xLower), math.Abs(p.xUpper))
	return []mech.Bounds{{Lower: p.yLower - reach, Upper: p.yUpper + reach}, {Lower: -slope, Upper: slope}}
}

// ptrLinearBounds returns the synthetic model's public bounds as a pair
// without rows.
func ptrLinearBounds() *ptrPair {
	m := ptrLinearModel
	return &ptrPair{xLower: m.xLower, xUpper: m.xUpper, yLower: m.yLower, yUpper: m.yUpper}
}

// data returns trial t's rows and the coefficients the errors are against.
func (r *ptrRegressionCell) data(t int, seed uint64) (*ptrPair, [2]float64, error) {
	if r.pair != nil {
		return r.pair, r.cell.Reference, nil
	}
	rng := rand.New(ptrSource(seed, "regression data", r.cell.Data, r.cell.N, t))
	pair := ptrLinearBounds()
	var err error
	if pair.x, pair.y, err = ptrLinearRows(r.cell.Data, r.cell.N, rng); err != nil {
		return nil, [2]float64{}, err
	}
	return pair, r.cell.Reference, nil
}

// runTrial runs trial t as the proxy would: R_S answers REGR_INTERCEPT and
// REGR_SLOPE as two queries of ε each, each with its own noisy count at
// 0.1ε and 0.9ε for the mechanism releasing one coefficient; R_H (not
// offered by the proxy) releases both coefficients in one ε, the same
// count share.
func (r *ptrRegressionCell) runTrial(t int, delta float64, seed uint64) error {
	pair, want, err := r.data(t, seed)
	if err != nil {
		return err
	}
	rows, err := ptr.SimpleRegressionRows(pair.x, pair.y)
	if err != nil {
		return err
	}
	a, b := ptrOLS(pair.x, pair.y)
	for d, v := range [2]float64{a, b} {
		r.ols[d][t] = ptrOutcome{err: math.Abs(v - want[d])}
	}
	coef := r.cell.Bounds
	var beta [2]float64
	var refused [2]bool
	var elapsed time.Duration
	release := func(src noise.Source, coordinates []int) ([]float64, bool, error) {
		size, rest, err := ptrPublicSize(src, len(pair.y), r.cell.Epsilon)
		if err != nil {
			return nil, false, err
		}
		params := ptr.RegressionParams{Epsilon: rest, Delta: delta, Size: size, Coefficients: coef}
		start := time.Now()
		defer func() { elapsed += time.Since(start) }()
		if r.cell.Mechanism == "R_H" {
			m, err := ptr.NewHampelRegression(params, 0)
			if err != nil {
				return nil, false, err
			}
			return m.Release(context.Background(), src, rows)
		}
		m, err := ptr.NewShortcutRegression(params, coordinates)
		if err != nil {
			return nil, false, err
		}
		return m.Release(context.Background(), src, rows)
	}
	switch r.cell.Mechanism {
	case "R_S":
		for d := range 2 {
			v, ref, err := release(ptrSource(seed, "regression", r.cell.Data, r.cell.N, "R_S", d, r.cell.Epsilon, t), []int{d})
			if err != nil {
				return err
			}
			refused[d] = ref
			if !ref {
				beta[d] = v[0]
			}
		}
		r.seconds[t] = elapsed.Seconds() / 2
	case "R_H":
		v, ref, err := release(ptrSource(seed, "regression", r.cell.Data, r.cell.N, "R_H", r.cell.Epsilon, t), nil)
		if err != nil {
			return err
		}
		refused = [2]bool{ref, ref}
		if !ref {
			beta = [2]float64{v[0], v[1]}
		}
		r.seconds[t] = elapsed.Seconds()
	default:
		return fmt.Errorf("unknown regression mechanism %q", r.cell.Mechanism)
	}
	for d := range 2 {
		r.coef[d][t] = ptrOutcome{err: math.Abs(beta[d] - want[d]), refused: refused[d]}
		r.released[d][t] = math.NaN()
		if !refused[d] {
			r.released[d][t] = beta[d]
		}
	}
	return nil
}

// result summarizes the trials.
func (r *ptrRegressionCell) result() PTRRegressionCell {
	c := r.cell
	c.Intercept, c.Slope = ptrSummarize(r.coef[0]), ptrSummarize(r.coef[1])
	if !c.Real {
		c.OLSIntercept, c.OLSSlope = ptrSummarize(r.ols[0]), ptrSummarize(r.ols[1])
	}
	for d := range 2 {
		answered := slices.DeleteFunc(slices.Clone(r.released[d]), math.IsNaN)
		c.Released[d] = math.NaN()
		if len(answered) > 0 {
			slices.Sort(answered)
			c.Released[d] = ptrPercentile(answered, 0.5)
		}
	}
	total := 0.0
	for _, s := range r.seconds {
		total += s
	}
	c.Seconds = total / float64(len(r.seconds))
	return c
}
