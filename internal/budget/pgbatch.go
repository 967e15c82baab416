package budget

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
)

// One statement per batch on PostgreSQL. A batch's writes (the usage of
// every account it charges, the pending reservations its Commits settle,
// the reservation rows and account links of its granted Reserves) are one
// statement with data-modifying WITH queries (pgBatchSQL): one round trip
// instead of one per table, each of which costs a context switch to the
// server and back (bench/RESULTS-load.md). It runs in the locked path's
// transaction (batchTx), and, as the compare-and-swap of a batch whose
// accounts the Ledger knows (casbatch.go), alone, outside any explicit
// transaction.
//
// A connection that fails while the statement runs alone may have
// committed it or not (casbatch.go). database/sql itself sends the
// statement again on another connection when lib/pq calls the first one
// bad after sending it, on an unexpected EOF or a FATAL error: if the
// first had committed, the second finds the usage changed and writes
// nothing (TestBatchAnswerLost, TestBatchKilledBeforeCommit).

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

// pgArgs returns pgBatchSQL's arguments for w.
func (w batchWrite) pgArgs() []any {
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

// runPostgres runs pgBatchSQL in tx or (tx nil), prepared, as a
// statement of its own, and reports whether it wrote; if it did, it sets
// the granted Reserves' ids.
func (w batchWrite) runPostgres(ctx context.Context, l *Ledger, tx *sql.Tx) (bool, error) {
	var rows *sql.Rows
	var err error
	if tx != nil {
		// The locked path (a Ledger's first batch, a miss, a refusal): not
		// worth a preparation on the transaction's connection.
		rows, err = tx.QueryContext(ctx, pgBatchSQL, w.pgArgs()...)
	} else {
		var stmt *sql.Stmt
		if stmt, err = l.pgBatchStmt(ctx); err != nil {
			return false, err
		}
		rows, err = stmt.QueryContext(ctx, w.pgArgs()...)
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
