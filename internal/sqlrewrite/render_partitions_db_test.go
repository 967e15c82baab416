package sqlrewrite_test

import (
	"database/sql"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPartitionsAgainstPostgres renders fetches over a PostgreSQL
// partitioned table with Fetch.Partitions set (per-partition aggregates
// combined, partitioned.go) and checks that they return what the same
// fetches return over an unpartitioned copy of the rows: first the
// fetch cases of TestRenderAgainstDatabases against their values computed
// in Go, then every aggregate shape, after hostile values (NaN, ±Inf,
// huge and tiny magnitudes) are added to one partition, against the
// unpartitioned rendering on the copy, row for row: counts and integer
// grid sums exactly, clamped sums within float64 rounding (partial sums
// added in another order).
func TestPartitionsAgainstPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	data := testRows()
	loadRows(t, db, sqlrewrite.PostgreSQL, "DOUBLE PRECISION", data)
	parts := []string{"dp_part_low", "dp_part_mid", "dp_part_rest"}
	for _, ddl := range []string{
		"CREATE TABLE dp_part (k INTEGER, x DOUBLE PRECISION, s VARCHAR(8)) PARTITION BY RANGE (k)",
		"CREATE TABLE dp_part_low PARTITION OF dp_part FOR VALUES FROM (MINVALUE) TO (2)",
		"CREATE TABLE dp_part_mid PARTITION OF dp_part FOR VALUES FROM (2) TO (5)",
		"CREATE TABLE dp_part_rest PARTITION OF dp_part DEFAULT",
		"INSERT INTO dp_part SELECT * FROM dp_render",
	} {
		if _, err := db.Exec(ddl); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	for _, c := range fetchCases("dp_part") {
		t.Run(c.name, func(t *testing.T) {
			f := c.fetch
			f.Partitions = parts
			query, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, err := runFetch(db, f, query, args)
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			if want := c.want(data); !sameNumbers(got, want) {
				t.Errorf("got %v, want %v\nquery: %s", got, want, query)
			}
		})
	}

	for _, hostile := range []string{"'NaN'", "'Infinity'", "'-Infinity'", "1e300", "-1e300", "1e-300", "-5e-324", "NULL"} {
		for _, table := range []string{"dp_render", "dp_part"} {
			insert := "INSERT INTO " + table + " VALUES (6, " + hostile + ", 'CA'), (0, " + hostile + ", NULL)"
			if _, err := db.Exec(insert); err != nil {
				t.Fatalf("%s: %v", insert, err)
			}
		}
	}
	summary := []sqlrewrite.SummaryTerm{
		{Kind: sqlrewrite.CountAll},
		{Kind: sqlrewrite.CountNonNull, Column: "x"},
		{Kind: sqlrewrite.CountNumbers, Column: "x"},
		{Kind: sqlrewrite.ClampedSum, Column: "x", Lower: -10, Upper: 100},
		{Kind: sqlrewrite.ClampedSumSquares, Column: "x", Lower: -10, Upper: 100},
	}
	filter := []sqlrewrite.Condition{{Column: "s", In: []sqlrewrite.Value{{Str: "CA", IsText: true}, {Str: "NY", IsText: true}}}}
	cells := []sqlrewrite.CellDim{
		{Column: "s", Values: []sqlrewrite.Value{{Str: "CA", IsText: true}, {Str: "WA", IsText: true}}},
		{Column: "x", Edges: sqlrewrite.DoubleEdges([]float64{-10, 0, 50, 100})},
	}
	for _, c := range []struct {
		name  string
		fetch sqlrewrite.Fetch
	}{
		{"summary", sqlrewrite.Fetch{Summary: summary}},
		{"summary-filtered", sqlrewrite.Fetch{Filter: filter, Summary: summary}},
		{"histogram", sqlrewrite.Fetch{Histogram: &sqlrewrite.Histogram{Column: "x", Lower: -10, Upper: 100, Bins: 11}}},
		{"grouped-window", sqlrewrite.Fetch{Window: &sqlrewrite.Window{Column: "x", Lower: -10, Upper: 100, Offset: 3, Limit: 50, Grouped: true}}},
		{"grouped-window-grid", sqlrewrite.Fetch{Filter: filter, Window: &sqlrewrite.Window{Column: "x", Lower: -10, Upper: 100, Offset: 0, Limit: 500, Grouped: true, GridUnit: 0.25}}},
		{"grid-sums", sqlrewrite.Fetch{GridSums: &sqlrewrite.GridSums{Column: "x", Lower: -10, Upper: 100, Unit: 0.0625}}},
		{"profile", sqlrewrite.Fetch{Profile: &sqlrewrite.Profile{Column: "x", Lower: -10, Upper: 100, Terms: summary[1:]}}},
		{"profile-bins", sqlrewrite.Fetch{Filter: filter, Profile: &sqlrewrite.Profile{Column: "x", Lower: -10, Upper: 100, Bins: 8, Terms: summary[1:]}}},
		{"cells", sqlrewrite.Fetch{Cells: &sqlrewrite.Cells{Dims: cells}}},
		{"grouped", sqlrewrite.Fetch{Grouped: &sqlrewrite.GroupedSummary{Dims: cells, Terms: summary}}},
		{"keys", sqlrewrite.Fetch{Keys: &sqlrewrite.KeyCounts{Column: "s"}}},
		{"keys-numeric", sqlrewrite.Fetch{Filter: filter, Keys: &sqlrewrite.KeyCounts{Column: "k", Numeric: true}}},
		{"derived", sqlrewrite.Fetch{Derived: []sqlrewrite.DerivedColumn{{Name: "y", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: '*',
			Args: []*sqlrewrite.RowExpr{{Kind: sqlrewrite.RowColumn, Column: "x", Lower: -10, Upper: 100}, {Kind: sqlrewrite.RowConst, Num: 3}}}}},
			Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNumbers, Column: "y"}, {Kind: sqlrewrite.ClampedSum, Column: "y", Lower: 0, Upper: 300}}}},
	} {
		t.Run("hostile/"+c.name, func(t *testing.T) {
			plain := c.fetch
			plain.Table = "dp_render"
			split := c.fetch
			split.Table, split.Partitions = "dp_part", parts
			want := queryRows(t, db, plain)
			got := queryRows(t, db, split)
			if c.fetch.Profile != nil {
				// Unpartitioned, a profile groups by the column's value
				// and the reader adds up the groups of one clamped value;
				// partitioned, the coordinator adds them up.
				want = mergeGroups(t, want)
			}
			if len(want) == 0 {
				t.Fatal("the unpartitioned fetch returned no rows")
			}
			if !sameRows(got, want) {
				t.Errorf("partitioned:\n%v\nunpartitioned:\n%v", got, want)
			}
		})
	}
}

