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
// DOUBLE, equal the exact sums of the grid indices computed in Go, on
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
	want := new(big.Int)
	for _, v := range values {
		k := math.Floor((math.Max(lo, math.Min(hi, v))-lo)/unit + 0.5)
		want.Add(want, big.NewInt(int64(k)))
	}
	b := New(db, sqlrewrite.MySQL, nil)
	snap, err := b.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	g := &sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: true}
	got, err := snap.GridSums(context.Background(), sqlrewrite.Fetch{Table: "fg", GridSums: g})
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != int64(len(values)) || got.Sum.Cmp(want) != 0 || got.SumSquares != nil {
		t.Errorf("got n=%d Σk=%v Σk²=%v, want %d, %v, none", got.Count, got.Sum, got.SumSquares, len(values), want)
	}
	// The DOUBLE fetch itself, as the backend reads it first.
	float := *g
	float.FloatSum = true
	direct, exact, err := snap.floatGridSums(context.Background(), sqlrewrite.Fetch{Table: "fg", GridSums: &float})
	if err != nil || !exact || direct.Sum.Cmp(want) != 0 {
		t.Errorf("DOUBLE fetch: %v, exact %v, %v; want Σk = %v", direct.Sum, exact, err, want)
	}
}

// TestFloatGroupedGridSumsOnMariaDB: GROUP BY's per-group n and Σk, which
// MariaDB sums as DOUBLE, equal each group's exact sums computed in Go;
// groups with no row are empty.
func TestFloatGroupedGridSumsOnMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE fgg (g INT, x DOUBLE)"); err != nil {
		t.Fatal(err)
	}
	lo, hi, unit := -1000.0, 1000.0, math.Ldexp(1, -19)
	rng := rand.New(rand.NewPCG(54, 1))
	want := map[int64]*big.Int{0: new(big.Int), 1: new(big.Int), 2: new(big.Int)}
	counts := map[int64]int64{}
	var rows []string
	for i := range 2000 {
		g := int64(i % 2) // group 2 stays empty
		v := lo + rng.Float64()*(hi-lo)*1.2
		if i%97 == 0 {
			v = hi
		}
		rows = append(rows, fmt.Sprintf("(%d, %v)", g, v))
		k := math.Floor((math.Max(lo, math.Min(hi, v))-lo)/unit + 0.5)
		want[g].Add(want[g], big.NewInt(int64(k)))
		counts[g]++
	}
	if _, err := db.Exec("INSERT INTO fgg (g, x) VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatal(err)
	}
	snap, err := New(db, sqlrewrite.MySQL, nil).Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	dims := []sqlrewrite.CellDim{{Column: "g", Values: []sqlrewrite.Value{{Num: 0}, {Num: 1}, {Num: 2}}}}
	got, err := snap.GroupedGridSums(context.Background(), sqlrewrite.Fetch{Table: "fgg",
		GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: dims, Grid: sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for g := range int64(3) {
		if got[g].Count != counts[g] || got[g].Sum.Cmp(want[g]) != 0 || got[g].SumSquares != nil {
			t.Errorf("group %d: n=%d Σk=%v Σk²=%v, want %d, %v, none", g, got[g].Count, got[g].Sum, got[g].SumSquares, counts[g], want[g])
		}
	}
	// The DOUBLE fetch itself, as the backend reads it first.
	float := sqlrewrite.GroupedGridSums{Dims: dims, Grid: sqlrewrite.GridSums{Column: "x", Lower: lo, Upper: hi, Unit: unit, SumOnly: true, FloatSum: true}}
	direct, exact, err := snap.groupedGridSums(context.Background(), sqlrewrite.Fetch{Table: "fgg"}, float)
	if err != nil || !exact || direct[1].Sum.Cmp(want[1]) != 0 {
		t.Errorf("DOUBLE fetch: group 1 Σk=%v, exact %v, %v; want %v", direct[1].Sum, exact, err, want[1])
	}
}
