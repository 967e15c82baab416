package planner_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
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
	cat := &catalog.Config{Tables: []catalog.Table{
		{Name: "pums", Source: "pums", Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			num("income", catalog.Real, 0, 500000),
			{Name: "state", Source: "st", Type: catalog.Text, Values: []string{"CA", "NY", "WA"}},
			{Name: "sex", Source: "sex", Type: catalog.Integer, Lower: ptr(0), Upper: ptr(1), Values: []string{"0", "1"}},
			{Name: "name", Source: "nm", Type: catalog.Text, PartitionSelection: true},
			// day: dates of 2023 and 2024 (day numbers 19358 and 20088).
			{Name: "day", Source: "dt", Type: catalog.Date, Lower: ptr(19358), Upper: ptr(20088)},
			// at: timestamps of the first week of 2024 (seconds 1704067200
			// and 1704672000).
			{Name: "at", Source: "at", Type: catalog.Timestamp, Lower: ptr(1704067200), Upper: ptr(1704672000)},
		}},
		// visits protects persons: at most 5 rows of one person_id per
		// aggregate, at most 2 groups; site is a private key (partition
		// selection over persons).
		{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 2, Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			num("income", catalog.Real, 0, 500000),
			{Name: "site", Source: "site_src", Type: catalog.Text, PartitionSelection: true},
		}},
		// sessions protects persons with max_groups_per_unit = 12, more
		// than most statements' public groups: cat has 2 declared values,
		// day spans 2023 and 2024.
		{Name: "sessions", Source: "sessions", PrivacyUnit: "person_id", MaxRowsPerUnit: 3, MaxGroupsPerUnit: 12, Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			{Name: "cat", Source: "cat", Type: catalog.Text, Values: []string{"a", "b"}},
			{Name: "day", Source: "dt", Type: catalog.Date, Lower: ptr(19358), Upper: ptr(20088)},
			{Name: "site", Source: "site_src", Type: catalog.Text, PartitionSelection: true},
		}},
		// people has histogram domains (synopses): age one bin per year (101
		// bins, ε = 0.5: Greedy-H by the auto rule), income 4096 bins (ε = 1: DAWA).
		{Name: "people", Source: "people", Columns: []catalog.Column{
			withHistogram(num("age", catalog.Integer, 0, 100), 101, 0.5, catalog.WorkloadAllRanges),
			withHistogram(num("income", catalog.Real, 0, 500000), 4096, 1, catalog.WorkloadPrefix),
			num("sex", catalog.Integer, 0, 1),
			{Name: "state", Source: "st", Type: catalog.Text},
		}},
		// readings has a real histogram column over [0, 10] with 10 bins,
		// its edges on the whole numbers (synopsis_edge_test.go).
		{Name: "readings", Source: "readings", Columns: []catalog.Column{
			withHistogram(num("x", catalog.Real, 0, 10), 10, 0.5, catalog.WorkloadAllRanges),
			num("g", catalog.Integer, 0, 3),
		}},
		// survey has an interactive domain (interactive.go): age in 10-year
		// buckets × sex × state, 10·2·3 = 60 cells; income is outside it,
		// and people-style age synopses are absent.
		{Name: "survey", Source: "survey", Columns: []catalog.Column{
			num("age", catalog.Integer, 0, 100),
			num("sex", catalog.Integer, 0, 1),
			{Name: "state", Source: "st", Type: catalog.Text},
			num("income", catalog.Real, 0, 500000),
		}, Interactive: &catalog.Interactive{
			Columns: []catalog.InteractiveColumn{
				{Name: "age", Edges: []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}},
				{Name: "sex", Values: []string{"0", "1"}},
				{Name: "state", Values: []string{"CA", "NY", "WA"}},
			},
			Epsilon: 1, Alpha: 0.05, Beta: 0.05, PlannedQueries: 5000, Mechanism: catalog.InteractiveAuto,
		}},
	}}
	// survey_mm is survey with the Median Mechanism forced.
	survey := cat.Tables[len(cat.Tables)-1]
	forced := *survey.Interactive
	forced.Mechanism = catalog.InteractiveMedian
	survey.Name, survey.Source, survey.Interactive = "survey_mm", "survey_mm", &forced
	cat.Tables = append(cat.Tables, survey)
	return cat
}

