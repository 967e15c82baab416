package proxy

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// A private answer's columns are typed by the plan's types, a NULL (No
// Reply) included, in one row or in several (a grouped answer), and each
// value is the text of its column's type.
func TestPrivateAnswerKeepsItsTypeWhenNull(t *testing.T) {
	out := &exec.Result{
		Columns: []string{"COUNT(*)", "IQR(income)", "AVG(age)", "MIN(d)", "k"},
		Types:   []planner.ResultType{planner.ResultBigint, planner.ResultDouble, planner.ResultDouble, planner.ResultDate, planner.ResultText},
		Rows:    [][]any{{int64(12), nil, 41.5, planner.Date("2024-01-02"), "a"}, {nil, nil, 3.0, nil, nil}},
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []byte{mysqlTypeLongLong, mysqlTypeDouble, mysqlTypeDouble, mysqlTypeDate, mysqlTypeVarChar}
	wantRows := [][]any{{"12", nil, "41.5", "2024-01-02", "a"}, {nil, nil, "3", nil, nil}}
	for i := range wantTypes {
		if r.Typed[i].Type != wantTypes[i] || r.Typed[i].Name != out.Columns[i] {
			t.Errorf("column %d: %+v, want type %d", i, r.Typed[i], wantTypes[i])
		}
		for k := range wantRows {
			if r.Rows[k][i] != wantRows[k][i] {
				t.Errorf("row %d column %d = %v, want %v", k, i, r.Rows[k][i], wantRows[k][i])
			}
		}
	}
	if err := checkResult(r); err != nil {
		t.Error(err)
	}
}
