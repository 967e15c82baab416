package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Confidence is the level of the intervals reported with every value.
const Confidence = 0.95

// Value is a computed output column.
type Value struct {
	// Null is set when a release was refused (⊥).
	Null bool
	Estimate
}

// Evaluate computes the output from the released estimates of the plan
// (indexed like Plan.Releases). It is post-processing of released values
// only: mech's Derive functions for outputs built from primitive releases
// (with analytical intervals that cover the truth at the stated level for
// every dataset), and clamping to the statistic's possible range otherwise.
func (o *Output) Evaluate(released []Estimate) (Value, error) {
	args := make([]Estimate, len(o.Args))
	for i, a := range o.Args {
		args[i] = released[a]
		if args[i].Refused {
			return Value{Null: true, Estimate: Estimate{Note: args[i].Note}}, nil
		}
	}
	var (
		est mech.Estimate
		err error
		// total is the release of a COUNT or SUM, kept for WITH ROLLUP (Rolled).
		total *laplace.Noisy
	)
	switch o.Derive {
	case Direct, SquareRoot:
		if args[0].Squares != nil && o.isVariance() {
			return o.fromSquares(args[0])
		}
		if o.Derive == SquareRoot {
			if o.Inner != VarianceOfSums {
				v := o.direct(args)
				v.Value, v.Low, v.High = math.Sqrt(v.Value), math.Sqrt(v.Low), math.Sqrt(v.High)
				return v, nil
			}
			est, err = laplace.DeriveStddev(o.bounds(), o.varianceKind(), *args[0].Primitive, *args[1].Primitive, *args[2].Primitive, Confidence)
			break
		}
		if args[0].Primitive == nil {
			return o.direct(args), nil
		}
		total = args[0].Primitive
		if o.Integer {
			est, err = laplace.DeriveCount(*args[0].Primitive, Confidence)
			est.Value, est.Low, est.High = math.Round(est.Value), math.Floor(est.Low), math.Ceil(est.High)
			est = o.distinctLimited(est)
		} else {
			est, err = laplace.DeriveSum(*args[0].Primitive, Confidence)
		}
	case MeanOfSums:
		est, err = laplace.DeriveMean(o.bounds(), *args[0].Primitive, *args[1].Primitive, Confidence)
	case VarianceOfSums:
		est, err = laplace.DeriveVariance(o.bounds(), o.varianceKind(), *args[0].Primitive, *args[1].Primitive, *args[2].Primitive, Confidence)
	default:
		err = fmt.Errorf("unknown derivation %d", o.Derive)
	}
	if err != nil {
		return Value{}, err
	}
	return Value{Estimate: Estimate{Value: est.Value, Low: est.Low, High: est.High, HasInterval: est.HasInterval, Primitive: total}}, nil
}

// distinctLimited is a count's estimate, for COUNT(DISTINCT col) clamped
// with its interval to [0, D], D the most distinct values col's
// declaration allows (catalog.Column.DistinctValues), else as it is. It
// is post-processing of the released count with the configuration: the
// clamp is monotone, so an interval that held a true count within
// [0, D] holds it clamped.
func (o *Output) distinctLimited(est mech.Estimate) mech.Estimate {
	if o.Agg.Func != sqlrewrite.CountDistinct || o.Column == nil {
		return est
	}
	d, ok := o.Column.DistinctValues()
	if !ok {
		return est
	}
	est.Value, est.Low, est.High = math.Min(est.Value, d), math.Min(est.Low, d), math.Min(est.High, d)
	return est
}

// fromSquares is a variance's or standard deviation's output from the
// squares from both bounds: its kind (VAR_SAMP's count is theirs), its
// interval, its root; the squares are kept for WITH ROLLUP (Rolled).
func (o *Output) fromSquares(released Estimate) (Value, error) {
	est, err := varianceEstimate(o.bounds(), o.varianceKind(), o.Derive == SquareRoot, *released.Squares)
	if err != nil {
		return Value{}, err
	}
	released.Value, released.Low, released.High, released.HasInterval = est.Value, est.Low, est.High, est.HasInterval
	return Value{Estimate: released}, nil
}

