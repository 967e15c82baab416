package proxy

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// A mechanism's NULL (No Reply) keeps the aggregate's column type.
func TestPrivateAnswerKeepsItsTypeWhenNull(t *testing.T) {
	plan := &planner.Plan{Outputs: []planner.Output{{Label: "COUNT(*)", Integer: true}, {Label: "IQR(income)"}, {Label: "AVG(age)"}}}
	out := &exec.Result{Columns: []string{"COUNT(*)", "IQR(income)", "AVG(age)"}, Row: []any{int64(12), nil, 41.5}}
	r := typedAnswer(plan, out)
	wantTypes := []byte{mysqlTypeLongLong, mysqlTypeDouble, mysqlTypeDouble}
	wantRow := []any{"12", nil, "41.5"}
	for i := range wantTypes {
		if r.Typed[i].Type != wantTypes[i] || r.Typed[i].Name != out.Columns[i] || r.Rows[0][i] != wantRow[i] {
			t.Errorf("column %d: %+v = %v, want type %d value %v", i, r.Typed[i], r.Rows[0][i], wantTypes[i], wantRow[i])
		}
	}
}
