package planner_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestPostProcess evaluates post-processing on hand-made released rows
// (one per group of sex in {0, 1} × state in {CA, NY, WA}) and checks
// every value by hand: expressions with MySQL's NULL rules, HAVING, ORDER
// BY with ties kept in group order, LIMIT/OFFSET after the ordering, and
// DISTINCT.
func TestPostProcess(t *testing.T) {
	parser := sqlrewrite.NewParser(testCatalog())
	// released[g] = COUNT(*), AVG(income) of group g; group (1, WA) has a NULL mean.
	counts := []float64{5, 12, 0, 7, 12, 3}
	means := []float64{100, 250.5, 0, 40, 10, -1}
	var released []planner.Row
	for i := range counts {
		row := planner.Row{
			Keys: []sqlrewrite.Value{{Num: float64(i / 3)}, {Str: []string{"CA", "NY", "WA"}[i%3], IsText: true}},
			Aggs: []planner.Datum{{Num: counts[i], Int: true}, {Num: means[i]}},
		}
		if i == 5 {
			row.Aggs[1] = planner.Datum{Null: true}
		}
		released = append(released, row)
	}
	for _, c := range []struct{ sql, want string }{
		{"SELECT sex, state, COUNT(*), AVG(income) FROM pums GROUP BY sex, state",
			"[[0 CA 5 100] [0 NY 12 250.5] [0 WA 0 0] [1 CA 7 40] [1 NY 12 10] [1 WA 3 <nil>]]"},
		{"SELECT state, COUNT(*) AS n FROM pums GROUP BY sex, state ORDER BY n DESC LIMIT 3",
			"[[NY 12] [NY 12] [CA 7]]"},
		{"SELECT state, COUNT(*) AS n FROM pums GROUP BY sex, state ORDER BY 2, 1 DESC LIMIT 2 OFFSET 1",
			"[[WA 3] [CA 5]]"},
		{"SELECT COUNT(*) * 2 + 1, ROUND(AVG(income) / 3, 1), COALESCE(AVG(income), -9), COUNT(*) / 0 FROM pums GROUP BY sex, state HAVING COUNT(*) > 4 AND AVG(income) IS NOT NULL",
			"[[11 33.3 100 <nil>] [25 83.5 250.5 <nil>] [15 13.3 40 <nil>] [25 3.3 10 <nil>]]"},
		{"SELECT DISTINCT COUNT(*) FROM pums GROUP BY sex, state ORDER BY 1",
			"[[0] [3] [5] [7] [12]]"},
		{"SELECT CONCAT(state, '-', sex) AS k, CASE WHEN COUNT(*) >= 10 THEN 'big' WHEN COUNT(*) > 0 THEN 'small' END FROM pums GROUP BY sex, state HAVING k <> 'NY-0'",
			"[[CA-0 small] [WA-0 <nil>] [CA-1 small] [NY-1 big] [WA-1 small]]"},
		{"SELECT state, sex, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC) AS r, ROW_NUMBER() OVER (PARTITION BY sex ORDER BY COUNT(*)) AS rn, " +
			"SUM(COUNT(*)) OVER (PARTITION BY sex) AS tot, SUM(COUNT(*)) OVER (ORDER BY COUNT(*) ROWS UNBOUNDED PRECEDING) AS run, " +
			"SUM(COUNT(*)) OVER (ORDER BY COUNT(*)) AS peers, COUNT(AVG(income)) OVER () AS c, MAX(AVG(income)) OVER () AS m, " +
			"DENSE_RANK() OVER (ORDER BY COUNT(*) DESC) AS d FROM pums GROUP BY sex, state HAVING COUNT(*) > 0 ORDER BY r, state",
			// By hand: kept counts CA0 5, NY0 12, CA1 7, NY1 12, WA1 3 (WA0 is 0, dropped); ascending
			// with ties in group order: WA1 3, CA0 5, CA1 7, NY0 12, NY1 12.
			"[[NY 0 12 1 2 17 27 39 4 250.5 1] [NY 1 12 1 3 22 39 39 4 250.5 1] [CA 1 7 3 2 22 15 15 4 250.5 2] " +
				"[CA 0 5 4 1 17 8 8 4 250.5 3] [WA 1 3 5 1 22 3 3 4 250.5 4]]"},
		// WITH ROLLUP: each sex's subtotal after its groups, the total last;
		// SUM skips the NULL of (1, WA).
		{"SELECT sex, state, COUNT(*) FROM pums GROUP BY sex, state WITH ROLLUP",
			"[[0 CA 5] [0 NY 12] [0 WA 0] [0 <nil> 17] [1 CA 7] [1 NY 12] [1 WA 3] [1 <nil> 22] [<nil> <nil> 39]]"},
		{"SELECT sex, COUNT(*) * 2, SUM(income) FROM pums GROUP BY sex, state WITH ROLLUP ORDER BY 2 DESC LIMIT 2",
			"[[<nil> 78 400.5] [1 44 50]]"},
		// Outer aggregates over the output rows of the grouped subquery.
		{"SELECT SUM(n), AVG(n), COUNT(*), MAX(m), COUNT(DISTINCT n), STDDEV_SAMP(n) > 4 FROM (SELECT sex, state, COUNT(*) AS n, AVG(income) AS m FROM pums GROUP BY sex, state) t",
			"[[39 6.5000 6 250.5 5 1]]"},
		{"SELECT sex, SUM(n), COUNT(m) FROM (SELECT sex, state, COUNT(*) AS n, AVG(income) AS m FROM pums GROUP BY sex, state) AS t WHERE n > 0 GROUP BY sex ORDER BY 2 DESC",
			"[[1 22 2] [0 17 2]]"},
		{"SELECT SQRT(-COUNT(*)), LOG(COUNT(*)), POWER(COUNT(*), 2), ABS(AVG(income)), CAST(AVG(income) AS SIGNED) FROM pums GROUP BY sex, state ORDER BY COUNT(*) LIMIT 1",
			"[[0 <nil> 0 0 0]]"},
	} {
		st, err := parser.Parse(c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		q := st.(*sqlrewrite.Query)
		// Map the query's aggregates onto the two released columns.
		rows := make([]planner.Row, len(released))
		for i, r := range released {
			rows[i].Keys = r.Keys
			for _, it := range q.Base.Items {
				if it.Agg.Func == sqlrewrite.CountRows {
					rows[i].Aggs = append(rows[i].Aggs, r.Aggs[0])
				} else {
					rows[i].Aggs = append(rows[i].Aggs, r.Aggs[1])
				}
			}
		}
		out, _, err := planner.PostProcess(q, planner.Rollup(q, rows))
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		got := make([][]any, len(out))
		for i, r := range out {
			for _, d := range r {
				got[i] = append(got[i], d.Value())
			}
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.sql, got, c.want)
		}
	}
}

