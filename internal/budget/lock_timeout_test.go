package budget

import (
	"context"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// holdRows locks the rows of the given state keys and accounts FOR UPDATE
// in a transaction of another connection to dsn, as an administrator's
// transaction or a proxy stopped between its UPDATE and its COMMIT holds
// them, until the returned function (or, so that a ledger that waits for
// them cannot hang the test, after a minute) rolls it back.
func holdRows(t *testing.T, b backend, dsn string, keys, accounts []string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, b, dsn)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, lock := range []struct {
		query string
		names []string
	}{
		{"SELECT state_key FROM dpproxy_state_v3 WHERE state_key = ? FOR UPDATE", keys},
		{"SELECT name FROM dpproxy_accounts_v3 WHERE name = ? FOR UPDATE", accounts},
	} {
		for _, name := range lock.names {
			var got string
			if err := tx.QueryRowContext(ctx, b.dialect.rebind(lock.query), name).Scan(&got); err != nil {
				t.Fatalf("locking %s: %v", name, err)
			}
		}
	}
	timer := time.AfterFunc(time.Minute, func() { _ = tx.Rollback() })
	return func() {
		timer.Stop()
		_ = tx.Rollback()
	}
}

// TestLockTimeout: a ledger transaction that waits for a row another
// session holds locked gives up after the ledger's lock timeout with a
// timeout (3024's kind), uncommitted and not run again, whether it
// swaps a state value or reserves budget (a group-commit batch); once the
// lock is released both go through, the timed-out Reserve having charged
// nothing, on the locked path and on the compare-and-swap (PostgreSQL's
// statement, MariaDB's compound statement, which rolls back before it
// fails) alike. Before SetLockTimeout, PostgreSQL waited for as long as the
// lock was held, and MariaDB 50 s, then ran the transaction again up to
// 12 times.
func TestLockTimeout(t *testing.T) {
	const timeout, margin = time.Second, 1500 * time.Millisecond
	for _, b := range backends[1:] {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := b.freshDSN(t)
			l := openLedger(t, b, dsn)
			l.SetLockTimeout(timeout)
			setLimits(t, l, map[string]Cost{"alice": {Epsilon: 1}})
			if err := l.PutState(ctx, "k", []byte("a")); err != nil {
				t.Fatal(err)
			}
			// A settled reservation first, so that the ledger knows
			// alice's usage and the Reserve below is its compare-and-swap
			// (casBatch): on PostgreSQL outside the transactions SET LOCAL
			// lock_timeout bounds.
			commit(t, reserve(t, l, Cost{Epsilon: 0.25}, "alice"))
			release := holdRows(t, b, dsn, []string{"k"}, []string{"alice"})
			defer release()

			start := time.Now()
			ok, err := l.SwapState(ctx, "k", []byte("a"), []byte("b"))
			if took := time.Since(start); ok || dperr.KindOf(err) != dperr.Timeout || took > timeout+margin {
				t.Errorf("swap of a locked row: %v, %v (%v) after %v; want a timeout within %v", ok, err, dperr.KindOf(err), took, timeout+margin)
			}
			start = time.Now()
			r, err := l.Reserve(ctx, stored("alice"), Cost{Epsilon: 0.25}, "test")
			if took := time.Since(start); r != nil || dperr.KindOf(err) != dperr.Timeout || took > timeout+margin {
				t.Errorf("Reserve on a locked account: %v, %v (%v) after %v; want a timeout within %v", r, err, dperr.KindOf(err), took, timeout+margin)
			}
			if n := l.Retries(); n != 0 {
				t.Errorf("%d transactions run again after a lock timeout, want 0", n)
			}

			release()
			if ok, err := l.SwapState(ctx, "k", []byte("a"), []byte("b")); !ok || err != nil {
				t.Errorf("swap once the lock is released: %v, %v", ok, err)
			}
			commit(t, reserve(t, l, Cost{Epsilon: 0.25}, "alice"))
			wantRemaining(t, l, "alice", Cost{Epsilon: 0.5})
		})
	}
}
