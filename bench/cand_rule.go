package bench

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// RuleName is the candidate that runs Recommend as the planner would.
const RuleName = "rule"

// RuleCandidate runs the recommended rule end to end, budget included, so
// the report measures the product's default rather than assuming it: for
// a statistic whose rule needs no ñ it is the chosen candidate with all of
// ε; for AVG it releases ñ with CountShare·ε, then runs the centred mean
// with that ñ or laplace.BoundedMean with the remaining ε; for VARIANCE
// it releases ñ and runs centredVariance (the planner's autoVariance).
func RuleCandidate() Candidate {
	return Candidate{
		Name:     RuleName,
		Summary:  "the recommended default (bench.Recommend), run as the planner would, budget included",
		Supports: func(Statistic) bool { return true },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			d := c.d
			if !RuleNeedsCount(s) {
				pick := Recommend(s, eps, d.Integer, d.Lower, d.Upper, 0)
				for _, cand := range Candidates() {
					if cand.Name == pick && cand.Supports(s) {
						return cand.Prepare(s, c, eps)
					}
				}
				return nil, fmt.Errorf("rule: %s does not estimate %s", pick, s.Name)
			}
			rest := statisticEpsilon(eps)
			prepare := centredMean
			if s.Kind == VarianceStat {
				prepare = centredVariance
			}
			centred, err := prepare(c, eps)
			if err != nil {
				return nil, err
			}
			sum := c.Summary()
			draw := func(src noise.Source) (float64, error) {
				nTilde, err := noisyCount(src, d, eps)
				if err != nil {
					return 0, err
				}
				if s.Kind == VarianceStat {
					return centred(src, nTilde) // both branches live in centredVariance
				}
				if Recommend(s, eps, d.Integer, d.Lower, d.Upper, float64(nTilde)) != "centred" {
					e, err := laplace.BoundedMean(src, c.bounds(), sum, rest, confidence)
					return e.Value, err
				}
				return centred(src, nTilde)
			}
			return drawOnly(draw), nil
		},
	}
}
