package budget

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// One round trip per batch. A batch whose accounts this Ledger knows
// (known: the usage a batch of its own last read under the accounts'
// locks or wrote, and committed), and whose Reserves all fit that usage,
// is sent to the database as one compare-and-swap (casBatch), which the
// server runs and commits by itself: one round trip and one durable
// commit in all, instead of BEGIN, the locking read, the writes and
// COMMIT, one round trip each (bench/RESULTS-load.md). On PostgreSQL it is
// one statement with data-modifying WITH queries (pgbatch.go); on MariaDB
// one anonymous compound statement that opens and ends its own
// transaction (mariabatch.go). Either first locks the accounts' rows
// (sorted, as every transaction of the ledger does, before any
// reservation row) and the pending rows of its Commits, and writes nothing
// unless every account still has the limits and usage the batch was
// checked against and every Commit's reservation is still pending. The
// check is then exactly the one the locked path makes (batchTx): the same
// usage, read under the same locks, and nothing can change it before the
// compare-and-swap commits. If another Ledger (another proxy sharing the
// database, a Cancel, SetLimit, Reset) changed an account, nothing is
// written, this Ledger forgets what it knew, and the batch runs on the
// locked path; after such a miss the next batches skip the attempt for a
// while (casBackoff), so that proxies taking turns on one account do not
// pay for two round trips per batch.
//
// Durability is the locked path's: the compare-and-swap is committed (on
// PostgreSQL with the session's synchronous_commit = on, on MariaDB with
// innodb_flush_log_at_trx_commit checked at Open: durable.go) before the
// server answers, so a Reserve returns only a reservation that a crash of
// the database cannot take back. One difference in failure: the locked
// path knows whether its COMMIT was sent, the compare-and-swap does not.
// A connection that fails while it runs (lostBeforeCommit's errors) may
// have committed it or not; the batch is then run again on the locked
// path, as a transaction that lost its connection before its COMMIT is,
// so that a server restart costs no statement an error. If the lost
// compare-and-swap had committed, its reservations stay pending, never
// returned to a caller: spent, as an abandoned Reserve's that could not
// be cancelled. The failure can charge a batch twice, never lose a charge
// (TestBatchAnswerLost, TestBatchKilledBeforeCommit).

// casBackoffMax bounds how many batches skip the compare-and-swap after
// consecutive misses.
const casBackoffMax = 64

// chargedAccount is an account a batch charges: the usage it was checked
// against and the usage it gets.
type chargedAccount struct {
	name     string
	old, new usage
}

// batchWrite is a batch's writes, once its Reserves were checked: run as
// pgBatchSQL on PostgreSQL (runPostgres), and as a compound statement on
// MariaDB (runMariaDB) when it is a compare-and-swap.
type batchWrite struct {
	now      int64
	accounts []chargedAccount // sorted by name
	commits  []int64          // ids of pending reservations to commit
	granted  []*request       // Reserves to record, in queue order
}

// casCapable reports whether the Ledger's database runs a batch as one
// compare-and-swap: PostgreSQL, and MariaDB (Open's probe found its
// anonymous compound statements; MySQL does not run them).
func (l *Ledger) casCapable() bool {
	return l.dialect == Postgres || l.mariaDBBlocks
}

