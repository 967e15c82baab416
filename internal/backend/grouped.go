package backend

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// GroupedSummary runs a grouped summary fetch and returns the terms of
// every cell of the product domain, indexed in mixed radix with the first
// dimension most significant; a cell with no rows has every term 0
// (filled in here, so that no cell is ever missing). On Vitess the
// COUNT(DISTINCT) of a second distinct column is read by a query of its
// own (distinctParts).
func (s *Snapshot) GroupedSummary(ctx context.Context, f sqlrewrite.Fetch) ([][]float64, error) {
	if f.Grouped == nil || len(f.Grouped.Dims) == 0 || len(f.Grouped.Terms) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: grouped summary without dimensions or terms")
	}
	g := *f.Grouped
	g.Dims = s.caseOnVitess(ctx, g.Dims)
	var out [][]float64
	for n, part := range s.b.distinctParts(g.Terms) {
		sub := g
		sub.Terms = nil
		for _, i := range part {
			sub.Terms = append(sub.Terms, g.Terms[i])
		}
		f.Grouped = &sub
		vals := make([]sql.NullFloat64, len(part))
		extra := make([]any, len(vals))
		for i := range vals {
			extra[i] = &vals[i]
		}
		err := s.cells(ctx, f, g.Dims, extra, func(total int64) {
			if n > 0 {
				return
			}
			out = make([][]float64, total)
			for i := range out {
				out[i] = make([]float64, len(g.Terms))
			}
		}, func(cell int64) error {
			for j, v := range vals {
				out[cell][part[j]] += v.Float64 // NULL (a sum over no rows) is 0
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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
	err := s.cells(ctx, f, g.Dims, []any{&bin, &n}, func(total int64) {
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

// GroupedGridSums runs a grouped grid-sums fetch and returns the exact
// totals of every cell of the product domain, indexed as in
// GroupedSummary; a cell with no rows has n = Σk = Σk² = 0. The integers
// are read as text, never through a float64.
func (s *Snapshot) GroupedGridSums(ctx context.Context, f sqlrewrite.Fetch) ([]sqlrewrite.GridTotals, error) {
	if f.GroupedGrid == nil || len(f.GroupedGrid.Dims) == 0 {
		return nil, dperr.New(dperr.Internal, "internal error: grouped grid sums without dimensions")
	}
	g := *f.GroupedGrid
	g.Dims = s.caseOnVitess(ctx, g.Dims)
	if s.b.dialect == sqlrewrite.MySQL && g.Grid.Ranks == nil && !g.Grid.FloatSum {
		// Each group's Σk as DOUBLE first, as GridSums does; if a group's
		// sum is one it cannot vouch for, all are read again as DECIMAL.
		float := g
		float.Grid.FloatSum = true
		if out, exact, err := s.groupedGridSums(ctx, f, float); err != nil || exact {
			return out, err
		}
	}
	out, _, err := s.groupedGridSums(ctx, f, g)
	return out, err
}

// groupedGridSums runs the grouped grid-sums fetch f of g; with
// g.Grid.FloatSum, exact is false when some group's Σk is not one
// sqlrewrite.DecodeFloatGridSum vouches for.
func (s *Snapshot) groupedGridSums(ctx context.Context, f sqlrewrite.Fetch, g sqlrewrite.GroupedGridSums) (out []sqlrewrite.GridTotals, exact bool, err error) {
	f.GroupedGrid = &g
	text := make([]sql.RawBytes, sqlrewrite.GridSumWidth(s.b.dialect))
	extra := make([]any, len(text))
	for i := range text {
		extra[i] = &text[i]
	}
	exact = true
	err = s.cells(ctx, f, g.Dims, extra, func(total int64) {
		out = make([]sqlrewrite.GridTotals, total)
		for i := range out {
			out[i] = sqlrewrite.GridTotals{Sum: new(big.Int), SumSquares: new(big.Int)}
		}
	}, func(cell int64) error {
		ints := make([]*big.Int, len(text))
		for i, t := range text {
			if i == 1 && g.Grid.FloatSum {
				sum, ok := sqlrewrite.DecodeFloatGridSum(string(t))
				if !ok {
					exact, sum = false, new(big.Int)
				}
				ints[i] = sum
				continue
			}
			v, ok := parseInteger(t)
			if !ok {
				return fmt.Errorf("grid sum %d: %q is not an integer", i, t)
			}
			ints[i] = v
		}
		t, err := sqlrewrite.DecodeGridSums(s.b.dialect, ints)
		if err != nil {
			return err
		}
		c := &out[cell] // several groups may map to one cell: add
		c.Count += t.Count
		c.Sum.Add(c.Sum, t.Sum)
		c.SumSquares.Add(c.SumSquares, t.SumSquares)
		return nil
	})
	for i := range out {
		out[i] = out[i].Of(&g.Grid)
	}
	return out, exact, err
}

// parseInteger reads a decimal integer as big.Int's SetString(s, 10)
// does (an optional sign, then digits), through strconv when it has at
// most 18 characters (every such integer fits an int64), which saves the
// text's copy and reader on the many small sums of a grouped fetch.
func parseInteger(t []byte) (*big.Int, bool) {
	if len(t) <= 18 {
		n, err := strconv.ParseInt(string(t), 10, 64)
		return big.NewInt(n), err == nil
	}
	return new(big.Int).SetString(string(t), 10)
}

// cells runs a grouped fetch over dims: start is called with the number
// of cells before any row is read, then each row is scanned into the key
// columns and extra, and add is called with its cell (rows in no cell are
// skipped). Several rows may fall in one cell (groups a GROUP BY keeps
// apart that map to one cell), so add accumulates.
func (s *Snapshot) cells(ctx context.Context, f sqlrewrite.Fetch, dims []sqlrewrite.CellDim,
	extra []any, start func(total int64), add func(cell int64) error) error {
	keys := newCellKeys(dims, s.b.dialect)
	start(keys.total)
	return s.scanCells(ctx, f, keys, extra, add)
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
// when the backend is Vitess, whose vtgate merges the shards' groups by
// its own rules: there a text dimension keeps its CASE of the values
// (character for character when Exact), evaluated per row on the shards.
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
	dims    []sqlrewrite.CellDim
	sizes   []int64
	total   int64
	byValue []map[sqlrewrite.Value]int64 // nil for a dimension that returns indices
	ints    []sql.NullInt64
	raw     []any
	dialect sqlrewrite.Dialect
}

func newCellKeys(dims []sqlrewrite.CellDim, dialect sqlrewrite.Dialect) *cellKeys {
	k := &cellKeys{dims: dims, sizes: make([]int64, len(dims)), total: 1, byValue: make([]map[sqlrewrite.Value]int64, len(dims)),
		ints: make([]sql.NullInt64, len(dims)), raw: make([]any, len(dims)), dialect: dialect}
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
			v, readable := keyValue(k.raw[i], !k.dims[i].Values[0].IsText, k.dialect)
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
		if idx < 0 || idx >= k.sizes[i] {
			return 0, false, fmt.Errorf("group key %d of dimension %d out of range", idx, i)
		}
		cell = cell*k.sizes[i] + idx
	}
	return cell, true, nil
}

// keyValue reads a key column's value as drivers return it, exactly: a
// value the fetches' filters (column = key, sqlrewrite.Condition.Exact)
// would not select by the key read here is in no group, so that the rows
// a key's counts and sums are computed from are the rows its filtered
// fetches read, on every backend. Text is a string (on SQLite a blob is
// no text: the filter's text argument never equals it). A number (numeric
// column) is an integer, also when the driver sends it as text (exact
// decimal, PostgreSQL's numeric, MySQL's DECIMAL and text protocol) or as
// a uint64 (MySQL's BIGINT UNSIGNED), of magnitude below 2⁵³, where every
// integer is a float64: 2⁵³+1 would read as 2⁵³ and 1e-400 as 0, merging
// rows the database keeps apart. ok is false for NULL and for a value no
// key can equal (text in a numeric column, a fraction, NaN, ±Inf, an
// integer beyond 2⁵³), which is in no group. A float32 (MySQL's FLOAT) is
// no key either: the text protocol sends it to 6 significant digits, so
// 1234567 arrives as 1234570, which column = key would not select; the
// fetches read numeric keys widened to doubles instead
// (sqlrewrite's exactNumber), so none arrives.
func keyValue(raw any, numeric bool, dialect sqlrewrite.Dialect) (v sqlrewrite.Value, ok bool) {
	if !numeric {
		switch x := raw.(type) {
		case string:
			return sqlrewrite.Value{Str: x, IsText: true}, true
		case []byte:
			return sqlrewrite.Value{Str: string(x), IsText: true}, dialect != sqlrewrite.SQLite
		}
		return v, false
	}
	var x float64
	switch r := raw.(type) {
	case int64:
		x = float64(r)
	case uint64: // MySQL's BIGINT UNSIGNED
		if r >= 1<<53 {
			return v, false
		}
		x = float64(r)
	case float64:
		x = r
	case string, []byte:
		text, _ := r.(string)
		if b, isBytes := r.([]byte); isBytes {
			text = string(b)
		}
		q, isNumber := new(big.Rat).SetString(text)
		if !isNumber || dialect == sqlrewrite.SQLite || !q.IsInt() || q.Num().BitLen() > 53 {
			return v, false
		}
		x, _ = q.Float64()
	default:
		return v, false
	}
	if !sqlrewrite.ExactKey(x) {
		return v, false
	}
	return sqlrewrite.Value{Num: x}, true
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
// hostile data never turns into an error. Only the values whose count
// keep accepts are returned, so memory grows with the values kept, not
// with the column's distinct values (SelectedKeys bounds it).
func (s *Snapshot) KeyCounts(ctx context.Context, f sqlrewrite.Fetch, keep func(count int64) bool) ([]KeyCount, error) {
	var out []KeyCount
	err := s.scanKeyCounts(ctx, f, func(v sqlrewrite.Value, n int64) {
		if keep(n) {
			out = append(out, KeyCount{Value: v, Count: n})
		}
	})
	return out, err
}

// SelectedKeys runs a KeyCounts fetch as KeyCounts does, calls keep with
// the count of every value read, in the fetch's order (partition
// selection decides as the rows stream), and returns the values it
// accepted, sorted (CompareKeys) and without duplicates (values the
// database keeps apart may read as one key), at most limit of them: the
// first in that order. more reports whether keep accepted further values
// beyond those. Which values are returned, and more, are functions of the
// set of accepted values alone, not of the fetch's order or of the values
// keep refused; keep sees every count whatever limit. Memory holds at
// most 2·limit + 1 values, however many distinct values the column has
// and keep accepts.
func (s *Snapshot) SelectedKeys(ctx context.Context, f sqlrewrite.Fetch, keep func(count int64) bool, limit int) (keys []sqlrewrite.Value, more bool, err error) {
	limit = max(limit, 0)
	// cut sorts and deduplicates keys and keeps the first limit: the
	// dropped values come after limit distinct accepted ones, so none of
	// them is among the first limit of all the accepted values.
	cut := func() {
		slices.SortFunc(keys, CompareKeys)
		keys = slices.Compact(keys)
		if len(keys) > limit {
			clear(keys[limit:])
			keys, more = keys[:limit], true
		}
	}
	err = s.scanKeyCounts(ctx, f, func(v sqlrewrite.Value, n int64) {
		if !keep(n) {
			return
		}
		keys = append(keys, v)
		if len(keys) > 2*limit {
			cut()
		}
	})
	if err != nil {
		return nil, false, err
	}
	cut()
	return keys, more, nil
}

// CompareKeys is the order of released keys: text by its bytes, numbers
// by value (a key column's values are all text or all numbers). It
// depends on the values alone, so that the order of the released keys,
// and which are kept when they are cut (SelectedKeys), reveal nothing
// beyond their set.
func CompareKeys(a, b sqlrewrite.Value) int {
	if a.IsText || b.IsText {
		return strings.Compare(a.Str, b.Str)
	}
	return cmp.Compare(a.Num, b.Num)
}

// scanKeyCounts runs a KeyCounts fetch and calls add with every value read
// as a key (keyValue) and its count, in the fetch's order.
func (s *Snapshot) scanKeyCounts(ctx context.Context, f sqlrewrite.Fetch, add func(v sqlrewrite.Value, count int64)) error {
	if f.Keys == nil {
		return dperr.New(dperr.Internal, "internal error: key counts fetch without a column")
	}
	return s.b.query(ctx, s.q, f, func(rows *sql.Rows) error {
		for rows.Next() {
			var raw any
			var n int64
			if err := rows.Scan(&raw, &n); err != nil {
				return err
			}
			v, ok := keyValue(raw, f.Keys.Numeric, s.b.dialect)
			if !ok {
				continue // a value no key can equal: in no group, never an error
			}
			add(v, n)
		}
		return nil
	})
}
