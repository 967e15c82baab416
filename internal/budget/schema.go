package budget

import (
	"context"
	"database/sql"
	"errors"
)

// schemaVersion is the version of the ledger tables this code reads and
// writes, stored in dpproxy_meta under schemaVersionKey. Since version 2,
// names are VARBINARY on MySQL/MariaDB (version 1's VARCHAR with
// utf8mb4_bin pads: "user:alice" and "user:alice " were one account), and
// user and table accounts are bounded by each proxy's own configuration
// (the stored limits are no longer enforced, and table caps are keyed on
// the backend relation). Version 3 moved the accounts and the state to
// new tables (movedTables), so that version 1 and 2 binaries that are
// already running, which never read the version again, can no longer
// charge or advance anything. Binaries of an older version refuse a newer
// ledger at start; Open upgrades a version 1 or 2 ledger in place,
// keeping every row.
const (
	schemaVersion    = 3
	schemaVersionKey = "schema_version"
)

// movedTables are the tables of versions 1 and 2 that version 3 moved, by
// old and new name. Every reservation of those versions reads and writes
// the accounts (a Reserve locks its accounts' rows before anything else;
// a claim's SetLimit and Remaining read or write them), and every use of
// shared state (synopses, interactive instances and their turns, repeated
// answers, leases) reads or writes the state table. Under each old name
// the upgrade leaves a tombstone (tombstoneDDL), a table with none of the
// old columns, so that every statement of an old binary on it fails
// whatever the session's sql_mode, and its CREATE TABLE IF NOT EXISTS at
// start cannot bring back an empty table of the old shape: a running old
// proxy's Reserve fails, and the statement is refused uncharged before
// any data is read. The reservation tables keep their names: an old
// binary's Commit of a reservation granted before the upgrade only
// settles a charge already counted, and its Cancel locks the accounts
// first and so fails, leaving the reservation spent.
var movedTables = [...][2]string{
	{"dpproxy_accounts", "dpproxy_accounts_v3"},
	{"dpproxy_state", "dpproxy_state_v3"},
}

// nameColumns are the columns of names (nameType), by table.
var nameColumns = [...][2]string{
	{"dpproxy_meta", "meta_key"},
	{"dpproxy_accounts_v3", "name"},
	{"dpproxy_reservation_accounts", "account"},
	{"dpproxy_state_v3", "state_key"},
}

// metaDDL creates the table of the schema version if it is missing.
func (d Dialect) metaDDL() string {
	return `CREATE TABLE IF NOT EXISTS dpproxy_meta (
			meta_key ` + d.nameType() + ` NOT NULL PRIMARY KEY,
			meta_value BIGINT NOT NULL
		)` + d.tableOptions()
}

// schemaStatements returns the idempotent DDL of the other tables of
// schema version 3.
func (d Dialect) schemaStatements() []string {
	name, opts := d.nameType(), d.tableOptions()
	return []string{
		// epsilon_used and delta_used sum every reservation not cancelled.
		`CREATE TABLE IF NOT EXISTS dpproxy_accounts_v3 (
			name ` + name + ` NOT NULL PRIMARY KEY,
			epsilon_limit DOUBLE PRECISION NOT NULL,
			delta_limit DOUBLE PRECISION NOT NULL,
			epsilon_used DOUBLE PRECISION NOT NULL,
			delta_used DOUBLE PRECISION NOT NULL,
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL
		)` + opts,
		// accounts lists the charged account names, sorted, one per line;
		// times are Unix microseconds; settled_at is NULL while reserved.
		`CREATE TABLE IF NOT EXISTS dpproxy_reservations (
			` + d.idColumn() + `,
			accounts TEXT NOT NULL,
			epsilon DOUBLE PRECISION NOT NULL,
			delta DOUBLE PRECISION NOT NULL,
			memo TEXT NOT NULL,
			state VARCHAR(16) NOT NULL,
			reserved_at BIGINT NOT NULL,
			settled_at BIGINT
		)` + opts,
		// One row per (account, reservation), for History.
		`CREATE TABLE IF NOT EXISTS dpproxy_reservation_accounts (
			account ` + name + ` NOT NULL,
			reservation_id BIGINT NOT NULL,
			PRIMARY KEY (account, reservation_id)
		)` + opts,
		`CREATE TABLE IF NOT EXISTS dpproxy_state_v3 (
			state_key ` + name + ` NOT NULL PRIMARY KEY,
			state_value ` + d.blobType() + ` NOT NULL,
			updated_at BIGINT NOT NULL
		)` + opts,
	}
}

// tombstoneDDL creates the table left under a moved table's old name: its
// one column is named by no statement of an older version.
func (d Dialect) tombstoneDDL(table string) string {
	return "CREATE TABLE " + table + " (moved_by_schema_version_3 BIGINT NOT NULL PRIMARY KEY)" + d.tableOptions()
}

