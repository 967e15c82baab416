package exec

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/planner"
)

// storedResult is a RunQuery statement's result as the ledger stores it
// for the repeat window: every cell with its type, floats as their bits,
// so that a repeated answer is the released one exactly, cell for cell.
type storedResult struct {
	Columns  []string       `json:"columns"`
	Rows     [][]storedCell `json:"rows"`
	Warnings []Warning      `json:"warnings"`
}

// storedCell is one result cell: Kind "null", "int", "float", "text",
// "date" or "datetime".
type storedCell struct {
	Kind string `json:"k"`
	Int  int64  `json:"i,omitempty"`
	Bits uint64 `json:"f,omitempty"`
	Text string `json:"t,omitempty"`
}

// storeResult encodes res, failing on a cell of a type results do not hold.
func storeResult(res *Result) (*storedResult, error) {
	out := &storedResult{Columns: res.Columns, Warnings: res.Warnings, Rows: make([][]storedCell, len(res.Rows))}
	for i, row := range res.Rows {
		out.Rows[i] = make([]storedCell, len(row))
		for j, v := range row {
			var c storedCell
			switch x := v.(type) {
			case nil:
				c.Kind = "null"
			case int64:
				c.Kind, c.Int = "int", x
			case float64:
				c.Kind, c.Bits = "float", math.Float64bits(x)
			case string:
				c.Kind, c.Text = "text", x
			case planner.Date:
				c.Kind, c.Text = "date", string(x)
			case planner.DateTime:
				c.Kind, c.Text = "datetime", string(x)
			default:
				return nil, fmt.Errorf("result cell of type %T", v)
			}
			out.Rows[i][j] = c
		}
	}
	return out, nil
}

// result decodes the stored result.
func (s *storedResult) result() (*Result, error) {
	res := &Result{Columns: s.Columns, Warnings: s.Warnings, Rows: make([][]any, len(s.Rows))}
	for i, row := range s.Rows {
		if len(row) != len(s.Columns) {
			return nil, fmt.Errorf("stored row %d has %d cells for %d columns", i, len(row), len(s.Columns))
		}
		res.Rows[i] = make([]any, len(row))
		for j, c := range row {
			switch c.Kind {
			case "null":
				res.Rows[i][j] = nil
			case "int":
				res.Rows[i][j] = c.Int
			case "float":
				res.Rows[i][j] = math.Float64frombits(c.Bits)
			case "text":
				res.Rows[i][j] = c.Text
			case "date":
				res.Rows[i][j] = planner.Date(c.Text)
			case "datetime":
				res.Rows[i][j] = planner.DateTime(c.Text)
			default:
				return nil, fmt.Errorf("stored cell of kind %q", c.Kind)
			}
		}
	}
	return res, nil
}
