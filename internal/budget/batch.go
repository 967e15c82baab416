package budget

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Group commit. Every Reserve and Commit of one Ledger joins a queue; one
// goroutine at a time takes everything queued and runs it as one database
// transaction, so that concurrent statements of one analyst share one lock
// of the analyst's account row and one durable commit (one fsync) instead
// of queueing for the lock one transaction at a time. The transaction is
// exactly what the requests would have run one by one, in queue order:
//
//   - it locks the union of the requests' accounts, sorted, as a lone
//     Reserve does, before it touches any reservation row;
//   - it checks each Reserve, in order, against the usage read under the
//     lock plus the costs of the Reserves before it in the batch (each
//     request gets its own refusal); the database then adds the granted
//     costs one by one, in the same order, so the stored totals are the
//     same float64 sums as with lone Reserves;
//   - it settles every queued Commit with one UPDATE of the pending rows.
//
// On PostgreSQL the writes are one statement (pgbatch.go). On PostgreSQL
// and MariaDB a batch whose accounts the Ledger knows is one round trip,
// a compare-and-swap without the locking read (casbatch.go).
//
// A batch is all or nothing like any transaction: it is retried as a whole
// on a lock conflict; if a Commit finds its reservation already settled,
// the batch is rolled back and each request is run again on its own, so
// that only that Commit fails. Several proxies sharing the ledger are
// serialized by the account locks as before: a batch is one more
// transaction to them.

// maxBatch bounds the requests of one transaction (and so the bind
// parameters of its statements; SQLite allows 32766).
const maxBatch = 256

// batchTimeout bounds one batch transaction, which runs for requests whose
// callers may have given up (their contexts do not cancel it).
const batchTimeout = 30 * time.Second

// request is a queued Reserve (reserve non-nil) or Commit.
type request struct {
	reserve *reserveRequest
	commit  *Reservation
	now     int64
	// done receives the outcome; for a Reserve, id is then its number.
	done chan error
	id   int64
	// abandoned is set, under the batcher's mutex, when the caller left
	// submit before the outcome was delivered (deliver).
	abandoned bool
}

// reserveRequest is what Reserve was asked.
type reserveRequest struct {
	accounts []Account // in the caller's order: refusals name the first that blocks
	sorted   []string  // sorted, distinct
	cost     Cost
	memo     string
}

// commitDelay is how long a Commit queued alone waits for company before
// its batch runs: the next Reserve of a client that sends one statement
// after another then carries the previous statement's Commit, one
// transaction (one fsync) per statement instead of two.
const commitDelay = 5 * time.Millisecond

// batcher is the queue of one Ledger.
type batcher struct {
	mu      sync.Mutex
	queue   []*request
	running bool
	// delayed is set while a timer will start a batch for queued Commits.
	delayed bool

	// The rest belongs to the goroutine running batches (drain; one at a
	// time, handed over under mu).
	//
	// known holds, per account, the limits and usage that the last
	// committed batch read under the account's lock or wrote (casBatch).
	known map[string]usage
	// casSkip is how many more batches skip casBatch; casBackoff is what
	// it is set to at the next miss (doubled, plus one, at each
	// consecutive miss; reset by a hit).
	casSkip, casBackoff int
	// stmt is pgBatchSQL, prepared (pgBatchStmt).
	stmt *sql.Stmt
}

// submit queues req and waits for its outcome or for ctx to end. When ctx
// ends first, the request is taken out of the queue if no batch has taken
// it yet (it never runs: a Commit leaves its reservation spent, a Reserve
// charges nothing), and otherwise marked abandoned, so that the batch
// cancels the reservation it grants for an abandoned Reserve (deliver): its
// caller never held it, so no data can have been read for it. An outcome
// delivered before the caller gave up is returned as if ctx had not ended.
func (l *Ledger) submit(ctx context.Context, req *request) error {
	if err := ctx.Err(); err != nil {
		return ledgerError(err)
	}
	req.done = make(chan error, 1)
	b := &l.batch
	b.mu.Lock()
	b.queue = append(b.queue, req)
	switch {
	case b.running:
	case req.reserve != nil:
		b.running = true
		go l.drain()
	case !b.delayed:
		b.delayed = true
		time.AfterFunc(commitDelay, l.flushCommits)
	}
	b.mu.Unlock()
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case err := <-req.done:
		return err
	default:
	}
	if i := slices.Index(b.queue, req); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	} else {
		req.abandoned = true
	}
	return ledgerError(ctx.Err())
}

// deliver hands req its outcome, unless its caller abandoned it; it
// reports whether req is an abandoned Reserve that was granted, which the
// caller of deliver must then cancel (cancelAbandoned).
func (l *Ledger) deliver(req *request, err error) (orphan bool) {
	b := &l.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	if req.abandoned {
		return req.reserve != nil && err == nil
	}
	req.done <- err
	return false
}

