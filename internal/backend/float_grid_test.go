package backend

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDecodeFloatGridSum: integers below 2^53, as MariaDB prints them
// (plain, or in exponent form above 10^15), are exact; 2^53 and beyond, a
// fraction, a negative or no number are not vouched for.
func TestDecodeFloatGridSum(t *testing.T) {
	for _, c := range []struct {
		text  string
		want  int64
		exact bool
	}{
		{"0", 0, true},
		{"51190667345869", 51190667345869, true},
		{"4.503599627370497e15", 4503599627370497, true},
		{"9.007199254740991e15", 9007199254740991, true},
		{"9.007199254740992e15", 0, false},
		{"1e16", 0, false},
		{"12.5", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"", 0, false},
	} {
		got, exact := sqlrewrite.DecodeFloatGridSum(c.text)
		if exact != c.exact || (exact && got.Int64() != c.want) {
			t.Errorf("%q: got %v, %v; want %d, %v", c.text, got, exact, c.want, c.exact)
		}
	}
}

// TestFloatGridSumsOnMariaDB: AVG's n and Σk, which MariaDB sums as
// DOUBLE, and VARIANCE's n, Σk and Σk² (Σk² in DECIMAL beside the DOUBLE
// Σk), equal the exact sums of the grid indices computed in Go, on
// values at and past the bounds, half-way between grid points, NULL and
// 3,000 random ones at the largest grid the renderer allows (2^30 steps).
func TestFloatGridSumsOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE fg (x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	lo, hi := -1000.0, 1000.0
	unit := math.Ldexp(1, -19) // 2000·2^19 steps, just under the 2^30 the renderer allows
	rng := rand.New(rand.NewPCG(53, 1))
	values := []float64{lo, hi, -2000, 2000, 0, unit / 2, -unit / 2, 3 * unit / 2, hi - unit/2, math.Nextafter(hi, 0), 1e-300}
	for range 3000 {
		values = append(values, lo+rng.Float64()*(hi-lo))
	}
	var rows []string
	for _, v := range values {
		rows = append(rows, fmt.Sprintf("(%v)", v))
	}
	rows = append(rows, "(NULL)")
	if _, err := db.Exec("INSERT INTO fg (x) VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatal(err)
	}
	want, wantSquares := new(big.Int), new(big.Int)
	for _, v := range values {
		k := big.NewInt(int64(math.Floor((math.Max(lo, math.Min(hi, v))-lo)/unit + 0.5)))
		want.Add(want, k)
		wantSquares.Add(wantSquares, new(big.Int).Mul(k, k))
	}
	b := New(db, sqlrewrite.MySQL, nil)
	snap, err := b.Snapshot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, sumOnly := range []bool{true, false} {
		g := &sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: sumOnly}
		got, err := snap.GridSums(context.Background(), sqlrewrite.Fetch{Table: "fg", GridSums: g})
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != int64(len(values)) || got.Sum.Cmp(want) != 0 || sumOnly != (got.SumSquares == nil) ||
			!sumOnly && got.SumSquares.Cmp(wantSquares) != 0 {
			t.Errorf("sum only %v: got n=%d Σk=%v Σk²=%v, want %d, %v, %v", sumOnly, got.Count, got.Sum, got.SumSquares, len(values), want, wantSquares)
		}
		// The DOUBLE fetch itself, as the backend reads it first.
		float := *g
		float.FloatSum = true
		direct, exact, err := snap.floatGridSums(context.Background(), sqlrewrite.Fetch{Table: "fg", GridSums: &float})
		if err != nil || !exact || direct.Sum.Cmp(want) != 0 || !sumOnly && direct.SumSquares.Cmp(wantSquares) != 0 {
			t.Errorf("sum only %v: DOUBLE fetch: %v, %v, exact %v, %v; want Σk = %v, Σk² = %v", sumOnly, direct.Sum, direct.SumSquares, exact, err, want, wantSquares)
		}
	}
}

