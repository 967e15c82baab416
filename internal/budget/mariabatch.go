package budget

import (
	"context"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
)

// The compare-and-swap of a batch on MariaDB (casbatch.go) is one
// anonymous compound statement, BEGIN NOT ATOMIC … END (MariaDB 10.1.1 and
// later), sent as one text query: the server runs the whole of it, its own
// transaction included, before it answers. It sets the connection's
// innodb_lock_wait_timeout as every ledger transaction does (lockWait),
// starts a transaction, locks the accounts' rows (by primary key, in key
// order, as lockAccounts does) counting those that still have the limits
// and usage the batch was checked against, then, if all do, the pending
// rows of its Commits, counting those still pending; only if every row
// counted does it write (the accounts' new usage, the Commits' settlement,
// one reservation row per granted Reserve, numbered by AUTO_INCREMENT
// and read back with LAST_INSERT_ID(), and its account links) and COMMIT;
// otherwise it rolls back, having written nothing. Its one result row,
// sent after the COMMIT, says which, and lists the new ids. A COMMIT in a
// compound statement is flushed as any other (with
// innodb_flush_log_at_trx_commit = 1, durable.go: 100 compound
// statements that each inserted a row and committed cost the server 101
// fsyncs), so the answer comes after the reservation is durable. An error
// (a lock wait timeout, a deadlock) runs its exit handler, which rolls
// the transaction back before the error reaches the client; and the
// connection of a statement that failed is closed rather than returned
// to the pool (runMariaDB), so that no transaction it may have left open
// can be continued, or committed by the next BEGIN. Its variables are
// named v_…: a stored program's variable hides a column of the same
// name (id) in its statements.
//
// Why a compound statement. A multi-statement packet (go-sql-driver's
// multiStatements) would need a flag the ledger's DSN does not set (it
// is negotiated when a connection opens, for every statement of the
// pool); the server stops such a packet at its first error, leaving its
// transaction open on the connection, and cannot roll back a failed
// compare-and-swap that is not an error, so every write would have to be
// guarded by a session variable. A stored procedure would also run on
// MySQL 8, but it is a schema object to create, version and upgrade
// beside the tables, whose creation needs CREATE ROUTINE, which the
// ledger's tables do not, and its lists would be parsed from JSON. The
// compound statement needs nothing but the privileges the locked path
// uses, and it is not stored. MySQL (and Vitess's vtgate, and a MariaDB
// session in sql_mode ORACLE) refuses it; Open tries one
// (probeMariaDBBlocks), and where it fails every batch takes the locked
// path, as before.
//
// Every value is a literal the ledger writes itself, so that the
// statement goes as text, in one round trip: with arguments, go-sql-driver
// prepares a statement first (a second round trip, and a packet to close
// it), and a statement prepared once per connection would need one text
// for every batch, its lists passed as arguments and parsed on the server.
// Names, memos and account lists as hexadecimal strings (_binary X'…'
// for the VARBINARY names, _utf8mb4 X'…' for the text columns), which no
// sql_mode or character set reads otherwise; numbers as decimal integers
// and as doubles in exponent form, which MariaDB reads as DOUBLE (without
// an exponent, 0.1 would be a DECIMAL), the shortest digits that read back
// as exactly the double (TestMariaDBLiterals). A batch with a usage that
// is not finite takes the locked path.

// mariaDBProbe is the compound statement Open runs to learn whether the
// server runs them, with the parts mariaDBBlock uses: a variable, an exit
// handler, a transaction and a result row.
const mariaDBProbe = `BEGIN NOT ATOMIC
DECLARE n BIGINT DEFAULT 1;
DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
START TRANSACTION;
COMMIT;
SELECT n;
END`

// probeMariaDBBlocks reports whether the ledger's MySQL-protocol server
// runs anonymous compound statements (mariaDBProbe): false when the
// server refuses it (MySQL's syntax error), an error when it could not
// answer.
func (l *Ledger) probeMariaDBBlocks(ctx context.Context) (bool, error) {
	var n int64
	err := l.db.QueryRowContext(ctx, mariaDBProbe).Scan(&n)
	if err != nil && mysqlErrorNumber(err) != 0 {
		return false, nil
	}
	return err == nil && n == 1, err
}