// createSchema creates the ledger tables if they are missing, upgrades a
// version 1 or 2 ledger, and checks that the version is one this code
// understands, holding the dialect's schema lock (lockSchema), so that
// of proxies starting at once exactly one upgrades. On MySQL/MariaDB,
// where each CREATE, ALTER and RENAME TABLE commits implicitly, every step
// is idempotent and the version is raised last, so that an upgrade cut
// short is completed by the next Open; the named lock may be released
// before the transaction's end, but the version's row stays locked until
// then, and the next proxy reads it with a locking read.
func (l *Ledger) createSchema(ctx context.Context) error {
	return l.inTx(ctx, func(tx *sql.Tx) (err error) {
		unlock, err := l.lockSchema(ctx, tx)
		if err != nil {
			return err
		}
		defer unlock()
		if _, err := tx.ExecContext(ctx, l.dialect.metaDDL()); err != nil {
			return err
		}
		insert := l.dialect.upsert("dpproxy_meta", "meta_key", []string{"meta_key", "meta_value"}, nil)
		if _, err := l.exec(ctx, tx, insert, schemaVersionKey, schemaVersion); err != nil {
			return err
		}
		var version int64
		if err := l.queryRow(ctx, tx, "SELECT meta_value FROM dpproxy_meta WHERE meta_key = ?"+l.dialect.lockSuffix(), schemaVersionKey).Scan(&version); err != nil {
			return err
		}
		switch version {
		case 1, 2:
			if err := l.upgrade(ctx, tx, version); err != nil {
				return err
			}
		case schemaVersion:
		default:
			return invalid("ledger schema version %d, this dpproxy understands versions 1 to %d", version, schemaVersion)
		}
		for _, stmt := range l.dialect.schemaStatements() {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockSchema serializes createSchema across proxies until tx ends or
// unlock is called. PostgreSQL takes a transaction's advisory lock (the
// one older versions take too: a CREATE TABLE IF NOT EXISTS can fail when
// it races another one); MySQL/MariaDB a named lock, which outlives
// transactions and so is released by unlock; SQLite needs none, as a
// transaction holds the database's write lock from its first write.
func (l *Ledger) lockSchema(ctx context.Context, tx *sql.Tx) (unlock func(), err error) {
	const name = "dpproxy_ledger_schema"
	switch l.dialect {
	case Postgres:
		_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7319418520457031107)")
		return func() {}, err
	case MySQL:
		var got sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT GET_LOCK('"+name+"', 60)").Scan(&got); err != nil {
			return nil, err
		}
		if got.Int64 != 1 {
			return nil, errors.New("budget: timed out waiting for another proxy's ledger schema upgrade (GET_LOCK)")
		}
		return func() { _, _ = tx.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK('"+name+"')") }, nil
	}
	return func() {}, nil
}

// upgrade makes a version 1 or 2 ledger version 3: it moves the tables of
// movedTables (their rows, usage included, are kept), and, from version
// 1, makes the MySQL/MariaDB name columns VARBINARY (names that padding
// made one stay one row, under the name first stored).
func (l *Ledger) upgrade(ctx context.Context, tx *sql.Tx, from int64) error {
	for _, m := range movedTables {
		if err := l.moveTable(ctx, tx, m[0], m[1]); err != nil {
			return err
		}
	}
	if from == 1 && l.dialect == MySQL {
		for _, c := range nameColumns {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c[0]+" MODIFY "+c[1]+" "+l.dialect.nameType()+" NOT NULL"); err != nil {
				return err
			}
		}
	}
	_, err := l.exec(ctx, tx, "UPDATE dpproxy_meta SET meta_value = ? WHERE meta_key = ?", schemaVersion, schemaVersionKey)
	return err
}

// moveTable renames table from to to and leaves a tombstone under from,
// unless to exists (an earlier upgrade cut short moved it).
func (l *Ledger) moveTable(ctx context.Context, tx *sql.Tx, from, to string) error {
	var exists bool
	if err := l.queryRow(ctx, tx, l.dialect.tableExists(), to).Scan(&exists); err != nil || exists {
		return err
	}
	stmts := []string{"ALTER TABLE " + from + " RENAME TO " + to, l.dialect.tombstoneDDL(from)}
	if l.dialect == MySQL {
		// One RENAME moves the table and puts the tombstone in its place:
		// MySQL's DDL is not transactional, and an older binary starting
		// meanwhile takes no schema lock (its CREATE TABLE IF NOT EXISTS
		// would otherwise find no table under the old name).
		tomb := from + "_tombstone"
		stmts = []string{"DROP TABLE IF EXISTS " + tomb, l.dialect.tombstoneDDL(tomb),
			"RENAME TABLE " + from + " TO " + to + ", " + tomb + " TO " + from}
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}