// queryRows renders f for PostgreSQL, checks that it is the partitioned
// shape exactly when f has partitions, and returns its rows as text
// (NULL as "NULL"), sorted.
func queryRows(t *testing.T, db *sql.DB, f sqlrewrite.Fetch) [][]string {
	t.Helper()
	query, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if strings.Contains(query, " UNION ALL ") != (len(f.Partitions) > 0) {
		t.Fatalf("partitions %v, query %s", f.Partitions, query)
	}
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out := testdb.Strings(t, rows, query)
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

// mergeGroups adds up the counts and sums of sorted rows with the same
// first column.
func mergeGroups(t *testing.T, rows [][]string) [][]string {
	var out [][]string
	for _, r := range rows {
		n := len(out)
		if n == 0 || out[n-1][0] != r[0] {
			out = append(out, slices.Clone(r))
			continue
		}
		for j := 1; j < len(r); j++ {
			a, err1 := strconv.ParseFloat(out[n-1][j], 64)
			b, err2 := strconv.ParseFloat(r[j], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("cannot add %q and %q", out[n-1][j], r[j])
			}
			out[n-1][j] = strconv.FormatFloat(a+b, 'g', -1, 64)
		}
	}
	return out
}

// sameRows compares rows value by value: equal text (counts, integer sums,
// keys), or numbers within the relative 1e-12 of sameNumbers (sums of
// doubles added in another order).
func sameRows(got, want [][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range got[i] {
			if got[i][j] == want[i][j] {
				continue
			}
			g, err1 := strconv.ParseFloat(got[i][j], 64)
			w, err2 := strconv.ParseFloat(want[i][j], 64)
			if err1 != nil || err2 != nil || math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
				return false
			}
		}
	}
	return true
}
