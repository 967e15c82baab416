package planner_test

import (
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestDeclaredTextGroupsFirstMatch: on every backend, whose collations may
// equate declared text values (MySQL's _ci defaults, SQLite's NOCASE,
// PostgreSQL's citext), each group's filter also excludes the values
// declared before it (sqlrewrite.ValueConditions), so that a row is in one
// group only, as the grouped fetches' CASE puts it.
func TestDeclaredTextGroupsFirstMatch(t *testing.T) {
	for _, driver := range []string{catalog.DriverMySQL, catalog.DriverPostgres, catalog.DriverSQLite} {
		cat := testCatalog()
		cat.Backend.Driver = driver
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT state, COUNT(*) FROM pums GROUP BY state")
		if err != nil {
			t.Fatal(err)
		}
		qp, err := planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "laplace"})
		if err != nil {
			t.Fatal(err)
		}
		last := qp.GroupFilters[len(qp.GroupFilters)-1] // WA, after CA and NY
		complement := slices.ContainsFunc(last, func(c sqlrewrite.Condition) bool {
			return c.Complement && len(c.In) == 2 && c.In[0].Str == "CA" && c.In[1].Str == "NY"
		})
		if !complement {
			t.Errorf("%s: filter of WA %+v; want it to exclude CA and NY", driver, last)
		}
	}
}

// TestDisjointPartsNeedASnapshot: a pivot whose parts no row can share
// composes in parallel on a snapshot (backend.isolation repeatable_read)
// and splits ε without one (none), where a row written between the parts'
// fetches may be read by two of them.
func TestDisjointPartsNeedASnapshot(t *testing.T) {
	for _, isolation := range []string{catalog.IsolationRepeatableRead, catalog.IsolationNone} {
		cat := testCatalog()
		cat.Backend.Driver, cat.Backend.Isolation = catalog.DriverPostgres, isolation
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT SUM(CASE WHEN sex = 1 THEN income END), SUM(CASE WHEN sex = 0 THEN income END) FROM pums")
		if err != nil {
			t.Fatal(err)
		}
		qp, err := planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		want := isolation == catalog.IsolationRepeatableRead
		if qp.Disjoint != want || len(qp.Parts) != 2 {
			t.Fatalf("isolation %s: Disjoint = %v over %d parts, want %v over 2", isolation, qp.Disjoint, len(qp.Parts), want)
		}
		if eps := qp.Parts[0].Plan.Cost.Epsilon; want && eps != 1 || !want && eps != 0.5 {
			t.Errorf("isolation %s: a part spends ε = %g", isolation, eps)
		}
	}
}