func ptr(x float64) *float64 { return &x }

// withHistogram declares a histogram domain on a column.
func withHistogram(c catalog.Column, bins int, eps float64, workload string) catalog.Column {
	c.Histogram = &catalog.Histogram{Bins: bins, Epsilon: eps, Workload: catalog.Workload{Kind: workload}, Mechanism: catalog.SynopsisAuto}
	return c
}

// TestPlans walks testdata/queries/plan. Commands:
//
//	plan [epsilon=E] [delta=D] [mechanism=NAME] [backend=DRIVER]
//	<SQL>
//
// prints the EXPLAIN rows of the plan (columns separated by " | "), or the
// error as "error <code> (<sqlstate>): <kind>". Defaults: ε = 1, δ = 0,
// mechanism auto, the backend driver unset (as postgres and sqlite plan).
func TestPlans(t *testing.T) {
	cat := testCatalog()
	datadriven.Walk(t, "../../testdata/queries/plan", func(t *testing.T, path string) {
		parser := sqlrewrite.NewParser(cat)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "plan" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			p := planner.New(cat)
			if d.HasArg("backend") {
				withBackend := *cat
				d.ScanArgs(t, "backend", &withBackend.Backend.Driver)
				p = planner.New(&withBackend)
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
			var query *sqlrewrite.Query
			var zeroRow string
			switch st := st.(type) {
			case *sqlrewrite.Select:
				sel = st
			case *sqlrewrite.Query:
				query = st
			case *sqlrewrite.Explain:
				sel, query, zeroRow = st.Select, st.Query, st.ZeroRow
			case *sqlrewrite.Catalog:
				zeroRow = st.ZeroRow
			}
			if sel == nil && query == nil && zeroRow == "" {
				d.Fatalf(t, "not a query: %T", st)
			}
			var rows [][]any
			if zeroRow != "" {
				_, rows = planner.ExplainZeroRow(zeroRow)
			} else if query != nil {
				qp, err := p.PlanQuery(query, s)
				if err != nil {
					return formatError(err)
				}
				_, rows = qp.Explain()
			} else {
				plan, err := p.Plan(sel, s)
				if err != nil {
					return formatError(err)
				}
				_, rows = plan.Explain()
			}
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

// TestEvaluateDerivations runs every release of a plan on a small dataset at
// ε = 100 per release, where the noise is tiny, and checks that the derived
// outputs (AVG = m + S̃/ñ, VAR_POP = Q̃/ñ - (S̃/ñ)², STDDEV_SAMP its sample
// root, the median) land near the truth and inside their 95% intervals.
func TestEvaluateDerivations(t *testing.T) {
	cat := testCatalog()
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*), AVG(age), VAR_POP(age), STDDEV_SAMP(age), MEDIAN(age) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	// Forcing laplace keeps AVG and VARIANCE on the shared sums this test checks.
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 500, Mechanism: "laplace"})
	if err != nil {
		t.Fatal(err)
	}
	ages := []float64{40, 40, 50, 50, 60, 60, 70, 70, 80, 80}
	var sum, squares float64
	for _, a := range ages {
		sum, squares = sum+a, squares+a*a
	}
	term := func(k sqlrewrite.TermKind) float64 {
		switch k {
		case sqlrewrite.CountAll, sqlrewrite.CountNonNull, sqlrewrite.CountNumbers:
			return float64(len(ages))
		case sqlrewrite.ClampedSum:
			return sum
		}
		return squares
	}
	src := rand.NewChaCha8([32]byte{1})
	released := make([]planner.Estimate, len(plan.Releases))
	for i, r := range plan.Releases {
		if released[i], err = runRelease(src, r, ages, term); err != nil {
			t.Fatalf("release %s: %v", r.Stat, err)
		}
	}
	want := []struct{ value, tol float64 }{
		{10, 0.5},                    // COUNT(*): discrete Laplace with scale 0.01
		{60, 0.5},                    // AVG
		{200, 15},                    // VAR_POP = 2000/10; noise scale 2500/100/10
		{math.Sqrt(2000.0 / 9), 0.5}, // STDDEV_SAMP
		{60, 10},                     // MEDIAN: any point between the middle values 60 and 60, ±noise
	}
	for i, o := range plan.Outputs {
		v, err := o.Evaluate(released)
		if err != nil {
			t.Fatalf("%s: %v", o.Label, err)
		}
		if math.Abs(v.Value-want[i].value) > want[i].tol {
			t.Errorf("%s: got %v, want %v ± %v", o.Label, v.Value, want[i].value, want[i].tol)
		}
		if v.HasInterval && !(v.Low <= want[i].value && want[i].value <= v.High) {
			t.Errorf("%s: interval [%v, %v] misses the truth %v", o.Label, v.Low, v.High, want[i].value)
		}
	}
}

// runRelease drives one release through the executor's protocol over the
// sorted values (driveRelease), with the summary terms computed by term.
func runRelease(src rand.Source, r *planner.Release, sorted []float64, term func(sqlrewrite.TermKind) float64) (planner.Estimate, error) {
	var terms []float64
	for _, tm := range r.Mechanism.Terms(r) {
		terms = append(terms, term(tm.Kind))
	}
	return driveRelease(src, r, sorted, terms)
}

// gridIndex is the database's grid index (sqlrewrite.GridSums).
func gridIndex(v, lo, hi, unit float64) int64 {
	return int64(math.Floor((math.Min(math.Max(v, lo), hi)-lo)/unit + 0.5))
}

// gridSums computes a GridSums fetch: n, Σk, Σk² of the grid indices.
func gridSums(values []float64, g *sqlrewrite.GridSums) *sqlrewrite.GridTotals {
	if g.Ranks != nil {
		values = slices.Sorted(slices.Values(values))
		values = values[min(g.Ranks.Offset, int64(len(values))):min(g.Ranks.Offset+g.Ranks.Limit, int64(len(values)))]
	}
	out := &sqlrewrite.GridTotals{Sum: new(big.Int), SumSquares: new(big.Int)}
	for _, v := range values {
		k := big.NewInt(gridIndex(v, g.Lower, g.Upper, g.Unit))
		out.Count++
		out.Sum.Add(out.Sum, k)
		out.SumSquares.Add(out.SumSquares, k.Mul(k, k))
	}
	return out
}

// TestEveryMechanismAnswers forces each mechanism on the statistics it
// supports over a small dataset at a large ε and checks the answer is near
// the truth: the adapters fetch what their mechanisms need and map the
// results back correctly.
func TestEveryMechanismAnswers(t *testing.T) {
	cat := testCatalog()
	parser := sqlrewrite.NewParser(cat)
	p := planner.New(cat)
	var ages []float64
	for i := range 200 {
		ages = append(ages, float64(20+i%41)) // 20..60, each 4-5 times: median 40, mean 40
	}
	var sum, squares float64
	for _, a := range ages {
		sum, squares = sum+a, squares+a*a
	}
	n := float64(len(ages))
	term := func(k sqlrewrite.TermKind) float64 {
		switch k {
		case sqlrewrite.CountAll, sqlrewrite.CountNonNull, sqlrewrite.CountNumbers:
			return n
		case sqlrewrite.ClampedSum:
			return sum
		}
		return squares
	}
	mean := sum / n
	variance := squares/n - mean*mean
	slices.Sort(ages)
	for _, name := range p.MechanismNames()[1:] {
		for _, c := range []struct {
			sql       string
			want, tol float64
		}{
			{"SELECT MEDIAN(age) FROM pums", 40, 3},
			{"SELECT PERCENTILE_CONT(age, 0.9) FROM pums", 56, 4},
			{"SELECT AVG(age) FROM pums", mean, 2},
			{"SELECT VAR_POP(age) FROM pums", variance, 40},
		} {
			st, err := parser.Parse(c.sql)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 50, Mechanism: name})
			if err != nil {
				continue // the mechanism answers none of this query's statistics
			}
			src := rand.NewChaCha8([32]byte{2})
			released := make([]planner.Estimate, len(plan.Releases))
			for i, r := range plan.Releases {
				if released[i], err = runRelease(src, r, ages, term); err != nil {
					t.Fatalf("%s, %s: %v", name, r.Stat, err)
				}
			}
			v, err := plan.Outputs[0].Evaluate(released)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(v.Value-c.want) > c.tol {
				t.Errorf("%s with %s: got %v, want %v ± %v", c.sql, name, v.Value, c.want, c.tol)
			}
		}
	}
}
