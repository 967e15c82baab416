package backend

import (
	"context"
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
	snap, err := b.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var got string
	if err := snap.tx.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "5s" && !strings.HasSuffix(got, "ms") {
		t.Errorf("statement_timeout = %q, want about 5s", got)
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
