package planner_test

import (
	"errors"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/fuzzseed"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// FuzzFrontEnd runs arbitrary text through the SQL front end (parse, then
// plan a query) and checks that nothing panics and that every accepted
// query releases only aggregates: each output is an aggregate (or, in a
// histogram, the public bucket key) derived from the plan's releases, a
// synopsis or the interactive domain, never a column's raw value. Seeds:
// every statement of testdata/queries. Run longer with
//
//	go test -run '^$' -fuzz FuzzFrontEnd -fuzztime 10m ./internal/planner
func FuzzFrontEnd(f *testing.F) {
	for _, s := range fuzzseed.Inputs("../../testdata/queries") {
		f.Add(s)
	}
	f.Add("SELECT 0." + "1111111111111111111111111111111111111111111111111111111111111111111111111111111111")
	cat := testCatalog()
	f.Fuzz(func(t *testing.T, sql string) {
		parser := sqlrewrite.NewParser(cat)
		st, err := parser.Parse(sql)
		var panicked *sqlrewrite.ParserPanic
		if errors.As(err, &panicked) {
			t.Fatalf("%q: the parser panicked: %v", sql, panicked.Value)
		}
		if err != nil {
			return
		}
		var sel *sqlrewrite.Select
		switch st := st.(type) {
		case *sqlrewrite.Select:
			sel = st
		case *sqlrewrite.Query:
			checkQuery(t, sql, cat, st)
			return
		case *sqlrewrite.Explain:
			if st.ZeroRow != "" {
				return
			}
			if st.Query != nil {
				checkQuery(t, sql, cat, st.Query)
				return
			}
			sel = st.Select
		default:
			return
		}
		for _, it := range sel.Items {
			if it.Agg.Func == 0 || (it.Agg.Func == sqlrewrite.BucketKey && sel.GroupBy == nil) {
				t.Fatalf("%q: accepted item %q is not an aggregate", sql, it.Label)
			}
		}
		for _, s := range []planner.Settings{{Epsilon: 1, Mechanism: "auto"}, {Epsilon: 0.1, Delta: 1e-6, Mechanism: "auto"}} {
			plan, err := planner.New(cat).Plan(sel, s)
			if err != nil {
				continue
			}
			checkPlan(t, sql, sel, plan)
		}
	})
}

// checkPlan asserts that every output of an accepted plan is an aggregate
// computed from released values.
func checkPlan(t *testing.T, sql string, sel *sqlrewrite.Select, plan *planner.Plan) {
	t.Helper()
	if plan.Interactive != nil {
		if len(plan.Outputs) > 1 {
			t.Fatalf("%q: interactive plan with %d outputs", sql, len(plan.Outputs))
		}
		return
	}
	if len(plan.Outputs) != len(sel.Items) {
		t.Fatalf("%q: %d outputs for %d items", sql, len(plan.Outputs), len(sel.Items))
	}
	if plan.NoRow != "" {
		// Answered over no row from the statement alone: nothing released.
		for _, o := range plan.Outputs {
			if o.Derive != planner.FromNoRow || len(o.Args) > 0 {
				t.Fatalf("%q: output %q of a plan over no row is not its value over no row", sql, o.Label)
			}
		}
		if len(plan.Releases) > 0 || plan.Cost != (planner.Cost{}) {
			t.Fatalf("%q: a plan over no row releases %d value(s) at %+v", sql, len(plan.Releases), plan.Cost)
		}
		return
	}
	for _, o := range plan.Outputs {
		switch {
		case o.Agg.Func == 0:
			t.Fatalf("%q: output %q is not an aggregate", sql, o.Label)
		case o.Agg.Func == sqlrewrite.BucketKey:
			if sel.GroupBy == nil {
				t.Fatalf("%q: bucket key without GROUP BY", sql)
			}
		case o.Derive == planner.FromSynopsis:
			if plan.Synopsis == nil {
				t.Fatalf("%q: output %q from a synopsis the plan lacks", sql, o.Label)
			}
		default:
			if len(o.Args) == 0 {
				t.Fatalf("%q: output %q derives from no release", sql, o.Label)
			}
			for _, a := range o.Args {
				if a < 0 || a >= len(plan.Releases) {
					t.Fatalf("%q: output %q derives from release %d of %d", sql, o.Label, a, len(plan.Releases))
				}
			}
		}
	}
	if plan.Cost.Epsilon <= 0 && plan.Synopsis == nil {
		t.Fatalf("%q: a plan that releases data costs ε = %v", sql, plan.Cost.Epsilon)
	}
}

// checkQuery asserts that an accepted grouped or post-processed query
// releases only aggregates (its outputs are expressions of those, of public
// group keys and of constants) and that planning it does not panic.
func checkQuery(t *testing.T, sql string, cat *catalog.Config, q *sqlrewrite.Query) {
	t.Helper()
	if q.Base == nil {
		t.Fatalf("%q: query without a base", sql)
	}
	for _, it := range q.Base.Items {
		if it.Agg.Func == 0 {
			t.Fatalf("%q: accepted item %q is not an aggregate", sql, it.Label)
		}
	}
	for _, s := range []planner.Settings{{Epsilon: 1, Mechanism: "auto"}, {Epsilon: 0.1, Delta: 1e-6, Mechanism: "auto"}} {
		_, _ = planner.New(cat).PlanQuery(q, s)
	}
}