// TestRollupOfMeans: WITH ROLLUP's total of an AVG is the mean of the
// added sums from both bounds of its groups (post-processing of what they
// released), not the mean of their means. By hand, bounds [0, 100]: sex 0
// released Σ(x−L) = 300 and Σ(U−x) = 700 (mean 30, about 10 rows), sex 1
// 1600 and 400 (mean 80, about 20 rows); the total is
// 100·1900/(1900 + 1100) = 63.33…, where the plain mean of the means would
// be 55.
func TestRollupOfMeans(t *testing.T) {
	st, err := sqlrewrite.NewParser(testCatalog()).Parse("SELECT sex, AVG(income), COUNT(*) FROM pums GROUP BY sex WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	bounds := mech.Bounds{Lower: 0, Upper: 100}
	mean := func(lower, upper float64) planner.Datum {
		sums := laplace.EdgeSums{Lower: lower, Upper: upper, Width: 100}
		return planner.Datum{Num: sums.Mean(bounds), Rolled: &planner.RolledMean{Sums: sums, Bounds: bounds}}
	}
	rows := []planner.Row{
		{Keys: []sqlrewrite.Value{{Num: 0}}, Aggs: []planner.Datum{mean(300, 700), {Num: 10, Int: true}}},
		{Keys: []sqlrewrite.Value{{Num: 1}}, Aggs: []planner.Datum{mean(1600, 400), {Num: 20, Int: true}}},
	}
	q := st.(*sqlrewrite.Query)
	if q.Base.Items[0].Agg.Func != sqlrewrite.Avg {
		rows[0].Aggs[0], rows[0].Aggs[1] = rows[0].Aggs[1], rows[0].Aggs[0]
		rows[1].Aggs[0], rows[1].Aggs[1] = rows[1].Aggs[1], rows[1].Aggs[0]
	}
	out, _, err := planner.PostProcess(q, planner.Rollup(q, rows))
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]any, len(out))
	for i, r := range out {
		for _, d := range r {
			got[i] = append(got[i], d.Value())
		}
	}
	lower, upper := 300.0+1600, 700.0+400
	if want := fmt.Sprint([][]any{{0.0, 30.0, 10}, {1.0, 80.0, 20}, {nil, 100 * (lower / (lower + upper)), 30}}); fmt.Sprint(got) != want {
		t.Errorf("rollup of AVG:\n got %v\nwant %s", got, want)
	}
}

