package backend

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPostgresStatementTimeout: a snapshot under a deadline carries
// PostgreSQL's own statement_timeout, so the backend stops a fetch nobody
// waits for even if the client-side cancel is lost.
func TestPostgresStatementTimeout(t *testing.T) {
	b := New(testdb.Postgres(t), sqlrewrite.PostgreSQL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	snap, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if got := snapString(t, ctx, snap, "SHOW statement_timeout"); got != "5s" && !strings.HasSuffix(got, "ms") {
		t.Errorf("statement_timeout = %q, want about 5s", got)
	}
}

// deadlineOnly has a deadline that never cancels it: only the backend's
// own statement timeout can stop a query run under it.
type deadlineOnly struct {
	context.Context
	at time.Time
}

func (d deadlineOnly) Deadline() (time.Time, bool) { return d.at, true }

// TestPostgresStatementTimeoutStopsFirstFetch: the statement timeout that
// goes to the server in one message with the snapshot's first fetch
// (pgTx) bounds that fetch: the server stops it when the time left runs
// out, with no client-side cancel.
func TestPostgresStatementTimeoutStopsFirstFetch(t *testing.T) {
	b := New(testdb.Postgres(t), sqlrewrite.PostgreSQL, nil)
	ctx := deadlineOnly{context.Background(), time.Now().Add(300 * time.Millisecond)}
	snap, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	start := time.Now()
	rows, err := snap.q.QueryContext(ctx, "SELECT pg_sleep(5)")
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the server let the first fetch run %v", took)
	}
	if !isBackendTimeout(err) {
		t.Errorf("got %v, want PostgreSQL's statement timeout (57014)", err)
	}
}

