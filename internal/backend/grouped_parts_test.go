package backend

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestGroupedTextKeysInParts: on MySQL, a grouped summary and a grouped
// histogram over 64,000 released text keys (more than one prepared
// statement's 65,535 parameters once classIndex binds each key and its
// pivots) are fetched in parts of textValuesPerStatement keys, and give
// every key exactly its rows: the 64,000 names and, for every seventh, the
// same name in upper case (one collation class with it), one row each;
// a declared dimension beside it keeps its own index. Before the parts,
// the fetch failed with "too many placeholders".
func TestGroupedTextKeysInParts(t *testing.T) {
	const n = 64000
	if n <= 2*textValuesPerStatement {
		t.Fatalf("the test needs more than two parts: %d keys, %d per part", n, textValuesPerStatement)
	}
	db := testdb.MySQL(t)
	if _, err := db.Exec("CREATE TABLE wide (s VARCHAR(16), g INTEGER, x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{} // lower-case name → rows with g = 0, 1
	for from := 0; from < n; from += 5000 {
		var rows []string
		for i := from; i < min(from+5000, n); i++ {
			name := fmt.Sprintf("name%05d", i)
			rows = append(rows, fmt.Sprintf("('%s', %d, %d)", name, i%2, i%10))
			w := want[name]
			w[i%2]++
			if i%7 == 0 {
				rows = append(rows, fmt.Sprintf("('%s', %d, %d)", strings.ToUpper(name), (i+1)%2, 3))
				w[(i+1)%2]++
			}
			want[name] = w
		}
		if _, err := db.Exec("INSERT INTO wide (s, g, x) VALUES " + strings.Join(rows, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	be := New(db, sqlrewrite.MySQL, nil)
	ctx := context.Background()
	snap, err := be.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	keys, err := snap.KeyCounts(ctx, sqlrewrite.Fetch{Table: "wide", Keys: &sqlrewrite.KeyCounts{Column: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != n {
		t.Fatalf("%d keys, want %d", len(keys), n)
	}
	// The keys in an order other than the collation's (exec releases them
	// sorted as Go sorts them, which puts the upper-case ones first), with
	// Order giving the collation order.
	values := make([]sqlrewrite.Value, n)
	order := make([]int, n)
	for i, k := range keys {
		values[n-1-i] = k.Value
		order[i] = n - 1 - i
	}
	dims := []sqlrewrite.CellDim{
		{Column: "s", Values: values, ByValue: true, Order: order},
		{Column: "g", Values: []sqlrewrite.Value{{Num: 0}, {Num: 1}}},
	}
	if !be.bindsValues(dims[0]) {
		t.Fatal("the released keys are not fetched in parts")
	}
	summary, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "wide",
		Grouped: &sqlrewrite.GroupedSummary{Dims: dims, Terms: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := snap.GroupedHistogram(ctx, sqlrewrite.Fetch{Table: "wide",
		GroupedHist: &sqlrewrite.GroupedHistogram{Dims: dims, Histogram: sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 10, Bins: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(summary) != 2*n || len(hist) != 2*n {
		t.Fatalf("%d and %d cells, want %d", len(summary), len(hist), 2*n)
	}
	bad := 0
	for i, v := range values {
		w, ok := want[strings.ToLower(v.Str)]
		if !ok {
			t.Fatalf("key %q is no name of the data", v.Str)
		}
		for g := range 2 {
			cell := 2*i + g
			if summary[cell][0] != w[g] || float64(hist[cell][0]+hist[cell][1]) != w[g] {
				if bad++; bad <= 5 {
					t.Errorf("key %q g = %d: COUNT %v, histogram %v, want %v", v.Str, g, summary[cell][0], hist[cell], w[g])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d cells wrong", bad)
	}
}
