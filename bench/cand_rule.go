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
// ε (VARIANCE: "edges", the planner's autoVariance); for AVG it releases
// the probe count ñ₀ with ProbeShare·ε, then below the threshold the sums
// from both bounds (laplace.ReleaseEdgeSums) with the rest, else a count
// with (CountShare − ProbeShare)·ε and the centred mean (centredMean): the
// planner's autoMean.
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
			centred, err := centredMean(c, eps)
			if err != nil {
				return nil, err
			}
			b, sum := c.bounds(), c.Summary()
			draw := func(src noise.Source) (float64, error) {
				probe, err := laplace.ReleaseCount(src, sum.Count, eps*ProbeShare)
				if err != nil {
					return 0, err
				}
				rest := eps * (1 - ProbeShare)
				if Recommend(s, eps, d.Integer, d.Lower, d.Upper, probe.Value()) != "centred" {
					e, err := laplace.ReleaseEdgeSums(src, b, sum, rest)
					return e.Mean(b), err
				}
				count, err := laplace.ReleaseCount(src, sum.Count, eps*(CountShare-ProbeShare))
				if err != nil {
					return 0, err
				}
				return centred(src, int64(count.Value()))
			}
			return drawOnly(draw), nil
		},
	}
}

// ProbeShare is the share of ε of the probe count that chooses the branch
// of the rule for AVG (the planner's autoProbeShare).
const ProbeShare = 0.02