// TestPostgresSnapshotRoundTrips: a snapshot's first fetch, with its
// BEGIN and statement timeout, is one round trip to PostgreSQL (and its
// ROLLBACK one more, after the answer): database/sql's BeginTx would send
// BEGIN alone, and the timeout another round trip later.
func TestPostgresSnapshotRoundTrips(t *testing.T) {
	db, trips := testdb.PostgresCounting(t, testdb.PostgresDSN(t))
	if _, err := db.Exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (7)"); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.PostgreSQL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := sqlrewrite.Fetch{Table: "t", Filter: []sqlrewrite.Condition{{Column: "a", Range: &sqlrewrite.Range{Lower: 1, HasLower: true, LowerOpen: true}}},
		Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}
	for i := range 3 {
		trips.Take()
		snap, err := b.Snapshot(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.Summary(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if n := trips.Take(); n != 1 {
			t.Errorf("snapshot %d: %d round trips to the first fetch's answer, want 1", i, n)
		}
		if len(got) != 1 || got[0] != 2 {
			t.Errorf("snapshot %d: count %v, want [2]", i, got)
		}
		if err := snap.Close(); err != nil {
			t.Fatal(err)
		}
		if n := trips.Take(); n != 1 {
			t.Errorf("snapshot %d: %d round trips to close, want 1", i, n)
		}
	}
}

// TestMariaDBStatementTimeout: fetches under a deadline carry MariaDB's
// max_statement_time; a fetch that sleeps past it is stopped by the server
// (error 1969) even with no deadline on the client side.
func TestMariaDBStatementTimeout(t *testing.T) {
	b := New(testdb.MySQL(t), sqlrewrite.MySQL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	text := b.withTimeout(ctx, "SELECT SLEEP(5) FROM (SELECT 1 AS a UNION ALL SELECT 2) AS z")
	if !b.mariaDB {
		t.Skip("the MySQL server is not MariaDB")
	}
	if !strings.HasPrefix(text, "SET STATEMENT max_statement_time = 0.") {
		t.Fatalf("got %q", text)
	}
	start := time.Now()
	_, err := b.db.ExecContext(context.Background(), text) // no client deadline
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the server let the statement run %v", took)
	}
	if err != nil && !isBackendTimeout(err) {
		t.Errorf("got %v, want a timeout or MariaDB's silent interruption", err)
	}
}

// TestVitessStatementTimeout: behind Vitess (DPPROXY_TEST_VITESS_DSN, a
// vtgate; scripts/vitess.sh) fetches under a deadline carry vtgate's
// QUERY_TIMEOUT_MS directive, which it enforces (error 3024, the shards'
// queries killed) where it ignores MAX_EXECUTION_TIME.
func TestVitessStatementTimeout(t *testing.T) {
	dsn := os.Getenv("DPPROXY_TEST_VITESS_DSN")
	if dsn == "" {
		t.Skip("DPPROXY_TEST_VITESS_DSN is not set; skipping the Vitess timeout test")
	}
	b := New(testdb.Open(t, "mysql", dsn), sqlrewrite.MySQL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	text := b.withTimeout(ctx, "SELECT SLEEP(5) FROM (SELECT 1 AS a UNION ALL SELECT 2) AS z")
	if !b.vitess || !strings.HasPrefix(text, "SELECT /*vt+ QUERY_TIMEOUT_MS=") {
		t.Fatalf("vitess %v, got %q", b.vitess, text)
	}
	start := time.Now()
	_, err := b.db.ExecContext(context.Background(), text) // no client deadline
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("vtgate let the statement run %v", took)
	}
	if !isBackendTimeout(err) {
		t.Errorf("got %v, want error 3024", err)
	}
}

// TestMariaDBSortsWholeStrings: fetches on MariaDB and MySQL run with a
// max_sort_length of 16 KiB, so window functions tell apart strings that
// share their first 1024 bytes (a unit bound's DENSE_RANK over text keys
// ranked two 1501-byte keys as one, and counted each person toward only
// one of them: an independent review), and ordinary sorts still fit the
// default sort buffer.
func TestMariaDBSortsWholeStrings(t *testing.T) {
	db := testdb.MySQL(t)
	b := New(db, sqlrewrite.MySQL, nil)
	if _, err := db.Exec("CREATE TABLE long_keys (pid INT, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO long_keys VALUES (1, CONCAT(REPEAT('y', 1500), 'A')), (1, CONCAT(REPEAT('y', 1500), 'B')), (2, CONCAT(REPEAT('y', 1500), 'B'))"); err != nil {
		t.Fatal(err)
	}
	query := "SELECT pid, DENSE_RANK() OVER (PARTITION BY pid ORDER BY CAST(CONVERT(s USING utf8mb4) AS BINARY)) FROM long_keys ORDER BY pid, RIGHT(s, 1)"
	for _, timed := range []bool{false, true} {
		ctx := context.Background()
		if timed {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Minute)
			defer cancel()
		}
		rows, err := b.db.QueryContext(ctx, b.withTimeout(ctx, query))
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		for rows.Next() {
			var pid, r int
			if err := rows.Scan(&pid, &r); err != nil {
				t.Fatal(err)
			}
			ranks = append(ranks, r)
		}
		rows.Close()
		if fmt.Sprint(ranks) != "[1 2 1]" {
			t.Errorf("deadline %v: ranks %v of strings differing at byte 1501, want [1 2 1]", timed, ranks)
		}
	}
}

// TestPostgresSnapshotAfterConnectionDied: a snapshot whose pooled
// connection the server ended while it was idle (a restart, an
// administrator's pg_terminate_backend, an idle timeout) finds it dead at
// its first fetch, the first statement it sends, and sends that fetch
// again, with its BEGIN, on a fresh connection: the statement is answered
// rather than failed (and charged) for a connection that was gone before
// it began.
func TestPostgresSnapshotAfterConnectionDied(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	db := testdb.Open(t, "postgres", dsn)
	if _, err := db.Exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (7)"); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // the connection ended below is the one the snapshot gets
	var pid int64
	if err := db.QueryRow("SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin := testdb.Open(t, "postgres", dsn)
	if _, err := admin.Exec("SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	b := New(db, sqlrewrite.PostgreSQL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := b.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	f := sqlrewrite.Fetch{Table: "t", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}
	got, err := snap.Summary(ctx, f)
	if err != nil {
		t.Fatalf("first fetch on a connection the server had ended: %v", err)
	}
	if len(got) != 1 || got[0] != 3 {
		t.Errorf("count %v, want [3]", got)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
}
