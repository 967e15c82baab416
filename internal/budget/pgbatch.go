package budget

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// One statement per batch on PostgreSQL. A batch's writes (the usage of
// every account it charges, the pending reservations its Commits settle,
// the reservation rows and account links of its granted Reserves) are one
// statement with data-modifying WITH queries (pgWrite): one round trip
// instead of one per table, each of which costs a context switch to the
// server and back (bench/RESULTS-load.md).
//
// A batch whose accounts this Ledger knows (known: the usage a batch of
// its own last read under the accounts' locks or wrote, and committed),
// and whose Reserves all fit that usage, runs as that statement alone,
// outside any explicit transaction (casBatch): one round trip and one
// durable commit in all, instead of BEGIN, the locking read, the writes
// and COMMIT. The statement is a compare-and-swap: it first locks the
// accounts' rows (sorted, as every transaction of the ledger does, before
// any reservation row) and the pending rows of its Commits, and writes
// nothing unless every account still has the limits and usage the batch
// was checked against and every Commit's reservation is still pending.
// The check is then exactly the one the locked path makes (batchTx): the
// same usage, read under the same locks, and nothing can change it before
// the statement commits. If another Ledger (another proxy sharing the
// database, a Cancel, SetLimit, Reset) changed an account, the statement
// writes nothing, this Ledger forgets what it knew, and the batch runs on
// the locked path; after such a miss the next batches skip the attempt
// for a while (casBackoff), so that proxies taking turns on one account
// do not pay for two statements per batch.
//
// Durability is the locked path's: the statement is its own transaction,
// committed (and, with the session's synchronous_commit = on, flushed)
// before the server answers, so a Reserve returns only a reservation
// that a crash of the database cannot take back. One difference in
// failure: the locked path knows whether its COMMIT was sent, the single
// statement does not. A connection that fails while the statement runs
// (lostBeforeCommit's errors) may have committed it or not; the batch is
// then run again on the locked path, as a transaction that lost its
// connection before its COMMIT is, so that a server restart costs no
// statement an error. (database/sql itself sends the statement again on
// another connection when lib/pq calls the first one bad after sending
// it, on an unexpected EOF or a FATAL error: if the first had committed,
// the second finds the usage changed and writes nothing.) If the lost
// statement had committed, its reservations stay pending, never returned
// to a caller: spent, as an abandoned Reserve's that could not be
// cancelled. The failure can charge a batch twice, never lose a charge
// (TestPostgresBatchAnswerLost, TestPostgresBatchKilledBeforeCommit).

// casBackoffMax bounds how many batches skip the compare-and-swap after
// consecutive misses.
const casBackoffMax = 64

// pgAccount is an account a PostgreSQL batch charges: the usage it was
// checked against and the usage it gets.
type pgAccount struct {
	name     string
	old, new usage
}

// pgWrite is a batch's writes on PostgreSQL, run as pgBatchSQL.
type pgWrite struct {
	now      int64
	accounts []pgAccount // sorted by name
	commits  []int64     // ids of pending reservations to commit
	granted  []*request  // Reserves to record, in queue order
}

