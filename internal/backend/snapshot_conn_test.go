package backend

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSnapshotKeepsConnectionAfterContextEnds: the executor closes a
// snapshot after its statement's context has ended (in a goroutine, so no
// answer waits for the ROLLBACK); the backend connection must go back to
// the pool rather than be discarded, or every statement pays a new
// connection (a PostgreSQL backend process: 32 clients got about 160
// answers/s instead of over a thousand). It fails if Snapshot begins its
// transaction under the statement's context, which database/sql rolls back
// and discards when that context ends.
func TestSnapshotKeepsConnectionAfterContextEnds(t *testing.T) {
	for _, c := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			db.SetMaxIdleConns(4)
			b := New(db, c.dialect, nil)
			var closing sync.WaitGroup
			for i := range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				snap, err := b.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var one int
				if err := snap.tx.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
					t.Fatal(err)
				}
				// As the executor does: the snapshot closes in a goroutine
				// while the statement's context ends.
				closing.Add(1)
				go func() {
					defer closing.Done()
					if err := snap.Close(); err != nil {
						t.Errorf("snapshot %d: close: %v", i, err)
					}
				}()
				cancel()
				closing.Wait()
			}
			if st := db.Stats(); st.OpenConnections > 1 || st.MaxIdleClosed > 0 {
				t.Errorf("20 snapshots left %d connections open and closed %d idle ones; want one connection reused", st.OpenConnections, st.MaxIdleClosed)
			}
		})
	}
}