// varianceEstimate is the variance of kind, or with root its square root,
// with its interval, from squares from both bounds
// (laplace.EdgeVarianceEstimate): a group's released squares or the sum
// of several groups' (RolledVariance).
func varianceEstimate(b mech.Bounds, kind laplace.VarianceKind, root bool, squares laplace.EdgeSquares) (mech.Estimate, error) {
	est, err := laplace.EdgeVarianceEstimate(b, kind, squares, Confidence)
	if err != nil || !root {
		return est, err
	}
	est.Value, est.Low, est.High = math.Sqrt(est.Value), math.Sqrt(est.Low), math.Sqrt(est.High)
	return est, nil
}

// direct is the output of a single non-primitive release (a quantile, or a
// mean or variance released whole by one mechanism), clamped to where the
// truth can be (an Integer one, MIN or MAX of an integer column, rounded
// to the nearest integer there), its interval too and widened to hold the
// value; a forced variance mechanism's value gets the sample correction
// n/(n-1) from the count released beside it, and then has no interval.
func (o *Output) direct(args []Estimate) Value {
	v := Value{Estimate: args[0]}
	lo, hi := o.bounds().Lower, o.bounds().Upper
	switch o.Agg.Func {
	case sqlrewrite.IQR:
		lo, hi = 0, hi-lo
	case sqlrewrite.RegrSlope, sqlrewrite.RegrIntercept:
		return v // limited to the coefficient bounds by the mechanism
	}
	if o.isVariance() {
		lo, hi = 0, o.varianceLimit()
		if o.Sample && len(args) > 1 {
			// The correction at the count's point value ñ. An interval
			// would have to take the ends over the count's own interval
			// (as laplace.EdgeVarianceEstimate does for autoVariance,
			// whose squares carry their count), with the miss rate split
			// between the two releases; scaled by ñ/(ñ−1) it is too
			// narrow, so the corrected value gets none. Neither
			// mechanism that releases a whole variance beside a count
			// (preprocess, piecewise) publishes one.
			n := math.Max(args[1].Value, 2)
			v.Value *= n / (n - 1)
			v.Low, v.High, v.HasInterval = 0, 0, false
		}
	}
	// Both ends are clamped into [lo, hi] like the value: clamping is
	// monotone, so an interval that held the unclamped value holds the
	// clamped one, and noise that put the centre far outside the range
	// cannot leave Low above High, an end outside the range or (under
	// SquareRoot) a negative end.
	// An Integer one is rounded to the nearest integer within the bounds,
	// its interval widened to integers; bounds that hold no integer
	// ([0.2, 0.8], where plan makes MIN and MAX no Integer output) leave
	// it unrounded. The interval is last widened to hold the value, so
	// that lo <= Low <= Value <= High <= hi in every case.
	if o.Integer && math.Ceil(lo) <= math.Floor(hi) {
		lo, hi = math.Ceil(lo), math.Floor(hi)
		v.Value = math.Round(v.Value)
		v.Low, v.High = math.Floor(v.Low), math.Ceil(v.High)
	}
	v.Value = clampTo(v.Value, lo, hi)
	if v.HasInterval {
		v.Low, v.High = math.Min(clampTo(v.Low, lo, hi), v.Value), math.Max(clampTo(v.High, lo, hi), v.Value)
	}
	return v
}

