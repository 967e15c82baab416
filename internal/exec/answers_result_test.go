package exec

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/dpproxy/dpproxy/internal/planner"
)

// TestStoredResultRoundTrip: a result survives the ledger's JSON cell for
// cell: types (a DECIMAL's digits, a BIGINT UNSIGNED beyond BIGINT), float
// bits (−0, NaN payloads aside, subnormals), and text
// that is not UTF-8 (a released key of a binary column, an alias), which a
// JSON string would replace with U+FFFD (an independent review).
func TestStoredResultRoundTrip(t *testing.T) {
	res := &Result{
		Columns: []string{"k\xff", "n", "when"},
		Rows: [][]any{{"an\xff", int64(-7), planner.Date("2026-11-26")}, {nil, math.Copysign(0, -1), planner.DateTime("2026-11-26 23:00:00")}, {"ok", 5e-324, "x"},
			{planner.Decimal("-1.6667"), uint64(math.MaxUint64), nil}},
		Warnings: []Warning{{Level: "Note", Code: NoteCode, Message: "m\xfe"}},
	}
	stored, err := storeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(storedAnswer{Result: stored})
	if err != nil {
		t.Fatal(err)
	}
	var back storedAnswer
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.Result.result()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Columns, res.Columns) || !reflect.DeepEqual(got.Warnings, res.Warnings) || len(got.Rows) != len(res.Rows) {
		t.Fatalf("got %+v, want %+v", got, res)
	}
	for i := range res.Rows {
		for j, want := range res.Rows[i] {
			g := got.Rows[i][j]
			if f, ok := want.(float64); ok {
				if gf, ok := g.(float64); !ok || math.Float64bits(gf) != math.Float64bits(f) {
					t.Errorf("cell %d,%d: got %#v, want %#v", i, j, g, want)
				}
				continue
			}
			if !reflect.DeepEqual(g, want) {
				t.Errorf("cell %d,%d: got %#v, want %#v", i, j, g, want)
			}
		}
	}
	if _, err := storeResult(&Result{Columns: []string{"b"}, Rows: [][]any{{true}}}); err == nil {
		t.Error("a cell of a type results do not hold was stored")
	}
}
