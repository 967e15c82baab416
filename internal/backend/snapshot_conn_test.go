package backend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
	for _, c := range threeBackends {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			db.SetMaxIdleConns(4)
			b := New(db, c.dialect, nil)
			var closing sync.WaitGroup
			for i := range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				snap, err := b.Snapshot(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				rows, err := snap.q.QueryContext(ctx, "SELECT 1")
				if err != nil {
					t.Fatal(err)
				}
				rows.Close()
				// As the executor does: the fetches are over (Disarm), and
				// the snapshot closes in a goroutine while the statement's
				// context ends.
				snap.Disarm()
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

// TestSnapshotKillsCancelledQuery: on MariaDB, which goes on running a
// query whose client went away, the end of a snapshot's context stops the
// query it is running (found by its tag, killed over another connection); once the
// snapshot is disarmed, the end of its context kills nothing. SELECT
// BENCHMARK stands for a long CPU-bound fetch: the server does not notice
// a closed client during it (it does notice one during SLEEP or a lock
// wait, after a few seconds).
func TestSnapshotKillsCancelledQuery(t *testing.T) {
	db := testdb.MySQL(t)
	b := New(db, sqlrewrite.MySQL, nil)
	for _, disarmed := range []bool{false, true} {
		label := fmt.Sprintf("dpproxy_kill_test_disarmed_%t", disarmed)
		running := func() (id int64, ok bool) {
			err := db.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()", "%"+label+"%").Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return 0, false
			}
			if err != nil {
				t.Fatal(err)
			}
			return id, true
		}
		waitFor := func(what string, cond func() bool) {
			t.Helper()
			for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: not after 10 s", what)
				}
			}
		}
		t.Cleanup(func() { // a query a failed run left burning CPU
			if id, ok := running(); ok {
				_, _ = db.Exec(fmt.Sprintf("KILL QUERY %d", id))
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		snap, err := b.Snapshot(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			rows, err := snap.q.QueryContext(ctx, "SELECT BENCHMARK(5000000000, CRC32('x')) AS "+label)
			if err == nil {
				rows.Close()
			}
		}()
		waitFor("the query to run", func() bool { _, ok := running(); return ok })
		if disarmed {
			snap.Disarm()
		}
		cancel()
		<-done
		if !disarmed {
			waitFor("the cancelled query to stop", func() bool { _, ok := running(); return !ok })
		} else {
			time.Sleep(time.Second)
			id, ok := running()
			if !ok {
				t.Errorf("a disarmed snapshot's query was killed when its context ended")
			} else if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
				t.Fatal(err)
			}
		}
		_ = snap.Close()
	}
}
