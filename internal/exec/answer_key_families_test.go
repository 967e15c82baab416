package exec

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// keyCatalog is a table t of two real columns, an integer, a declared
// text key and a free text column, and a table ti with an interactive
// domain; x's upper bound is upper.
func keyCatalog(upper float64) *catalog.Config {
	lo, hiY, hiK := 0.0, 50.0, 10.0
	hiX := upper
	return &catalog.Config{Tables: []catalog.Table{
		{Name: "t", Source: "t", Columns: []catalog.Column{
			{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hiX},
			{Name: "y", Source: "y", Type: catalog.Real, Lower: &lo, Upper: &hiY},
			{Name: "k", Source: "k", Type: catalog.Integer, Lower: &lo, Upper: &hiK},
			{Name: "s", Source: "s", Type: catalog.Text, Values: []string{"a", "b", "c"}},
			{Name: "n", Source: "n", Type: catalog.Text, PartitionSelection: true},
		}},
		{Name: "ti", Source: "ti", Columns: []catalog.Column{
			{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hiK},
		}, Interactive: &catalog.Interactive{
			Columns: []catalog.InteractiveColumn{{Name: "a", Edges: []float64{0, 2, 4, 6, 8, 11}}},
			Epsilon: 1, Alpha: 0.1, Beta: 0.05, PlannedQueries: 100, Mechanism: "histogram",
		}},
	}}
}

// repeatKey plans sql on cat with settings s and returns its repeat-window
// key (answerKey or queryAnswerKey), and the names of its mechanisms;
// planned is false when the planner refuses it (a forced mechanism that
// applies to none of its aggregates).
func repeatKey(t *testing.T, cat *catalog.Config, sql string, s planner.Settings) (key string, mechanisms string, planned bool) {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	p := planner.New(cat)
	var releases []*planner.Release
	switch st := st.(type) {
	case *sqlrewrite.Select:
		plan, err := p.Plan(st, s)
		if dperr.KindOf(err) == dperr.Unsupported && s.Mechanism != "auto" {
			return "", "", false
		}
		if err != nil {
			t.Fatalf("%s (%s): %v", sql, s.Mechanism, err)
		}
		if key, err = answerKey(plan, "u", ""); err != nil {
			t.Errorf("%s (%s): no repeat-window key: %v", sql, s.Mechanism, err)
		}
		releases = plan.Releases
	case *sqlrewrite.Query:
		qp, err := p.PlanQuery(st, s)
		if dperr.KindOf(err) == dperr.Unsupported && s.Mechanism != "auto" {
			return "", "", false
		}
		if err != nil {
			t.Fatalf("%s (%s): %v", sql, s.Mechanism, err)
		}
		if key, err = queryAnswerKey(qp, "u", ""); err != nil {
			t.Errorf("%s (%s): no repeat-window key: %v", sql, s.Mechanism, err)
		}
		if qp.Base != nil {
			releases = qp.Base.Releases
		}
	default:
		t.Fatalf("%s: %T", sql, st)
	}
	var names []string
	for _, r := range releases {
		names = append(names, r.Mechanism.Name())
	}
	return key, strings.Join(names, ","), true
}

