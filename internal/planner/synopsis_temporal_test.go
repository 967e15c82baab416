package planner_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestSynopsisTemporalColumns: a synopsis lists the date and timestamp
// columns whose values select its rows (package exec keys it with the
// backend's zone when one has a time zone): those its predicate restricts
// directly or through a derived column (DATEDIFF of two of them), and no
// other (the histogram column, columns of other outputs).
func TestSynopsisTemporalColumns(t *testing.T) {
	lo, hi := 0.0, 9.0
	dlo, dhi, slo, shi := 18262.0, 18628.0, 1577836800.0, 1609459200.0 // 2020
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "ev", Source: "ev", Epsilon: 10, Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hi, Histogram: &catalog.Histogram{Epsilon: 1, Bins: 10, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}},
		{Name: "g", Source: "g", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "tz", Source: "tz_col", Type: catalog.Timestamp, Lower: &slo, Upper: &shi},
		{Name: "day", Source: "day", Type: catalog.Date, Lower: &dlo, Upper: &dhi},
	}}}}
	for _, tc := range []struct{ where, want string }{
		{"x < 5", "[]"},
		{"x < 5 AND g = 1", "[]"},
		{"x < 5 AND tz >= '2020-06-01 12:00:00'", "[tz]"},
		{"x < 5 AND day < '2020-06-01' AND tz IS NOT NULL", "[day tz]"},
		{"x < 5 AND DATEDIFF(tz, day) > 7", "[day tz]"},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM ev WHERE " + tc.where)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		pl, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
		if err != nil || pl.Synopsis == nil || len(pl.Synopsis.Synopses) != 1 {
			t.Fatalf("%s: plan %v, %v; want one synopsis", tc.where, pl, err)
		}
		if got := fmt.Sprint(pl.Synopsis.Synopses[0].Temporal); got != tc.want {
			t.Errorf("%s: temporal columns %s, want %s", tc.where, got, tc.want)
		}
	}
}