// pgBatchSQL writes a batch in one statement whose text is the same for
// every batch (its lists are array arguments), so that each connection
// prepares it once and the server plans it once. It is a compare-and-swap:
// it first locks the accounts' rows, sorted, then the pending rows of the
// commits, and writes only if every account still has the limits and
// usage the batch was checked against ($2-$5) and every commit's
// reservation is still pending. In a transaction that locked the
// accounts already (batchTx) that holds for the accounts, and the guard
// then only finds the commits whose reservations were settled meanwhile.
// Its rows are (ok, settled, i, id): whether it wrote, how many
// reservations it committed, and for each granted Reserve its position i
// (from 1) in the batch's Reserves and its new id.
const pgBatchSQL = `WITH acct AS MATERIALIZED (
	SELECT * FROM unnest(CAST($1 AS TEXT[]), CAST($2 AS DOUBLE PRECISION[]), CAST($3 AS DOUBLE PRECISION[]), CAST($4 AS DOUBLE PRECISION[]),
		CAST($5 AS DOUBLE PRECISION[]), CAST($6 AS DOUBLE PRECISION[]), CAST($7 AS DOUBLE PRECISION[]))
		AS c (name, epsilon_limit, delta_limit, epsilon_old, delta_old, epsilon_new, delta_new)),
held AS MATERIALIZED (
	SELECT a.name FROM dpproxy_accounts_v3 a JOIN acct c ON a.name = c.name
	WHERE a.epsilon_limit = c.epsilon_limit AND a.delta_limit = c.delta_limit AND a.epsilon_used = c.epsilon_old AND a.delta_used = c.delta_old
	ORDER BY a.name FOR UPDATE OF a),
pending AS MATERIALIZED (
	SELECT id FROM dpproxy_reservations WHERE state = $9 AND id = ANY (CAST($8 AS BIGINT[])) ORDER BY id FOR UPDATE),
ok AS MATERIALIZED (
	-- AND stops at the first false: reservation rows are locked only
	-- once every account is, the ledger's order.
	SELECT (SELECT COUNT(*) FROM held) = (SELECT COUNT(*) FROM acct)
		AND (SELECT COUNT(*) FROM pending) = cardinality(CAST($8 AS BIGINT[])) AS ok),
acc AS (
	UPDATE dpproxy_accounts_v3 a SET epsilon_used = c.epsilon_new, delta_used = c.delta_new, updated_at = $11
	FROM acct c WHERE a.name = c.name AND (SELECT ok FROM ok)),
settle AS (
	UPDATE dpproxy_reservations SET state = $10, settled_at = $11
	WHERE id IN (SELECT id FROM pending) AND (SELECT ok FROM ok) RETURNING id),
ids AS MATERIALIZED (
	SELECT r.i, nextval(pg_get_serial_sequence('dpproxy_reservations', 'id')) AS id, r.accounts, r.epsilon, r.delta, r.memo, r.reserved_at
	FROM unnest(CAST($12 AS TEXT[]), CAST($13 AS DOUBLE PRECISION[]), CAST($14 AS DOUBLE PRECISION[]), CAST($15 AS TEXT[]), CAST($16 AS BIGINT[]))
		WITH ORDINALITY AS r (accounts, epsilon, delta, memo, reserved_at, i)
	WHERE (SELECT ok FROM ok)),
res AS (
	INSERT INTO dpproxy_reservations (id, accounts, epsilon, delta, memo, state, reserved_at)
	SELECT id, accounts, epsilon, delta, memo, $9, reserved_at FROM ids),
links AS (
	INSERT INTO dpproxy_reservation_accounts (account, reservation_id)
	SELECT l.account, ids.id FROM ids JOIN unnest(CAST($17 AS BIGINT[]), CAST($18 AS TEXT[])) AS l (i, account) ON l.i = ids.i)
SELECT ok.ok, (SELECT COUNT(*) FROM settle), ids.i, ids.id FROM ok LEFT JOIN ids ON TRUE ORDER BY ids.i`

// args returns pgBatchSQL's arguments for w.
func (w pgWrite) args() []any {
	var names, accounts, memos, linked []string
	var floats [6][]float64
	var reservedAt, linkIdx []int64
	for _, a := range w.accounts {
		names = append(names, a.name)
		for k, v := range [6]float64{a.old.limit.Epsilon, a.old.limit.Delta, a.old.used.Epsilon, a.old.used.Delta, a.new.used.Epsilon, a.new.used.Delta} {
			floats[k] = append(floats[k], v)
		}
	}
	var epsilons, deltas []float64
	for i, req := range w.granted {
		r := req.reserve
		accounts = append(accounts, strings.Join(r.sorted, "\n"))
		epsilons, deltas = append(epsilons, r.cost.Epsilon), append(deltas, r.cost.Delta)
		memos = append(memos, r.memo)
		reservedAt = append(reservedAt, req.now)
		for _, a := range r.sorted {
			linkIdx, linked = append(linkIdx, int64(i+1)), append(linked, a)
		}
	}
	return []any{
		pgTextArray(names), pgFloatArray(floats[0]), pgFloatArray(floats[1]), pgFloatArray(floats[2]),
		pgFloatArray(floats[3]), pgFloatArray(floats[4]), pgFloatArray(floats[5]),
		pgIntArray(w.commits), string(Reserved), string(Committed), w.now,
		pgTextArray(accounts), pgFloatArray(epsilons), pgFloatArray(deltas), pgTextArray(memos), pgIntArray(reservedAt),
		pgIntArray(linkIdx), pgTextArray(linked),
	}
}

