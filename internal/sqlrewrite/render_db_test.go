package sqlrewrite_test

import (
	"cmp"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderAgainstDatabases runs every fetch kind, rendered by Render, on
// real SQLite, PostgreSQL and MariaDB/MySQL databases (the last two when
// DPPROXY_TEST_POSTGRES_DSN / DPPROXY_TEST_MYSQL_DSN are set, see testdb)
// and compares the rows with the same computation done in Go on the same
// data. The data has NULLs, values outside the clamp bounds, values equal to
// the bounds, fractional values and text values.
func TestRenderAgainstDatabases(t *testing.T) {
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		// double is the column type of float64; schema names the current schema.
		double, schema string
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", "SELECT 'main'"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "SELECT current_schema()"},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "SELECT DATABASE()"},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			data := testRows()
			loadRows(t, db, b.dialect, b.double, data)
			var schema string
			if err := db.QueryRow(b.schema).Scan(&schema); err != nil {
				t.Fatalf("current schema: %v", err)
			}
			for _, table := range []string{"dp_render", schema + ".dp_render"} {
				for _, c := range fetchCases(table) {
					t.Run(c.name+"/"+table, func(t *testing.T) {
						query, args, err := sqlrewrite.Render(c.fetch, b.dialect)
						if err != nil {
							t.Fatalf("Render: %v", err)
						}
						got, err := runFetch(db, c.fetch, query, args)
						if err != nil {
							t.Fatalf("%s: %v", query, err)
						}
						want := c.want(data)
						if !sameNumbers(got, want) {
							t.Errorf("got %v, want %v\nquery: %s\nargs: %v", got, want, query, args)
						}
					})
				}
			}
		})
	}
}

// row is one row of the test table; a nil pointer is NULL.
type row struct {
	k int64
	x *float64
	s *string
}

// testRows is the test table: x runs over [-20, 104.5] in steps of 0.5 with
// every 13th NULL, k over 0..6, s over four states with every 11th NULL.
func testRows() []row {
	states := []string{"CA", "NY", "WA", "TX"}
	var rows []row
	for i := range 240 {
		r := row{k: int64(i % 7)}
		if i%13 != 0 {
			x := float64(i*37%250)*0.5 - 20
			r.x = &x
		}
		if i%11 != 0 {
			r.s = &states[i%4]
		}
		rows = append(rows, r)
	}
	return rows
}

