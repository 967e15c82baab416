package planner_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestRowExprReleaseUsesDerivedBounds: an aggregate of a row expression
// is released by the same mechanism as a column's, on a derived column
// whose bounds are the interval-arithmetic bounds, so its sensitivity is
// theirs (Laplace SUM: max(|lo|, |hi|) = 500100 for age + income, age in
// [0, 100], income in [0, 500000]); the fetch computes the expression as
// that column and clamps it to those bounds.
func TestRowExprReleaseUsesDerivedBounds(t *testing.T) {
	cat := testCatalog()
	for _, c := range []struct {
		sql    string
		lo, hi float64
	}{
		{"SELECT SUM(age + income) FROM pums", 0, 500100},
		{"SELECT SUM(income - 10 * age) FROM pums", -1000, 500000},
		{"SELECT SUM(CASE WHEN age > 90 THEN income ELSE -age END) FROM pums", -100, 500000},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		q, ok := st.(*sqlrewrite.Query)
		if !ok {
			t.Fatalf("%s: parsed as %T", c.sql, st)
		}
		qp, err := planner.New(cat).PlanQuery(q, planner.Settings{Epsilon: 1, Mechanism: "laplace"})
		if err != nil {
			t.Fatal(err)
		}
		p := qp.Base
		if len(p.Derived) != 1 || len(p.Releases) != 1 {
			t.Fatalf("%s: %d derived columns and %d releases, want 1 and 1", c.sql, len(p.Derived), len(p.Releases))
		}
		r := p.Releases[0]
		lo, hi, ok := r.Stat.Column.Bounds()
		if !ok || lo != c.lo || hi != c.hi || r.Stat.Column.Source != p.Derived[0].Name {
			t.Errorf("%s: release on %s [%v, %v], want the derived column %s [%v, %v]", c.sql, r.Stat.Column.Source, lo, hi, p.Derived[0].Name, c.lo, c.hi)
		}
		g, ok := planner.GridSumsRead(r)
		if !ok || g.Column != p.Derived[0].Name || g.Lower != c.lo || g.Upper != c.hi || !g.SumOnly {
			t.Errorf("%s: grid sums %+v, want those of %s over [%v, %v]", c.sql, g, p.Derived[0].Name, c.lo, c.hi)
		}
	}
}
