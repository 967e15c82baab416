package planner_test

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLimitZeroOverSelectedKey: LIMIT 0 leaves no row whatever the data,
// with a key chosen by partition selection as with a declared one, so the
// statement is free and EXPLAIN says so (it was planned, and a projection
// of it charged, at full ε and δ: an independent review).
func TestLimitZeroOverSelectedKey(t *testing.T) {
	cat := testCatalog()
	parser, p := sqlrewrite.NewParser(cat), planner.New(cat)
	for _, sql := range []string{
		"SELECT * FROM (SELECT state, COUNT(*) AS n FROM pums GROUP BY state) s LIMIT 0",
		"SELECT * FROM (SELECT name, COUNT(*) AS n FROM pums GROUP BY name) s LIMIT 0",
	} {
		// Over one table, LIMIT 0 is a zero-row probe the catalog engine
		// answers (EXPLAIN says so); over a derived table, it is planned.
		st, err := parser.Parse("EXPLAIN " + sql)
		if err != nil {
			t.Fatal(err)
		}
		qp, err := p.PlanQuery(st.(*sqlrewrite.Explain).Query, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		if !qp.Empty || qp.Cost.Epsilon != 0 || qp.Cost.Delta != 0 {
			t.Errorf("%s: Empty %v, cost ε %g δ %g; want no row and nothing spent", sql, qp.Empty, qp.Cost.Epsilon, qp.Cost.Delta)
		}
	}
	for _, sql := range []string{
		"SELECT state, COUNT(*) FROM pums GROUP BY state LIMIT 0",
		"SELECT name, COUNT(*) FROM pums GROUP BY name LIMIT 0",
	} {
		st, err := parser.Parse("EXPLAIN " + sql)
		if err != nil {
			t.Fatal(err)
		}
		if ex := st.(*sqlrewrite.Explain); ex.ZeroRow != "pums" {
			t.Errorf("EXPLAIN %s: %+v, want the zero-row probe of pums", sql, ex)
		}
	}
}

// TestSelectedKeyTypedOverNoRow: a key chosen by partition selection has
// its column's type (VARCHAR for a text column) where the statement
// leaves no row whatever the data, so no selection is planned (a WHERE
// true for no row, an outer LIMIT 0), as where one is: the column
// definitions of a probe are its answer's. Before, such a key was typed
// NULL (an independent review).
func TestSelectedKeyTypedOverNoRow(t *testing.T) {
	cat := testCatalog()
	parser, p := sqlrewrite.NewParser(cat), planner.New(cat)
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM (SELECT name, COUNT(*) AS n FROM pums WHERE 1 = 0 GROUP BY name) s", "VARCHAR BIGINT"},
		{"SELECT * FROM (SELECT site, AVG(income) AS a FROM visits WHERE income = NULL GROUP BY site) s", "VARCHAR DOUBLE"},
		{"SELECT name FROM (SELECT name, COUNT(*) AS n FROM pums GROUP BY name) s LIMIT 0", "VARCHAR"},
		{"SELECT * FROM (SELECT name, COUNT(*) AS n FROM pums GROUP BY name) s", "VARCHAR BIGINT"},
	} {
		st, err := parser.Parse(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		qp, err := p.PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, ty := range qp.ColumnTypes() {
			types = append(types, ty.String())
		}
		if got := strings.Join(types, " "); got != c.want {
			t.Errorf("%s: types %s, want %s", c.sql, got, c.want)
		}
	}
}