// casBatch runs batch as one compare-and-swap (see above) if this Ledger
// knows the usage of every account it charges and every Reserve fits it.
// It reports whether it settled the batch (outcomes set, or err the
// batch's error); false means that nothing was written and the batch is
// for the locked path.
func (l *Ledger) casBatch(ctx context.Context, batch []*request, outcomes []error) (done bool, err error) {
	b := &l.batch
	if !l.casCapable() {
		return false, nil
	}
	if b.casSkip > 0 {
		b.casSkip--
		return false, nil
	}
	w := batchWrite{now: batch[0].now}
	usages := map[string]usage{}
	for _, req := range batch {
		if req.reserve == nil {
			w.commits = append(w.commits, req.commit.id)
			continue
		}
		for _, a := range req.reserve.sorted {
			u, ok := b.known[a]
			if !ok {
				return false, nil
			}
			usages[a] = u
		}
	}
	old := maps.Clone(usages)
	for i, req := range batch {
		outcomes[i] = nil
		if req.reserve == nil {
			continue
		}
		// A refusal is worded from the usage read under the locks.
		if refusal(usages, req.reserve) != nil {
			return false, nil
		}
		for _, a := range req.reserve.sorted {
			usages[a] = usages[a].plus(req.reserve.cost)
		}
		w.granted = append(w.granted, req)
	}
	for _, a := range slices.Sorted(maps.Keys(usages)) {
		w.accounts = append(w.accounts, chargedAccount{name: a, old: old[a], new: usages[a]})
	}
	var wrote bool
	runCtx := ctx
	switch l.dialect {
	case Postgres:
		// The statement runs outside any transaction, where tryTx's SET
		// LOCAL lock_timeout cannot reach it: its wait for the accounts'
		// row locks is bounded here instead, at the same whole seconds. A
		// statement cut off by this bound may have committed or not
		// (database/sql reports the context's error once it ends, whatever
		// the server did); the batch then fails as a lock timeout, and
		// reservations it may have written stay pending: spent, never
		// returned to a caller.
		if bound := l.dialect.lockWaitBound(l.lockTimeout); bound > 0 {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeout(ctx, bound)
			defer cancel()
		}
		wrote, err = w.runPostgres(runCtx, l, nil)
	case MySQL:
		// The compound statement sets innodb_lock_wait_timeout itself, and
		// rolls back before it fails with the server's lock wait timeout
		// (lockTimedOut, below). The server does not stop it when ctx ends
		// (the driver only closes the connection, and the statement goes
		// on waiting for its lock and then commits), so its waits must end
		// first: blockLockWait.
		block, ok := w.mariaDBBlock(l.dialect.lockWait(blockLockWait(ctx, l.dialect.lockWaitBound(l.lockTimeout))))
		if !ok {
			return false, nil
		}
		wrote, err = w.runMariaDB(ctx, l, block)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// The batch's own time ended while the statement ran: it may have
		// committed or not, so its reservations count as spent and the
		// outcome is reported as unknown, never as not charged.
		l.forget(usages)
		return true, dperr.Wrap(dperr.Internal, err, "privacy budget ledger failed: the batch's time ended before the ledger answered, and what it wrote is unknown")
	case err != nil && ctx.Err() == nil && runCtx.Err() != nil:
		l.forget(usages)
		return true, dperr.Wrap(dperr.Timeout, err, lockTimedOutText)
	case err == nil && wrote:
		b.casBackoff = 0
		for a, u := range usages {
			b.known[a] = u
		}
		return true, nil
	case err != nil && l.dialect.lockTimedOut(err):
		// The server gave up a lock wait, and nothing was committed.
		l.forget(usages)
		return true, dperr.Wrap(dperr.Timeout, err, lockTimedOutText)
	case err == nil || l.dialect.retryable(err) || l.dialect.lostBeforeCommit(err):
		// Nothing written (or, for a lost connection, possibly written:
		// then spent, see above).
		l.forget(usages)
		b.casBackoff = min(2*b.casBackoff+1, casBackoffMax)
		b.casSkip = b.casBackoff
		return false, nil
	}
	l.forget(usages)
	return true, err
}

// blockLockWait is the bound on each row-lock wait of a MariaDB compound
// statement run under ctx: the ledger's own (lockWaitBound; 0 for none),
// cut to a third of what is left of ctx, in whole seconds and at least
// one, so that its two waits (the accounts' rows, then the Commits') and
// its writes end before ctx does. A statement still waiting when ctx
// ended would go on and commit after the batch had given up on it.
func blockLockWait(ctx context.Context, bound time.Duration) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return bound
	}
	limit := max(time.Until(deadline)/3/time.Second, 1) * time.Second
	if bound == 0 || bound > limit {
		return limit
	}
	return bound
}

// forget drops what this Ledger knew of the accounts' usage.
func (l *Ledger) forget(usages map[string]usage) {
	for a := range usages {
		delete(l.batch.known, a)
	}
}
