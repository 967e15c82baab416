package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderIsTotalOnHostileValues runs every fetch kind, with the most
// extreme bounds the catalog accepts, on a table holding every kind of
// value the backend's columns can hold (NULL, NaN, ±Inf, subnormals, tiny
// and huge magnitudes, the largest integers, and on SQLite text and blobs
// in numeric columns): no fetch may fail (DESIGN.md §2: a failure that one
// row causes reveals the row), every value returned lies in the bounds,
// windows are sorted, histogram bins are in range, and the count of
// readable values equals the number of values a window returns. Every
// fetch runs again bounded per privacy unit, the unit column hostile too.
func TestRenderIsTotalOnHostileValues(t *testing.T) {
	m := catalog.MinBoundMagnitude
	bounds := [][2]float64{
		{0, 100}, {-catalog.MaxBoundMagnitude, catalog.MaxBoundMagnitude}, {0, catalog.MaxBoundMagnitude},
		{m, 2 * m}, {-1, -m}, {-m, m}, {-m, 1}, {1e-100, 1e100},
	}
	for _, b := range []struct {
		name            string
		dialect         sqlrewrite.Dialect
		open            func(testing.TB) *sql.DB
		double, integer string
		values          []string // SQL literals, each inserted in both columns
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", "INTEGER", []string{
			"NULL", "0", "1e-200", "-1e-200", "5e-324", "-5e-324", "1e300", "-1e300", "1.7976931348623157e308",
			"9e999", "-9e999", "9223372036854775807", "-9223372036854775808", "'abc'", "'1e-200'", "''", "x'00ff'", "50.5"}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "NUMERIC", []string{
			"NULL", "0", "1e-200", "-1e-200", "5e-324", "-5e-324", "1e300", "-1e300", "1.7976931348623157e308",
			"'NaN'", "'Infinity'", "'-Infinity'", "9223372036854775807", "-9223372036854775808", "50.5"}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "BIGINT", []string{
			"NULL", "0", "1e-200", "-1e-200", "2.2250738585072014e-308", "1e300", "-1e300", "1.7976931348623157e308",
			"9223372036854775807", "-9223372036854775808", "50"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			// a is an integer column (on PostgreSQL a NUMERIC, which holds
			// NaN and magnitudes that no double can: 1e400).
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_hostile (x %s, a %s)", b.double, b.integer)); err != nil {
				t.Fatal(err)
			}
			values := b.values
			if b.dialect == sqlrewrite.PostgreSQL {
				values = append(values, "1e400") // NUMERIC only; the double column gets Infinity
			}
			for _, v := range values {
				// Every value three times (ties), the double column's as a
				// double where the value is out of its range.
				x := v
				if v == "1e400" {
					x = "'Infinity'"
				}
				a := v
				if b.dialect == sqlrewrite.MySQL && (v == "1e300" || v == "-1e300" || v == "1.7976931348623157e308" || v == "2.2250738585072014e-308" || v == "1e-200" || v == "-1e-200") {
					a = "NULL" // a BIGINT cannot hold them (MariaDB refuses the insert)
				}
				if b.dialect == sqlrewrite.PostgreSQL && (v == "'Infinity'" || v == "'-Infinity'") {
					a = "'NaN'"
				}
				for range 3 {
					if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_hostile (x, a) VALUES (%s, %s)", x, a)); err != nil {
						t.Fatalf("insert %s, %s: %v", x, a, err)
					}
				}
			}
			for _, col := range []string{"x", "a"} {
				for _, bd := range bounds {
					lo, hi := bd[0], bd[1]
					name := fmt.Sprintf("%s/[%g,%g]", col, lo, hi)
					run := func(what string, f sqlrewrite.Fetch) []float64 {
						t.Helper()
						f.Table = "dp_hostile"
						query, args, err := sqlrewrite.Render(f, b.dialect)
						if err != nil {
							t.Fatalf("%s %s: Render: %v", name, what, err)
						}
						got, err := runFetch(db, f, query, args)
						if err != nil {
							t.Errorf("%s %s failed on hostile values: %v\n%s", name, what, err, query)
						}
						// The same fetch bounded to 2 rows per unit, the unit
						// being the hostile column a (NaN, huge NUMERICs, text
						// and blobs on SQLite): the bounding must be total too.
						f.Unit = &sqlrewrite.UnitBound{Column: "a", MaxRows: 2, Order: []string{"x", "a"}, Salt: "0123456789abcdef0123456789abcdef"}
						if query, args, err = sqlrewrite.Render(f, b.dialect); err != nil {
							t.Fatalf("%s %s: Render with a unit bound: %v", name, what, err)
						}
						if _, err := runFetch(db, f, query, args); err != nil {
							t.Errorf("%s %s bounded per unit failed on hostile values: %v\n%s", name, what, err, query)
						}
						return got
					}
					summary := run("summary", sqlrewrite.Fetch{Summary: []sqlrewrite.SummaryTerm{
						{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.CountNonNull, Column: col},
						{Kind: sqlrewrite.CountNumbers, Column: col},
						{Kind: sqlrewrite.ClampedSum, Column: col, Lower: lo, Upper: hi},
						{Kind: sqlrewrite.ClampedSumSquares, Column: col, Lower: lo, Upper: hi}}})
					for i, v := range summary {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Errorf("%s summary term %d = %v", name, i, v)
						}
					}
					window := run("window", sqlrewrite.Fetch{Window: &sqlrewrite.Window{Column: col, Lower: lo, Upper: hi, Limit: 1000}})
					if !slices.IsSorted(window) || len(window) > 0 && (window[0] < lo || window[len(window)-1] > hi) {
						t.Errorf("%s window not sorted within the bounds: %v", name, window)
					}
					if len(summary) == 5 && summary[2] != float64(len(window)) {
						t.Errorf("%s: CountNumbers = %v but the window holds %d values", name, summary[2], len(window))
					}
					if g, err := mech.NewGrid(mech.Bounds{Lower: lo, Upper: hi}); err == nil {
						ranked := &sqlrewrite.GridSums{Column: col, Lower: g.Lower, Upper: g.Upper, Unit: g.Unit, SumOnly: true, Ranks: &sqlrewrite.RankSlice{Offset: 1, Limit: 1000}}
						if got, query := gridTotals(t, db, b.dialect, sqlrewrite.Fetch{Table: "dp_hostile", GridSums: ranked}); got.Count != max(int64(len(window))-1, 0) {
							t.Errorf("%s grid sums of ranks 1 to 1000 count %d values, the window %d\n%s", name, got.Count, len(window), query)
						}
					}
					for _, bins := range []int{1, 7, catalog.MaxHistogramBins} {
						h := run(fmt.Sprintf("histogram of %d bins", bins), sqlrewrite.Fetch{Histogram: &sqlrewrite.Histogram{Column: col, Lower: lo, Upper: hi, Bins: bins}})
						var total float64
						for i := 0; i+1 < len(h); i += 2 {
							if h[i] < 0 || h[i] >= float64(bins) {
								t.Errorf("%s histogram of %d bins: bin %v out of range", name, bins, h[i])
							}
							total += h[i+1]
						}
						if total != float64(len(window)) {
							t.Errorf("%s histogram of %d bins counts %v values, the window %d", name, bins, total, len(window))
						}
					}
					pairs := run("pairs", sqlrewrite.Fetch{Pairs: &sqlrewrite.Pairs{Y: col, X: "x", YLower: lo, YUpper: hi, XLower: lo, XUpper: hi}})
					for _, v := range pairs {
						if !(v >= lo && v <= hi) {
							t.Errorf("%s pairs: %v outside the bounds", name, v)
						}
					}
					edges := []float64{lo, lo/2 + hi/2, hi}
					run("cells", sqlrewrite.Fetch{Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: col, Edges: sqlrewrite.DoubleEdges(edges)}}}})
				}
			}
		})
	}
}
