package planner

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// TestInteractiveKeyNamesWhatTheCreationReads: an instance's key changes
// with everything its creation reads, the relation, its partitions and
// each domain column's source, type and bounds, so that an instance never
// answers for other backend columns (v1 keyed the table's source but not
// the columns': a domain column pointed at another backend column kept the
// old instance); the configured table's name, which it does not read, does
// not change it.
func TestInteractiveKeyNamesWhatTheCreationReads(t *testing.T) {
	key := func(change func(*catalog.Table)) string {
		lo, hi := 0.0, 100.0
		tbl := &catalog.Table{Name: "visits", Source: "visits", Columns: []catalog.Column{
			{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi},
			{Name: "sex", Source: "sex", Type: catalog.Text},
		}, Interactive: &catalog.Interactive{Columns: []catalog.InteractiveColumn{
			{Name: "age", Edges: []float64{0, 18, 65, 100}}, {Name: "sex", Values: []string{"f", "m"}},
		}, Epsilon: 1, Alpha: 0.05, Beta: 0.05, PlannedQueries: 100, Mechanism: catalog.InteractiveAuto}}
		change(tbl)
		return interactiveKey(tbl, tbl.Interactive)
	}
	base := key(func(*catalog.Table) {})
	if got := key(func(t *catalog.Table) { t.Name = "renamed" }); got != base {
		t.Errorf("the table's name changed the key: %q, was %q", got, base)
	}
	for what, change := range map[string]func(*catalog.Table){
		"source":          func(t *catalog.Table) { t.Source = "hr.visits" },
		"partitions":      func(t *catalog.Table) { t.Partitions = []string{"visits_1", "visits_2"} },
		"bucketed source": func(t *catalog.Table) { t.Columns[0].Source = "age_at_visit" },
		"value source":    func(t *catalog.Table) { t.Columns[1].Source = "gender" },
		"type":            func(t *catalog.Table) { t.Columns[0].Type = catalog.Real },
		"bounds":          func(t *catalog.Table) { hi := 120.0; t.Columns[0].Upper = &hi },
	} {
		if got := key(change); got == base {
			t.Errorf("%s changed but the key did not: %q", what, got)
		}
	}
}
