package exec

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestInteractiveFetchOnUnitTable: on a unit table the histogram over X
// is read bounded to max_rows_per_unit rows per unit with the instance's
// salt, which the stored header keeps (so a later process reads the same
// rows); on a row-level table it is unbounded. The notes state the unit.
func TestInteractiveFetchOnUnitTable(t *testing.T) {
	cols := []catalog.Column{{Name: "age", Source: "age_src", Type: catalog.Integer}}
	in := catalog.Interactive{Epsilon: 1, Alpha: 0.05}
	unit := &catalog.Table{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 4, MaxGroupsPerUnit: 1, Columns: cols, Interactive: &in}
	rows := &catalog.Table{Name: "pums", Source: "pums", Columns: cols, Interactive: &in}
	cells := &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: "age_src", Edges: sqlrewrite.DoubleEdges([]float64{0, 18, 100})}}}
	salt := strings.Repeat("0f", 16)
	ip := &planner.InteractivePlan{Table: unit, Config: in, Cells: sqlrewrite.Fetch{Table: "visits", Cells: cells}, Key: "k"}
	f := interactiveFetch(ip, salt)
	if f.Unit == nil || f.Unit.MaxRows != 4 || f.Unit.Salt != salt || f.Unit.Column != "person_id" || f.Cells != cells {
		t.Errorf("unit table fetch %+v", f.Unit)
	}
	if ip.Cells.Unit != nil {
		t.Error("interactiveFetch changed the plan's fetch")
	}
	h := interactiveHeader{Key: "k", Mechanism: planner.InteractiveHistogram, Noisy: []int64{1, 2}, UnitSalt: salt}
	value, err := h.encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if ip.Predicate, err = mm.NewPredicate(2, []int{0}); err != nil {
		t.Fatal(err)
	}
	inst, err := decodeInteractive(ip, value)
	if err != nil || inst.header.UnitSalt != salt {
		t.Errorf("decoded header %+v, %v", inst, err)
	}
	if note := interactiveUnitNote(ip); !strings.Contains(note, "protects each person_id at epsilon=1") || !strings.Contains(note, "≤ 4 rows per person_id, sensitivity 4 per count") {
		t.Errorf("unit note %q", note)
	}
	rowPlan := &planner.InteractivePlan{Table: rows, Config: in, Cells: sqlrewrite.Fetch{Table: "pums", Cells: cells}}
	if interactiveFetch(rowPlan, "").Unit != nil || interactiveUnitNote(rowPlan) != "privacy unit: each row" {
		t.Error("row-level table: bounded fetch or unit note")
	}
}
