package planner

import (
	"fmt"
	"strconv"
)

// explainSynopses appends one EXPLAIN row per synopsis, numbered from
// step+1, and returns the last step used.
func (sp *SynopsisPlan) explainSynopses(step int, rows [][]any) (int, [][]any) {
	if sp == nil {
		return step, rows
	}
	for _, s := range sp.Synopses {
		step++
		what := "synopsis(" + s.Column.Name + ")"
		if s.Predicate != "" {
			what = "synopsis(" + s.Column.Name + " | " + s.Predicate + ")"
		}
		d := s.Domain
		rows = append(rows, []any{int64(step), "synopsis", what, s.MechanismName(), display(s.Config.Epsilon), 0.0,
			fmt.Sprintf("pure ε-DP histogram synopsis of %s, tuned for workload %s; ε spent once, by the first statement that needs it, then stored with the ledger and reused at no cost; reads one GROUP BY histogram computed by the database, no rows%s",
				d.describe(), s.Config.Workload.Kind, s.unitExplain())})
	}
	return step, rows
}

// explainOutput describes output i answered from a synopsis whose EXPLAIN
// rows start after step first.
func (sp *SynopsisPlan) explainOutput(i, first int) string {
	a := sp.Answers[i]
	if a.Key {
		return fmt.Sprintf("bucket key %s, %d bucket(s)", a.Describe, len(sp.Buckets))
	}
	return fmt.Sprintf("count from synopsis #%s over %s, rounded to a non-negative integer", strconv.Itoa(first+a.Synopsis+1), a.Describe)
}

// explainTotal is the total row's remark on synopses.
func (sp *SynopsisPlan) explainTotal() string {
	if sp == nil {
		return ""
	}
	return fmt.Sprintf("; plus, once, the ε of each of the %d synopsis(es) listed if it is not built yet (the first statement that needs a synopsis pays for it; EXPLAIN does not say whether it is built)", len(sp.Synopses))
}

// unitExplain is what EXPLAIN says of a synopsis's privacy unit: whom it
// protects, the bound and the histogram's sensitivity; empty on a
// row-level table (one row changes one bin by one).
func (s *SynopsisSpec) unitExplain() string {
	t := s.Table
	if !t.HasPrivacyUnit() {
		return ""
	}
	k := s.RowsPerUnit()
	return fmt.Sprintf("; protects each %s at epsilon = %.6g: the histogram keeps ≤ %d rows per %s (chosen at random in the database, once per build), L1 sensitivity %d, so every stage's noise is scaled by %d (built at epsilon/%d per row)",
		t.PrivacyUnit, s.Config.Epsilon, k, t.PrivacyUnit, k, k, k)
}
