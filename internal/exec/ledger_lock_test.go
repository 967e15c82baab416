package exec

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// lockStateRow locks the ledger state row of key FOR UPDATE in a
// transaction of its own connection to dsn, as an administrator's
// transaction or a second proxy stopped (SIGSTOP) between its UPDATE and
// its COMMIT holds it, until the returned function is called (or, so
// that a ledger write that waits for it cannot hang the test, after
// hold).
func lockStateRow(t *testing.T, dialect budget.Dialect, dsn, key string, hold time.Duration) (release func()) {
	t.Helper()
	tx, err := testdb.Open(t, dialect.String(), dsn).BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	query := "SELECT state_key FROM dpproxy_state_v3 WHERE state_key = ? FOR UPDATE"
	if dialect == budget.Postgres {
		query = strings.Replace(query, "?", "$1", 1)
	}
	var got string
	if err := tx.QueryRow(query, key).Scan(&got); err != nil {
		t.Fatalf("locking %s: %v", key, err)
	}
	timer := time.AfterFunc(hold, func() { _ = tx.Rollback() })
	return func() {
		timer.Stop()
		_ = tx.Rollback()
	}
}

// TestInteractiveTurnRowLockedElsewhere: while another session holds the
// row of an interactive instance's test turn locked, a count that must
// take the turn ends at its statement timeout with 3024 (Timeout), and a
// count whose commit meets the lock is void at a third of the turn's
// lease, with 3024, its answer withheld and the stored state unchanged;
// once the lock is released the count answers, the state advanced once.
// Before, the turn's swap and the commit ignored the statement's deadline
// and had no bound of their own: both waited for as long as the lock was
// held (the reproduction: 19 s with a 5 s statement timeout), and every
// other statement of the instance queued behind them.
func TestInteractiveTurnRowLockedElsewhere(t *testing.T) {
	const timeout, margin, hold = time.Second, 1500 * time.Millisecond, 8 * time.Second
	for _, b := range ledgerBackends[1:] {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			f := newInteractiveFixture(t, 3000, catalog.InteractiveMedian)
			dsn := b.dsn(t)
			l := sharedLedgers(t, b.dialect, dsn, 1)[0]
			l.SetLockTimeout(timeout) // as the proxy derives it from timeouts.statement
			e := New(f.back, l, nil)
			e.SetStatementTimeout(timeout)
			if _, err := e.Run(ctx, "a", f.plan(t, "SELECT COUNT(*) FROM t WHERE a < 0 OR b < 0"), rand.NewChaCha8([32]byte{1})); err != nil {
				t.Fatal(err) // creates the instance, tests nothing
			}
			plan := f.plan(t, "SELECT COUNT(*) FROM t WHERE a < 9 OR b = 1")
			ip := plan.Interactive
			turnKey := ip.StateKey() + ":turn"
			before := storedMM(t, l, plan)
			if ok, err := l.SwapState(ctx, turnKey, nil, []byte(freeTurn)); !ok || err != nil {
				t.Fatalf("storing a free turn: %v, %v", ok, err)
			}

			// The turn's row locked while a count waits to take the turn.
			release := lockStateRow(t, b.dialect, dsn, turnKey, hold)
			start := time.Now()
			_, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{2}))
			took := time.Since(start)
			t.Logf("count waiting for a locked turn: %v after %v", err, took)
			if dperr.KindOf(err) != dperr.Timeout || took > timeout+margin {
				t.Errorf("count waiting for a locked turn: %v (%v) after %v; want a timeout within %v", err, dperr.KindOf(err), took, timeout+margin)
			}
			release()
			if turn, _, err := l.GetState(ctx, turnKey); err != nil || string(turn) != freeTurn {
				t.Errorf("turn after the timed-out take: %q, %v; want it free", turn, err)
			}

			// The turn's row locked after the turn was taken, before the
			// test's commit.
			e.interactive.turnLease = 3 * timeout
			start = time.Now()
			_, _, err = e.interactive.answerMedian(ctx, ip, rand.NewChaCha8([32]byte{2}), func() (int64, error) {
				release = lockStateRow(t, b.dialect, dsn, turnKey, hold)
				return e.truthCount(ctx, "", ip, "")
			})
			// The commit, the read-back and the release are each bounded
			// by a third of the lease, a renewal under way by as much.
			took = time.Since(start)
			t.Logf("count whose commit meets a locked turn: %v after %v", err, took)
			if bound := e.interactive.turnLease; dperr.KindOf(err) != dperr.Timeout || took > bound+margin {
				t.Errorf("count whose commit meets a locked turn: %v (%v) after %v; want a timeout within %v", err, dperr.KindOf(err), took, bound+margin)
			}
			release()
			if !bytes.Equal(storedMM(t, l, plan), before) {
				t.Error("the stored state changed although the commit timed out and its answer was withheld")
			}

			// The turn the void count could not free is taken over after
			// a lease; the count then answers, testing once.
			e.SetStatementTimeout(4 * e.interactive.turnLease)
			res, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{2}))
			if err != nil {
				t.Fatalf("count once the lock is released: %v", err)
			}
			hard := strings.Contains(res.Warnings[0].Message, "hard query")
			t.Logf("count once the lock is released: hard %v", hard)
			var was, now mm.MedianMechanism
			if err := was.UnmarshalBinary(before); err != nil {
				t.Fatal(err)
			}
			if err := now.UnmarshalBinary(storedMM(t, l, plan)); err != nil {
				t.Fatal(err)
			}
			if want := was.HardUsed() + map[bool]int{true: 1}[hard]; now.HardUsed() != want || now.Tests(ip.Predicate) {
				t.Errorf("stored state: %d hard answers, tests the query again %v; want %d (hard %v) and the answer cached", now.HardUsed(), now.Tests(ip.Predicate), want, hard)
			}
		})
	}
}

