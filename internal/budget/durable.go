package budget

import (
	"context"
	"strings"
)

// Durability. The proxy releases an answer once its Reserve returned, so
// a reservation the database acknowledged but then lost in a crash of the
// database or of its host is a release nobody paid for. Each database the
// ledger supports can be configured to acknowledge a commit before it is
// on disk: the one setting a session can override is pinned on every
// connection (Dialect.Session), and Open refuses the others
// (checkDurable).

// Session returns the statements each connection of a ledger in dialect d
// must run when it opens, before the ledger uses it; the caller's pool
// runs them (cmd/dpproxy opens the ledger's pool with backend.OpenDB,
// which runs them after its own session settings). On PostgreSQL they are
// pgSynchronousCommit, since off (which the DSN's options, ALTER ROLE …
// SET, ALTER DATABASE … SET or the server's configuration may set)
// acknowledges a commit before its WAL is flushed, and SET
// plan_cache_mode = force_generic_plan, so that the batch statement
// (pgbatch.go), prepared once per connection, is also planned once:
// PostgreSQL otherwise plans it at each of its first five executions, and
// then at every one for as long as its custom plans (for the arrays at
// hand) look cheaper than the generic one, as they did on a ledger of a
// few thousand reservations, where planning took longer than running it
// (bench/RESULTS-load.md). The ledger's other statements are lookups by
// primary key, which a generic plan serves as well. And SET
// extra_float_digits = 3, so that a usage read back is the double stored:
// the batch statement compares the usage it was checked against with the
// stored one exactly, and with fewer digits (0 is PostgreSQL 11's default,
// and a role or database may set it) every batch would miss and fail
// closed, refusing every Reserve. SQLite and MySQL/MariaDB have no session
// setting for durability (checkDurable).
func (d Dialect) Session() []string {
	if d == Postgres {
		return []string{pgSynchronousCommit, "SET plan_cache_mode = force_generic_plan", "SET extra_float_digits = 3"}
	}
	return nil
}

// pgSynchronousCommit makes a PostgreSQL session's commits durable.
const pgSynchronousCommit = "SET synchronous_commit = on"

// checkDurable refuses a ledger database that may acknowledge a commit
// before it is durable:
//
//   - PostgreSQL: synchronous_commit off in the pool's sessions (a pool
//     whose connections do not run Session), or the server's fsync off.
//   - MySQL/MariaDB: @@GLOBAL.innodb_flush_log_at_trx_commit other than 1
//     (or MariaDB's 3, which also flushes at commit): 0 and 2 flush the
//     redo log about once a second. It is a global setting that SET
//     GLOBAL can change while the proxy runs, unseen: the server's
//     configuration must keep it at 1.
//   - SQLite: synchronous below FULL (OFF syncs nothing; under NORMAL a
//     power loss can roll back a commit made in WAL mode), or journal_mode
//     OFF or MEMORY (a crash in a transaction can corrupt the file); a
//     DSN's _pragma sets them on every connection.
func (l *Ledger) checkDurable(ctx context.Context) error {
	switch l.dialect {
	case Postgres:
		var syncCommit, fsync string
		if err := l.db.QueryRowContext(ctx, "SELECT pg_catalog.current_setting('synchronous_commit'), pg_catalog.current_setting('fsync')").Scan(&syncCommit, &fsync); err != nil {
			return ledgerError(err)
		}
		if syncCommit == "off" {
			return invalid("the ledger needs durable commits, but its PostgreSQL sessions run with synchronous_commit = off (from the DSN's options, ALTER ROLE or ALTER DATABASE … SET, or the server's configuration), which acknowledges a commit before it is on disk: run %s on each of the ledger's connections", pgSynchronousCommit)
		}
		if fsync == "off" {
			return invalid("the ledger needs durable commits, but its PostgreSQL server runs with fsync = off, so a commit can be lost in a crash of its host: set fsync = on in the server's configuration")
		}
	case MySQL:
		var flush int64
		if err := l.db.QueryRowContext(ctx, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&flush); err != nil {
			return ledgerError(err)
		}
		return checkFlushAtCommit(flush)
	case SQLite:
		var synchronous int64
		var journal string
		conn, err := l.db.Conn(ctx) // both pragmas of one connection
		if err != nil {
			return ledgerError(err)
		}
		defer conn.Close()
		if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous); err != nil {
			return ledgerError(err)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
			return ledgerError(err)
		}
		if synchronous < sqliteSynchronousFull {
			return invalid("the ledger needs durable commits, but its SQLite connections run with synchronous = %s, under which a commit can be lost in a crash: remove _pragma=synchronous(...) from the ledger's DSN, or set it to FULL or EXTRA", sqliteSynchronousName(synchronous))
		}
		if j := strings.ToLower(journal); j == "off" || j == "memory" {
			return invalid("the ledger needs durable commits, but its SQLite connections run with journal_mode = %s, under which a crash in a transaction can corrupt the ledger: remove _pragma=journal_mode(...) from the ledger's DSN, or set it to DELETE or WAL", strings.ToUpper(j))
		}
	}
	return nil
}

// sqliteSynchronousFull is PRAGMA synchronous's FULL; OFF is 0, NORMAL 1,
// EXTRA 3.
const sqliteSynchronousFull = 2

// sqliteSynchronousName names a PRAGMA synchronous value below FULL.
func sqliteSynchronousName(v int64) string {
	if v == 1 {
		return "NORMAL"
	}
	return "OFF"
}

// checkFlushAtCommit refuses an innodb_flush_log_at_trx_commit under which
// a commit is acknowledged before the redo log is flushed (checkDurable).
func checkFlushAtCommit(v int64) error {
	if v == 1 || v == 3 {
		return nil
	}
	return invalid("the ledger needs durable commits, but its MySQL/MariaDB server runs with innodb_flush_log_at_trx_commit = %d, which flushes the redo log about once a second, so a commit can be lost in a crash: set innodb_flush_log_at_trx_commit = 1 in the server's configuration", v)
}
