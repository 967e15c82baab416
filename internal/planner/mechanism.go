package planner

import (
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Mechanism adapts one algorithm of package mech to plans and execution.
// Adding a mechanism to dpproxy is adding one implementation to
// standardMechanisms (and, if it should become a default, a line in
// defaultMechanism): the executor drives every mechanism through this
// interface alone.
type Mechanism interface {
	// Name is what SET @dp_mechanism takes and EXPLAIN and SHOW WARNINGS print.
	Name() string
	// Guarantee summarises the privacy guarantee for warnings, e.g. "pure ε-DP".
	Guarantee() string
	// Supports reports whether the mechanism can release statistics of this kind.
	Supports(kind StatKind) bool
	// NeedsDelta reports whether the mechanism's guarantee is (ε, δ) with δ > 0.
	NeedsDelta() bool
	// Terms lists the summary aggregates the database computes for r; the
	// executor fetches the terms of all releases in one query.
	Terms(r *Release) []sqlrewrite.SummaryTerm
	// Window returns the window of order statistics r needs, given the values
	// of its Terms (exact, private: they shape the fetch but are used in the
	// release only as the mechanism's analysis allows), or nil.
	Window(r *Release, terms []float64) *sqlrewrite.Window
	// Histogram returns the GROUP BY histogram r needs (its bins public), or nil.
	Histogram(r *Release) *sqlrewrite.Histogram
	// Reads describes for EXPLAIN what the release reads, without data.
	Reads(r *Release) string
	// Release computes the private value of r from what was fetched, drawing
	// all randomness from src.
	Release(src mech.Source, r *Release, in Input) (Estimate, error)
}

// Input is what the executor fetched for one release.
type Input struct {
	// Terms are the values of Mechanism.Terms, in order.
	Terms []float64
	// Window holds the fetched order statistics, sorted, with the rank of the
	// first at Window.Offset; nil if the mechanism asked for none.
	Window       []float64
	WindowOffset int64
	// Histogram holds the count of every bin of Mechanism.Histogram.
	Histogram []int64
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
	Primitive *mech.Noisy
	// Refused is set when the mechanism declined to answer (PTR's ⊥): the
	// value is NULL and the budget is still spent.
	Refused bool
	// Note is an extra remark for SHOW WARNINGS, e.g. why the answer is NULL.
	Note string
}
