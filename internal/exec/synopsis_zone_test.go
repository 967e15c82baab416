package exec

import (
	"context"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestStoredSpecsKeyedByZone: a synopsis whose predicate restricts a
// timestamp column is keyed with the backend's zone when the backend
// stores that column with a time zone or its type is not known, and keeps
// its key when the column has none, when no timestamp column selects its
// rows, and on SQLite (no zone).
func TestStoredSpecsKeyedByZone(t *testing.T) {
	lo, hi, slo, shi := 0.0, 9.0, 1577836800.0, 1609459200.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "ev", Source: "ev", Epsilon: 10, Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hi,
			Histogram: &catalog.Histogram{Epsilon: 1, Bins: 10, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}},
		{Name: "tz", Source: "tz", Type: catalog.Timestamp, Lower: &slo, Upper: &shi},
	}}}}
	plan := func(where string) *planner.Plan {
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM ev WHERE " + where)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
		if err != nil || pl.Synopsis == nil {
			t.Fatalf("%s: %v", where, err)
		}
		return pl
	}
	zonedPlan, plainPlan := plan("x < 5 AND tz >= '2020-06-01 12:00:00'"), plan("x < 5")
	ctx := context.Background()
	pg, err := backend.Open(ctx, "postgres", testdb.PostgresDSN(t), "+12:00", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	sqlite, err := backend.Open(ctx, "sqlite", testdb.SQLiteDSN(t), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlite.Close()
	zoned, naive := &catalog.ColumnZones{}, &catalog.ColumnZones{}
	zoned.Set("ev", "tz", true)
	naive.Set("ev", "tz", false)
	for _, c := range []struct {
		name  string
		back  *backend.Backend
		zones *catalog.ColumnZones
		plan  *planner.Plan
		keyed bool
	}{
		{"timestamptz", pg, zoned, zonedPlan, true},
		{"type not known", pg, nil, zonedPlan, true},
		{"timestamp without zone", pg, naive, zonedPlan, false},
		{"no timestamp in the predicate", pg, zoned, plainPlan, false},
		{"sqlite", sqlite, nil, zonedPlan, false},
	} {
		e := New(c.back, nil, nil)
		e.SetColumnZones(c.zones)
		spec := e.storedSpecs(c.plan)[0]
		want := c.plan.Synopsis.Synopses[0].Key
		if c.keyed {
			want += "|backend zone=+12:00"
		}
		if spec.Key != want || !strings.HasPrefix(spec.Key, c.plan.Synopsis.Synopses[0].Key) {
			t.Errorf("%s: key %q, want %q", c.name, spec.Key, want)
		}
	}
	if strings.Contains(zonedPlan.Synopsis.Synopses[0].Key, "zone") {
		t.Error("storedSpecs changed the plan's own spec")
	}
}
