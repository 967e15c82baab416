package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestGridSumsExactOnDatabases runs the GridSums fetch and the grid-index
// window on SQLite, PostgreSQL and MariaDB and compares every integer with
// the same grid map done in Go, exactly: values whose float sums carry
// rounding residue (0.1, 1/3), values at and outside the bounds, tiny and
// subnormal values, and values at the top of a 2^30-step grid (the largest
// split terms). The sums must equal the exact Σk and Σk², which float
// sums of the same values do not.
func TestGridSumsExactOnDatabases(t *testing.T) {
	lo, hi := 0.0, 1.0
	unit := math.Ldexp(1, -30)
	values := []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 1.0 / 3, 2.0 / 3, 0, 1, -5, 7, 5e-324, 1e-300,
		math.Nextafter(1, 0), 1 - unit/2, 1 - unit, 0.5 + unit/2, unit / 2, 3 * unit / 2}
	for range 200 {
		values = append(values, math.Nextafter(1, 0), 0.1)
	}
	for _, b := range dbBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.gridTable(t, append(slices.Clone(values), math.NaN()))
			// What the database stored (MariaDB may flush subnormals).
			stored := readColumn(t, db)
			f := sqlrewrite.Fetch{Table: "dp_grid", GridSums: &sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit}}
			totals, query := gridTotals(t, db, b.dialect, f)
			n, sum, squares := totals.Count, totals.Sum, totals.SumSquares
			var idx []int64
			wantSum, wantSquares := new(big.Int), new(big.Int)
			for _, v := range stored {
				k := int64(math.Floor((clamp(v, lo, hi)-lo)/unit + 0.5))
				idx = append(idx, k)
				wantSum.Add(wantSum, big.NewInt(k))
				wantSquares.Add(wantSquares, new(big.Int).Mul(big.NewInt(k), big.NewInt(k)))
			}
			if n != int64(len(stored)) || sum.Cmp(wantSum) != 0 || squares.Cmp(wantSquares) != 0 {
				t.Errorf("%s\ngot n=%v Σk=%v Σk²=%v, want %d, %v, %v", query, n, sum, squares, len(stored), wantSum, wantSquares)
			}
			// The window of grid indices: the same map, sorted.
			slices.Sort(idx)
			// The sums of ranks (the PTR trimmed mean's middle): those of
			// the same indices, in the order of the values.
			for _, r := range []sqlrewrite.RankSlice{{Offset: 0, Limit: 1000}, {Offset: 3, Limit: 17}, {Offset: 200, Limit: 150}, {Offset: 420, Limit: 50}, {Offset: 5000, Limit: 3}} {
				f := sqlrewrite.Fetch{Table: "dp_grid", GridSums: &sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: true, Ranks: &r}}
				got, query := gridTotals(t, db, b.dialect, f)
				ranked := idx[min(r.Offset, int64(len(idx))):min(r.Offset+r.Limit, int64(len(idx)))]
				want := new(big.Int)
				for _, k := range ranked {
					want.Add(want, big.NewInt(k))
				}
				if got = got.Of(f.GridSums); got.Count != int64(len(ranked)) || got.Sum.Cmp(want) != 0 || got.SumSquares != nil {
					t.Errorf("%s\nranks %+v: got n=%v Σk=%v Σk²=%v, want %d, %v, none", query, r, got.Count, got.Sum, got.SumSquares, len(ranked), want)
				}
			}
			w := sqlrewrite.Fetch{Table: "dp_grid", Window: &sqlrewrite.Window{Column: "x", Lower: lo, Upper: hi, Offset: 0, Limit: 1000, GridUnit: unit}}
			query, args, err := sqlrewrite.Render(w, b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			gotIdx, err := runFetch(db, w, query, args)
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			if len(gotIdx) != len(idx) {
				t.Fatalf("window: %d indices, want %d", len(gotIdx), len(idx))
			}
			for i := range idx {
				if gotIdx[i] != float64(idx[i]) {
					t.Errorf("window index %d: got %v, want %d", i, gotIdx[i], idx[i])
				}
			}
		})
	}
}

// dbBackend is a database the rendering tests run on, with its types
// for a double and a timestamp column.
type dbBackend struct {
	name          string
	dialect       sqlrewrite.Dialect
	open          func(testing.TB) *sql.DB
	double, stamp string
}

var dbBackends = []dbBackend{
	{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", "TEXT"},
	{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "TIMESTAMP"},
	{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "DATETIME"},
}

// gridTable opens a fresh database of b holding dp_grid(x) with values
// (NaN as NULL).
func (b dbBackend) gridTable(t *testing.T, values []float64) *sql.DB {
	t.Helper()
	db := b.open(t)
	if _, err := db.Exec("CREATE TABLE dp_grid (x " + b.double + ")"); err != nil {
		t.Fatal(err)
	}
	insert := "INSERT INTO dp_grid (x) VALUES (?)"
	if b.dialect == sqlrewrite.PostgreSQL {
		insert = "INSERT INTO dp_grid (x) VALUES ($1)"
	}
	for _, v := range values {
		var arg any = v
		if math.IsNaN(v) {
			arg = nil // NULL: skipped
		}
		if _, err := db.Exec(insert, arg); err != nil {
			t.Fatalf("insert %v: %v", v, err)
		}
	}
	return db
}

// gridTotals renders and runs a GridSums fetch on db and decodes its
// integers, read as text.
func gridTotals(t *testing.T, db *sql.DB, dialect sqlrewrite.Dialect, f sqlrewrite.Fetch) (sqlrewrite.GridTotals, string) {
	t.Helper()
	query, args, err := sqlrewrite.Render(f, dialect)
	if err != nil {
		t.Fatal(err)
	}
	text := make([]sql.RawBytes, sqlrewrite.GridSumWidth(dialect))
	dest := make([]any, len(text))
	for i := range text {
		dest[i] = &text[i]
	}
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("%s: no row", query)
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatal(err)
	}
	got := make([]*big.Int, len(text))
	for i, s := range text {
		v, ok := new(big.Int).SetString(string(s), 10)
		if !ok {
			t.Fatalf("term %d = %q is no integer", i, s)
		}
		got[i] = v
	}
	totals, err := sqlrewrite.DecodeGridSums(dialect, got)
	if err != nil {
		t.Fatal(err)
	}
	return totals, query
}

