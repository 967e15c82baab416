package planner_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLimitNoRowTyped: a statement whose LIMIT (or an outer query's)
// leaves no row whatever the data, which the planner answers itself
// (QueryPlan.Empty), types its columns as the statement without that
// LIMIT does: its aggregates too (COUNT BIGINT, MEDIAN DOUBLE, MIN of an
// integer column BIGINT, MAX of a date DATE), through its keys, outer
// query, window functions and WITH ROLLUP, whatever mechanism would
// release them. Typing reads no setting: under a δ of 0 that IQR's
// mechanism needs, or an @dp_mechanism that answers none of the
// aggregates, which refuse the statement without LIMIT, the limited one
// is still planned, free, with the same types. Before, the aggregates
// were MySQL's type NULL there (an independent review with mariadb
// --column-type-info).
func TestLimitNoRowTyped(t *testing.T) {
	cat := testCatalog()
	parser, p := sqlrewrite.NewParser(cat), planner.New(cat)
	answered := planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"}
	refusing := []planner.Settings{
		{Epsilon: 1, Delta: 0, Mechanism: "auto"},
		{Epsilon: 1, Delta: 1e-6, Mechanism: "laplace"},
		{Epsilon: 1e-9, Delta: 1e-6, Mechanism: "ptr"},
	}
	// typesOf plans sql (a plain aggregate statement without LIMIT is a
	// Select, its plan's types the answer's).
	typesOf := func(sql string, s planner.Settings) (*planner.QueryPlan, string, error) {
		t.Helper()
		st, err := parser.ParseDescribed(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if sel, ok := st.(*sqlrewrite.Select); ok {
			plan, err := p.Plan(sel, s)
			if err != nil {
				return nil, "", err
			}
			return nil, fmt.Sprint(plan.ColumnTypes()), nil
		}
		q, ok := st.(*sqlrewrite.Query)
		if !ok {
			t.Fatalf("%s: a %T, want a Query", sql, st)
		}
		qp, err := p.PlanQuery(q, s)
		if err != nil {
			return nil, "", err
		}
		return qp, fmt.Sprint(qp.ColumnTypes()), nil
	}
	refused := make([]int, len(refusing))
	for _, c := range []struct {
		sql    string
		limits []string
		want   string
	}{
		{"SELECT sex, MEDIAN(income) FROM pums GROUP BY sex", []string{" LIMIT 0", " LIMIT 2, 1"}, "[BIGINT DOUBLE]"},
		{"SELECT MEDIAN(income), COUNT(*), MIN(age), MAX(day) FROM pums", []string{" LIMIT 0", " LIMIT 1, 1"}, "[DOUBLE BIGINT BIGINT DATE]"},
		{"SELECT state, AVG(age), MIN(age), SUM(income), STDDEV(income), COUNT(DISTINCT name), MEDIAN(age), IQR(income) FROM pums GROUP BY state",
			[]string{" LIMIT 0", " LIMIT 3, 5", " ORDER BY 2 LIMIT 0"}, "[VARCHAR DOUBLE BIGINT DOUBLE DOUBLE BIGINT DOUBLE DOUBLE]"},
		{"SELECT sex, COUNT(*), AVG(income) FROM pums GROUP BY sex WITH ROLLUP", []string{" LIMIT 0", " LIMIT 3, 1"}, "[BIGINT BIGINT DOUBLE]"},
		{"SELECT sex, COUNT(CASE WHEN age > 30 THEN 1 END) AS n, AVG(CASE WHEN age > 30 THEN income END) AS a FROM pums GROUP BY sex",
			[]string{" LIMIT 0"}, "[BIGINT BIGINT DOUBLE]"},
		{"SELECT sex, MIN(age + 1), MAX(income / 2) FROM pums GROUP BY sex", []string{" LIMIT 0"}, "[BIGINT BIGINT DOUBLE]"},
		{"SELECT sex, COUNT(*) * 2 AS c, RANK() OVER (ORDER BY MEDIAN(income)) AS r FROM pums GROUP BY sex HAVING COUNT(*) > 1", []string{" LIMIT 0"}, "[BIGINT BIGINT BIGINT]"},
		{"SELECT name, AVG(age), MEDIAN(income) FROM pums GROUP BY name", []string{" LIMIT 0"}, "[VARCHAR DOUBLE DOUBLE]"},
		{"SELECT site, COUNT(*), IQR(income) FROM visits GROUP BY site", []string{" LIMIT 0"}, "[VARCHAR BIGINT DOUBLE]"},
		{"SELECT COUNT(*) FROM survey WHERE age < 30", []string{" LIMIT 1, 1"}, "[BIGINT]"},
		{"SELECT COUNT(*), MEDIAN(age) FROM people WHERE age < 30", []string{" LIMIT 0"}, "[BIGINT DOUBLE]"},
		{"SELECT * FROM (SELECT sex, COUNT(*) AS c FROM pums GROUP BY sex) x", []string{" LIMIT 0"}, "[BIGINT BIGINT]"},
		{"SELECT * FROM (SELECT COUNT(*) AS c FROM pums) x", []string{" LIMIT 1, 1", " LIMIT 0"}, "[BIGINT]"},
		{"SELECT COUNT(*), SUM(m), MAX(m) FROM (SELECT state, MEDIAN(income) AS m FROM pums GROUP BY state) x", []string{" LIMIT 0", " LIMIT 5 OFFSET 1"}, "[BIGINT DOUBLE DOUBLE]"},
		{"SELECT m, COUNT(*) FROM (SELECT state, MIN(age) AS m FROM pums GROUP BY state) x GROUP BY m", []string{" LIMIT 0"}, "[BIGINT BIGINT]"},
	} {
		_, want, err := typesOf(c.sql, answered)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if want != c.want {
			t.Errorf("%s: types %s, want %s", c.sql, want, c.want)
		}
		for i, s := range refusing {
			if _, _, err := typesOf(c.sql, s); err != nil {
				refused[i]++
			}
		}
		for _, limit := range c.limits {
			sql := c.sql + limit
			for _, s := range append(refusing, answered) {
				qp, got, err := typesOf(sql, s)
				if err != nil {
					t.Errorf("%s under %+v: %v", sql, s, err)
					continue
				}
				if !qp.Empty || qp.Cost != (planner.Cost{}) {
					t.Errorf("%s under %+v: Empty %v, cost %+v; want no row and nothing spent", sql, s, qp.Empty, qp.Cost)
				}
				if got != want {
					t.Errorf("%s under %+v: types %s, want %s as without the LIMIT", sql, s, got, want)
				}
			}
		}
	}
	for i, n := range refused {
		if n == 0 {
			t.Errorf("no statement without LIMIT is refused under %+v", refusing[i])
		}
	}
}
