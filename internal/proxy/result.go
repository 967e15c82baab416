package proxy

import (
	"fmt"
	"math"
	"reflect"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// ColumnType is the one Go type every non-NULL value of a result column has.
type ColumnType int

// The column types a Result may carry (package wire sends each as one MySQL type).
const (
	TextColumn  ColumnType = iota // string
	IntColumn                     // int64
	FloatColumn                   // float64
)

var columnGoTypes = [...]reflect.Type{
	TextColumn:  reflect.TypeFor[string](),
	IntColumn:   reflect.TypeFor[int64](),
	FloatColumn: reflect.TypeFor[float64](),
}

// Column is a typed result column.
type Column struct {
	Name string
	Type ColumnType
}

// Text, Int and Float declare result columns.
func Text(name string) Column  { return Column{name, TextColumn} }
func Int(name string) Column   { return Column{name, IntColumn} }
func Float(name string) Column { return Column{name, FloatColumn} }

// table builds a Result whose values are checked against typed columns as
// each row is added, so a column can never mix types (the bug that made
// SHOW VARIABLES fail with 1105): the first mismatch is kept and reported
// by result.
type table struct {
	cols []Column
	rows [][]any
	err  error
}

func newTable(cols ...Column) *table { return &table{cols: cols, rows: [][]any{}} }

// row appends one row; each value must be nil or of its column's type.
func (t *table) row(values ...any) {
	if t.err != nil {
		return
	}
	if len(values) != len(t.cols) {
		t.err = fmt.Errorf("row of %d values for %d columns", len(values), len(t.cols))
		return
	}
	for j, v := range values {
		if v != nil && reflect.TypeOf(v) != columnGoTypes[t.cols[j].Type] {
			t.err = fmt.Errorf("column %q is %v, got a %T", t.cols[j].Name, columnGoTypes[t.cols[j].Type], v)
			return
		}
	}
	t.rows = append(t.rows, values)
}

// result returns the Result, or an internal error if a row did not fit.
func (t *table) result() (*Result, error) {
	if t.err != nil {
		return nil, dperr.Wrap(dperr.Internal, t.err, "internal error: malformed result")
	}
	names := make([]string, len(t.cols))
	for j, c := range t.cols {
		names[j] = c.Name
	}
	return &Result{Columns: names, Rows: t.rows}, nil
}

// checkResult verifies a Result built without a table (private answers,
// EXPLAIN, session statements): every non-NULL value of a column has the same
// type, one of int64, uint64, float64, string, []byte, planner.Date,
// planner.DateTime and planner.Decimal, and every row has
// one value per column. Execute runs it on every answer, so a malformed
// result is an internal error logged with its cause, never a half-sent
// resultset.
//
// A catalog engine's answer or a private one (Typed set) declares its
// columns with their MySQL types and carries its values as text: every
// row has one value per typed column, each nil or a string, or in a
// DOUBLE column a planner.FixedDouble, in a FLOAT column a planner.Float
// (answer).
func checkResult(r *Result) error {
	if r == nil {
		return nil
	}
	if r.Typed != nil {
		return checkTypedResult(r)
	}
	for i, row := range r.Rows {
		if len(row) != len(r.Columns) {
			return dperr.New(dperr.Internal, "internal error: result row %d has %d values for %d columns", i, len(row), len(r.Columns))
		}
	}
	for j, name := range r.Columns {
		var first reflect.Type
		for _, row := range r.Rows {
			v := row[j]
			if v == nil {
				continue
			}
			switch v.(type) {
			case int64, uint64, float64, string, []byte, planner.Date, planner.DateTime, planner.Decimal:
			default:
				return dperr.Wrap(dperr.Internal, fmt.Errorf("column %q holds a %T", name, v), "internal error: malformed result")
			}
			if first == nil {
				first = reflect.TypeOf(v)
			} else if reflect.TypeOf(v) != first {
				return dperr.Wrap(dperr.Internal, fmt.Errorf("column %q mixes %v and %T", name, first, v), "internal error: malformed result")
			}
		}
	}
	return nil
}

// valueColumns are the column definitions package wire derives for an
// untyped result's columns from their values (wire's columnFields: each
// column's type from the Go type of its non-nil values, NOT NULL when it
// has no nil, NULL when it has no other value, a text column's length
// from its longest value), for a result whose rows are then cut (execute).
// ok is false when a column holds a type wire derives nothing from.
func valueColumns(names []string, rows [][]any) (cols []catalogdb.Column, ok bool) {
	for j, name := range names {
		c := catalogdb.Column{Name: name, Type: mysqlTypeNull, Charset: binaryCollation}
		var first any
		nullable, maxLen := false, 0
		for _, row := range rows {
			switch v := row[j].(type) {
			case nil:
				nullable = true
				continue
			case string:
				maxLen = max(maxLen, len(v))
			case []byte:
				maxLen = max(maxLen, len(v))
			}
			if first == nil {
				first = row[j]
			}
		}
		switch first.(type) {
		case nil:
		case int64:
			c.Type, c.Flags, c.Length = mysqlTypeLongLong, binaryFlag, 20
		case uint64:
			c.Type, c.Flags, c.Length = mysqlTypeLongLong, binaryFlag|unsignedFlag, 20
		case float64:
			c.Type, c.Flags, c.Length, c.Decimals = mysqlTypeDouble, binaryFlag, 22, planner.NotFixedDecimals
		case string:
			c.Type, c.Charset, c.Length = mysqlTypeVarChar, utf8mb4Collation, uint32(min(4*maxLen, math.MaxUint32))
		case []byte:
			c.Type, c.Flags, c.Length = mysqlTypeVarChar, binaryFlag, uint32(min(maxLen, math.MaxUint32))
		case planner.Date:
			c.Type, c.Flags, c.Length = mysqlTypeDate, binaryFlag, 10
		case planner.DateTime:
			c.Type, c.Flags, c.Length = mysqlTypeDateTime, binaryFlag, 19
		default:
			return nil, false
		}
		if first != nil && !nullable {
			c.Flags |= notNullFlag
		}
		cols = append(cols, c)
	}
	return cols, true
}

// checkTypedResult checks a Typed answer (see checkResult).
func checkTypedResult(r *Result) error {
	for i, row := range r.Rows {
		if len(row) != len(r.Typed) {
			return dperr.New(dperr.Internal, "internal error: result row %d has %d values for %d columns", i, len(row), len(r.Typed))
		}
		for j, v := range row {
			_, text := v.(string)
			_, fixed := v.(planner.FixedDouble)
			_, float := v.(planner.Float)
			if v != nil && !text && !(fixed && r.Typed[j].Type == mysqlTypeDouble) && !(float && r.Typed[j].Type == mysqlTypeFloat) {
				return dperr.Wrap(dperr.Internal, fmt.Errorf("catalog column %q holds a %T", r.Typed[j].Name, v), "internal error: malformed result")
			}
		}
	}
	return nil
}
