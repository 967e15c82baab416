package budget

import (
	"context"
	"errors"
	"testing"
	"time"
)

// holdAccountLock locks the account's row from another connection, as a
// slow ledger or another proxy's batch would, until the returned release
// is called.
func holdAccountLock(t *testing.T, l *Ledger, account string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := l.db.Conn(ctx)
	if err != nil {
		t.Fatalf("Conn: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	lock := "SELECT epsilon_used FROM dpproxy_accounts_v3 WHERE name = ?" + l.dialect.lockSuffix()
	if l.dialect == SQLite {
		lock = "UPDATE dpproxy_accounts_v3 SET epsilon_used = epsilon_used WHERE name = ?"
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatalf("BEGIN: %v", err)
	}
	if _, err := conn.ExecContext(ctx, l.dialect.rebind(lock), account); err != nil {
		t.Fatalf("lock: %v", err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			t.Errorf("COMMIT: %v", err)
		}
	}
}

// waitAbandoned waits until the ledger has cancelled n abandoned
// reservations, or fails the test after ten seconds.
func waitAbandoned(t *testing.T, l *Ledger, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cancelled, stranded := l.Abandoned()
		if stranded != 0 {
			t.Fatalf("%d abandoned reservations could not be cancelled", stranded)
		}
		if cancelled >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d abandoned reservations cancelled after 10 s, want %d", cancelled, n)
		}
	}
}

// TestAbandonedReserveChargesNothing: a Reserve whose context ends while
// its batch waits for the account's lock (a statement timeout, KILL QUERY,
// a client hang-up before any data is read) returns the context's error,
// and the reservation the batch grants once the lock is free is cancelled:
// the statement costs nothing (DESIGN.md §2, "A query refused before any
// data is read costs nothing").
func TestAbandonedReserveChargesNothing(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:a": {Epsilon: 1}})
		release := holdAccountLock(t, l, "user:a")
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		if _, err := l.Reserve(short, stored("user:a"), Cost{Epsilon: 0.25}, "timed out before any fetch"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Reserve: %v, want the context's deadline", err)
		}
		release()
		waitAbandoned(t, l, 1)
		wantRemaining(t, l, "user:a", Cost{Epsilon: 1})
		history, err := l.History(ctx, "user:a", 0)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		if len(history) != 1 || history[0].State != Cancelled {
			t.Errorf("history %+v, want one cancelled reservation", history)
		}
	})
}

// TestAbandonedQueuedReserveNeverRuns: a Reserve whose context ends while
// it is queued behind a running batch leaves the queue and is never
// written; the batch ahead of it is granted as usual.
func TestAbandonedQueuedReserveNeverRuns(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:a": {Epsilon: 1}})
		release := holdAccountLock(t, l, "user:a")
		first := make(chan error, 1)
		go func() {
			r, err := l.Reserve(ctx, stored("user:a"), Cost{Epsilon: 0.5}, "waits for the lock")
			if err == nil {
				err = r.Commit(ctx)
			}
			first <- err
		}()
		// Wait until the first Reserve's batch has left the queue.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			l.batch.mu.Lock()
			taken := l.batch.running && len(l.batch.queue) == 0
			l.batch.mu.Unlock()
			if taken {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the first Reserve never started its batch")
			}
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := l.Reserve(short, stored("user:a"), Cost{Epsilon: 0.25}, "queued, then timed out"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Reserve: %v, want the context's deadline", err)
		}
		release()
		if err := <-first; err != nil {
			t.Fatalf("first Reserve: %v", err)
		}
		wantRemaining(t, l, "user:a", Cost{Epsilon: 0.5})
		history, err := l.History(ctx, "user:a", 0)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		if len(history) != 1 || history[0].State != Committed {
			t.Errorf("history %+v, want only the first, committed reservation", history)
		}
		if cancelled, stranded := l.Abandoned(); cancelled != 0 || stranded != 0 {
			t.Errorf("Abandoned() = %d, %d; want nothing granted to the queued Reserve", cancelled, stranded)
		}
	})
}
