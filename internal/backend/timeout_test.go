package backend

import (
	"context"
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