// TestEveryStatementFamilyHasARepeatKey plans a statement of each family
// under every mechanism that applies to it and asserts that the repeat
// window can key it: a MEDIAN's plan held a func (its mechanism's
// constructor) and had no key, so with repeat_window set an identical
// MEDIAN was answered with fresh noise and charged each time. Plans that
// would release differently (ε, mechanism, trim, bounds, filter) get
// different keys.
func TestEveryStatementFamilyHasARepeatKey(t *testing.T) {
	cat := keyCatalog(100)
	base := planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto", Trim: planner.DefaultTrim}
	families := []string{
		"SELECT COUNT(*) FROM t",
		"SELECT COUNT(x) FROM t WHERE y BETWEEN 1 AND 20",
		"SELECT SUM(x) FROM t",
		"SELECT AVG(x) FROM t",
		"SELECT VARIANCE(x), STDDEV(x) FROM t",
		"SELECT MEDIAN(x) FROM t",
		"SELECT PERCENTILE_CONT(x, 0.9) FROM t",
		"SELECT APPROX_PERCENTILE(k, 25) FROM t",
		"SELECT IQR(x) FROM t",
		"SELECT REGR_SLOPE(y, x), REGR_INTERCEPT(y, x) FROM t",
		"SELECT FLOOR(x / 10) * 10 AS b, COUNT(*) FROM t GROUP BY b",
		"SELECT COUNT(CASE WHEN x BETWEEN 0 AND 10 THEN 1 END), COUNT(CASE WHEN x BETWEEN 10 AND 20 THEN 1 END) FROM t",
		"SELECT s, COUNT(*), AVG(x), MEDIAN(x) FROM t GROUP BY s",
		"SELECT n, COUNT(*) FROM t GROUP BY n",
		"SELECT COUNT(*) FROM ti WHERE a < 4 OR a >= 8",
	}
	names := planner.New(cat).MechanismNames()
	for _, sql := range families {
		keys := map[string]string{} // mechanisms → key
		for _, m := range names {
			s := base
			s.Mechanism = m
			key, mechs, ok := repeatKey(t, cat, sql, s)
			if !ok || key == "" {
				continue
			}
			if other, seen := keys[mechs]; seen && other != key && m != "auto" {
				t.Errorf("%s: mechanisms %s keyed two ways", sql, mechs)
			}
			keys[mechs] = key
		}
		if len(keys) == 0 {
			t.Errorf("%s: no plan keyed", sql)
		}
		distinct := map[string]bool{}
		for _, k := range keys {
			distinct[k] = true
		}
		if len(distinct) != len(keys) {
			t.Errorf("%s: %d mechanism choices %v share %d keys", sql, len(keys), keys, len(distinct))
		}
	}

	// Plans that release differently never share a key.
	key := func(cat *catalog.Config, sql string, s planner.Settings) string {
		k, _, _ := repeatKey(t, cat, sql, s)
		return k
	}
	eps2 := base
	eps2.Epsilon = 2
	trim := base
	trim.Trim = planner.DefaultTrim / 2
	for _, c := range []struct {
		what string
		a, b string
	}{
		{"ε", key(cat, "SELECT MEDIAN(x) FROM t", base), key(cat, "SELECT MEDIAN(x) FROM t", eps2)},
		{"ε (GROUP BY)", key(cat, "SELECT s, MEDIAN(x) FROM t GROUP BY s", base), key(cat, "SELECT s, MEDIAN(x) FROM t GROUP BY s", eps2)},
		{"mechanism", key(cat, "SELECT MEDIAN(x) FROM t", planner.Settings{Epsilon: 1, Mechanism: "piecewise"}),
			key(cat, "SELECT MEDIAN(x) FROM t", planner.Settings{Epsilon: 1, Mechanism: "smooth"})},
		{"mechanism", key(cat, "SELECT MEDIAN(x) FROM t", planner.Settings{Epsilon: 1, Mechanism: "piecewise"}),
			key(cat, "SELECT MEDIAN(x) FROM t", planner.Settings{Epsilon: 1, Mechanism: "inverse"})},
		{"trim", key(cat, "SELECT AVG(x) FROM t", base), key(cat, "SELECT AVG(x) FROM t", trim)},
		{"bounds", key(cat, "SELECT MEDIAN(x) FROM t", base), key(keyCatalog(200), "SELECT MEDIAN(x) FROM t", base)},
		{"filter", key(cat, "SELECT MEDIAN(x) FROM t WHERE y > 1", base), key(cat, "SELECT MEDIAN(x) FROM t WHERE y > 2", base)},
		{"quantile", key(cat, "SELECT PERCENTILE_CONT(x, 0.9) FROM t", base), key(cat, "SELECT PERCENTILE_CONT(x, 0.8) FROM t", base)},
	} {
		if c.a == "" || c.b == "" || c.a == c.b {
			t.Errorf("plans differing in %s: keys %q and %q, want two distinct keys", c.what, c.a, c.b)
		}
	}
	if a, b := key(cat, "SELECT MEDIAN(x) FROM t", base), key(cat, "SELECT MEDIAN(x) AS m FROM t", base); a == "" || a != b {
		t.Errorf("an identical MEDIAN (but its alias) keyed %q and %q, want one key", a, b)
	}
}

// TestRepeatedMedianIsAnsweredOnce: with the repeat window set, an
// identical MEDIAN is answered from the stored answer at no cost (it was
// answered with fresh noise and charged each time: its plan had no key).
func TestRepeatedMedianIsAnsweredOnce(t *testing.T) {
	e, cat, l := newBoundsExecutor(t, budget.SQLite, testdb.SQLiteDSN(t), time.Minute)
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT MEDIAN(a) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"auto", "piecewise", "inverse", "smooth"} {
		plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.01, Mechanism: m, Trim: planner.DefaultTrim})
		if err != nil {
			t.Fatal(err)
		}
		before := charges(t, e, l)
		first, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{1}))
		if err != nil {
			t.Fatal(err)
		}
		again, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{2}))
		if err != nil {
			t.Fatal(err)
		}
		if n := charges(t, e, l) - before; n != 1 || !isRepeated(again) || first.Row[0] != again.Row[0] {
			t.Errorf("%s: %d charges, repeated %v, answers %v and %v; want one charge and the first answer again", m, n, isRepeated(again), first.Row[0], again.Row[0])
		}
	}
}