// run runs the statement in tx or (tx nil), prepared, as a statement of
// its own, and reports whether it wrote; if it did, it sets the granted
// Reserves' ids, and it fails with errStaleCommit if it did not write
// because a commit found its reservation settled.
func (w pgWrite) run(ctx context.Context, l *Ledger, tx *sql.Tx) (bool, error) {
	var rows *sql.Rows
	var err error
	if tx != nil {
		// The locked path (a Ledger's first batch, a miss, a refusal): not
		// worth a preparation on the transaction's connection.
		rows, err = tx.QueryContext(ctx, pgBatchSQL, w.args()...)
	} else {
		var stmt *sql.Stmt
		if stmt, err = l.pgBatchStmt(ctx); err != nil {
			return false, err
		}
		rows, err = stmt.QueryContext(ctx, w.args()...)
	}
	if err != nil {
		return false, err
	}
	defer rows.Close()
	wrote, settled, drawn := false, int64(0), 0
	for rows.Next() {
		var i, id sql.NullInt64
		if err := rows.Scan(&wrote, &settled, &i, &id); err != nil {
			return false, err
		}
		if i.Valid {
			if i.Int64 < 1 || int(i.Int64) > len(w.granted) || !id.Valid {
				return false, errors.New("budget: reservation ids not drawn")
			}
			w.granted[i.Int64-1].id = id.Int64
			drawn++
		}
	}
	// Close, not only Err: a statement of its own commits after its last
	// row, and a failed commit is reported only when the rows end.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return false, err
	}
	if !wrote {
		return false, nil
	}
	if drawn != len(w.granted) || settled != int64(len(w.commits)) {
		return true, errors.New("budget: a batch statement wrote other rows than it locked")
	}
	return true, nil
}

// pgBatchStmt returns pgBatchSQL prepared in the ledger's pool, preparing
// it at the first call that succeeds (only the goroutine running batches
// calls it).
func (l *Ledger) pgBatchStmt(ctx context.Context) (*sql.Stmt, error) {
	if l.batch.stmt == nil {
		stmt, err := l.db.PrepareContext(ctx, pgBatchSQL)
		if err != nil {
			return nil, err
		}
		l.batch.stmt = stmt
	}
	return l.batch.stmt, nil
}

// pgTextArray writes a PostgreSQL array literal of the strings, each
// element quoted, with its quotes and backslashes escaped.
func pgTextArray(items []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// pgFloatArray writes a PostgreSQL array literal of the numbers, each the
// shortest decimal that reads back as exactly it.
func pgFloatArray(items []float64) string {
	parts := make([]string, len(items))
	for i, v := range items {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// pgIntArray writes a PostgreSQL array literal of the integers.
func pgIntArray(items []int64) string {
	parts := make([]string, len(items))
	for i, v := range items {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// casBatch runs batch as one compare-and-swap statement (see above) if
// this Ledger knows the usage of every account it charges and every
// Reserve fits it. It reports whether it settled the batch (outcomes set,
// or err the batch's error); false means that nothing was written and the
// batch is for the locked path.
func (l *Ledger) casBatch(ctx context.Context, batch []*request, outcomes []error) (done bool, err error) {
	b := &l.batch
	if l.dialect != Postgres {
		return false, nil
	}
	if b.casSkip > 0 {
		b.casSkip--
		return false, nil
	}
	w := pgWrite{now: batch[0].now}
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
		w.accounts = append(w.accounts, pgAccount{name: a, old: old[a], new: usages[a]})
	}
	// The statement runs outside any transaction, where tryTx's SET LOCAL
	// lock_timeout cannot reach it: its wait for the accounts' row locks
	// is bounded here instead, at the same whole seconds. A statement cut
	// off by this bound may have committed or not (database/sql reports
	// the context's error once it ends, whatever the server did); the
	// batch then fails as a lock timeout, and reservations it may have
	// written stay pending: spent, never returned to a caller.
	runCtx := ctx
	if bound := l.dialect.lockWaitBound(l.lockTimeout); bound > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, bound)
		defer cancel()
	}
	wrote, err := w.run(runCtx, l, nil)
	switch {
	case err != nil && ctx.Err() == nil && runCtx.Err() != nil:
		l.forget(usages)
		return true, dperr.Wrap(dperr.Timeout, err, lockTimedOutText)
	case err == nil && wrote:
		b.casBackoff = 0
		for a, u := range usages {
			b.known[a] = u
		}
		return true, nil
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

// forget drops what this Ledger knew of the accounts' usage.
func (l *Ledger) forget(usages map[string]usage) {
	for a := range usages {
		delete(l.batch.known, a)
	}
}