// cancelAbandoned cancels, each in a transaction of its own, the reservations
// granted to Reserves whose callers gave up. No caller ever held them, so
// none can be committed or used to read data. If the cancellation fails,
// or the process dies before it, they stay reserved: spent, the safe side.
func (l *Ledger) cancelAbandoned(orphans []*request) {
	if len(orphans) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	for _, req := range orphans {
		r := &Reservation{ledger: l, id: req.id, accounts: req.reserve.sorted, cost: req.reserve.cost}
		if _, err := r.cancel(ctx, nil); err != nil {
			l.orphansStranded.Add(1)
			continue
		}
		l.orphansCancelled.Add(1)
	}
}

// flushCommits starts a batch for the Commits that waited commitDelay, if
// no batch took them meanwhile.
func (l *Ledger) flushCommits() {
	b := &l.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	b.delayed = false
	if !b.running && len(b.queue) > 0 {
		b.running = true
		go l.drain()
	}
}

// drain runs batches until the queue is empty.
func (l *Ledger) drain() {
	b := &l.batch
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatch)
		if n == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		batch := slices.Clone(b.queue[:n])
		b.queue = slices.Delete(b.queue, 0, n)
		b.mu.Unlock()
		l.runBatch(batch)
	}
}

// errStaleCommit rolls back a batch in which a Commit found its
// reservation already settled.
var errStaleCommit = errors.New("budget: a batched commit found its reservation settled")

// runBatch runs the batch in one transaction and reports every outcome.
func (l *Ledger) runBatch(batch []*request) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	outcomes := make([]error, len(batch))
	l.batches.Add(1)
	done, err := l.casBatch(ctx, batch, outcomes)
	if !done {
		err = l.lockedBatch(ctx, batch, outcomes)
	}
	var orphans []*request
	for i, req := range batch {
		switch {
		case errors.Is(err, errStaleCommit):
			outcomes[i] = l.runAlone(ctx, req)
		case err != nil:
			outcomes[i] = ledgerError(err)
		}
		if l.deliver(req, outcomes[i]) {
			orphans = append(orphans, req)
		}
	}
	l.cancelAbandoned(orphans)
}

// runAlone runs one request in a transaction of its own.
func (l *Ledger) runAlone(ctx context.Context, req *request) error {
	if req.reserve == nil {
		return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
			return l.settle(ctx, tx, req.commit.id, Committed, req.now)
		}))
	}
	return l.runBatch1(ctx, req)
}

// runBatch1 runs a Reserve as a batch of one.
func (l *Ledger) runBatch1(ctx context.Context, req *request) error {
	outcomes := make([]error, 1)
	if err := l.lockedBatch(ctx, []*request{req}, outcomes); err != nil {
		return ledgerError(err)
	}
	return outcomes[0]
}

// lockedBatch runs the batch as a transaction that locks its accounts
// (batchTx) and then knows, if it committed, the usage it read and
// wrote; otherwise it forgets what it knew of the batch's accounts.
func (l *Ledger) lockedBatch(ctx context.Context, batch []*request, outcomes []error) error {
	var usages map[string]usage
	err := l.inTx(ctx, func(tx *sql.Tx) (err error) {
		usages, err = l.batchTx(ctx, tx, batch, outcomes)
		return err
	})
	if l.batch.known == nil {
		l.batch.known = map[string]usage{}
	}
	known := l.batch.known
	if err != nil {
		for _, req := range batch {
			if req.reserve != nil {
				for _, a := range req.reserve.sorted {
					delete(known, a)
				}
			}
		}
		return err
	}
	maps.Copy(known, usages)
	return nil
}

// batchTx is the batch's transaction; it sets outcomes[i] to the refusal
// of a Reserve that cannot pay (nil for the others) and each granted
// Reserve's id, and returns the usage of the accounts it locked as it
// leaves them.
func (l *Ledger) batchTx(ctx context.Context, tx *sql.Tx, batch []*request, outcomes []error) (map[string]usage, error) {
	var union []string
	var commits []any
	for _, req := range batch {
		if req.reserve != nil {
			union = append(union, req.reserve.sorted...)
		} else {
			commits = append(commits, req.commit.id)
		}
	}
	union = slices.Compact(slices.Sorted(slices.Values(union)))
	usages := map[string]usage{}
	if len(union) > 0 {
		var err error
		if usages, err = l.lockAccounts(ctx, tx, union); err != nil {
			return nil, err
		}
	}
	read := maps.Clone(usages)
	if len(commits) > 0 && l.dialect != Postgres {
		res, err := l.exec(ctx, tx, "UPDATE dpproxy_reservations SET state = ?, settled_at = ? WHERE state = ? AND id IN ("+placeholders(len(commits))+")",
			append([]any{string(Committed), batch[0].now, string(Reserved)}, commits...)...)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(commits)) {
			return nil, errors.Join(errStaleCommit, err)
		}
	}
	// Check the Reserves in order; charged[a] is whether a was charged.
	charged := map[string]bool{}
	var granted []*request
	for i, req := range batch {
		outcomes[i] = nil
		r := req.reserve
		if r == nil {
			continue
		}
		if err := refusal(usages, r); err != nil {
			outcomes[i] = err
			continue
		}
		for _, a := range r.sorted {
			usages[a] = usages[a].plus(r.cost)
			charged[a] = true
		}
		granted = append(granted, req)
	}
	if l.dialect == Postgres {
		// The writes in one statement (pgbatch.go).
		w := batchWrite{now: batch[0].now, granted: granted}
		for _, id := range commits {
			w.commits = append(w.commits, id.(int64))
		}
		for _, a := range union {
			if charged[a] {
				w.accounts = append(w.accounts, chargedAccount{name: a, old: read[a], new: usages[a]})
			}
		}
		if len(w.accounts) == 0 && len(w.commits) == 0 {
			return usages, nil
		}
		wrote, err := w.runPostgres(ctx, l, tx)
		if err == nil && !wrote {
			// The accounts are locked: a commit found its reservation settled.
			err = errStaleCommit
		}
		return usages, err
	}
	if len(granted) == 0 {
		return usages, nil
	}
	for _, a := range union {
		if !charged[a] {
			continue
		}
		if err := l.setUsage(ctx, tx, a, usages[a].used, batch[0].now); err != nil {
			return nil, err
		}
	}
	return usages, l.insertReservations(ctx, tx, granted)
}

