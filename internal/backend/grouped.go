package backend

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// GroupedSummary runs a grouped summary fetch and returns the terms of
// every cell of the product domain, indexed in mixed radix with the first
// dimension most significant; a cell with no rows has every term 0
// (filled in here, so that no cell is ever missing).
func (s *Snapshot) GroupedSummary(ctx context.Context, f sqlrewrite.Fetch) ([][]float64, error) {
	if f.Grouped == nil || len(f.Grouped.Dims) == 0 || len(f.Grouped.Terms) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: grouped summary without dimensions or terms")
	}
	g := *f.Grouped
	g.Dims = s.caseOnVitess(ctx, g.Dims)
	f.Grouped = &g
	vals := make([]sql.NullFloat64, len(g.Terms))
	extra := make([]any, len(vals))
	for i := range vals {
		extra[i] = &vals[i]
	}
	var out [][]float64
	withDims := func(dims []sqlrewrite.CellDim) sqlrewrite.Fetch {
		part := g
		part.Dims = dims
		f.Grouped = &part
		return f
	}
	err := s.cells(ctx, f, g.Dims, withDims, extra, func(total int64) {
		out = make([][]float64, total)
		for i := range out {
			out[i] = make([]float64, len(g.Terms))
		}
	}, func(cell int64) error {
		for i, v := range vals {
			out[cell][i] += v.Float64 // NULL (a sum over no rows) is 0
		}
		return nil
	})
	return out, err
}

// GroupedHistogram runs a grouped histogram fetch and returns the
// histogram of every cell of the product domain, indexed as in
// GroupedSummary; a cell with no rows has all its bins 0.
func (s *Snapshot) GroupedHistogram(ctx context.Context, f sqlrewrite.Fetch) ([][]int64, error) {
	if f.GroupedHist == nil || len(f.GroupedHist.Dims) == 0 || f.GroupedHist.Histogram.Bins < 1 {
		return nil, dperr.New(dperr.Internal, "internal error: grouped histogram without dimensions or bins")
	}
	g := *f.GroupedHist
	g.Dims = s.caseOnVitess(ctx, g.Dims)
	f.GroupedHist = &g
	var bin, n int64
	var out [][]int64
	withDims := func(dims []sqlrewrite.CellDim) sqlrewrite.Fetch {
		part := g
		part.Dims = dims
		f.GroupedHist = &part
		return f
	}
	err := s.cells(ctx, f, g.Dims, withDims, []any{&bin, &n}, func(total int64) {
		out = make([][]int64, total)
		for i := range out {
			out[i] = make([]int64, g.Histogram.Bins)
		}
	}, func(cell int64) error {
		if bin < 0 || bin >= int64(g.Histogram.Bins) {
			return fmt.Errorf("histogram bin %d out of range", bin)
		}
		out[cell][bin] += n
		return nil
	})
	return out, err
}

// cells runs a grouped fetch over dims: start is called with the number
// of cells before any row is read, then each row is scanned into the key
// columns and extra, and add is called with its cell (rows in no cell are
// skipped). Several rows may fall in one cell (groups a GROUP BY keeps
// apart that map to one cell), so add accumulates. withDims returns f
// with other dimensions: a text dimension too large for one statement
// (textValuesPerStatement) is fetched in parts, one statement each.
func (s *Snapshot) cells(ctx context.Context, f sqlrewrite.Fetch, dims []sqlrewrite.CellDim, withDims func([]sqlrewrite.CellDim) sqlrewrite.Fetch,
	extra []any, start func(total int64), add func(cell int64) error) error {
	keys := newCellKeys(dims, s.b.dialect)
	start(keys.total)
	big := slices.IndexFunc(dims, func(d sqlrewrite.CellDim) bool { return s.b.bindsValues(d) && len(d.Values) > textValuesPerStatement })
	if big < 0 {
		return s.scanCells(ctx, f, keys, extra, add)
	}
	for _, part := range textParts(dims[big]) {
		partDims := slices.Clone(dims)
		partDims[big] = part.dim
		partKeys := newCellKeys(partDims, s.b.dialect)
		partKeys.sizes, partKeys.local, partKeys.remap = keys.sizes, big, part.index
		if err := s.scanCells(ctx, withDims(partDims), partKeys, extra, add); err != nil {
			return err
		}
	}
	return nil
}

// textValuesPerStatement bounds the values of one text dimension that a
// grouped fetch binds as parameters on MySQL, where a prepared statement
// takes at most 65,535: classIndex binds each value once and a pivot per
// bucket of 16 (17n/16). A dimension grouped by value with more values
// (only partition selection releases that many; a declared domain has at
// most 10,000) is fetched in parts of at most this many values, each part
// consecutive in the column's collation order (CellDim.Order), one
// statement each, and each part's indices are mapped back to the
// dimension's. Every row is counted once: the values are pairwise unequal
// in the column's collation (KeyCounts returns one value per collation
// class, and the released ones are among them), so a row equals at most
// one value, of one part.
//
// Not on Vitess, whose text dimensions are a CASE of the values
// (caseOnVitess) over keys vtgate merged by its own collation rules: two
// of them may be equal in the column's collation, which the CASE gives
// to the first only, and parts could each count; there more than about
// 60,000 released text values exceed the parameters of one statement.
const textValuesPerStatement = 24000

