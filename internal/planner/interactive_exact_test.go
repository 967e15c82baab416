package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestInteractiveBucketsBeyond2To53: on an integer column whose
// interactive buckets reach past 2^53, which buckets a range selects is
// decided in exact integers. Before, big > 2^53 took the bucket [2^53,
// 9007199254741000) as wholly inside (float64's 2^53 + 1 is 2^53), so the
// count from the domain included the rows equal to 2^53; it must not be
// answered from the domain (the bucket is cut), while big >= 2^53 is.
func TestInteractiveBucketsBeyond2To53(t *testing.T) {
	const two53 = 1 << 53
	lo, hi := -9007199254741000.0, 9007199254741000.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "ti", Source: "ti", Columns: []catalog.Column{
		{Name: "big", Source: "big", Type: catalog.Integer, Lower: &lo, Upper: &hi},
	}, Interactive: &catalog.Interactive{
		Columns: []catalog.InteractiveColumn{{Name: "big", Edges: []float64{lo, -two53, 0, two53, hi}}},
		Epsilon: 1, Alpha: 0.05, Beta: 0.05, PlannedQueries: 5000, Mechanism: catalog.InteractiveAuto,
	}}}}
	fromDomain := func(cond string) bool {
		t.Helper()
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM ti WHERE " + cond)
		if err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		var rows [][]any
		switch st := st.(type) {
		case *sqlrewrite.Select:
			plan, err := planner.New(cat).Plan(st, planner.Settings{Epsilon: 1, Mechanism: "auto"})
			if err != nil {
				return false // refused: not answered from the domain
			}
			_, rows = plan.Explain()
		default:
			t.Fatalf("%s: parsed as %T", cond, st)
		}
		return strings.Contains(fmt.Sprint(rows), "no per-statement cost")
	}
	for cond, want := range map[string]bool{
		fmt.Sprintf("big >= %d", two53):   true,
		fmt.Sprintf("big > %d", two53):    false,
		fmt.Sprintf("big <= %d", two53):   false,
		fmt.Sprintf("big < %d", two53):    true,
		fmt.Sprintf("big > %d", two53-1):  true,
		fmt.Sprintf("big >= %d", -two53):  true,
		fmt.Sprintf("big > %d", -two53):   false,
		fmt.Sprintf("big < %d", -two53+1): false,
	} {
		if got := fromDomain(cond); got != want {
			t.Errorf("%s: answered from the interactive domain %v, want %v", cond, got, want)
		}
	}
}
