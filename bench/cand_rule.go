package bench

import "fmt"

// RuleName is the candidate that runs Recommend as the planner would.
const RuleName = "rule"

// RuleCandidate runs the recommended rule end to end, budget included, so
// the report measures the product's default rather than assuming it: the
// candidate Recommend picks, with all of ε.
func RuleCandidate() Candidate {
	return Candidate{
		Name:     RuleName,
		Summary:  "the recommended default (bench.Recommend), run as the planner would, budget included",
		Supports: func(Statistic) bool { return true },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			d := c.d
			pick := Recommend(s, d.Integer, d.Lower, d.Upper, eps)
			for _, cand := range Candidates() {
				if cand.Name == pick && cand.Supports(s) {
					return cand.Prepare(s, c, eps)
				}
			}
			return nil, fmt.Errorf("rule: %s does not estimate %s", pick, s.Name)
		},
	}
}