func loadRows(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, double string, rows []row) {
	t.Helper()
	ddl := fmt.Sprintf("CREATE TABLE dp_render (k INTEGER, x %s, s VARCHAR(8))", double)
	if _, err := db.Exec(ddl); err != nil {
		t.Fatalf("%s: %v", ddl, err)
	}
	insert := "INSERT INTO dp_render (k, x, s) VALUES (?, ?, ?)"
	if d == sqlrewrite.PostgreSQL {
		insert = "INSERT INTO dp_render (k, x, s) VALUES ($1, $2, $3)"
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(insert, r.k, r.x, r.s); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// fetchCase is a fetch and its expected result computed in Go: one number
// per summary term, the window's values, or the histogram's (bin, count)
// pairs flattened in bin order.
type fetchCase struct {
	name  string
	fetch sqlrewrite.Fetch
	want  func([]row) []float64
}

func fetchCases(table string) []fetchCase {
	text := func(ss ...string) []sqlrewrite.Value {
		var v []sqlrewrite.Value
		for _, s := range ss {
			v = append(v, sqlrewrite.Value{Str: s, IsText: true})
		}
		return v
	}
	// k in [1, 5.5), s IN ('CA', 'NY'), k IN (1, 2, 4), x > -7.25: numbers
	// with fractions against an integer column, and strings as arguments.
	filter := []sqlrewrite.Condition{
		{Column: "k", Range: &sqlrewrite.Range{Lower: 1, HasLower: true, Upper: 5.5, HasUpper: true, UpperOpen: true}},
		{Column: "s", In: text("CA", "NY")},
		{Column: "k", In: []sqlrewrite.Value{{Num: 1}, {Num: 2}, {Num: 4}}},
		{Column: "x", Range: &sqlrewrite.Range{Lower: -7.25, HasLower: true, LowerOpen: true}},
	}
	keep := func(r row) bool {
		return r.k >= 1 && float64(r.k) < 5.5 && r.s != nil && (*r.s == "CA" || *r.s == "NY") &&
			(r.k == 1 || r.k == 2 || r.k == 4) && r.x != nil && *r.x > -7.25
	}
	// Booleans with NULLs under NOT: SQL keeps a row only where the
	// predicate is true, and NOT of a condition on a NULL is not true.
	leaf := func(c sqlrewrite.Condition) *sqlrewrite.Predicate {
		return &sqlrewrite.Predicate{Op: sqlrewrite.Leaf, Leaf: &c}
	}
	node := func(op sqlrewrite.PredicateOp, args ...*sqlrewrite.Predicate) *sqlrewrite.Predicate {
		return &sqlrewrite.Predicate{Op: op, Args: args}
	}
	// k IN (1, 2) OR NOT x BETWEEN 0 AND 50 OR (s <> 'CA' AND x > 60)
	anyOf := node(sqlrewrite.Or,
		leaf(sqlrewrite.Condition{Column: "k", In: []sqlrewrite.Value{{Num: 1}, {Num: 2}}}),
		node(sqlrewrite.Not, leaf(sqlrewrite.Condition{Column: "x", Range: &sqlrewrite.Range{Lower: 0, HasLower: true, Upper: 50, HasUpper: true}})),
		node(sqlrewrite.And,
			node(sqlrewrite.Not, leaf(sqlrewrite.Condition{Column: "s", In: text("CA")})),
			leaf(sqlrewrite.Condition{Column: "x", Range: &sqlrewrite.Range{Lower: 60, HasLower: true, LowerOpen: true}})))
	keepAnyOf := func(r row) bool {
		return r.k == 1 || r.k == 2 || (r.x != nil && (*r.x < 0 || *r.x > 50)) ||
			(r.s != nil && *r.s != "CA" && r.x != nil && *r.x > 60)
	}
	// NOT (x < 10 OR s = 'NY'): true only where both are false, not NULL.
	noneOf := node(sqlrewrite.Not, node(sqlrewrite.Or,
		leaf(sqlrewrite.Condition{Column: "x", Range: &sqlrewrite.Range{Upper: 10, HasUpper: true, UpperOpen: true}}),
		leaf(sqlrewrite.Condition{Column: "s", In: text("NY")})))
	keepNoneOf := func(r row) bool { return r.x != nil && *r.x >= 10 && r.s != nil && *r.s != "NY" }
	none := []sqlrewrite.Condition{{Column: "s", In: text("nowhere")}}
	all := func(row) bool { return true }
	summary := []sqlrewrite.SummaryTerm{
		{Kind: sqlrewrite.CountAll},
		{Kind: sqlrewrite.CountNonNull, Column: "x"},
		{Kind: sqlrewrite.ClampedSum, Column: "x", Lower: 0, Upper: 100},
		{Kind: sqlrewrite.ClampedSumSquares, Column: "x", Lower: 0, Upper: 100},
		{Kind: sqlrewrite.CountNonNull, Column: "s"},
		{Kind: sqlrewrite.ClampedSum, Column: "k", Lower: 0.5, Upper: 4.25},
	}
	window := &sqlrewrite.Window{Column: "x", Lower: -3, Upper: 99.5, Offset: 17, Limit: 40}
	// Cells: s categorical without TX (undeclared: no cell), x bucketed
	// with clamped ends, k numeric categorical; NULLs in no cell.
	cells := &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{
		{Column: "s", Values: text("CA", "NY", "WA")},
		{Column: "x", Edges: sqlrewrite.DoubleEdges([]float64{0, 12.5, 50, 100})},
		{Column: "k", Values: []sqlrewrite.Value{{Num: 0}, {Num: 2}, {Num: 5}}},
	}}
	return []fetchCase{
		{"summary", sqlrewrite.Fetch{Table: table, Summary: summary}, wantSummary(summary, all)},
		{"summary-filtered", sqlrewrite.Fetch{Table: table, Filter: filter, Summary: summary}, wantSummary(summary, keep)},
		{"summary-empty", sqlrewrite.Fetch{Table: table, Filter: none, Summary: summary}, wantSummary(summary, func(row) bool { return false })},
		{"window", sqlrewrite.Fetch{Table: table, Window: window}, wantWindow(window, all)},
		{"window-filtered", sqlrewrite.Fetch{Table: table, Filter: filter, Window: &sqlrewrite.Window{Column: "x", Lower: 0, Upper: 50, Offset: 2, Limit: 1000}},
			wantWindow(&sqlrewrite.Window{Column: "x", Lower: 0, Upper: 50, Offset: 2, Limit: 1000}, keep)},
		{"window-past-end", sqlrewrite.Fetch{Table: table, Window: &sqlrewrite.Window{Column: "x", Lower: 0, Upper: 1, Offset: 10000, Limit: 5}},
			func([]row) []float64 { return nil }},
		{"histogram", sqlrewrite.Fetch{Table: table, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 100, Bins: 10}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 100, Bins: 10}, all)},
		{"histogram-odd", sqlrewrite.Fetch{Table: table, Filter: filter, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: 0.1, Upper: 99.7, Bins: 7}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: 0.1, Upper: 99.7, Bins: 7}, keep)},
		{"summary-boolean", sqlrewrite.Fetch{Table: table, Boolean: anyOf, Summary: summary}, wantSummary(summary, keepAnyOf)},
		{"summary-filtered-boolean", sqlrewrite.Fetch{Table: table, Filter: filter[:2], Boolean: noneOf, Summary: summary},
			wantSummary(summary, func(r row) bool {
				return r.k >= 1 && float64(r.k) < 5.5 && r.s != nil && (*r.s == "CA" || *r.s == "NY") && keepNoneOf(r)
			})},
		{"histogram-boolean", sqlrewrite.Fetch{Table: table, Boolean: anyOf, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 100, Bins: 10}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 100, Bins: 10}, keepAnyOf)},
		{"cells", sqlrewrite.Fetch{Table: table, Cells: cells}, wantCells(cells, all)},
		{"cells-filtered", sqlrewrite.Fetch{Table: table, Filter: filter[:1], Cells: cells}, wantCells(cells, func(r row) bool { return r.k >= 1 && float64(r.k) < 5.5 })},
		{"pairs", sqlrewrite.Fetch{Table: table, Filter: filter[:1], Pairs: &sqlrewrite.Pairs{Y: "x", X: "k", YLower: 0, YUpper: 50, XLower: 1.5, XUpper: 3}},
			wantPairs(func(r row) bool { return r.k >= 1 && float64(r.k) < 5.5 })},
		{"histogram-negative", sqlrewrite.Fetch{Table: table, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: -15.5, Upper: -0.3, Bins: 3}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: -15.5, Upper: -0.3, Bins: 3}, all)},
		// The cell of the upper bound: rows at 50 and above in cell 4, not
		// in the last bin [37.5, 50).
		{"histogram-top", sqlrewrite.Fetch{Table: table, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 50, Bins: 4, Top: true}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 50, Bins: 4, Top: true}, all)},
		{"histogram-top-odd", sqlrewrite.Fetch{Table: table, Filter: filter, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: 0.1, Upper: 99.7, Bins: 7, Top: true}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: 0.1, Upper: 99.7, Bins: 7, Top: true}, keep)},
		{"histogram-top-negative", sqlrewrite.Fetch{Table: table, Histogram: &sqlrewrite.Histogram{Column: "x", Lower: -15.5, Upper: -0.5, Bins: 3, Top: true}},
			wantHistogram(&sqlrewrite.Histogram{Column: "x", Lower: -15.5, Upper: -0.5, Bins: 3, Top: true}, all)},
	}
}

