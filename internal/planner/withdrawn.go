package planner

import (
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// withdrawn maps the mechanism names the proxy no longer serves to why.
// SET @dp_mechanism and Plan refuse them (Withdrawn) with what to use
// instead, rather than as unknown names; MechanismNames does not list them.
//
// "ptr-robust" is R_H, Dwork and Lei's Hampel-type regression for
// REGR_SLOPE and REGR_INTERCEPT: ptr.HampelRegression computes its
// stability distance ⌈g⌉ on a floating-point line arrangement, and an
// independent review found neighbouring datasets whose computed distances
// differ by 2 (a g that is exactly 1 computed one ulp above it; a vertex
// on a cell's edge rounded into the cell), where the proof of its (ε, δ)
// needs 1. It stays in package ptr for the benchmark
// (bench/RESULTS-ptr.md) until the distance is computed with certified
// error bounds.
var withdrawn = map[string]string{
	"ptr-robust": "the robust regression R_H computes its stability distance in floating point, which its proof does not allow",
}

// Withdrawn returns the refusal (dperr.Unsupported, 1235) of a mechanism
// name the proxy no longer serves: it says the mechanism is not available
// and why, and names 'ptr' and the mechanisms that answer MEDIAN and IQR.
// It returns nil for any other name.
func (p *Planner) Withdrawn(name string) error {
	reason, ok := withdrawn[name]
	if !ok {
		return nil
	}
	return dperr.New(dperr.Unsupported,
		"mechanism '%s' is not available: %s; use SET @dp_mechanism = 'ptr' (R_S, the default for REGR_SLOPE and REGR_INTERCEPT) or 'auto'; MEDIAN is answered by %s, IQR by %s",
		name, reason, p.answering(Statistic{Kind: StatQuantile, Quantile: 0.5}), p.answering(Statistic{Kind: StatIQR}))
}

// answering lists the names of the planner's mechanisms that answer s.
func (p *Planner) answering(s Statistic) string {
	var names []string
	for _, m := range p.mechanisms {
		if m.Supports(s) {
			names = append(names, m.Name())
		}
	}
	return strings.Join(names, ", ")
}