// readColumn returns the stored non-NULL values of dp_grid.x.
func readColumn(t *testing.T, db *sql.DB) []float64 {
	t.Helper()
	rows, err := db.Query("SELECT x FROM dp_grid WHERE x IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(fmt.Errorf("read column: %w", err))
	}
	return out
}

// TestGridSumsTermsFit: on one row, each integer of the GridSums fetch is
// that row's term, and every term is at most 2^20 for values anywhere on a
// 2^30-step grid, so a sum over n < 2^43 rows cannot overflow SQLite's
// int64 SUM, whose overflow error would depend on the data. (With the
// former 15-bit split the top value's a² was 2^30, overflowing from 2^33
// rows.)
func TestGridSumsTermsFit(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE dp_grid (x REAL)"); err != nil {
		t.Fatal(err)
	}
	unit := math.Ldexp(1, -30)
	f := sqlrewrite.Fetch{Table: "dp_grid", GridSums: &sqlrewrite.GridSums{Column: "x", Lower: 0, Upper: 1, Unit: unit}}
	query, args, err := sqlrewrite.Render(f, sqlrewrite.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{1, 1 - unit, 0.5, 0.75 - unit, 1 - 1024*unit, 1023 * unit} {
		if _, err := db.Exec("DELETE FROM dp_grid"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO dp_grid (x) VALUES (?)", v); err != nil {
			t.Fatal(err)
		}
		got := make([]int64, sqlrewrite.GridSumWidth(sqlrewrite.SQLite))
		dest := make([]any, len(got))
		for i := range got {
			dest[i] = &got[i]
		}
		if err := db.QueryRow(query, args...).Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for i, term := range got {
			if term < 0 || term > 1<<20 {
				t.Errorf("x = %v: term %d is %d, want in [0, 2^20]", v, i, term)
			}
		}
		k := int64(math.Floor(v/unit + 0.5))
		ints := make([]*big.Int, len(got))
		for i, v := range got {
			ints[i] = big.NewInt(v)
		}
		totals, err := sqlrewrite.DecodeGridSums(sqlrewrite.SQLite, ints)
		if err != nil {
			t.Fatal(err)
		}
		sum, squares := totals.Sum, totals.SumSquares
		if sum.Int64() != k || squares.Cmp(new(big.Int).Mul(big.NewInt(k), big.NewInt(k))) != 0 {
			t.Errorf("x = %v: Σk = %v, Σk² = %v, want %d, %d²", v, sum, squares, k, k)
		}
	}
}

// TestGridIndexOffsetGridsOnDatabases: on a grid whose lower bound is not
// 0 (the index subtracts it, then multiplies by 1/unit), and on a grid of
// one point whose unit has no float64 inverse (it divides: ∞·0 would be
// NaN), the databases' n, Σk and Σk²
// equal those of mech.Grid.Index's expression computed in Go on the
// stored values, at and past the bounds and half-way between grid points.
func TestGridIndexOffsetGridsOnDatabases(t *testing.T) {
	for _, g := range []struct {
		name         string
		lo, hi, unit float64
		values       []float64
	}{
		{"offset", -3, 5, math.Ldexp(1, -27), []float64{-3, 5, -4, 6, 0, -0.0, 1.0 / 3, -2.9999999999999996, 4.999999999999999,
			-3 + math.Ldexp(1, -28), -3 + 3*math.Ldexp(1, -28), 5 - math.Ldexp(1, -28), 2.5 + math.Ldexp(1, -28)}},
		{"one point, subnormal unit", 0, 0, math.Ldexp(1, -1074), []float64{0, 1e-300, 1, -1, 5}},
	} {
		for _, b := range dbBackends {
			t.Run(g.name+"/"+b.name, func(t *testing.T) {
				db := b.gridTable(t, g.values)
				stored := readColumn(t, db)
				f := sqlrewrite.Fetch{Table: "dp_grid", GridSums: &sqlrewrite.GridSums{Column: "x", Lower: g.lo, Upper: g.hi, Unit: g.unit}}
				got, query := gridTotals(t, db, b.dialect, f)
				wantSum, wantSquares := new(big.Int), new(big.Int)
				for _, v := range stored {
					k := big.NewInt(int64(math.Floor((clamp(v, g.lo, g.hi)-g.lo)/g.unit + 0.5)))
					wantSum.Add(wantSum, k)
					wantSquares.Add(wantSquares, new(big.Int).Mul(k, k))
				}
				if got.Count != int64(len(stored)) || got.Sum.Cmp(wantSum) != 0 || got.SumSquares.Cmp(wantSquares) != 0 {
					t.Errorf("%s\ngot n=%d Σk=%v Σk²=%v, want %d, %v, %v", query, got.Count, got.Sum, got.SumSquares, len(stored), wantSum, wantSquares)
				}
			})
		}
	}
}
