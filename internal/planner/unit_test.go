package planner_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestRowsPerUnitByMechanism: on the unit table visits (≤ 5 rows per
// person) every release by laplace reads 5 rows per unit and every release
// by any other mechanism reads exactly 1, whatever is forced; on the
// row-level table pums no release is bounded. A new mechanism that does
// not declare itself k-row analysed gets one row per unit, so its one-row
// analysis holds per person.
func TestRowsPerUnitByMechanism(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	parser := sqlrewrite.NewParser(cat)
	queries := []string{
		"SELECT COUNT(*), SUM(income), AVG(age), VARIANCE(age), STDDEV(age), MEDIAN(income) FROM %s",
		"SELECT IQR(age), PERCENTILE_CONT(income, 0.9) FROM %s",
		"SELECT REGR_SLOPE(income, age) FROM %s",
	}
	seen := map[string]bool{}
	for _, table := range []string{"visits", "pums"} {
		for _, m := range p.MechanismNames() {
			for _, q := range queries {
				st, err := parser.Parse(fmt.Sprintf(q, table))
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: m})
				if err != nil {
					continue // the forced mechanism answers none of these
				}
				for _, r := range plan.Releases {
					want := int64(1)
					if r.Mechanism.Name() == "laplace" {
						want = 5
					}
					if table == "pums" {
						want = 0
					}
					if r.RowsPerUnit != want {
						t.Errorf("%s, %s by %s: reads %d rows per unit, want %d", table, r.Stat, r.Mechanism.Name(), r.RowsPerUnit, want)
					}
					seen[r.Mechanism.Name()] = true
				}
			}
		}
	}
	if len(seen) < len(p.MechanismNames())-1 {
		t.Errorf("only mechanisms %v were planned", seen)
	}
}
