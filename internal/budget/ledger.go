package budget

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxNameLen bounds account names and state keys, in bytes (a MySQL
// VARCHAR(255) primary key).
const maxNameLen = 255

// Ledger is the privacy-budget ledger in one database. It is safe for
// concurrent use, and any number of Ledgers, in one process or in several,
// may share a database.
type Ledger struct {
	db      *sql.DB
	dialect Dialect
	retries atomic.Int64
	batches atomic.Int64
	// orphansCancelled and orphansStranded count the reservations granted
	// to abandoned Reserves (batch.go) that were cancelled, and that could
	// not be and stay spent.
	orphansCancelled, orphansStranded atomic.Int64
	onCommit                          func(Charge)
	// lockTimeout bounds each row-lock wait of a transaction (lockWait).
	lockTimeout time.Duration
	// batch queues Reserves and Commits for group commit (batch.go).
	batch batcher
	// mariaDBBlocks is set when the MySQL-protocol server runs MariaDB's
	// anonymous compound statements, the form of its compare-and-swap
	// batches (mariabatch.go).
	mariaDBBlocks bool
	// seen holds the names of the accounts known to exist (ensureAccounts).
	seen sync.Map
}

// Charge describes a committed reservation, for metrics.
type Charge struct {
	Accounts []string // sorted, distinct
	Cost     Cost
	Memo     string
}

// OnCommit makes every later successful Commit call f (from the committing
// goroutine, after the transaction). Call it before the ledger is shared.
func (l *Ledger) OnCommit(f func(Charge)) { l.onCommit = f }

// SetLockTimeout bounds how long a statement of a ledger transaction on
// PostgreSQL or MySQL/MariaDB waits for a row lock another session holds
// (an administrator's transaction, a proxy stopped between its UPDATE and
// its COMMIT) to d, rounded up to a whole second (Dialect.lockWait); such
// a transaction then fails, rolled back and not run again, with a
// dperr.Timeout error. Zero, the default, leaves the database's own bound
// (none on PostgreSQL, innodb_lock_wait_timeout's 50 s on MariaDB). An
// SQLite ledger's waits are bounded by its busy timeout instead. Call it
// before the ledger is shared.
func (l *Ledger) SetLockTimeout(d time.Duration) { l.lockTimeout = d }

// Open returns the ledger kept in db, creating its tables if they are
// missing. db must be an open database of the given dialect whose
// connections each ran dialect.Session when they opened; the caller keeps
// ownership of it and closes it after the last use of the Ledger. An SQLite
// ledger must be a file: each connection to ":memory:" is a database of its own.
// Open refuses a database that may acknowledge a commit before it is
// durable (checkDurable).
func Open(ctx context.Context, db *sql.DB, dialect Dialect) (*Ledger, error) {
	if !dialect.valid() {
		return nil, invalid("unknown ledger dialect %v", dialect)
	}
	l := &Ledger{db: db, dialect: dialect}
	if err := l.checkDurable(ctx); err != nil {
		return nil, err
	}
	if err := l.createSchema(ctx); err != nil {
		return nil, ledgerError(err)
	}
	if dialect == MySQL {
		var err error
		if l.mariaDBBlocks, err = l.probeMariaDBBlocks(ctx); err != nil {
			return nil, ledgerError(err)
		}
	}
	return l, nil
}

// Retries returns how many transactions were run again after a lock conflict
// since Open, for metrics and tests.
func (l *Ledger) Retries() int64 { return l.retries.Load() }

// Batches returns how many group-commit transactions (batch.go) ran since
// Open, each settling one or more Reserves and Commits, for metrics and tests.
func (l *Ledger) Batches() int64 { return l.batches.Load() }

// Abandoned returns how many reservations were granted since Open to
// Reserves whose callers had given up (their contexts ended while the
// request waited for its batch) and then cancelled, and how many of them
// could not be cancelled and stay spent, for metrics and tests.
func (l *Ledger) Abandoned() (cancelled, stranded int64) {
	return l.orphansCancelled.Load(), l.orphansStranded.Load()
}

// SetLimit creates the account with the given limit, or changes the limit of
// an existing account and keeps what it has used: lowering a limit below the
// amount used leaves nothing remaining, it never forgets spending.
func (l *Ledger) SetLimit(ctx context.Context, account string, limit Cost) error {
	if err := validName("account", account); err != nil {
		return err
	}
	if err := limit.validate("limit"); err != nil {
		return err
	}
	upsert := l.dialect.upsert("dpproxy_accounts_v3", "name",
		[]string{"name", "epsilon_limit", "delta_limit", "epsilon_used", "delta_used", "created_at", "updated_at"},
		[]string{"epsilon_limit", "delta_limit", "updated_at"})
	now := time.Now().UnixMicro()
	return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
		_, err := l.exec(ctx, tx, upsert, account, limit.Epsilon, limit.Delta, 0.0, 0.0, now, now)
		return err
	}))
}

// Remaining returns what the account may still spend: its limit minus every
// reservation not cancelled, per component, never below zero.
func (l *Ledger) Remaining(ctx context.Context, account string) (Cost, error) {
	var u usage
	err := l.inTx(ctx, func(tx *sql.Tx) error {
		row := l.queryRow(ctx, tx, "SELECT epsilon_limit, delta_limit, epsilon_used, delta_used FROM dpproxy_accounts_v3 WHERE name = ?", account)
		err := row.Scan(&u.limit.Epsilon, &u.limit.Delta, &u.used.Epsilon, &u.used.Delta)
		if errors.Is(err, sql.ErrNoRows) {
			return unknownAccount(account)
		}
		return err
	})
	if err != nil {
		return Cost{}, ledgerError(err)
	}
	return u.remaining(), nil
}

// Reset forgets all spending: it deletes every reservation and all state
// stored with PutState, and sets every account's usage to zero, keeping the
// accounts and their limits. It exists for the demo's --reset-budget flag;
// reservations still pending elsewhere can then be neither committed nor
// cancelled.
func (l *Ledger) Reset(ctx context.Context) error {
	now := time.Now().UnixMicro()
	return ledgerError(l.inTx(ctx, func(tx *sql.Tx) error {
		for _, stmt := range []string{
			"DELETE FROM dpproxy_reservation_accounts",
			"DELETE FROM dpproxy_reservations",
			"DELETE FROM dpproxy_state_v3",
		} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		_, err := l.exec(ctx, tx, "UPDATE dpproxy_accounts_v3 SET epsilon_used = 0, delta_used = 0, updated_at = ?", now)
		return err
	}))
}

// exec runs a statement written with ? placeholders.
func (l *Ledger) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return tx.ExecContext(ctx, l.dialect.rebind(query), args...)
}

// query runs a query written with ? placeholders.
func (l *Ledger) query(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	return tx.QueryContext(ctx, l.dialect.rebind(query), args...)
}

// queryRow runs a one-row query written with ? placeholders.
func (l *Ledger) queryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	return tx.QueryRowContext(ctx, l.dialect.rebind(query), args...)
}

// validName checks an account name or state key: 1 to maxNameLen bytes of
// valid UTF-8 without control characters (reservations store account lists
// one name per line).
func validName(what, name string) error {
	switch {
	case name == "":
		return invalid("empty %s name", what)
	case len(name) > maxNameLen:
		return invalid("%s name longer than %d bytes: %.40q…", what, maxNameLen, name)
	case !utf8.ValidString(name):
		return invalid("%s name %q is not valid UTF-8", what, name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalid("%s name %q contains a control character", what, name)
	}
	return nil
}
