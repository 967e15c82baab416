package planner

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Value is a computed output column.
type Value struct {
	// Null is set when a release was refused (⊥).
	Null bool
	Estimate
}

// Evaluate computes the output from the released estimates of the plan (indexed
// like Plan.Releases). It is post-processing of released values only.
//
// The 95% interval of a derived output is approximate: it is computed by
// simulation, re-drawing each input's Laplace noise around its released value
// (a plug-in bootstrap of the noise, not of the data), and reported only when
// every input is a Laplace release.
func (o *Output) Evaluate(released []Estimate) Value {
	args := make([]Estimate, len(o.Args))
	for i, a := range o.Args {
		args[i] = released[a]
		if args[i].Refused {
			return Value{Null: true, Estimate: Estimate{Note: args[i].Note}}
		}
	}
	if o.Derive == Direct && !o.isVariance() {
		v := Value{Estimate: args[0]}
		v.Value = o.clamp(v.Value)
		v.Low, v.High = o.clamp(v.Low), o.clamp(v.High)
		if o.Integer {
			v.Value, v.Low, v.High = math.Round(v.Value), math.Round(v.Low), math.Round(v.High)
		}
		return v
	}
	f := func(x []float64) float64 { return o.compute(x) }
	point := make([]float64, len(args))
	scales := make([]float64, len(args))
	simulate := true
	for i, a := range args {
		point[i] = a.Value
		scales[i] = a.LaplaceScale
		if a.LaplaceScale <= 0 {
			simulate = false
		}
	}
	v := Value{Estimate: Estimate{Value: f(point)}}
	if simulate {
		v.Low, v.High = simulatedInterval(f, point, scales)
		// The interval is where the truth can be: clip it like the value.
		v.Low, v.High = o.clipDerived(v.Low), o.clipDerived(v.High)
		v.HasInterval = true
	}
	return v
}

// clipDerived keeps an interval end of a derived output in the range of
// the statistic: a mean within the bounds, a variance within
// [0, ((U-L)/2)²] (its square root likewise).
func (o *Output) clipDerived(x float64) float64 {
	switch {
	case o.Derive == MeanOfSums:
		return o.clamp(x)
	case o.Derive == SquareRoot:
		return math.Min(math.Max(x, 0), math.Sqrt(o.varianceLimit()))
	}
	return o.clampVariance(x)
}

// isVariance reports whether the output is a variance or standard deviation.
func (o *Output) isVariance() bool {
	switch o.Agg.Func {
	case sqlrewrite.VarPop, sqlrewrite.VarSamp, sqlrewrite.StddevPop, sqlrewrite.StddevSamp:
		return true
	}
	return false
}

// compute applies the derivation to released values x (ordered as Args).
func (o *Output) compute(x []float64) float64 {
	kind := o.Derive
	if kind == SquareRoot {
		kind = o.Inner
	}
	var v float64
	switch kind {
	case MeanOfSums:
		lo, hi, _ := o.Column.Bounds()
		n := math.Max(x[0], 1)
		v = o.clamp((lo+hi)/2 + x[1]/n)
	case VarianceOfSums:
		n := math.Max(x[0], 1)
		mean := x[1] / n
		v = x[2]/n - mean*mean
		if o.Sample {
			v *= n / math.Max(n-1, 1)
		}
		v = o.clampVariance(v)
	case Direct:
		// A directly released variance with a count for the sample correction.
		v = x[0]
		if o.Sample && len(x) > 1 {
			n := math.Max(x[1], 2)
			v *= n / (n - 1)
		}
		v = o.clampVariance(v)
	}
	if o.Derive == SquareRoot {
		return math.Sqrt(v)
	}
	return v
}

// clamp keeps a released value where the truth can be: counts
// non-negative, sums on the side of zero the bounds allow, means and
// quantiles inside the column's public bounds. Post-processing, so free.
func (o *Output) clamp(v float64) float64 {
	switch o.Agg.Func {
	case sqlrewrite.CountRows, sqlrewrite.CountColumn:
		return math.Max(v, 0)
	case sqlrewrite.Sum:
		lo, hi, _ := o.Column.Bounds()
		if lo >= 0 {
			v = math.Max(v, 0)
		}
		if hi <= 0 {
			v = math.Min(v, 0)
		}
		return v
	case sqlrewrite.Avg, sqlrewrite.Median, sqlrewrite.Percentile:
		lo, hi, _ := o.Column.Bounds()
		return math.Min(math.Max(v, lo), hi)
	}
	return v
}

// clampVariance keeps a variance in [0, varianceLimit()].
func (o *Output) clampVariance(v float64) float64 {
	return math.Min(math.Max(v, 0), o.varianceLimit())
}

// varianceLimit is ((U-L)/2)², the largest population variance of values in
// [L, U]; a sample variance can exceed it by n/(n-1), at most twice.
func (o *Output) varianceLimit() float64 {
	lo, hi, _ := o.Column.Bounds()
	half := (hi - lo) / 2
	if o.Sample {
		return 2 * half * half
	}
	return half * half
}

// simulatedInterval returns the 2.5% and 97.5% points of f at the released
// point minus the simulated error f(point+noise) - f(point).
func simulatedInterval(f func([]float64) float64, point, scales []float64) (float64, float64) {
	const draws = 4000
	// Seeded from the released values: the simulation is post-processing and
	// needs no secret randomness; a fixed seed makes answers reproducible.
	seed := math.Float64bits(f(point))
	rng := rand.New(rand.NewPCG(seed, uint64(len(point))))
	base := f(point)
	errs := make([]float64, draws)
	x := make([]float64, len(point))
	for d := range errs {
		for i := range point {
			// Laplace by difference of exponentials; simulation only, never a release.
			x[i] = point[i] + scales[i]*(rng.ExpFloat64()-rng.ExpFloat64())
		}
		errs[d] = f(x) - base
	}
	slices.Sort(errs)
	lo := base - errs[int(0.975*draws)]
	hi := base - errs[int(0.025*draws)]
	return lo, hi
}