// TestFloatGroupedGridSumsOnMariaDB: GROUP BY's per-group n and Σk, which
// MariaDB sums as DOUBLE, and Σk² beside them, equal each group's exact
// sums computed in Go; groups with no row are empty.
func TestFloatGroupedGridSumsOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE fgg (g INT, x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	lo, hi, unit := -1000.0, 1000.0, math.Ldexp(1, -19)
	rng := rand.New(rand.NewPCG(54, 1))
	want := map[int64]*big.Int{0: new(big.Int), 1: new(big.Int), 2: new(big.Int)}
	wantSquares := map[int64]*big.Int{0: new(big.Int), 1: new(big.Int), 2: new(big.Int)}
	counts := map[int64]int64{}
	var rows []string
	for i := range 2000 {
		g := int64(i % 2) // group 2 stays empty
		v := lo + rng.Float64()*(hi-lo)*1.2
		if i%97 == 0 {
			v = hi
		}
		rows = append(rows, fmt.Sprintf("(%d, %v)", g, v))
		k := big.NewInt(int64(math.Floor((math.Max(lo, math.Min(hi, v))-lo)/unit + 0.5)))
		want[g].Add(want[g], k)
		wantSquares[g].Add(wantSquares[g], new(big.Int).Mul(k, k))
		counts[g]++
	}
	if _, err := db.Exec("INSERT INTO fgg (g, x) VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatal(err)
	}
	snap, err := New(db, sqlrewrite.MySQL, nil).Snapshot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	dims := []sqlrewrite.CellDim{{Column: "g", Values: []sqlrewrite.Value{{Num: 0}, {Num: 1}, {Num: 2}}}}
	for _, sumOnly := range []bool{true, false} {
		got, err := snap.GroupedGridSums(context.Background(), sqlrewrite.Fetch{Table: "fgg",
			GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: dims, Grid: sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: sumOnly}}})
		if err != nil {
			t.Fatal(err)
		}
		for g := range int64(3) {
			if got[g].Count != counts[g] || got[g].Sum.Cmp(want[g]) != 0 || sumOnly != (got[g].SumSquares == nil) ||
				!sumOnly && got[g].SumSquares.Cmp(wantSquares[g]) != 0 {
				t.Errorf("sum only %v: group %d: n=%d Σk=%v Σk²=%v, want %d, %v, %v", sumOnly, g, got[g].Count, got[g].Sum, got[g].SumSquares, counts[g], want[g], wantSquares[g])
			}
		}
		// The DOUBLE fetch itself, as the backend reads it first.
		float := sqlrewrite.GroupedGridSums{Dims: dims, Grid: sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: sumOnly, FloatSum: true}}
		direct, exact, err := snap.groupedGridSums(context.Background(), sqlrewrite.Fetch{Table: "fgg"}, float)
		if err != nil || !exact || direct[1].Sum.Cmp(want[1]) != 0 || !sumOnly && direct[1].SumSquares.Cmp(wantSquares[1]) != 0 {
			t.Errorf("sum only %v: DOUBLE fetch: group 1 Σk=%v Σk²=%v, exact %v, %v; want %v, %v", sumOnly, direct[1].Sum, direct[1].SumSquares, exact, err, want[1], wantSquares[1])
		}
	}
}

