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
	err := s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		keys := make([]sql.NullInt64, len(sizes))
		vals := make([]sql.NullFloat64, len(g.Terms))
		dest := make([]any, 0, len(keys)+len(vals))
		for i := range keys {
			dest = append(dest, &keys[i])
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
			var v sqlrewrite.Value
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
				continue // a value no key can equal: in no group
			}
			if v.IsText && f.Keys.Numeric { // drivers may send numbers as text
				x, err := strconv.ParseFloat(v.Str, 64)
				if err != nil {
					continue // hostile data in a numeric column: in no group, never an error
				}
				v = sqlrewrite.Value{Num: x}
			}
			if !v.IsText && (math.IsNaN(v.Num) || math.IsInf(v.Num, 0)) {
				continue
			}
			out = append(out, KeyCount{Value: v, Count: n})
		}
		return nil
	})
	return out, err
}