func clamp(v, lo, hi float64) float64 { return math.Min(math.Max(v, lo), hi) }

func wantSummary(terms []sqlrewrite.SummaryTerm, keep func(row) bool) func([]row) []float64 {
	return func(rows []row) []float64 {
		out := make([]float64, len(terms))
		for _, r := range rows {
			if !keep(r) {
				continue
			}
			for i, t := range terms {
				var v *float64
				switch t.Column {
				case "x":
					v = r.x
				case "k":
					k := float64(r.k)
					v = &k
				}
				switch {
				case t.Kind == sqlrewrite.CountAll:
					out[i]++
				case t.Column == "s":
					if r.s != nil {
						out[i]++
					}
				case v == nil:
				case t.Kind == sqlrewrite.CountNonNull:
					out[i]++
				case t.Kind == sqlrewrite.ClampedSum:
					out[i] += clamp(*v, t.Lower, t.Upper)
				case t.Kind == sqlrewrite.ClampedSumSquares:
					c := clamp(*v, t.Lower, t.Upper)
					out[i] += c * c
				}
			}
		}
		return out
	}
}

func wantWindow(w *sqlrewrite.Window, keep func(row) bool) func([]row) []float64 {
	return func(rows []row) []float64 {
		var vals []float64
		for _, r := range rows {
			if keep(r) && r.x != nil {
				vals = append(vals, clamp(*r.x, w.Lower, w.Upper))
			}
		}
		slices.Sort(vals)
		lo, hi := min(int(w.Offset), len(vals)), min(int(w.Offset+w.Limit), len(vals))
		return vals[lo:hi]
	}
}