// bindsValues reports whether d is a dimension whose values a grouped
// fetch binds one by one and that may be fetched in parts: text grouped
// by value on MySQL (classIndex), with its collation order.
func (b *Backend) bindsValues(d sqlrewrite.CellDim) bool {
	return b.dialect == sqlrewrite.MySQL && d.ByValue && len(d.Values) > 0 && d.Values[0].IsText && d.Ordered()
}

// textPart is one part of a dimension fetched in parts: its dimension and
// the whole dimension's index of each of its values.
type textPart struct {
	dim   sqlrewrite.CellDim
	index []int64
}

// textParts splits d, whose Order is a permutation (bindsValues), into
// parts of at most textValuesPerStatement values at consecutive positions
// of d.Order; each part's values are in collation order, its Order the
// identity.
func textParts(d sqlrewrite.CellDim) []textPart {
	var parts []textPart
	for from := 0; from < len(d.Values); from += textValuesPerStatement {
		to := min(from+textValuesPerStatement, len(d.Values))
		part := textPart{dim: d, index: make([]int64, to-from)}
		part.dim.Values, part.dim.Order = make([]sqlrewrite.Value, to-from), make([]int, to-from)
		for j := range part.index {
			i := d.Order[from+j]
			part.dim.Values[j], part.dim.Order[j], part.index[j] = d.Values[i], j, int64(i)
		}
		parts = append(parts, part)
	}
	return parts
}

// scanCells runs one statement of cells.
func (s *Snapshot) scanCells(ctx context.Context, f sqlrewrite.Fetch, keys *cellKeys, extra []any, add func(cell int64) error) error {
	return s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		dest := append(keys.dest(), extra...)
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			cell, ok, err := keys.cell()
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if err := add(cell); err != nil {
				return err
			}
		}
		return nil
	})
}

// caseOnVitess returns dims with ByValue cleared on the text dimensions
// when the backend is Vitess: a MySQL text dimension grouped by value is
// indexed per collation class from MIN(c) of each group
// (sqlrewrite's classIndex), which vtgate refuses across shards when its
// schema does not know the column's type ("min/max on types that are not
// comparable"), and whose groups vtgate merges by its own collation rules;
// there the dimension keeps its CASE of the values, evaluated per row on
// the shards.
func (s *Snapshot) caseOnVitess(ctx context.Context, dims []sqlrewrite.CellDim) []sqlrewrite.CellDim {
	if s.b.dialect != sqlrewrite.MySQL || !s.b.Vitess(ctx) {
		return dims
	}
	out := make([]sqlrewrite.CellDim, len(dims))
	for i, d := range dims {
		if len(d.Values) > 0 && d.Values[0].IsText {
			d.ByValue = false
		}
		out[i] = d
	}
	return out
}

// cellKeys reads the leading key columns of a grouped fetch's rows and
// turns them into the cell index, in mixed radix with the first dimension
// most significant: each dimension's index, or for one grouped by value
// (sqlrewrite.GroupsByValue) the index of its value.
type cellKeys struct {
	dims  []sqlrewrite.CellDim
	sizes []int64
	// local, with remap set, is a dimension fetched in parts (cells): its
	// index in the row is remap's, of at most len(remap) values, and
	// remap[i] its index in sizes' dimension.
	local   int
	remap   []int64
	total   int64
	byValue []map[sqlrewrite.Value]int64 // nil for a dimension that returns indices
	ints    []sql.NullInt64
	raw     []any
}

func newCellKeys(dims []sqlrewrite.CellDim, dialect sqlrewrite.Dialect) *cellKeys {
	k := &cellKeys{dims: dims, sizes: make([]int64, len(dims)), total: 1, byValue: make([]map[sqlrewrite.Value]int64, len(dims)),
		ints: make([]sql.NullInt64, len(dims)), raw: make([]any, len(dims))}
	for i, d := range dims {
		k.sizes[i] = d.Size()
		k.total *= k.sizes[i]
		if sqlrewrite.GroupsByValue(d, dialect) {
			k.byValue[i] = make(map[sqlrewrite.Value]int64, len(d.Values))
			for j, v := range d.Values {
				k.byValue[i][v] = int64(j)
			}
		}
	}
	return k
}

// dest returns the Scan destinations of the key columns.
func (k *cellKeys) dest() []any {
	out := make([]any, len(k.dims))
	for i := range k.dims {
		if k.byValue[i] != nil {
			out[i] = &k.raw[i]
		} else {
			out[i] = &k.ints[i]
		}
	}
	return out
}

// cell returns the cell of the row just scanned; ok is false for a row in
// no cell (a NULL key, an undeclared or unselected value).
func (k *cellKeys) cell() (cell int64, ok bool, err error) {
	for i := range k.dims {
		var idx int64
		if k.byValue[i] != nil {
			v, readable := keyValue(k.raw[i], !k.dims[i].Values[0].IsText)
			if !readable {
				return 0, false, nil
			}
			if idx, ok = k.byValue[i][v]; !ok {
				return 0, false, nil
			}
		} else {
			if !k.ints[i].Valid {
				return 0, false, nil
			}
			idx = k.ints[i].Int64
		}
		size := k.sizes[i]
		if k.remap != nil && i == k.local {
			size = int64(len(k.remap))
		}
		if idx < 0 || idx >= size {
			return 0, false, fmt.Errorf("group key %d of dimension %d out of range", idx, i)
		}
		if k.remap != nil && i == k.local {
			idx = k.remap[idx]
		}
		cell = cell*k.sizes[i] + idx
	}
	return cell, true, nil
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
// column among the filtered rows, with its count, in the fetch's order (on
// MySQL a text column's collation order). Text values are strings,
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
