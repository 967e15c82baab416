package backend

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSnapshotIsolation: a snapshot is a REPEATABLE READ transaction unless
// SetDefaultIsolation asked for the server's default level (PostgreSQL's
// is READ COMMITTED), for which nothing about isolation is sent; on
// PostgreSQL the transaction begins with the first fetch, in one message
// with it, or just before it when it has bind arguments.
func TestSnapshotIsolation(t *testing.T) {
	db := testdb.Postgres(t)
	for _, tc := range []struct {
		plain, args bool
		want        string
	}{{false, false, "repeatable read"}, {true, false, "read committed"}, {false, true, "repeatable read"}, {true, true, "read committed"}} {
		b := New(db, sqlrewrite.PostgreSQL, nil)
		if tc.plain {
			b.SetDefaultIsolation()
		}
		snap, err := b.Snapshot(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		query, args := "SHOW transaction_isolation", []any(nil)
		if tc.args {
			query, args = "SELECT current_setting('transaction_isolation') || $1", []any{""}
		}
		level := snapString(t, context.Background(), snap, query, args...)
		if again := snapString(t, context.Background(), snap, "SELECT current_setting('transaction_isolation')"); again != level {
			t.Errorf("the second query ran at %q, the first at %q: not one transaction", again, level)
		}
		snap.Close()
		if level != tc.want {
			t.Errorf("SetDefaultIsolation %v, first query with arguments %v: isolation %q, want %q", tc.plain, tc.args, level, tc.want)
		}
	}
}

// snapString runs a query of one text value in the snapshot's transaction
// under ctx.
func snapString(t *testing.T, ctx context.Context, snap *Snapshot, query string, args ...any) string {
	t.Helper()
	rows, err := snap.q.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var v string
	if !rows.Next() {
		t.Fatalf("%s: no row (%v)", query, rows.Err())
	}
	if err := rows.Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSnapshotReadsAFetchOnce: the second identical fetch of a snapshot
// returns the first one's numbers without asking the database (here the
// transaction is already over, so a query would fail), as a copy.
func TestSnapshotReadsAFetchOnce(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (7)"); err != nil {
		t.Fatal(err)
	}
	snap, err := New(db, sqlrewrite.SQLite, nil).Snapshot(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	f := sqlrewrite.Fetch{Table: "t", Window: &sqlrewrite.Window{Column: "a", Lower: 0, Upper: 5, Limit: 3}}
	first, err := snap.Window(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	first[0] = 99
	snap.Close()
	again, err := snap.Window(context.Background(), f)
	if err != nil || len(again) != 3 || again[0] != 1 || again[2] != 5 {
		t.Errorf("second identical fetch: %v, %v; want [1 2 5] without a query", again, err)
	}
	f.Window.Offset = 1
	if _, err := snap.Window(context.Background(), f); err == nil {
		t.Error("a different fetch after the transaction ended did not fail: not read from the database")
	}
}

// TestGroupedWindowEqualsSortedWindow: on every database, a grouped window
// (value counts, ranks taken by the reader) returns exactly the values of
// the sorted window, and grid sums computed from groups are the database's, for plain and grid-index windows, windows at the
// start, in the middle, across group boundaries and past the end, over a
// column with ties, values outside the bounds and NULLs.
func TestGroupedWindowEqualsSortedWindow(t *testing.T) {
	for _, b := range threeBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			var values []string
			for i := range 300 {
				v := fmt.Sprint((i*37)%23 - 3) // -3..19, ties, some below the bounds
				if i%29 == 0 {
					v = "NULL"
				}
				values = append(values, "("+v+")")
			}
			for _, s := range []string{"CREATE TABLE dp_grouped (a INTEGER)", "INSERT INTO dp_grouped (a) VALUES " + strings.Join(values, ", ")} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			snap, err := New(db, b.dialect, nil).Snapshot(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			filter := []sqlrewrite.Condition{{Column: "a", Range: &sqlrewrite.Range{Upper: 17, HasUpper: true}}}
			for _, w := range []sqlrewrite.Window{
				{Lower: 0, Upper: 15, Offset: 0, Limit: 7},
				{Lower: 0, Upper: 15, Offset: 100, Limit: 33},
				{Lower: 0, Upper: 15, Offset: 250, Limit: 100},
				{Lower: 0, Upper: 15, Offset: 1000, Limit: 5},
				{Lower: 2, Upper: 12, Offset: 40, Limit: 60, GridUnit: 0.25},
			} {
				w.Column = "a"
				sorted, err := snap.Window(context.Background(), sqlrewrite.Fetch{Table: "dp_grouped", Filter: filter, Window: &w})
				if err != nil {
					t.Fatal(err)
				}
				g := w
				g.Grouped = true
				grouped, err := snap.Window(context.Background(), sqlrewrite.Fetch{Table: "dp_grouped", Filter: filter, Window: &g})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(grouped, sorted) || (w.Offset < 250 && len(sorted) != int(w.Limit)) {
					t.Errorf("window %+v: grouped %v, sorted %v", w, grouped, sorted)
				}
			}
			for _, g := range []sqlrewrite.GridSums{{Column: "a", Lower: 2, Upper: 12, Unit: 0.25}, {Column: "a", Lower: -3, Upper: 1 << 20, Unit: 1.0 / 512}} {
				f := sqlrewrite.Fetch{Table: "dp_grouped", Filter: filter, GridSums: &g}
				direct, err := snap.GridSums(context.Background(), f)
				if err != nil {
					t.Fatal(err)
				}
				grouped, err := snap.GridSumsGrouped(context.Background(), f)
				if err != nil {
					t.Fatal(err)
				}
				if grouped.Count != direct.Count || grouped.Sum.Cmp(direct.Sum) != 0 || grouped.SumSquares.Cmp(direct.SumSquares) != 0 {
					t.Errorf("grid sums %+v: from groups %v, from the database %v", g, grouped, direct)
				}
			}
		})
	}
}

// threeBackends are the backends the package's database tests run on,
// each with its dialect and the testdb opener of its test database.
var threeBackends = []struct {
	name    string
	dialect sqlrewrite.Dialect
	open    func(testing.TB) *sql.DB
}{
	{"sqlite", sqlrewrite.SQLite, testdb.SQLite},
	{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres},
	{"mysql", sqlrewrite.MySQL, testdb.MySQL},
}
