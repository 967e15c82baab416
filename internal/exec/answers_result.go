package exec

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/planner"
)

// storedResult is a RunQuery statement's result as the ledger stores it
// for the repeat window: every cell with its type, floats as their bits
// and text as bytes (JSON would replace bytes that are not UTF-8, which a
// released key read from a binary column may hold), so that a repeated
// answer is the released one exactly, cell for cell.
type storedResult struct {
	Columns  [][]byte        `json:"columns"`
	Rows     [][]storedCell  `json:"rows"`
	Warnings []storedWarning `json:"warnings"`
}

// storedCell is one result cell: Kind "null", "int", "uint" (a BIGINT
// UNSIGNED beyond BIGINT, in Bits), "float", "decimal" (its digits in
// Text), "text", "date" or "datetime".
type storedCell struct {
	Kind string `json:"k"`
	Int  int64  `json:"i,omitempty"`
	Bits uint64 `json:"f,omitempty"`
	Text []byte `json:"t,omitempty"`
}

// storedWarning is a Warning with its message as bytes.
type storedWarning struct {
	Level   string `json:"level"`
	Code    uint16 `json:"code"`
	Message []byte `json:"message"`
}

// storeResult encodes res, failing on a cell of a type results do not hold.
func storeResult(res *Result) (*storedResult, error) {
	out := &storedResult{Rows: make([][]storedCell, len(res.Rows))}
	for _, c := range res.Columns {
		out.Columns = append(out.Columns, []byte(c))
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, storedWarning{Level: w.Level, Code: w.Code, Message: []byte(w.Message)})
	}
	for i, row := range res.Rows {
		out.Rows[i] = make([]storedCell, len(row))
		for j, v := range row {
			var c storedCell
			switch x := v.(type) {
			case nil:
				c.Kind = "null"
			case int64:
				c.Kind, c.Int = "int", x
			case uint64:
				c.Kind, c.Bits = "uint", x
			case planner.Decimal:
				c.Kind, c.Text = "decimal", []byte(x)
			case float64:
				c.Kind, c.Bits = "float", math.Float64bits(x)
			case string:
				c.Kind, c.Text = "text", []byte(x)
			case planner.Date:
				c.Kind, c.Text = "date", []byte(x)
			case planner.DateTime:
				c.Kind, c.Text = "datetime", []byte(x)
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
	res := &Result{Rows: make([][]any, len(s.Rows))}
	for _, c := range s.Columns {
		res.Columns = append(res.Columns, string(c))
	}
	for _, w := range s.Warnings {
		res.Warnings = append(res.Warnings, Warning{Level: w.Level, Code: w.Code, Message: string(w.Message)})
	}
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
			case "uint":
				res.Rows[i][j] = c.Bits
			case "decimal":
				res.Rows[i][j] = planner.Decimal(c.Text)
			case "float":
				res.Rows[i][j] = math.Float64frombits(c.Bits)
			case "text":
				res.Rows[i][j] = string(c.Text)
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
