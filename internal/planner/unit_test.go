package planner_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
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

// TestLaplaceNoiseScalesWithRowsPerUnit: the noise a laplace release draws
// on the unit table visits (5 rows per person) is 5 times that on the
// row-level pums: count scale 5/ε, sum scale 5·500000/ε.
func TestLaplaceNoiseScalesWithRowsPerUnit(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	parser := sqlrewrite.NewParser(cat)
	src := noise.NewCryptoSource()
	const eps = 0.5
	for _, tc := range []struct {
		table string
		k     float64
	}{{"pums", 1}, {"visits", 5}} {
		st, err := parser.Parse("SELECT COUNT(*), SUM(income) FROM " + tc.table)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 2 * eps, Mechanism: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []float64{tc.k / eps, tc.k * 500000 / eps} {
			r := plan.Releases[i]
			step, err := r.Mechanism.Start(src, r, []float64{100}, nil)
			if err != nil {
				t.Fatal(err)
			}
			more, done, est, err := step.Advance(context.Background(), src, nil)
			if err == nil && !done && len(more) == 1 && more[0].GridSums != nil { // SUM: its exact grid sums
				_, done, est, err = step.Advance(context.Background(), src, []planner.Fetched{{Grid: &sqlrewrite.GridTotals{Count: 100, Sum: big.NewInt(0)}}})
			}
			if err != nil || !done {
				t.Fatalf("%s %s: done %v, %v", tc.table, r.Stat, done, err)
			}
			if got := est.Primitive.Scale(); got < want || got > want*(1+1e-5) {
				t.Errorf("%s %s: noise scale %v, want %v", tc.table, r.Stat, got, want)
			}
		}
	}
}

// TestRefusePrivacyUnits: with RefusePrivacyUnits every statement on the
// unit table visits (plain, grouped, EXPLAIN's plan) is refused as
// Unsupported with the reason given, and the row-level table pums still
// plans; without it visits plans.
func TestRefusePrivacyUnits(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	plan := func(p *planner.Planner, q string) error {
		t.Helper()
		st, err := parser.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		s := planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"}
		switch st := st.(type) {
		case *sqlrewrite.Select:
			_, err = p.Plan(st, s)
		case *sqlrewrite.Query:
			_, err = p.PlanQuery(st, s)
		default:
			t.Fatalf("%s: parsed as %T", q, st)
		}
		return err
	}
	queries := []string{"SELECT COUNT(*), AVG(age) FROM %s", "SELECT MEDIAN(income) FROM %s WHERE age > 30",
		"SELECT FLOOR(age / 10) * 10 AS b, COUNT(*) FROM %s GROUP BY b"}
	refusing := planner.New(cat)
	refusing.RefusePrivacyUnits("the backend cannot bound units")
	for _, q := range queries {
		if err := plan(planner.New(cat), fmt.Sprintf(q, "visits")); err != nil {
			t.Errorf("%s on visits without the refusal: %v", q, err)
		}
		err := plan(refusing, fmt.Sprintf(q, "visits"))
		if dperr.KindOf(err) != dperr.Unsupported || err.Error() != "not supported: table visits protects each person_id, and the backend cannot bound units" {
			t.Errorf("%s on visits: got %v, want the refusal", q, err)
		}
		if err := plan(refusing, fmt.Sprintf(q, "pums")); err != nil {
			t.Errorf("%s on pums: %v", q, err)
		}
	}
}