// TestGridIndexTinyValuesOnMariaDB: the grid indices MariaDB sums are
// those of the values with every magnitude below 2^−400 read as 0 (the
// flush of sqlrewrite's clamp), whether the index is rendered with the
// flush or, where that cannot change an index, without it: bounds from 0
// and from −1000 (plain), and bounds whose grid is fine enough, or whose
// lower bound is small enough, for a tiny value to move an index (the
// flush kept).
func TestGridIndexTinyValuesOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE tiny_grid (x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	var values []float64
	for _, v := range []float64{0, 0x1p-401, 0x1p-450, 1e-310, 0x1p-400, 0x1p-399, 0x1p-390, 0x1p-380, 1, 1000, 2000, 0x1p-420 * 3} {
		values = append(values, v, -v)
	}
	var rows []string
	for _, v := range values {
		rows = append(rows, fmt.Sprintf("(%v)", v))
	}
	if _, err := db.Exec("INSERT INTO tiny_grid (x) VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatal(err)
	}
	snap, err := New(db, sqlrewrite.MySQL, nil).Snapshot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, b := range [][2]float64{{0, 1000}, {-1000, 1000}, {0, 0x1p-390}, {-0x1p-380, 0x1p-380}, {-0x1p-341, 1}} {
		lo, hi := b[0], b[1]
		frac, e := math.Frexp((hi - lo) * 0x1p-30)
		if frac == 0.5 {
			e--
		}
		unit := math.Ldexp(1, e) // mech.NewGrid's
		want, wantSquares := new(big.Int), new(big.Int)
		for _, v := range values {
			if math.Abs(v) < 0x1p-400 {
				v = 0
			}
			k := big.NewInt(int64(math.Floor((math.Max(lo, math.Min(hi, v))-lo)/unit + 0.5)))
			want.Add(want, k)
			wantSquares.Add(wantSquares, new(big.Int).Mul(k, k))
		}
		got, err := snap.GridSums(context.Background(), sqlrewrite.Fetch{Table: "tiny_grid",
			GridSums: &sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != int64(len(values)) || got.Sum.Cmp(want) != 0 || got.SumSquares.Cmp(wantSquares) != 0 {
			t.Errorf("[%g, %g] by %g: n=%d Σk=%v Σk²=%v, want %d, %v, %v", lo, hi, unit, got.Count, got.Sum, got.SumSquares, len(values), want, wantSquares)
		}
	}
}

// TestGridSumsGroupedSumOnlyOnMariaDB: n and Σk of a column with few
// values (AVG, SUM) are read on MariaDB by the one-row DOUBLE sum, not
// the GROUP BY by value, unless the snapshot read the groups already; both
// give the totals the groups give.
func TestGridSumsGroupedSumOnlyOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE few (a INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO few (a) VALUES (0), (1), (7), (7), (100), (101), (-3), (NULL), (55)"); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	g := sqlrewrite.GridSums{Column: "a", Lower: 0, Upper: 100, Unit: math.Ldexp(1, -23)}
	sumOnly := g
	sumOnly.SumOnly = true
	groups := sqlrewrite.Fetch{Table: "few", Window: &sqlrewrite.Window{Column: "a", Lower: 0, Upper: 100, GridUnit: g.Unit, Grouped: true, Limit: 1}}
	// The groups first: n and Σk come from them.
	snap, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	full, err := snap.GridSumsGrouped(ctx, sqlrewrite.Fetch{Table: "few", GridSums: &g})
	if err != nil {
		t.Fatal(err)
	}
	fromGroups, err := snap.GridSumsGrouped(ctx, sqlrewrite.Fetch{Table: "few", GridSums: &sumOnly})
	if err != nil {
		t.Fatal(err)
	}
	if snap.hasRead("grid sums", sqlrewrite.Fetch{Table: "few", GridSums: &sumOnly}) {
		t.Error("n and Σk read by a query of their own after the groups")
	}
	// Alone: one row of sums, no GROUP BY.
	alone, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	oneRow, err := alone.GridSumsGrouped(ctx, sqlrewrite.Fetch{Table: "few", GridSums: &sumOnly})
	if err != nil {
		t.Fatal(err)
	}
	if alone.hasRead("groups", groups) || !alone.hasRead("grid sums", sqlrewrite.Fetch{Table: "few", GridSums: &sumOnly}) {
		t.Error("n and Σk alone not read by the one-row query")
	}
	want := int64(0+1+7+7+100+100+0+55) << 23
	for name, got := range map[string]sqlrewrite.GridTotals{"groups": fromGroups, "one row": oneRow} {
		if got.Count != 8 || got.Count != full.Count || !got.Sum.IsInt64() || got.Sum.Int64() != want || got.Sum.Cmp(full.Sum) != 0 || got.SumSquares != nil {
			t.Errorf("%s: n=%d Σk=%v Σk²=%v; want 8, %d, none (full: %d, %v)", name, got.Count, got.Sum, got.SumSquares, want, full.Count, full.Sum)
		}
	}
}
