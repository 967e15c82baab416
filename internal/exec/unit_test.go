package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
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
	if got := unitNote(plan, 0.5, planScope(plan)); got != "; protects each person_id at epsilon=1, the statement's (this value's releases: epsilon=0.5)" {
		t.Errorf("unit note %q", got)
	}
	if got := unitNote(plan, 0.25, statementScope{cost: planner.Cost{Epsilon: 1}, groups: 2}); got !=
		"; protects each person_id at epsilon=1, the statement's (each person_id's rows reach at most 2 groups; this value's releases: epsilon=0.25 in each, 0.5 across them)" {
		t.Errorf("grouped unit note %q", got)
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
	if got := unitNote(rowPlan, 0.5, planScope(rowPlan)); got != "; protects each row at epsilon=1, the statement's (row-level table; this value's releases: epsilon=0.5)" {
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

// TestUnitPartitionSelectionCountsUnits groups a unit table (≤ 5 rows per
// person, ≤ 2 keys per person) by a private text key. Persons 1..300 each
// have rows at ann, bob and cy (1, 2 and 3 rows); one person has 400 rows
// at solo, two persons 200 rows each at pair. The selection's fetch counts
// distinct persons, each toward exactly 2 of their 3 keys: solo 1, pair 2,
// ann + bob + cy = 600, each at most 300. Over 20 seeded statements the
// released keys are exactly [ann bob cy] (each above 150 persons, 15 noise
// scales over the threshold: failure below e^-15 per key) and never solo or
// pair (probability at most δ/2 per statement each); each statement costs
// its ε and δ once and says whom it protects. The same table declared
// without a unit counts rows, and releases solo and pair.
func TestUnitPartitionSelectionCountsUnits(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE p (person INTEGER, name TEXT, v REAL)"); err != nil {
		t.Fatal(err)
	}
	var values []string
	for id := 1; id <= 300; id++ {
		for name, n := range map[string]int{"ann": 1, "bob": 2, "cy": 3} {
			for i := range n {
				values = append(values, fmt.Sprintf("(%d, '%s', %d)", id, name, (id+i)%100))
			}
		}
	}
	for i := range 400 {
		values = append(values, fmt.Sprintf("(1001, 'solo', %d)", i%100), fmt.Sprintf("(%d, 'pair', %d)", 1002+i%2, i%100))
	}
	if _, err := db.Exec("INSERT INTO p (person, name, v) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 100.0
	cols := []catalog.Column{
		{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}
	cat := &catalog.Config{Tables: []catalog.Table{
		{Name: "p", Source: "p", PrivacyUnit: "person", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 2, Columns: cols},
		{Name: "p_rows", Source: "p", Columns: cols},
		{Name: "p12", Source: "p", PrivacyUnit: "person", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 12, Columns: cols},
	}}
	back := backend.New(db, sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	qp := planGrouped(t, cat, "SELECT name, COUNT(*), AVG(v) FROM p GROUP BY name", 2)
	sel := qp.Selection
	if sel == nil || sel.KeysPerUnit != 2 || sel.KeyEpsilon != 0.5 || qp.Base.Cost.Epsilon != 0.5 {
		t.Fatalf("selection %+v, base cost %+v", sel, qp.Base.Cost)
	}
	if float64(sel.Threshold)+15*sel.Scale() > 150 {
		t.Fatalf("threshold %d, scale %g: the fixture's keys are too close to it", sel.Threshold, sel.Scale())
	}
	src := rand.NewChaCha8([32]byte{13})
	for range 5 {
		f := selectionFetch(qp, src)
		if f.Unit == nil || f.Unit.Key != "name" || f.Unit.MaxRows != 1 || f.Unit.MaxGroups != 2 {
			t.Fatalf("selection fetch bound %+v", f.Unit)
		}
		snap, err := back.Snapshot(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		counts, err := snap.KeyCounts(context.Background(), f, everyCount)
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, c := range counts {
			got[c.Value.Str] = c.Count
		}
		if got["solo"] != 1 || got["pair"] != 2 || got["ann"]+got["bob"]+got["cy"] != 600 || max(got["ann"], got["bob"], got["cy"]) > 300 {
			t.Errorf("unit counts %v: want solo 1, pair 2, ann+bob+cy = 600", got)
		}
	}
	for run := range 20 {
		before, _ := e.ledger.Remaining(context.Background(), "user:a")
		res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(run), 77}))
		if err != nil {
			t.Fatal(err)
		}
		after, _ := e.ledger.Remaining(context.Background(), "user:a")
		if math.Abs(before.Epsilon-after.Epsilon-2) > 1e-9 || math.Abs(before.Delta-after.Delta-qp.Cost.Delta) > 1e-15 || qp.Cost.Delta != 5e-7 {
			t.Fatalf("run %d spent (%g, %g), want (2, %g = 5e-7)", run, before.Epsilon-after.Epsilon, before.Delta-after.Delta, qp.Cost.Delta)
		}
		var names []string
		for _, row := range res.Rows {
			names = append(names, row[0].(string))
		}
		if fmt.Sprint(names) != "[ann bob cy]" {
			t.Fatalf("run %d released %v, want [ann bob cy]", run, names)
		}
		if run == 0 && (len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0].Message, "over distinct person") ||
			!strings.Contains(res.Warnings[0].Message, "protects each person at epsilon=2")) {
			t.Errorf("warnings %v", res.Warnings)
		}
	}
	rowLevel := planGrouped(t, cat, "SELECT name, COUNT(*) FROM p_rows GROUP BY name", 2)
	res, err := e.RunQuery(context.Background(), "a", rowLevel, rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, row := range res.Rows {
		names = append(names, row[0].(string))
	}
	if fmt.Sprint(names) != "[ann bob cy pair solo]" {
		t.Errorf("row-level table released %v, want every name (solo and pair have 400 rows)", names)
	}
}

// everyCount keeps every value of a KeyCounts fetch.
func everyCount(int64) bool { return true }

// TestGroupedNotesStateTheStatementEpsilon: each aggregate's note of a
// grouped statement states the statement's ε, what the ledger is charged,
// as what it protects each row or unit at, and then its own releases' ε,
// on a unit table in each of the g groups a unit reaches and across them.
// At ε = 1 with g = 2, the notes said "statement 0.5" (one group's plan)
// on a unit table, and with partition selection half the ε (the releases'
// half), on a row-level table too; the parts of aggregates with their own
// conditions said "statement 0". The notes led with the output's own ε
// ("protects each person at epsilon=0.5 across at most 2 groups" in a
// statement at ε = 1), which read as the statement's. On p12
// (max_groups_per_unit 12) the 2 public groups of g reach at most 2 of a
// person's groups, so each gets ε/2, not ε/12.
func TestGroupedNotesStateTheStatementEpsilon(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE p (person INTEGER, g INTEGER, name TEXT, v REAL)"); err != nil {
		t.Fatal(err)
	}
	var values []string
	for id := 1; id <= 300; id++ {
		values = append(values, fmt.Sprintf("(%d, %d, 'ann', %d)", id, id%2, id%100), fmt.Sprintf("(%d, %d, 'bob', %d)", id, (id+1)%2, id%90))
	}
	if _, err := db.Exec("INSERT INTO p (person, g, name, v) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 100.0
	cols := []catalog.Column{
		{Name: "g", Source: "g", Type: catalog.Integer, Values: []string{"0", "1"}},
		{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}
	cat := &catalog.Config{Tables: []catalog.Table{
		{Name: "p", Source: "p", PrivacyUnit: "person", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 2, Columns: cols},
		{Name: "p_rows", Source: "p", Columns: cols},
		{Name: "p12", Source: "p", PrivacyUnit: "person", MaxRowsPerUnit: 5, MaxGroupsPerUnit: 12, Columns: cols},
	}}
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	for _, c := range []struct {
		query string
		notes int    // per-aggregate notes, one per group and aggregate
		want  string // in each of them
	}{
		// Each group's two releases share ε/2: 0.25 each, 0.5 per person
		// across their 2 groups.
		{"SELECT g, COUNT(*), AVG(v) FROM p GROUP BY g", 4,
			"protects each person at epsilon=1, the statement's (each person's rows reach at most 2 groups; this value's releases: epsilon=0.25 in each, 0.5 across them)"},
		// Half of ε selects; each key's two releases share (ε/2)/2.
		{"SELECT name, COUNT(*), AVG(v) FROM p GROUP BY name", 4,
			"protects each person at epsilon=1, the statement's (each person's rows reach at most 2 groups; this value's releases: epsilon=0.125 in each, 0.25 across them)"},
		{"SELECT g, COUNT(*), COUNT(CASE WHEN v > 50 THEN v END) FROM p GROUP BY g", 4,
			"protects each person at epsilon=1, the statement's (each person's rows reach at most 2 groups; this value's releases: epsilon=0.25 in each, 0.5 across them)"},
		{"SELECT name, COUNT(*) FROM p_rows GROUP BY name", 2, "protects each row at epsilon=1, the statement's (row-level table; this value's releases: epsilon=0.5)"},
		{"SELECT g, COUNT(*) FROM p_rows GROUP BY g", 2, "protects each row at epsilon=1, the statement's (row-level table; this value's releases: epsilon=1)"},
		{"SELECT g, COUNT(*), AVG(v) FROM p12 GROUP BY g", 4,
			"protects each person at epsilon=1, the statement's (each person's rows reach at most 2 groups; this value's releases: epsilon=0.25 in each, 0.5 across them)"},
		{"SELECT g, COUNT(*), COUNT(CASE WHEN v > 50 THEN v END) FROM p12 GROUP BY g", 4,
			"protects each person at epsilon=1, the statement's (each person's rows reach at most 2 groups; this value's releases: epsilon=0.25 in each, 0.5 across them)"},
	} {
		qp := planGrouped(t, cat, c.query, 1)
		if qp.Cost.Epsilon != 1 {
			t.Fatalf("%s: costs %g, want 1", c.query, qp.Cost.Epsilon)
		}
		res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{4}))
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		var notes []string
		for _, w := range res.Warnings {
			if strings.Contains(w.Message, "mechanism=") {
				notes = append(notes, w.Message)
			}
		}
		if len(notes) != c.notes {
			t.Errorf("%s: %d aggregate notes, want %d: %q", c.query, len(notes), c.notes, notes)
		}
		for _, n := range notes {
			if !strings.Contains(n, c.want) {
				t.Errorf("%s: note %q does not say %q", c.query, n, c.want)
			}
		}
		if strings.Contains(c.query, "p12") && !slices.ContainsFunc(res.Warnings, func(w Warning) bool {
			return strings.Contains(w.Message, "each person contributes") && strings.Contains(w.Message, "protects each person at epsilon=1 across at most 2 groups")
		}) {
			t.Errorf("%s: no statement note of the 2 groups a person reaches: %v", c.query, res.Warnings)
		}
	}
}