// TestCreationWritesRowLockedElsewhere: the ledger writes of a creation
// that outlive its statement, the swap that stores its lease
// (holdCreation) and the store of its paid release (storeRelease), end
// after a third of the lease when another session holds their row (an
// existing lease locked FOR UPDATE; an insert of the same key not yet
// committed), with 3024's kind and the value read back: the lease is not
// held, so its claim is committed; the release is not stored, so its
// creation keeps it in memory. Before, both waited for as long as the
// row was held.
func TestCreationWritesRowLockedElsewhere(t *testing.T) {
	const lease, margin, hold = 3 * time.Second, 1500 * time.Millisecond, 8 * time.Second
	for _, b := range ledgerBackends[1:] {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := b.dsn(t)
			l := sharedLedgers(t, b.dialect, dsn, 1)[0]
			l.SetLockTimeout(lease)
			const claim = "synopsis:locked"
			if ok, err := l.SwapState(ctx, claimLeaseKey(claim), nil, []byte("0 earlier cancelled")); !ok || err != nil {
				t.Fatalf("storing an earlier creation's lease: %v, %v", ok, err)
			}
			res, err := l.Reserve(ctx, []budget.Account{{Name: "user:a"}}, budget.Cost{Epsilon: 1}, "test")
			if err != nil {
				t.Fatal(err)
			}
			release := lockStateRow(t, b.dialect, dsn, claimLeaseKey(claim), hold)
			start := time.Now()
			lease1, err := holdCreation(ctx, l, claim, res, lease)
			took := time.Since(start)
			t.Logf("lease swap on a locked row: %v after %v", err, took)
			if dperr.KindOf(err) != dperr.Timeout || lease1.held != nil || took > lease/3+margin {
				t.Errorf("lease swap on a locked row: %v (%v), held %q, after %v; want a timeout within %v, the lease not held", err, dperr.KindOf(err), lease1.held, took, lease/3+margin)
			}
			release()
			if err := lease1.settle(res, false); err != nil {
				t.Errorf("settling the creation that never held its lease: %v", err)
			}

			// Another session inserts the release's key and has not
			// committed yet.
			tx, err := testdb.Open(t, b.dialect.String(), dsn).BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			insert := "INSERT INTO dpproxy_state_v3 (state_key, state_value, updated_at) VALUES (?, ?, 0)"
			if b.dialect == budget.Postgres {
				insert = "INSERT INTO dpproxy_state_v3 (state_key, state_value, updated_at) VALUES ($1, $2, 0)"
			}
			if _, err := tx.Exec(insert, claim, []byte("theirs")); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(hold, func() { _ = tx.Rollback() })
			start = time.Now()
			stored, err := storeRelease(ctx, l, claim, []byte("mine"), lease/3)
			took = time.Since(start)
			t.Logf("release store on a locked key: %v, %v after %v", stored, err, took)
			if stored || dperr.KindOf(err) != dperr.Timeout || took > lease/3+margin {
				t.Errorf("release store on a locked key: %v, %v (%v) after %v; want a timeout within %v, not stored", stored, err, dperr.KindOf(err), took, lease/3+margin)
			}
			timer.Stop()
			_ = tx.Rollback()
			if stored, err := storeRelease(ctx, l, claim, []byte("mine"), lease/3); !stored || err != nil {
				t.Errorf("release store once the insert is rolled back: %v, %v", stored, err)
			}
		})
	}
}
