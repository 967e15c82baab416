package planner

import (
	"context"

	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Mechanism adapts one algorithm of package mech to plans and execution.
// Adding a mechanism to dpproxy is adding one implementation to
// standardMechanisms (and, if it should become a default, a line in
// defaultMechanism): the executor drives every mechanism through this
// interface alone.
//
// Execution protocol: the executor fetches the Terms of every release in one
// summary query and the Histogram of each release that asks for one, calls
// Start, then calls Advance on the returned Step with the windows it asked
// for (none the first time) until the step is done. Everything is read from
// one snapshot of the data.
type Mechanism interface {
	// Name is what SET @dp_mechanism takes and EXPLAIN and SHOW WARNINGS print.
	Name() string
	// Guarantee summarises the privacy guarantee for EXPLAIN.
	Guarantee() string
	// Supports reports whether the mechanism can release the statistic.
	Supports(s Statistic) bool
	// NeedsDelta reports whether the mechanism's guarantee is (ε, δ) with δ > 0.
	NeedsDelta() bool
	// Terms lists the summary aggregates the database computes for r.
	Terms(r *Release) []sqlrewrite.SummaryTerm
	// Histogram returns the GROUP BY histogram r needs (its bins public), or nil.
	Histogram(r *Release) *sqlrewrite.Histogram
	// Reads describes for EXPLAIN what the release reads, without data.
	Reads(r *Release) string
	// Check validates r's public parameters (every ε share its steps use,
	// bounds, quantile, δ, trim) with the constructors Start uses, without
	// data (check.go): the planner calls it before anything is reserved.
	Check(r *Release) error
	// Start begins the release given the values of Terms and the histogram
	// (exact and private: they may shape further fetches, and enter the
	// released value only as the mechanism's analysis allows). It may draw
	// noise from src, e.g. a noisy count whose cost is part of r.Epsilon.
	Start(src noise.Source, r *Release, terms []float64, histogram []int64) (Step, error)
}

// Step is a release in progress.
type Step interface {
	// Advance takes what the previous call asked for (nil the first time,
	// then one Fetched per request, in order) and either asks for more or,
	// when done, returns the estimate. A request is a Window (its values, or
	// their sum) or Pairs; the executor fills in the table and filter. A
	// mechanism whose work can run long stops when ctx ends (the statement
	// timeout, KILL QUERY, the client gone) and returns ctx's error, which
	// the executor reports as the statement's timeout or cancellation.
	Advance(ctx context.Context, src noise.Source, fetched []Fetched) (more []sqlrewrite.Fetch, done bool, est Estimate, err error)
}

// Fetched is the answer to one request of a Step.
type Fetched struct {
	// Values are a window's values (one value, the sum, for a Sum window).
	Values []float64
	// Pairs are the (y, x) rows of a Pairs request.
	Pairs [][2]float64
	// Grid are the exact n, Σk and Σk² of a GridSums request.
	Grid *sqlrewrite.GridTotals
}

// finished is a Step that is already done.
type finished struct{ est Estimate }

func (f finished) Advance(context.Context, noise.Source, []Fetched) ([]sqlrewrite.Fetch, bool, Estimate, error) {
	return nil, true, f.est, nil
}

// once is a Step that makes its requests once and then finishes.
type once struct {
	requests []sqlrewrite.Fetch
	finish   func(ctx context.Context, src noise.Source, fetched []Fetched) (Estimate, error)
}

func (o *once) Advance(ctx context.Context, src noise.Source, fetched []Fetched) ([]sqlrewrite.Fetch, bool, Estimate, error) {
	if fetched == nil && len(o.requests) > 0 {
		return o.requests, false, Estimate{}, nil
	}
	est, err := o.finish(ctx, src, fetched)
	return nil, true, est, err
}

// Estimate is a released value and what is known of its accuracy.
type Estimate struct {
	Value float64
	// Low and High bound a 95% interval around the truth computed from the
	// noise distribution and public or released quantities only.
	Low, High   float64
	HasInterval bool
	// Primitive is the shared primitive release (noisy count or clamped
	// sum) behind the value, when there is one: derived outputs (AVG,
	// VARIANCE) are computed from primitives by mech's Derive functions.
	Primitive *laplace.Noisy
	// Edges are the released sums from both bounds behind an AVG
	// (autoMean, laplace.ReleaseEdgeSums). They add up over groups, so
	// WITH ROLLUP's total of the AVG is the mean of their sums
	// (Output.RolledMean).
	Edges *laplace.EdgeSums
	// Squares are the released squares from both bounds behind a VARIANCE
	// (autoVariance, laplace.ReleaseEdgeSquares): VAR_SAMP takes its count
	// from them, and they add up over groups like Edges.
	Squares *laplace.EdgeSquares
	// Refused is set when the mechanism declined to answer (PTR's ⊥): the
	// value is NULL and the budget is still spent.
	Refused bool
	// Note is an extra remark for SHOW WARNINGS, e.g. why the answer is NULL.
	Note string
}
