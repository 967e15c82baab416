package backend

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// GroupedSummary runs a grouped summary fetch and returns the terms of
// every cell of the product domain, indexed in mixed radix with the first
// dimension most significant; a cell with no rows has every term 0
// (filled in here, so that no cell is ever missing).
func (s *Snapshot) GroupedSummary(ctx context.Context, f sqlrewrite.Fetch) ([][]float64, error) {
	g := f.Grouped
	if g == nil || len(g.Dims) == 0 || len(g.Terms) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: grouped summary without dimensions or terms")
	}
	sizes := make([]int64, len(g.Dims))
	total := int64(1)
	for i, d := range g.Dims {
		sizes[i] = d.Size()
		total *= sizes[i]
	}
	out := make([][]float64, total)
	for i := range out {
		out[i] = make([]float64, len(g.Terms))
	}
	// A dimension grouped by value returns values, mapped here to their
	// indices; every other returns its index.
	byValue := make([]map[sqlrewrite.Value]int64, len(g.Dims))
	for i, d := range g.Dims {
		if sqlrewrite.GroupsByValue(d, s.b.dialect) {
			byValue[i] = make(map[sqlrewrite.Value]int64, len(d.Values))
			for j, v := range d.Values {
				byValue[i][v] = int64(j)
			}
		}
	}
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		keys := make([]sql.NullInt64, len(sizes))
		raw := make([]any, len(sizes))
		vals := make([]sql.NullFloat64, len(g.Terms))
		dest := make([]any, 0, len(keys)+len(vals))
		for i := range keys {
			if byValue[i] != nil {
				dest = append(dest, &raw[i])
			} else {
				dest = append(dest, &keys[i])
			}
		}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			var cell int64
			inCell := true
			for i, k := range keys {
				if byValue[i] != nil {
					v, ok := keyValue(raw[i], !g.Dims[i].Values[0].IsText)
					if ok {
						k.Int64, ok = byValue[i][v]
					}
					if !ok {
						inCell = false // NULL, or a value not selected: in no group
						break
					}
					k.Valid = true
				}
				if !k.Valid {
					inCell = false // a NULL or undeclared key: in no group
					break
				}
				if k.Int64 < 0 || k.Int64 >= sizes[i] {
					return fmt.Errorf("group key %d of dimension %d out of range", k.Int64, i)
				}
				cell = cell*sizes[i] + k.Int64
			}
			if !inCell {
				continue
			}
			for i, v := range vals {
				out[cell][i] += v.Float64 // NULL (a sum over no rows) is 0
			}
		}
		return nil
	})
	return out, err
}

// keyValue reads a key column's value as drivers return it: text as a
// string, a number (numeric column) as a number, also when the driver
// sends it as text. ok is false for NULL and for a value no key can equal
// (text in a numeric column, NaN, ±Inf), which is in no group.
func keyValue(raw any, numeric bool) (v sqlrewrite.Value, ok bool) {
	switch x := raw.(type) {
	case int64:
		v = sqlrewrite.Value{Num: float64(x)}
	case float64:
		v = sqlrewrite.Value{Num: x}
	case string:
		v = sqlrewrite.Value{Str: x, IsText: true}
	case []byte:
		v = sqlrewrite.Value{Str: string(x), IsText: true}
	default:
		return v, false
	}
	if v.IsText && numeric {
		x, err := strconv.ParseFloat(v.Str, 64)
		if err != nil {
			return v, false
		}
		v = sqlrewrite.Value{Num: x}
	}
	if !v.IsText && (math.IsNaN(v.Num) || math.IsInf(v.Num, 0)) {
		return v, false
	}
	return v, true
}

// KeyCount is one distinct value of a column and its number of rows.
type KeyCount struct {
	Value sqlrewrite.Value
	Count int64
}

// KeyCounts runs a KeyCounts fetch: every distinct non-NULL value of the
// column among the filtered rows, with its count. Text values are strings,
// numbers (integer columns) numbers. A value that is not of the column's
// type (text in a numeric column, NaN) is in no group and skipped, so
// hostile data never turns into an error.
func (s *Snapshot) KeyCounts(ctx context.Context, f sqlrewrite.Fetch) ([]KeyCount, error) {
	if f.Keys == nil {
		return nil, dperr.New(dperr.Internal, "internal error: key counts fetch without a column")
	}
	var out []KeyCount
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		for rows.Next() {
			var raw any
			var n int64
			if err := rows.Scan(&raw, &n); err != nil {
				return err
			}
			v, ok := keyValue(raw, f.Keys.Numeric)
			if !ok {
				continue // a value no key can equal: in no group, never an error
			}
			out = append(out, KeyCount{Value: v, Count: n})
		}
		return nil
	})
	return out, err
}
