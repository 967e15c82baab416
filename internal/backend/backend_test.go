package backend

import (
	"context"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSnapshotIsolation: a snapshot is a REPEATABLE READ transaction unless
// SetDefaultIsolation asked for the server's default level (PostgreSQL's
// is READ COMMITTED), for which nothing about isolation is sent.
func TestSnapshotIsolation(t *testing.T) {
	db := testdb.Postgres(t)
	for _, tc := range []struct {
		plain bool
		want  string
	}{{false, "repeatable read"}, {true, "read committed"}} {
		b := New(db, sqlrewrite.PostgreSQL, nil)
		if tc.plain {
			b.SetDefaultIsolation()
		}
		snap, err := b.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var level string
		if err := snap.tx.QueryRow("SHOW transaction_isolation").Scan(&level); err != nil {
			t.Fatal(err)
		}
		snap.Close()
		if level != tc.want {
			t.Errorf("SetDefaultIsolation %v: isolation %q, want %q", tc.plain, level, tc.want)
		}
	}
}

// TestSnapshotReadsAFetchOnce: the second identical fetch of a snapshot
// returns the first one's numbers without asking the database (here the
// transaction is already over, so a query would fail), as a copy.
func TestSnapshotReadsAFetchOnce(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (7)"); err != nil {
		t.Fatal(err)
	}
	snap, err := New(db, sqlrewrite.SQLite, nil).Snapshot(context.Background())
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
