package backend

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestGroupedByValueEqualsCase: on every backend, a grouped summary whose
// first dimension is grouped by value (CellDim.ByValue, for the values
// partition selection released) gives exactly the cells of the CASE it
// replaces, on data with NULLs, values not selected, selected values with
// no rows, text that differs only by case or a trailing space, quotes,
// backslashes, LIKE wildcards, non-Latin script and emoji, and (SQLite)
// text and reals in an integer column; and so does one over the keys a
// KeyCounts fetch returns (what partition selection releases), in any
// order, matched character for character (Exact: on MySQL too, each
// spelling its own key, where its collation would name a class by a
// spelling that depends on the data).
func TestGroupedByValueEqualsCase(t *testing.T) {
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		types   [3]string // k, s, x
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, [3]string{"INTEGER", "TEXT", "REAL"}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, [3]string{"BIGINT", "TEXT", "DOUBLE PRECISION"}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, [3]string{"BIGINT", "VARCHAR(64)", "DOUBLE"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			texts := []string{"CA", "ca", "CA ", "NY", "O'Brien", "", "日本", "🙂", `a\b`, "%_", "not selected"}
			var rows []string
			for i := range 400 {
				k := fmt.Sprint(i % 7)
				if i%11 == 0 {
					k = "NULL"
				}
				s := "'" + strings.ReplaceAll(texts[i%len(texts)], "'", "''") + "'"
				if i%13 == 0 {
					s = "NULL"
				}
				if b.dialect == sqlrewrite.MySQL {
					s = strings.ReplaceAll(s, `\`, `\\`)
				}
				rows = append(rows, fmt.Sprintf("(%s, %s, %d.25)", k, s, i%50))
			}
			if b.dialect == sqlrewrite.SQLite {
				rows = append(rows, "('2', 'CA', 1)", "('abc', 'NY', 2)", "(2.5, 'NY', 3)")
			}
			for _, q := range []string{
				fmt.Sprintf("CREATE TABLE g (k %s, s %s, x %s)", b.types[0], b.types[1], b.types[2]),
				"INSERT INTO g (k, s, x) VALUES " + strings.Join(rows, ", "),
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%.60s: %v", q, err)
				}
			}
			numbers := []sqlrewrite.Value{{Num: 0}, {Num: 2}, {Num: 5}, {Num: 99}}
			var strs []sqlrewrite.Value
			for _, s := range []string{"", "CA", "NY", "O'Brien", "%_", `a\b`, "absent", "ca", "日本", "🙂"} {
				strs = append(strs, sqlrewrite.Value{Str: s, IsText: true})
			}
			terms := []sqlrewrite.SummaryTerm{
				{Kind: sqlrewrite.CountAll},
				{Kind: sqlrewrite.ClampedSum, Column: "x", Lower: 0, Upper: 40},
			}
			be := New(db, b.dialect, nil)
			// The values partition selection would release: every key
			// KeyCounts returns, in reverse order so that no CASE agrees by
			// luck of order (on MySQL one value per collation class, its
			// smallest byte string).
			var released []sqlrewrite.Value
			{
				snap, err := be.Snapshot(context.Background(), "")
				if err != nil {
					t.Fatal(err)
				}
				keys, err := snap.KeyCounts(context.Background(), sqlrewrite.Fetch{Table: "g", Keys: &sqlrewrite.KeyCounts{Column: "s"}}, everyCount)
				snap.Close()
				if err != nil {
					t.Fatal(err)
				}
				for i := len(keys) - 1; i >= 0; i-- {
					released = append(released, keys[i].Value)
				}
				if len(released) != 11 {
					t.Fatalf("KeyCounts returned %d keys %v, want 11", len(released), released)
				}
			}
			for _, dims := range [][]sqlrewrite.CellDim{
				{{Column: "s", Values: released, ByValue: true, Exact: true}},
				{{Column: "s", Values: released, ByValue: true, Exact: true}},
				{{Column: "s", Values: released, ByValue: true, Exact: true}, {Column: "k", Values: numbers}},
				{{Column: "s", Values: strs[:4]}, {Column: "s", Values: released, ByValue: true, Exact: true}},
				{{Column: "k", Values: numbers, ByValue: true}},
				{{Column: "s", Values: strs, ByValue: true}},
				{{Column: "k", Values: numbers, ByValue: true}, {Column: "s", Values: strs[:4]}},
				{{Column: "s", Values: strs, ByValue: true}, {Column: "x", Edges: sqlrewrite.DoubleEdges([]float64{0, 20, 50})}},
			} {
				run := func(byValue bool) [][]float64 {
					t.Helper()
					d := append([]sqlrewrite.CellDim(nil), dims...)
					for i := range d {
						d[i].ByValue = byValue && dims[i].ByValue
					}
					snap, err := be.Snapshot(context.Background(), "")
					if err != nil {
						t.Fatal(err)
					}
					defer snap.Close()
					out, err := snap.GroupedSummary(context.Background(), sqlrewrite.Fetch{Table: "g",
						Filter:  []sqlrewrite.Condition{{Column: "x", Range: &sqlrewrite.Range{Lower: 1, HasLower: true}}},
						Grouped: &sqlrewrite.GroupedSummary{Dims: d, Terms: terms}})
					if err != nil {
						t.Fatalf("by value %v: %v", byValue, err)
					}
					return out
				}
				byCase, byValue := run(false), run(true)
				if !reflect.DeepEqual(byCase, byValue) {
					t.Errorf("dimensions %v: by value %v, by CASE %v", dims[0].Column, byValue, byCase)
				}
				var total float64
				for _, c := range byCase {
					total += c[0]
				}
				if total == 0 {
					t.Errorf("dimensions %v: no row in any cell; the comparison proves nothing", dims[0].Column)
				}
				if dims[len(dims)-1].Edges == nil {
					checkGroupedHistogram(t, be, dims)
				}
			}
		})
	}
}

// checkGroupedHistogram: the grouped histogram of categorical dimensions,
// grouped by value or by CASE, gives every cell the histogram that a
// Histogram fetch with the cell's conditions (sqlrewrite.ValueConditions,
// as the planner makes them) added to the filter gives. On MySQL that
// needs the first-match conditions: its collation equates "ca" and "CA",
// and a row of either is in the first one's cell only; without them it
// would be in both, twice the privacy loss of one row.
func checkGroupedHistogram(t *testing.T, be *Backend, dims []sqlrewrite.CellDim) {
	t.Helper()
	ctx := context.Background()
	filter := []sqlrewrite.Condition{{Column: "x", Range: &sqlrewrite.Range{Lower: 1, HasLower: true}}}
	h := sqlrewrite.Histogram{Column: "x", Lower: 0, Upper: 40, Bins: 7}
	snap, err := be.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	for _, byValue := range []bool{false, true} {
		d := append([]sqlrewrite.CellDim(nil), dims...)
		for i := range d {
			d[i].ByValue = byValue && dims[i].ByValue
		}
		grouped, err := snap.GroupedHistogram(ctx, sqlrewrite.Fetch{Table: "g", Filter: filter,
			GroupedHist: &sqlrewrite.GroupedHistogram{Dims: d, Histogram: h}})
		if err != nil {
			t.Fatalf("grouped histogram (by value %v): %v", byValue, err)
		}
		cell := 0
		var walk func(i int, conds []sqlrewrite.Condition)
		walk = func(i int, conds []sqlrewrite.Condition) {
			if i == len(d) {
				want, err := snap.Histogram(ctx, sqlrewrite.Fetch{Table: "g", Filter: append(append([]sqlrewrite.Condition(nil), filter...), conds...), Histogram: &h})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(grouped[cell], want) {
					t.Errorf("by value %v, cell %d %v: grouped %v, alone %v", byValue, cell, conds, grouped[cell], want)
				}
				cell++
				return
			}
			cells := sqlrewrite.ValueConditions(d[i].Column, d[i].Values, be.dialect == sqlrewrite.MySQL && d[i].Values[0].IsText)
			if d[i].Exact { // released keys: each its own spelling (exec's keyFilters)
				cells = nil
				for _, v := range d[i].Values {
					cells = append(cells, []sqlrewrite.Condition{{Column: d[i].Column, In: []sqlrewrite.Value{v}, Exact: true}})
				}
			}
			for _, c := range cells {
				walk(i+1, append(append([]sqlrewrite.Condition(nil), conds...), c...))
			}
		}
		walk(0, nil)
	}
}

// TestGroupedByValueManyTextKeys: on every backend, KeyCounts returns the
// 900 spellings of a text column (300 names, each also in upper case and
// with a trailing space, which MySQL's collation equates: each spelling is
// its own key, character for character), and grouping by value gives
// exactly the cells of the CASE (both Exact), for the keys in their
// KeyCounts order, sorted as Go sorts them (the order exec releases them
// in), and a sample of them; each name's three spellings get their own
// rows (a third of them each).
func TestGroupedByValueManyTextKeys(t *testing.T) {
	for _, b := range threeBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			var rows []string
			for i := range 3000 {
				name := fmt.Sprintf("key%03d", i%300)
				switch i % 7 {
				case 3:
					name = strings.ToUpper(name)
				case 5:
					name += " "
				}
				rows = append(rows, fmt.Sprintf("('%s', %d)", name, i%40))
			}
			for _, q := range []string{"CREATE TABLE many (s VARCHAR(16), x INTEGER)", "INSERT INTO many (s, x) VALUES " + strings.Join(rows, ", ")} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%.60s: %v", q, err)
				}
			}
			be := New(db, b.dialect, nil)
			ctx := context.Background()
			snap, err := be.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			keys, err := snap.KeyCounts(ctx, sqlrewrite.Fetch{Table: "many", Keys: &sqlrewrite.KeyCounts{Column: "s"}}, everyCount)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 900 {
				t.Fatalf("%d keys, want 900", len(keys))
			}
			var inOrder []sqlrewrite.Value
			var rowsCounted int64
			for _, k := range keys {
				inOrder = append(inOrder, k.Value)
				rowsCounted += k.Count
			}
			if rowsCounted != 3000 {
				t.Fatalf("the keys count %d rows, want 3000", rowsCounted)
			}
			sorted := slices.Clone(inOrder)
			slices.SortFunc(sorted, func(a, b sqlrewrite.Value) int { return strings.Compare(a.Str, b.Str) })
			var sample []sqlrewrite.Value
			for i, v := range sorted {
				if i%3 == 0 {
					sample = append(sample, v)
				}
			}
			terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}, {Kind: sqlrewrite.ClampedSum, Column: "x", Lower: 0, Upper: 30}}
			for _, values := range [][]sqlrewrite.Value{inOrder, sorted, sample} {
				run := func(d sqlrewrite.CellDim) [][]float64 {
					t.Helper()
					out, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "many",
						Filter:  []sqlrewrite.Condition{{Column: "x", Range: &sqlrewrite.Range{Lower: 3, HasLower: true}}},
						Grouped: &sqlrewrite.GroupedSummary{Dims: []sqlrewrite.CellDim{d}, Terms: terms}})
					if err != nil {
						t.Fatal(err)
					}
					return out
				}
				byCase := run(sqlrewrite.CellDim{Column: "s", Values: values, Exact: true})
				byValue := run(sqlrewrite.CellDim{Column: "s", Values: values, ByValue: true, Exact: true})
				if !reflect.DeepEqual(byCase, byValue) {
					t.Errorf("%d values: by value %v\nby CASE %v", len(values), byValue, byCase)
				}
				total := 0.0
				for _, c := range byCase {
					total += c[0]
				}
				if total == 0 {
					t.Errorf("%d values: every cell empty; the comparison proves nothing", len(values))
				}
			}
		})
	}
}

// everyCount keeps every value of a KeyCounts fetch.
func everyCount(int64) bool { return true }
