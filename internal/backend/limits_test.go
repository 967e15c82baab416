package backend

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// limitsBackend is a server for TestConnectionLimits: how to lock its
// table pl so that reads of it wait, how to count the queries running
// with a label, and a query that runs until it is stopped.
type limitsBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	lock         []string
	unlock       string
	// running counts the other sessions running a query whose text is
	// LIKE its one argument.
	running string
	// endless runs for minutes, with the label dpproxy_limits_victim.
	endless string
}

var limitsBackends = []limitsBackend{
	{"postgres", "postgres", testdb.PostgresDSN,
		[]string{"BEGIN", "LOCK TABLE pl IN ACCESS EXCLUSIVE MODE"}, "COMMIT",
		"SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
		"SELECT pg_sleep(600) AS dpproxy_limits_victim"},
	{"mariadb", "mysql", testdb.MySQLDSN,
		[]string{"LOCK TABLES pl WRITE"}, "UNLOCK TABLES",
		"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID()",
		// CPU-bound: the server does not notice that its client left.
		"SELECT BENCHMARK(50000000000, CRC32('x')) AS dpproxy_limits_victim"},
}

// TestConnectionLimits: with a backend login that may hold 4 connections
// and SetLimits(3, 2), on PostgreSQL and MariaDB,
//   - alice's five snapshots, reading a locked table, hold two
//     connections: the other three wait for her turn; bob's takes the
//     third connection, and carol's waits for one until her context
//     ends, which fails it as a Timeout. No snapshot fails with the
//     server's "too many connections" (a Backend error): an unbounded
//     pool opened one connection per snapshot, past the login's limit,
//     and every analyst then got backend errors;
//   - with every connection taken, the end of bob's context stops his
//     query in the backend (on MariaDB KILL QUERY over the control
//     connection; sent over the statements' pool, it waited for a
//     connection until killTimeout, and the query ran on);
//   - once the table is unlocked, all of alice's snapshots read.
func TestConnectionLimits(t *testing.T) {
	for _, c := range limitsBackends {
		t.Run(c.name, func(t *testing.T) {
			dsn := c.dsn(t)
			admin := testdb.Open(t, c.driver, dsn)
			for _, s := range []string{"CREATE TABLE pl (id INTEGER)", "INSERT INTO pl VALUES (1), (2), (3)"} {
				if _, err := admin.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			limited := testdb.LimitedLogin(t, c.driver, dsn, 4)
			running := func(label string) int {
				t.Helper()
				var n int
				if err := admin.QueryRow(c.running, "%"+label+"%").Scan(&n); err != nil {
					t.Fatalf("backend activity: %v", err)
				}
				return n
			}
			waitUntil := func(what string, within time.Duration, cond func() bool) {
				t.Helper()
				for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%s: not after %v", what, within)
					}
				}
			}
			t.Cleanup(func() { // a victim a failed run left running
				if c.driver == "mysql" {
					var id int64
					if admin.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%dpproxy_limits_victim%' AND ID <> CONNECTION_ID()").Scan(&id) == nil {
						_, _ = admin.Exec(fmt.Sprintf("KILL QUERY %d", id))
					}
				}
			})

			b, err := Open(context.Background(), c.driver, limited, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			b.SetLimits(3, 2)

			lock, err := admin.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			for _, s := range c.lock {
				if _, err := lock.ExecContext(context.Background(), s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			unlocked := false
			defer func() {
				if !unlocked {
					_, _ = lock.ExecContext(context.Background(), c.unlock)
				}
			}()

			const read = "SELECT COUNT(*) AS dpproxy_limits_read FROM pl"
			alice := make(chan error, 5)
			for range 5 {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					snap, err := b.Snapshot(ctx, "alice")
					if err != nil {
						alice <- err
						return
					}
					defer snap.Close()
					rows, err := snap.q.QueryContext(ctx, read)
					if err == nil {
						for rows.Next() {
						}
						err = rows.Err()
						rows.Close()
					}
					alice <- err
				}()
			}
			waitUntil("alice's reads waiting for the lock", 10*time.Second, func() bool { return running("dpproxy_limits_read") >= 2 })
			time.Sleep(200 * time.Millisecond)
			select {
			case err := <-alice:
				t.Fatalf("one of alice's reads ended while the table is locked: %v", err)
			default:
			}

			bobCtx, stopBob := context.WithTimeout(context.Background(), 5*time.Second)
			defer stopBob()
			bobSnap, err := b.Snapshot(bobCtx, "bob")
			if err != nil {
				t.Fatalf("bob's snapshot, with alice at her limit: %v", err)
			}
			bob := make(chan error, 1)
			go func() {
				rows, err := bobSnap.q.QueryContext(bobCtx, c.endless)
				if err == nil {
					rows.Close()
				}
				bob <- err
			}()
			waitUntil("bob's query running", 10*time.Second, func() bool { return running("dpproxy_limits_victim") == 1 })
			if n := running("dpproxy_limits_read"); n != 2 {
				t.Errorf("%d of alice's reads running, want 2 (her limit)", n)
			}

			carolCtx, stopCarol := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer stopCarol()
			if snap, err := b.Snapshot(carolCtx, "carol"); err == nil {
				snap.Close()
				t.Errorf("carol got a fourth connection, want a wait for one of the three")
			} else if dperr.KindOf(err) != dperr.Timeout {
				t.Errorf("carol's wait for a connection: %v (%v), want a Timeout error", err, dperr.KindOf(err))
			}
			if open := b.DB().Stats().OpenConnections; open > 3 {
				t.Errorf("%d statement connections open, want at most 3", open)
			}

			// Every connection is taken (bob's snapshot stays open): his
			// query must still be stopped.
			stopBob()
			if err := <-bob; err == nil {
				t.Errorf("bob's query answered after his context ended")
			}
			waitUntil("bob's query to stop in the backend", 3*time.Second, func() bool { return running("dpproxy_limits_victim") == 0 })
			bobSnap.Close()

			if _, err := lock.ExecContext(context.Background(), c.unlock); err != nil {
				t.Fatal(err)
			}
			unlocked = true
			for range 5 {
				select {
				case err := <-alice:
					if err != nil {
						t.Errorf("alice's read: %v, want an answer", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("alice's reads did not end after the unlock")
				}
			}
		})
	}
}