// TestRollupOfVariances: WITH ROLLUP's total of a VARIANCE or STDDEV is
// derived from the sum of its groups' squares from both bounds: the
// squares of {1, 2, 6} and of {9} in [0, 10] are those of {1, 2, 6, 9},
// whose VAR_POP is 10.25 and VAR_SAMP 41/3.
func TestRollupOfVariances(t *testing.T) {
	st, err := sqlrewrite.NewParser(testCatalog()).Parse("SELECT sex, VAR_POP(age), STDDEV_SAMP(age) FROM pums GROUP BY sex WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	bounds := mech.Bounds{Lower: 0, Upper: 10}
	squares := func(xs ...float64) laplace.EdgeSquares {
		e := laplace.EdgeSquares{Width: 10}
		for _, x := range xs {
			e.Lower, e.Upper, e.Cross = e.Lower+x*x, e.Upper+(10-x)*(10-x), e.Cross+2*x*(10-x)
		}
		return e
	}
	variance := func(root bool, kind laplace.VarianceKind, xs ...float64) planner.Datum {
		r := &planner.RolledVariance{Squares: squares(xs...), Bounds: bounds, Kind: kind, Root: root}
		return planner.Datum{Num: r.Value(), Rolled: r}
	}
	rows := []planner.Row{
		{Keys: []sqlrewrite.Value{{Num: 0}}, Aggs: []planner.Datum{variance(false, laplace.PopulationVariance, 1, 2, 6), variance(true, laplace.SampleVariance, 1, 2, 6)}},
		{Keys: []sqlrewrite.Value{{Num: 1}}, Aggs: []planner.Datum{variance(false, laplace.PopulationVariance, 9), variance(true, laplace.SampleVariance, 9)}},
	}
	out, _, err := planner.PostProcess(st.(*sqlrewrite.Query), planner.Rollup(st.(*sqlrewrite.Query), rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || !out[2][0].Null {
		t.Fatalf("rollup rows %v, want two groups and a total", out)
	}
	if got := out[0][1].Num; math.Abs(got-14.0/3) > 1e-12 {
		t.Errorf("VAR_POP of {1, 2, 6}: %v, want 14/3", got)
	}
	if got := out[0][2].Num; math.Abs(got-math.Sqrt(7)) > 1e-12 {
		t.Errorf("STDDEV_SAMP of {1, 2, 6}: %v, want √7", got)
	}
	if got := out[2][1].Num; math.Abs(got-10.25) > 1e-12 {
		t.Errorf("total VAR_POP: %v, want 10.25", got)
	}
	if got := out[2][2].Num; math.Abs(got-math.Sqrt(41.0/3)) > 1e-12 {
		t.Errorf("total STDDEV_SAMP: %v, want √(41/3)", got)
	}
}

// TestRollupOfMeansNeedsTheDefaultMechanism: WITH ROLLUP of an AVG is
// planned with the default mechanism, whose releases add up over groups,
// and refused before anything is reserved with one that releases nothing
// that does (SET @dp_mechanism = 'laplace'); COUNT and SUM roll up with
// any.
func TestRollupOfMeansNeedsTheDefaultMechanism(t *testing.T) {
	cat := testCatalog()
	for _, c := range []struct {
		sql, mechanism string
		refused        bool
	}{
		{"SELECT sex, AVG(income) FROM pums GROUP BY sex WITH ROLLUP", "auto", false},
		{"SELECT sex, AVG(income) FROM pums GROUP BY sex WITH ROLLUP", "laplace", true},
		{"SELECT sex, AVG(income) FROM pums GROUP BY sex", "laplace", false},
		{"SELECT sex, COUNT(*), SUM(income) FROM pums GROUP BY sex WITH ROLLUP", "laplace", false},
		{"SELECT sex, AVG(CASE WHEN age > 30 THEN income END) FROM pums GROUP BY sex WITH ROLLUP", "auto", false},
		{"SELECT sex, VARIANCE(income), STDDEV_SAMP(age) FROM pums GROUP BY sex WITH ROLLUP", "auto", false},
		{"SELECT sex, STDDEV(income) FROM pums GROUP BY sex WITH ROLLUP", "laplace", true},
		{"SELECT sex, VAR_SAMP(income) FROM pums GROUP BY sex WITH ROLLUP", "preprocess", true},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(c.sql)
		if err != nil {
			t.Fatal(err)
		}
		_, err = planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1, Mechanism: c.mechanism})
		if refused := err != nil; refused != c.refused {
			t.Errorf("%s with %s: error %v, want refused %v", c.sql, c.mechanism, err, c.refused)
		}
	}
}

// TestIntervalEnds: DP_INTERVAL_LOW and DP_INTERVAL_HIGH return the ends of
// an aggregate's released interval, NULL where it has none (a released
// value without one, and WITH ROLLUP's totals of groups whose releases
// carry no Rolled sums; TestRollupIntervalsCover has those that do), and
// the interval does not make equal values distinct.
func TestIntervalEnds(t *testing.T) {
	st, err := sqlrewrite.NewParser(testCatalog()).Parse("SELECT sex, COUNT(*), DP_INTERVAL_LOW(COUNT(*)), DP_INTERVAL_HIGH(COUNT(*)) FROM pums GROUP BY sex WITH ROLLUP")
	if err != nil {
		t.Fatal(err)
	}
	rows := []planner.Row{
		{Keys: []sqlrewrite.Value{{Num: 0}}, Aggs: []planner.Datum{{Num: 10, Int: true, Interval: &planner.Interval{Low: 7, High: 13}}}},
		{Keys: []sqlrewrite.Value{{Num: 1}}, Aggs: []planner.Datum{{Num: 20, Int: true}}},
	}
	out, _, err := planner.PostProcess(st.(*sqlrewrite.Query), planner.Rollup(st.(*sqlrewrite.Query), rows))
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]any, len(out))
	for i, r := range out {
		for _, d := range r {
			got[i] = append(got[i], d.Value())
		}
	}
	if want := "[[0 10 7 13] [1 20 <nil> <nil>] [<nil> 30 <nil> <nil>]]"; fmt.Sprint(got) != want {
		t.Errorf("interval ends:\n got %v\nwant %s", got, want)
	}
	st, err = sqlrewrite.NewParser(testCatalog()).Parse("SELECT DISTINCT COUNT(*) FROM pums GROUP BY sex")
	if err != nil {
		t.Fatal(err)
	}
	rows[1].Aggs[0] = planner.Datum{Num: 10, Int: true, Interval: &planner.Interval{Low: 8, High: 12}}
	if out, _, err = planner.PostProcess(st.(*sqlrewrite.Query), rows); err != nil || len(out) != 1 {
		t.Errorf("DISTINCT of two counts of 10 with different intervals: %v (%v), want one row", out, err)
	}
}
