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
