package main

import (
	"context"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestLedgerLockWaitsEndAtTheStatementTimeout: the ledger the proxy opens
// waits at most the lock timeout it is given (serve passes
// timeouts.statement) for a row another session holds locked, then fails
// with 3024's kind; before, a PostgreSQL ledger waited for as long as the
// lock was held and a MariaDB one 50 s, twelve times over.
func TestLedgerLockWaitsEndAtTheStatementTimeout(t *testing.T) {
	const timeout, margin, hold = time.Second, 1500 * time.Millisecond, 8 * time.Second
	for _, l := range sharedLedgers[1:] {
		t.Run(l.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := l.dsn(t)
			ledger, db, err := openLedger(ctx, catalog.Database{Driver: l.driver, DSN: dsn}, timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := ledger.PutState(ctx, "k", []byte("a")); err != nil {
				t.Fatal(err)
			}
			tx, err := testdb.Open(t, l.driver, dsn).BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			lock := "SELECT state_key FROM dpproxy_state_v3 WHERE state_key = 'k' FOR UPDATE"
			if _, err := tx.Exec(lock); err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(hold, func() { _ = tx.Rollback() })
			start := time.Now()
			ok, err := ledger.SwapState(ctx, "k", []byte("a"), []byte("b"))
			if took := time.Since(start); ok || dperr.KindOf(err) != dperr.Timeout || took > timeout+margin {
				t.Errorf("swap of a locked row: %v, %v (%v) after %v; want a timeout within %v", ok, err, dperr.KindOf(err), took, timeout+margin)
			}
		})
	}
}