// mariaDBBlock returns w as a MariaDB compound statement (see above),
// with lockWait (Dialect.lockWait) before its transaction, or false if a
// double of w is not finite.
func (w batchWrite) mariaDBBlock(lockWait string) (string, bool) {
	var b strings.Builder
	ok := true
	num := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			ok = false
		}
		return mariaDBDouble(v)
	}
	b.WriteString(`BEGIN NOT ATOMIC
DECLARE v_ok BOOLEAN DEFAULT TRUE;
DECLARE v_n, v_id BIGINT;
DECLARE v_settled BIGINT DEFAULT 0;
DECLARE v_ids TEXT DEFAULT '';
DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
`)
	if lockWait != "" {
		b.WriteString(lockWait + ";\n")
	}
	b.WriteString("START TRANSACTION;\n")
	now := strconv.FormatInt(w.now, 10)
	if len(w.accounts) > 0 {
		names := make([]string, len(w.accounts))
		rows := make([]string, len(w.accounts))
		for i, a := range w.accounts {
			names[i] = mariaDBName(a.name)
			rows[i] = "(" + names[i] + ", " + num(a.old.limit.Epsilon) + ", " + num(a.old.limit.Delta) + ", " +
				num(a.old.used.Epsilon) + ", " + num(a.old.used.Delta) + ")"
		}
		b.WriteString("SELECT COUNT(*) INTO v_n FROM dpproxy_accounts_v3 FORCE INDEX (PRIMARY) WHERE name IN (" + strings.Join(names, ", ") +
			") AND (name, epsilon_limit, delta_limit, epsilon_used, delta_used) IN (" + strings.Join(rows, ", ") + ") FOR UPDATE;\n")
		b.WriteString("SET v_ok = v_n = " + strconv.Itoa(len(w.accounts)) + ";\n")
	}
	var commits string
	if len(w.commits) > 0 {
		ids := make([]string, len(w.commits))
		for i, id := range w.commits {
			ids[i] = strconv.FormatInt(id, 10)
		}
		commits = strings.Join(ids, ", ")
		b.WriteString("IF v_ok THEN\nSELECT COUNT(*) INTO v_n FROM dpproxy_reservations FORCE INDEX (PRIMARY) WHERE id IN (" + commits +
			") AND state = '" + string(Reserved) + "' FOR UPDATE;\n")
		b.WriteString("SET v_ok = v_n = " + strconv.Itoa(len(w.commits)) + ";\nEND IF;\n")
	}
	b.WriteString("IF v_ok THEN\n")
	for _, a := range w.accounts {
		b.WriteString("UPDATE dpproxy_accounts_v3 SET epsilon_used = " + num(a.new.used.Epsilon) + ", delta_used = " + num(a.new.used.Delta) +
			", updated_at = " + now + " WHERE name = " + mariaDBName(a.name) + ";\n")
	}
	if len(w.commits) > 0 {
		b.WriteString("UPDATE dpproxy_reservations SET state = '" + string(Committed) + "', settled_at = " + now +
			" WHERE id IN (" + commits + ") AND state = '" + string(Reserved) + "';\nSET v_settled = ROW_COUNT();\n")
	}
	for _, req := range w.granted {
		r := req.reserve
		b.WriteString("INSERT INTO dpproxy_reservations (accounts, epsilon, delta, memo, state, reserved_at) VALUES (" +
			mariaDBText(strings.Join(r.sorted, "\n")) + ", " + num(r.cost.Epsilon) + ", " + num(r.cost.Delta) + ", " +
			mariaDBText(r.memo) + ", '" + string(Reserved) + "', " + strconv.FormatInt(req.now, 10) + ");\n")
		b.WriteString("SET v_id = LAST_INSERT_ID();\nSET v_ids = CONCAT(v_ids, v_id, ' ');\n")
		links := make([]string, len(r.sorted))
		for i, a := range r.sorted {
			links[i] = "(" + mariaDBName(a) + ", v_id)"
		}
		b.WriteString("INSERT INTO dpproxy_reservation_accounts (account, reservation_id) VALUES " + strings.Join(links, ", ") + ";\n")
	}
	b.WriteString("COMMIT;\nELSE\nROLLBACK;\nEND IF;\nSELECT v_ok, v_settled, v_ids;\nEND")
	return b.String(), ok
}

// mariaDBDouble is a finite double as a MariaDB DOUBLE literal.
func mariaDBDouble(v float64) string { return strconv.FormatFloat(v, 'e', -1, 64) }

// mariaDBName is an account name as a MariaDB literal of the VARBINARY
// name columns.
func mariaDBName(s string) string { return "_binary X'" + hex.EncodeToString([]byte(s)) + "'" }

// mariaDBText is a string as a MariaDB literal of the utf8mb4 text
// columns; s is valid UTF-8 (validName, cleanMemo).
func mariaDBText(s string) string { return "_utf8mb4 X'" + hex.EncodeToString([]byte(s)) + "'" }

// runMariaDB runs block, w's compound statement, and reports whether it
// wrote; if it did, it sets the granted Reserves' ids. A connection on
// which the statement failed is closed rather than trusted to have no
// transaction open: the exit handler rolls back on every error the
// tests provoke (a lock wait timeout, a KILL QUERY), but the ledger does
// not rely on it for every way a statement can end.
func (w batchWrite) runMariaDB(ctx context.Context, l *Ledger, block string) (wrote bool, err error) {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn }) // closes it
		}
		conn.Close()
	}()
	var settled int64
	var ids string
	// Scan closes the rows, which reads the rest of the statement's answer
	// and reports an error found there.
	if err := conn.QueryRowContext(ctx, block).Scan(&wrote, &settled, &ids); err != nil {
		return false, err
	}
	if !wrote {
		return false, nil
	}
	fields := strings.Fields(ids)
	if len(fields) != len(w.granted) || settled != int64(len(w.commits)) {
		return true, errors.New("budget: a batch statement wrote other rows than it locked")
	}
	for i, f := range fields {
		if w.granted[i].id, err = strconv.ParseInt(f, 10, 64); err != nil {
			return true, err
		}
	}
	return true, nil
}
