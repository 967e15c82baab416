package exec

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestBindArgumentsBoundedBeforeReservation: the bind arguments a
// statement's fetches may need are counted from the statement and the
// configuration, before anything is reserved, against each backend's
// limit (PostgreSQL and MySQL 65,535, SQLite 32,766): text IN lists, and
// the declared text values of GROUP BY keys, bound four times per fetch
// on a unit table (the grouped fetch's CASE and the unit bound's group
// key, three times on MySQL and SQLite, once on PostgreSQL), and a
// window's LIMIT and OFFSET, which are sent only when the data has a
// value to rank.
func TestBindArgumentsBoundedBeforeReservation(t *testing.T) {
	lo, hi := 0.0, 100.0
	many := make([]string, catalog.MaxGroups)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	cols := []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "s", Source: "s", Type: catalog.Text, Values: []string{"a", "b", "c"}},
		{Name: "n", Source: "n", Type: catalog.Text},
		{Name: "city", Source: "city", Type: catalog.Text, Values: many},
	}
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: cols},
		{Name: "u", Source: "u", PrivacyUnit: "pid", MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1, Columns: cols}}}
	in := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("'v%d'", i)
		}
		return "n IN (" + strings.Join(vs, ", ") + ")"
	}
	for _, c := range []struct {
		sql                     string
		postgres, mysql, sqlite bool // answered (not refused) on each
	}{
		{"SELECT COUNT(*) FROM t WHERE " + in(1000), true, true, true},
		{"SELECT COUNT(*), AVG(x), MEDIAN(x) FROM t WHERE " + in(40000), true, true, false},
		{"SELECT COUNT(*) FROM t WHERE " + in(70000), false, false, false},
		// A median's window binds its LIMIT and OFFSET too: 65,535 and
		// 65,536 arguments.
		{"SELECT MEDIAN(x) FROM t WHERE " + in(65533), true, true, false},
		{"SELECT MEDIAN(x) FROM t WHERE " + in(65534), false, false, false},
		{"SELECT s, COUNT(*) FROM t WHERE " + in(65533) + " GROUP BY s", false, false, false},
		{"SELECT s, COUNT(*) FROM t WHERE " + in(65000) + " GROUP BY s", true, true, false},
		{"SELECT COUNT(*) FROM u WHERE " + in(70000), false, false, false},
		{"SELECT SUM(CASE WHEN " + in(40000) + " THEN x ELSE 0 END) FROM t", true, true, false},
		{"SELECT city, COUNT(*) FROM t GROUP BY city", true, true, true},
		// 10,000 declared values: 20,000 arguments on PostgreSQL, 40,000 on
		// MySQL and SQLite.
		{"SELECT city, COUNT(*) FROM u GROUP BY city", true, true, false},
		{"SELECT city, COUNT(*) FROM u WHERE " + in(30000) + " GROUP BY city", true, false, false},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(c.sql)
		if err != nil {
			t.Fatalf("%.80s: %v", c.sql, err)
		}
		for _, d := range []struct {
			dialect sqlrewrite.Dialect
			ok      bool
		}{{sqlrewrite.PostgreSQL, c.postgres}, {sqlrewrite.MySQL, c.mysql}, {sqlrewrite.SQLite, c.sqlite}} {
			e := New(backend.New(nil, d.dialect, nil), nil, nil)
			p := planner.New(cat)
			s := planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"}
			switch st := st.(type) {
			case *sqlrewrite.Select:
				plan, perr := p.Plan(st, s)
				if perr != nil {
					t.Fatalf("%.80s: %v", c.sql, perr)
				}
				err = e.checkArguments(plan, nil, nil)
			case *sqlrewrite.Query:
				qp, perr := p.PlanQuery(st, s)
				if perr != nil {
					t.Fatalf("%.80s: %v", c.sql, perr)
				}
				err = e.checkQueryArguments(qp)
			default:
				t.Fatalf("%.80s: %T", c.sql, st)
			}
			var de *dperr.Error
			switch {
			case d.ok && err != nil:
				t.Errorf("%v: %.80s: refused: %v", d.dialect, c.sql, err)
			case !d.ok && (!errors.As(err, &de) || de.Kind != dperr.Unsupported || !strings.Contains(err.Error(), "use fewer IN values")):
				t.Errorf("%v: %.80s: got %v, want an unsupported error naming the limit", d.dialect, c.sql, err)
			}
		}
	}
}
