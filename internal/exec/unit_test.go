package exec

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// TestUnitNotesAndBounds: a unit table's notes state the person-level ε
// and its fetches carry the unit bound with a fresh 32-digit salt per
// statement; a row-level table's notes say they protect rows, and its
// fetches are unbounded.
func TestUnitNotesAndBounds(t *testing.T) {
	lo, hi := 0.0, 100.0
	cols := []catalog.Column{{Name: "age", Source: "age_src", Type: catalog.Integer, Lower: &lo, Upper: &hi}}
	unit := &catalog.Table{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 1, Columns: cols}
	rows := &catalog.Table{Name: "pums", Source: "pums", Columns: cols}
	src := noise.NewCryptoSource()
	plan := &planner.Plan{Table: unit, Cost: planner.Cost{Epsilon: 1}}
	if got := unitNote(plan, 0.5); got != "; protects each person_id at epsilon=0.5 (statement 1)" {
		t.Errorf("unit note %q", got)
	}
	a, b := newUnitSalt(plan, src), newUnitSalt(plan, src)
	if len(a) != 32 || a == b {
		t.Errorf("salts %q, %q", a, b)
	}
	u := unitBound(unit, 5, unitScope{salt: a})
	if u == nil || u.Column != "person_id" || u.MaxRows != 5 || u.Salt != a || strings.Join(u.Order, ",") != "age_src" {
		t.Errorf("unit bound %+v", u)
	}
	rowPlan := &planner.Plan{Table: rows, Cost: planner.Cost{Epsilon: 1}}
	if got := unitNote(rowPlan, 1); !strings.Contains(got, "protects each row at epsilon=1") {
		t.Errorf("row-level note %q", got)
	}
	if newUnitSalt(rowPlan, src) != "" || unitBound(rows, 0, unitScope{}) != nil {
		t.Error("a row-level table's fetches are bounded")
	}
}
