package exec

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
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

// TestGroupReadsBoundsGroupsTogether: on a unit table a group's fetch
// keeps the statement's filter inside the bounding and reads its group of
// the bounded rows (Within), with the grouped bound of the whole
// statement; on a row-level table the group's conditions join the filter.
func TestGroupReadsBoundsGroupsTogether(t *testing.T) {
	cols := []catalog.Column{{Name: "age", Source: "age_src", Type: catalog.Integer}}
	unit := &catalog.Table{Name: "visits", Source: "visits", PrivacyUnit: "person_id", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 2, Columns: cols}
	rows := &catalog.Table{Name: "pums", Source: "pums", Columns: cols}
	where := []sqlrewrite.Condition{{Column: "age_src", Range: &sqlrewrite.Range{HasLower: true, Lower: 18}}}
	cell := []sqlrewrite.Condition{{Column: "age_src", In: []sqlrewrite.Value{{Num: 40}}}}
	dims := []sqlrewrite.CellDim{{Column: "age_src", Values: []sqlrewrite.Value{{Num: 40}, {Num: 41}}}}
	scope := unitScope{salt: strings.Repeat("ab", 16), groups: dims, maxGroups: 2}
	plan, s := groupReads(&planner.Plan{Table: unit, Filter: where}, scope, cell)
	u := unitBound(plan.Table, 5, s)
	if len(plan.Filter) != 1 || len(u.Within) != 1 || u.Within[0].In[0].Num != 40 || u.MaxGroups != 2 || len(u.Groups) != 1 {
		t.Errorf("unit table: filter %+v, bound %+v", plan.Filter, u)
	}
	plan, s = groupReads(&planner.Plan{Table: rows, Filter: where}, unitScope{}, cell)
	if len(plan.Filter) != 2 || s.within != nil || unitBound(plan.Table, 0, s) != nil {
		t.Errorf("row-level table: filter %+v, scope %+v", plan.Filter, s)
	}
}
