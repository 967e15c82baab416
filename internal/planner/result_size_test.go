package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// planResult parses and plans sql over testCatalog.
func planResult(t *testing.T, sql string) (*sqlrewrite.Query, error) {
	t.Helper()
	st, err := sqlrewrite.NewParser(testCatalog()).Parse(sql)
	if err != nil {
		t.Fatalf("%.80s: %v", sql, err)
	}
	q := st.(*sqlrewrite.Query)
	_, err = planner.New(testCatalog()).PlanQuery(q, planner.Settings{Epsilon: 1, Delta: 1e-6, Mechanism: "auto"})
	return q, err
}

// TestResultSizeIsRefusedBeforeRelease: a statement whose rows (its public
// bound: 5,001 buckets of FLOOR(income / 100) * 100 over [0, 500000],
// 10,000 keys of partition selection) times the most one row may keep
// pass 64 MiB is refused with 1235 when planned, before anything is read
// or charged. An independent review's statement (three REPEATs of 1 MB
// beside those buckets) built 15 GB in the proxy and killed it; one
// REPEAT of 100,000 sent 500 MB over 100 s. A row of REPEAT('x', n), the
// bucket and COUNT(*) counts n + 218 (three cells of 64 bytes, the
// count's 26 as a date's text): 13,201 fits 5,001 rows in 64 MiB, 13,202
// does not. The ORDER BY of an alias computes its value again, and an
// outer query's aggregate and column keep theirs.
func TestResultSizeIsRefusedBeforeRelease(t *testing.T) {
	for _, sql := range []string{
		"SELECT REPEAT('x',1000000) AS s, REPEAT('y',1000000) AS t, REPEAT('z',1000000) AS u, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY FLOOR(income/100)*100",
		"SELECT REPEAT('x', 100000) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY a",
		"SELECT REPEAT('x', 13202) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY a",
		"SELECT REPEAT('x', 7000) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY a ORDER BY s",
		"SELECT MAX(s) FROM (SELECT REPEAT('x', 7000) AS s, COUNT(*) AS n FROM pums GROUP BY FLOOR(income/100)*100) t",
		"SELECT name, REPEAT('x', 6000), COUNT(*) FROM pums GROUP BY name",
	} {
		_, err := planResult(t, sql)
		code, _ := dperr.KindOf(err).Code()
		if err == nil || code != 1235 || !strings.Contains(err.Error(), "at most 67108864 bytes") {
			t.Errorf("%.80s: got %v, want 1235 naming the 64 MiB limit", sql, err)
		}
	}
	for _, sql := range []string{
		"SELECT REPEAT('x', 13201) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY a",
		"SELECT REPEAT('x', 7000) AS s, FLOOR(income/100)*100 AS a, COUNT(*) FROM pums GROUP BY a",
		"SELECT FLOOR(income/100)*100 AS a, COUNT(*), AVG(age), SUM(income), CONCAT(ROUND(AVG(income), 2), ' USD') FROM pums GROUP BY a WITH ROLLUP",
		"SELECT name, COUNT(*), AVG(age) FROM pums GROUP BY name ORDER BY COUNT(*) DESC LIMIT 10",
		"SELECT " + strings.Repeat("ABS(", 12) + "COUNT(*)" + strings.Repeat(")", 12) + ", FLOOR(income/100)*100 AS a FROM pums GROUP BY a",
	} {
		if _, err := planResult(t, sql); err != nil {
			t.Errorf("%.80s: %v", sql, err)
		}
	}
}

// TestResultSizeIsCountedAsRowsAreComputed: where the plan's bound is
// loose (a key chosen by partition selection is counted as 255
// characters, but its released values are as long as the data's), the
// cells post-processing keeps are counted as it computes them, and past
// 64 MiB it fails with 1105 (ResultTooLarge, as a statement over the
// catalog): 70 released keys of 1 MiB each, where 60 answer; the values a
// window function keeps (its ORDER BY, argument and result: 3 × 30 MiB
// beside numbers), and an outer query's aggregate arguments (2 × 30 MiB
// beside the inner 30 MiB), each alone past the limit.
func TestResultSizeIsCountedAsRowsAreComputed(t *testing.T) {
	rows := func(n int) []planner.Row {
		out := make([]planner.Row, n)
		for i := range out {
			key := fmt.Sprintf("%07d", i) + strings.Repeat("k", 1<<20)
			out[i] = planner.Row{Keys: []sqlrewrite.Value{{Str: key, IsText: true}}, Aggs: []planner.Datum{{Num: 5, Int: true}}}
		}
		return out
	}
	for _, c := range []struct {
		sql      string
		keys     int
		tooLarge bool
	}{
		{"SELECT name, COUNT(*) FROM pums GROUP BY name", 60, false},
		{"SELECT name, COUNT(*) FROM pums GROUP BY name", 70, true},
		{"SELECT COUNT(*), LENGTH(MAX(name) OVER (ORDER BY name)) FROM pums GROUP BY name", 30, true},
		{"SELECT LENGTH(MAX(CONCAT(name, name))) FROM (SELECT name, COUNT(*) AS n FROM pums GROUP BY name) t", 30, true},
	} {
		q, err := planResult(t, c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		_, _, err = planner.PostProcess(q, rows(c.keys))
		switch {
		case !c.tooLarge && err != nil:
			t.Errorf("%s over %d keys of 1 MiB: %v", c.sql, c.keys, err)
		case c.tooLarge && dperr.KindOf(err) != dperr.ResultTooLarge:
			t.Errorf("%s over %d keys of 1 MiB: got %v, want ResultTooLarge", c.sql, c.keys, err)
		case c.tooLarge:
			if code, state := dperr.KindOf(err).Code(); code != 1105 || state != "HY000" {
				t.Errorf("%s: code %d (%s), want 1105 (HY000)", c.sql, code, state)
			}
		}
	}
}
