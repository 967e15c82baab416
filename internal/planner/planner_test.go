package planner_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

func testCatalog() *catalog.Config {
	num := func(name string, typ catalog.ColumnType, lo, hi float64) catalog.Column {
		return catalog.Column{Name: name, Source: name, Type: typ, Lower: &lo, Upper: &hi}
	}
	return &catalog.Config{Tables: []catalog.Table{
		{Name: "pums", Source: "pums", Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			num("income", catalog.Real, 0, 500000),
			{Name: "state", Source: "st", Type: catalog.Text},
		}},
	}}
}

// TestPlans walks testdata/queries/plan. Commands:
//
//	plan [epsilon=E] [delta=D] [mechanism=NAME]
//	<SQL>
//
// prints the EXPLAIN rows of the plan (columns separated by " | "), or the
// error as "error <code> (<sqlstate>): <kind>". Defaults: ε = 1, δ = 0,
// mechanism auto.
func TestPlans(t *testing.T) {
	cat := testCatalog()
	datadriven.Walk(t, "../../testdata/queries/plan", func(t *testing.T, path string) {
		parser := sqlrewrite.NewParser(cat)
		p := planner.New(cat)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "plan" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			s := planner.Settings{Epsilon: 1, Mechanism: "auto"}
			if d.HasArg("epsilon") {
				d.ScanArgs(t, "epsilon", &s.Epsilon)
			}
			if d.HasArg("delta") {
				d.ScanArgs(t, "delta", &s.Delta)
			}
			if d.HasArg("mechanism") {
				d.ScanArgs(t, "mechanism", &s.Mechanism)
			}
			st, err := parser.Parse(d.Input)
			if err != nil {
				return formatError(err)
			}
			var sel *sqlrewrite.Select
			switch st := st.(type) {
			case *sqlrewrite.Select:
				sel = st
			case *sqlrewrite.Explain:
				sel = st.Select
			default:
				d.Fatalf(t, "not a query: %T", st)
			}
			plan, err := p.Plan(sel, s)
			if err != nil {
				return formatError(err)
			}
			_, rows := plan.Explain()
			var b strings.Builder
			for _, r := range rows {
				cells := make([]string, len(r))
				for i, c := range r {
					cells[i] = fmt.Sprint(c)
				}
				b.WriteString(strings.Join(cells, " | ") + "\n")
			}
			return b.String()
		})
	})
}

func formatError(err error) string {
	var e *dperr.Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("error (not a dperr error): %v\n", err)
	}
	code, state := e.SQLCode()
	return fmt.Sprintf("error %d (%s): %s\n", code, state, e.Kind)
}

// TestEvaluateDerivations checks the post-processing of released values by
// hand: AVG = m + S̃/ñ, VARIANCE = Q̃/ñ - (S̃/ñ)², STDDEV its root, with the
// clamps to the public range.
func TestEvaluateDerivations(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	st, err := parser.Parse("SELECT COUNT(*), AVG(age), VAR_POP(age), STDDEV_SAMP(age), MEDIAN(age) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	// Releases: count(*), count(age), centred sum, centred sum of squares, quantile.
	if len(plan.Releases) != 5 {
		t.Fatalf("got %d releases, want 5", len(plan.Releases))
	}
	for _, tc := range []struct {
		name     string
		released []float64
		want     []float64
	}{
		// n = 10 values with mean 60 (centred sum 100 around m = 50) and
		// Σ(x-m)² = 1400: population variance 140 - 10² = 40; the sample
		// standard deviation is √(40·10/9).
		{"exact", []float64{11.4, 10, 100, 1400, 42}, []float64{11, 60, 40, math.Sqrt(40 * 10.0 / 9), 42}},
		// A negative noisy count is clamped to 0; a mean beyond the bounds to
		// the bound; a negative variance to 0.
		{"clamped", []float64{-3, 1, 900, 0, 120}, []float64{0, 100, 0, 0, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est := make([]planner.Estimate, len(tc.released))
			for i, v := range tc.released {
				est[i] = planner.Estimate{Value: v}
			}
			for i, o := range plan.Outputs {
				got := o.Evaluate(est).Value
				if math.Abs(got-tc.want[i]) > 1e-9 {
					t.Errorf("%s: got %v, want %v", o.Label, got, tc.want[i])
				}
			}
		})
	}
}