// clampTo is x limited to [lo, hi].
func clampTo(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

// Temporal returns the type of the column of a date or timestamp order
// statistic (MIN, MAX, MEDIAN, PERCENTILE_CONT of a date column or of
// DATE(timestamp column), released on its day or second number:
// sqlrewrite.RowExpr.TemporalOf); ok is false for any other output.
func (o *Output) Temporal() (typ catalog.ColumnType, ok bool) {
	return o.Agg.Expr.TemporalOf()
}

// FormatTemporal writes a released day or second number of a Temporal
// output as the date (YYYY-MM-DD) or timestamp (YYYY-MM-DD HH:MM:SS) it
// names: rounded to the nearest day or second, within the column's
// bounds. It is post-processing of the released value.
func (o *Output) FormatTemporal(v float64) string {
	typ, _ := o.Temporal()
	b := o.bounds()
	c := catalog.Column{Type: typ}
	return c.FormatTemporal(math.Min(math.Max(math.Round(v), b.Lower), b.Upper))
}

// ClampedTo returns the declared bounds the values of o's column are
// clamped to before its statistic is computed, ok false for an output
// that clamps no values of one column (a count; a regression clamps two).
// Its value and 95% interval are those of the statistic of the clamped
// values: the interval does not account for the bias of clamping values
// that lie outside the bounds.
func (o *Output) ClampedTo() (b mech.Bounds, ok bool) {
	switch o.Agg.Func {
	case sqlrewrite.Sum, sqlrewrite.Avg, sqlrewrite.VarPop, sqlrewrite.VarSamp, sqlrewrite.StddevPop, sqlrewrite.StddevSamp,
		sqlrewrite.Median, sqlrewrite.Percentile, sqlrewrite.IQR:
		if o.Column != nil {
			lo, hi, ok := o.Column.Bounds()
			return mech.Bounds{Lower: lo, Upper: hi}, ok
		}
	}
	return mech.Bounds{}, false
}

func (o *Output) bounds() mech.Bounds {
	lo, hi, _ := o.Column.Bounds()
	return mech.Bounds{Lower: lo, Upper: hi}
}

func (o *Output) varianceKind() laplace.VarianceKind {
	if o.Sample {
		return laplace.SampleVariance
	}
	return laplace.PopulationVariance
}

// isVariance reports whether the output is a variance or standard deviation.
func (o *Output) isVariance() bool {
	switch o.Agg.Func {
	case sqlrewrite.VarPop, sqlrewrite.VarSamp, sqlrewrite.StddevPop, sqlrewrite.StddevSamp:
		return true
	}
	return false
}

// varianceLimit is ((U-L)/2)², the largest population variance of values in
// [L, U]; a sample variance can exceed it by n/(n-1), at most twice.
func (o *Output) varianceLimit() float64 {
	h := (o.bounds().Upper - o.bounds().Lower) / 2
	if o.Sample {
		return 2 * h * h
	}
	return h * h
}

// Rolled returns the released sums behind v, o's value, that add up over
// groups: a COUNT's or SUM's value and Laplace release, an AVG's sums
// from both bounds (autoMean) or a VARIANCE's or STDDEV's squares from
// both bounds (autoVariance), else nil. A super-aggregate of WITH ROLLUP
// adds them up (PostProcess).
func (o *Output) Rolled(v Value) Additive {
	switch {
	case v.Null:
		return nil
	case v.Primitive != nil:
		return &RolledSum{Shown: v.Value, Release: v.Primitive.Total(), Integer: o.Integer}
	case v.Edges != nil && o.Agg.Func == sqlrewrite.Avg && o.Derive == Direct:
		return &RolledMean{Sums: *v.Edges, Bounds: o.bounds()}
	case v.Squares != nil && o.isVariance():
		return &RolledVariance{Squares: *v.Squares, Bounds: o.bounds(), Kind: o.varianceKind(), Root: o.Derive == SquareRoot}
	}
	return nil
}

// Interval returns the 95% interval of v, o's value, when it has one and
// is a number (a date's is in its day or second numbers: none), else nil.
func (o *Output) Interval(v Value) *Interval {
	if _, temporal := o.Temporal(); v.Null || !v.HasInterval || temporal {
		return nil
	}
	if o.Integer {
		return &Interval{Low: math.Floor(v.Low), High: math.Ceil(v.High)}
	}
	return &Interval{Low: v.Low, High: v.High}
}