// refusal returns the error of a Reserve that the usages cannot pay.
func refusal(usages map[string]usage, r *reserveRequest) error {
	for _, a := range r.accounts {
		u, ok := usages[a.Name]
		if !ok {
			return unknownAccount(a.Name)
		}
		if u, bounded := a.Limit.apply(u); bounded && !u.fits(r.cost) {
			return exhausted(a, u, r.cost, "")
		}
	}
	return nil
}

// setUsage stores the account's usage, computed by the caller (usage.plus)
// from what it read under the account's lock in the same transaction.
func (l *Ledger) setUsage(ctx context.Context, tx *sql.Tx, account string, used Cost, now int64) error {
	_, err := l.exec(ctx, tx, "UPDATE dpproxy_accounts_v3 SET epsilon_used = ?, delta_used = ?, updated_at = ? WHERE name = ?",
		used.Epsilon, used.Delta, now, account)
	return err
}

// insertReservations records the granted Reserves as pending reservations
// with their account links and sets their ids.
func (l *Ledger) insertReservations(ctx context.Context, tx *sql.Tx, granted []*request) error {
	if err := l.assignIDs(ctx, tx, granted); err != nil {
		return err
	}
	var links []any
	for _, req := range granted {
		for _, a := range req.reserve.sorted {
			links = append(links, a, req.id)
		}
	}
	_, err := l.exec(ctx, tx, "INSERT INTO dpproxy_reservation_accounts (account, reservation_id) VALUES "+
		strings.TrimSuffix(strings.Repeat("(?, ?), ", len(links)/2), ", "), links...)
	return err
}

// assignIDs inserts the reservation rows and sets each request's id. On
// PostgreSQL the ids are drawn from the identity's sequence first and
// written explicitly, so one INSERT stores them all; on SQLite one INSERT
// numbers its rows consecutively (the transaction holds the database's
// write lock); on MySQL/MariaDB consecutive numbers are not guaranteed
// (innodb_autoinc_lock_mode 2), so each row is inserted on its own.
func (l *Ledger) assignIDs(ctx context.Context, tx *sql.Tx, granted []*request) error {
	row := func(req *request) []any {
		r := req.reserve
		return []any{strings.Join(r.sorted, "\n"), r.cost.Epsilon, r.cost.Delta, r.memo, string(Reserved), req.now}
	}
	const cols = "accounts, epsilon, delta, memo, state, reserved_at"
	switch l.dialect {
	case Postgres:
		rows, err := l.query(ctx, tx, "SELECT nextval(pg_get_serial_sequence('dpproxy_reservations', 'id')) FROM generate_series(1, ?)", len(granted))
		if err != nil {
			return err
		}
		i := 0
		for rows.Next() && i < len(granted) {
			if err := rows.Scan(&granted[i].id); err != nil {
				rows.Close()
				return err
			}
			i++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if i != len(granted) {
			return errors.New("budget: reservation ids not drawn")
		}
		var args []any
		for _, req := range granted {
			args = append(append(args, req.id), row(req)...)
		}
		_, err = l.exec(ctx, tx, "INSERT INTO dpproxy_reservations (id, "+cols+") VALUES "+
			strings.TrimSuffix(strings.Repeat("("+placeholders(7)+"), ", len(granted)), ", "), args...)
		return err
	case SQLite:
		var args []any
		for _, req := range granted {
			args = append(args, row(req)...)
		}
		res, err := l.exec(ctx, tx, "INSERT INTO dpproxy_reservations ("+cols+") VALUES "+
			strings.TrimSuffix(strings.Repeat("("+placeholders(6)+"), ", len(granted)), ", "), args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for i, req := range granted {
			req.id = last - int64(len(granted)-1-i)
		}
		return nil
	}
	for _, req := range granted {
		res, err := l.exec(ctx, tx, "INSERT INTO dpproxy_reservations ("+cols+") VALUES ("+placeholders(6)+")", row(req)...)
		if err != nil {
			return err
		}
		if req.id, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	return nil
}