// wantPairs is (clamp(x, 0, 50), clamp(k, 1.5, 3)) over the kept rows
// where x is set, sorted like runFetch sorts pairs.
func wantPairs(keep func(row) bool) func([]row) []float64 {
	return func(rows []row) []float64 {
		var ps [][2]float64
		for _, r := range rows {
			if r.x != nil && keep(r) {
				ps = append(ps, [2]float64{clamp(*r.x, 0, 50), clamp(float64(r.k), 1.5, 3)})
			}
		}
		return flattenPairs(ps)
	}
}

func flattenPairs(ps [][2]float64) []float64 {
	slices.SortFunc(ps, func(a, b [2]float64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	var out []float64
	for _, p := range ps {
		out = append(out, p[0], p[1])
	}
	return out
}

func wantHistogram(h *sqlrewrite.Histogram, keep func(row) bool) func([]row) []float64 {
	return func(rows []row) []float64 {
		counts := make([]float64, h.Cells())
		width := h.Upper - h.Lower
		for _, r := range rows {
			switch {
			case !keep(r) || r.x == nil:
			case h.Top && *r.x >= h.Upper:
				counts[h.Bins]++
			default:
				b := int(math.Floor((clamp(*r.x, h.Lower, h.Upper) - h.Lower) * float64(h.Bins) / width))
				counts[min(b, h.Bins-1)]++
			}
		}
		var out []float64
		for b, n := range counts {
			if n > 0 {
				out = append(out, float64(b), n)
			}
		}
		return out
	}
}

// wantCells counts the kept rows per cell (mixed radix, the first
// dimension most significant), flattened as (cell, count) in cell order.
func wantCells(c *sqlrewrite.Cells, keep func(row) bool) func([]row) []float64 {
	return func(rows []row) []float64 {
		counts := map[int]float64{}
		for _, r := range rows {
			if !keep(r) || r.s == nil || r.x == nil {
				continue
			}
			s := slices.IndexFunc(c.Dims[0].Values, func(v sqlrewrite.Value) bool { return v.Str == *r.s })
			k := slices.IndexFunc(c.Dims[2].Values, func(v sqlrewrite.Value) bool { return v.Num == float64(r.k) })
			if s < 0 || k < 0 {
				continue
			}
			edges := c.Dims[1].Edges
			x := 0
			for x < len(edges)-2 && *r.x >= edges[x+1].Num {
				x++
			}
			counts[(s*3+x)*3+k]++
		}
		var out []float64
		for cell := range 27 {
			if n := counts[cell]; n > 0 {
				out = append(out, float64(cell), n)
			}
		}
		return out
	}
}

// cellDimSize is the number of cells of one dimension.
func cellDimSize(d sqlrewrite.CellDim) int {
	if len(d.Edges) > 0 {
		return len(d.Edges) - 1
	}
	return len(d.Values)
}

// runFetch runs a rendered fetch and flattens its rows as fetchCase.want does.
func runFetch(db *sql.DB, f sqlrewrite.Fetch, query string, args []any) ([]float64, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []float64
	type pair struct{ bin, n int64 }
	var bins []pair
	var pairs [][2]float64
	for rows.Next() {
		switch {
		case len(f.Summary) > 0:
			vals := make([]sql.NullFloat64, len(f.Summary))
			dest := make([]any, len(vals))
			for i := range vals {
				dest[i] = &vals[i]
			}
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			for _, v := range vals {
				if !v.Valid {
					return nil, fmt.Errorf("summary term is NULL")
				}
				out = append(out, v.Float64)
			}
		case f.Window != nil:
			var v float64
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			out = append(out, v)
		case f.Cells != nil:
			keys := make([]int64, len(f.Cells.Dims)+1)
			dest := make([]any, len(keys))
			for i := range keys {
				dest[i] = &keys[i]
			}
			if err := rows.Scan(dest...); err != nil {
				return nil, err
			}
			var index int64
			for i, d := range f.Cells.Dims {
				index = index*int64(cellDimSize(d)) + keys[i]
			}
			bins = append(bins, pair{index, keys[len(keys)-1]})
		case f.Pairs != nil:
			var p [2]float64
			if err := rows.Scan(&p[0], &p[1]); err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		default:
			var p pair
			if err := rows.Scan(&p.bin, &p.n); err != nil {
				return nil, err
			}
			bins = append(bins, p)
		}
	}
	if f.Pairs != nil {
		return flattenPairs(pairs), rows.Err()
	}
	slices.SortFunc(bins, func(a, b pair) int { return int(a.bin - b.bin) })
	for _, p := range bins {
		out = append(out, float64(p.bin), float64(p.n))
	}
	return out, rows.Err()
}

// sameNumbers compares exactly, except that sums may differ in the last
// bits because databases add in their own order (relative 1e-12).
func sameNumbers(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}
