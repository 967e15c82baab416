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
	unitKey, rowKey := synopsisKey(unit, &col, d, ""), synopsisKey(rows, &col, d, "")
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
