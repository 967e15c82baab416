package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// TestSynopsisOnUnitTable: on a table with a privacy unit a synopsis is
// built at ε/k per row (the same draws as the mechanism at that ε) and
// records the per-unit ε; its key names the unit and k, so a changed bound
// names a new synopsis; EXPLAIN states the unit, k and the sensitivity. On
// a row-level table the key and EXPLAIN are as before and the build runs
// at ε.
func TestSynopsisOnUnitTable(t *testing.T) {
	lo, hi := 0.0, 100.0
	cfg := catalog.Histogram{Bins: 101, Epsilon: 2, Mechanism: catalog.SynopsisDAWA, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}
	col := catalog.Column{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi, Histogram: &cfg}
	unit := &catalog.Table{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 4, MaxGroupsPerUnit: 1, Columns: []catalog.Column{col}}
	rows := &catalog.Table{Name: "visits", Source: "visits", Columns: []catalog.Column{col}}
	d := Domain{Lower: 0, Upper: 101, Bins: 101, Integer: true}
	hist := make([]int64, 101)
	for j := range hist {
		hist[j] = int64(j % 7)
	}
	w, err := histogram.AllRangesWorkload(101)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table  *catalog.Table
		rowEps float64
	}{{unit, 0.5}, {rows, 2}} {
		spec := &SynopsisSpec{Table: tc.table, Column: &col, Domain: d, Config: cfg}
		syn, err := spec.Build(noise.NewStream(7), hist)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := histogram.DAWA(noise.NewStream(7), hist, w, tc.rowEps, histogram.DAWAOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if syn.Epsilon() != 2 || !slices.Equal(syn.Estimate(), ref.Estimate()) {
			t.Errorf("%s unit %q: synopsis at ε %v, not DAWA at %v per row", tc.table.Name, tc.table.PrivacyUnit, syn.Epsilon(), tc.rowEps)
		}
	}
	unitKey, rowKey := synopsisKey(unit, &col, d, "", nil), synopsisKey(rows, &col, d, "", nil)
	if !strings.HasSuffix(unitKey, "|unit=person_id|rows_per_unit=4") || strings.Contains(rowKey, "unit=") {
		t.Errorf("keys: unit %q, row-level %q", unitKey, rowKey)
	}
	sp := &SynopsisPlan{Synopses: []*SynopsisSpec{{Table: unit, Column: &col, Domain: d, Config: cfg}}}
	_, explained := sp.explainSynopses(0, nil)
	if got := explained[0][6].(string); !strings.Contains(got, "protects each person_id at epsilon = 2: the histogram keeps ≤ 4 rows per person_id") ||
		!strings.Contains(got, "L1 sensitivity 4") || !strings.Contains(got, "built at epsilon/4 per row") {
		t.Errorf("EXPLAIN %q", got)
	}
	sp.Synopses[0].Table = rows
	if _, explained = sp.explainSynopses(0, nil); strings.Contains(explained[0][6].(string), "protects") {
		t.Errorf("row-level EXPLAIN %q", explained[0][6])
	}
}

// TestInteractiveOnUnitTable: on a table with a privacy unit the instance
// runs at ε/k per row (n̂ and the mechanism's ε' split from it, the Median
// Mechanism's configuration at ε'), its key names the unit and k, and
// EXPLAIN states them; a row-level table's instance runs at ε with its
// key unchanged.
func TestInteractiveOnUnitTable(t *testing.T) {
	lo, hi := 0.0, 100.0
	in := catalog.Interactive{Columns: []catalog.InteractiveColumn{{Name: "age", Edges: []float64{0, 18, 65, 100}}},
		Epsilon: 1, Alpha: 0.05, Beta: 0.05, PlannedQueries: 100, Mechanism: catalog.InteractiveAuto}
	cols := []catalog.Column{{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi}}
	unit := &catalog.Table{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1, Columns: cols, Interactive: &in}
	rows := &catalog.Table{Name: "visits", Source: "visits", Columns: cols, Interactive: &in}
	for _, tc := range []struct {
		table *catalog.Table
		k     int64
	}{{unit, 3}, {rows, 1}} {
		ip := &InteractivePlan{Table: tc.table, Config: in, Key: interactiveKey(tc.table, &in)}
		rowEps := ip.RowEpsilon()
		if ip.RowsPerUnit() != tc.k || float64(tc.k)*rowEps > 1 || rowEps < 1/float64(tc.k)*(1-1e-15) {
			t.Errorf("k = %d: rows per unit %d, ε per row %v", tc.k, ip.RowsPerUnit(), rowEps)
		}
		if ip.CountEpsilon()+ip.RestEpsilon() > rowEps || ip.RestEpsilon() < 0.96*rowEps {
			t.Errorf("k = %d: n̂ at %v and ε' = %v, want a split of %v", tc.k, ip.CountEpsilon(), ip.RestEpsilon(), rowEps)
		}
		if c := ip.MedianConfig(100, 0); c.Epsilon != ip.RestEpsilon() || c.RowCountEpsilon != ip.CountEpsilon() {
			t.Errorf("k = %d: median config %+v", tc.k, c)
		}
		if got := strings.Contains(ip.Key, "|unit=person_id|rows_per_unit=3"); got != (tc.k == 3) {
			t.Errorf("k = %d: key %q", tc.k, ip.Key)
		}
	}
	ip := &InteractivePlan{Table: unit, Config: in, Key: interactiveKey(unit, &in)}
	if got := ip.unitExplain(); !strings.Contains(got, "protects each person_id at epsilon = 1: the histogram over X keeps ≤ 3 rows per person_id") ||
		!strings.Contains(got, "sensitivity 3") || !strings.Contains(got, "epsilon/3 = 0.333333333333 per row") {
		t.Errorf("EXPLAIN %q", got)
	}
}
