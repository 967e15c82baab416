package budget

import (
	"context"
	"database/sql"
)

// schemaVersion is the version of the ledger tables this code reads and
// writes, stored in dpproxy_meta under schemaVersionKey. Version 2 stores
// names as VARBINARY on MySQL/MariaDB (version 1's VARCHAR with
// utf8mb4_bin pads: "user:alice" and "user:alice " were one account), and
// its user and table accounts are bounded by each proxy's own
// configuration (the stored limits are no longer enforced, and table caps
// are keyed on the backend relation): a version 1 binary, which would
// enforce the stored limits and charge name-keyed table accounts, refuses
// it. Open upgrades a version 1 ledger in place, keeping every row.
const (
	schemaVersion    = 2
	schemaVersionKey = "schema_version"
)

// nameColumns are the columns of names (nameType), by table.
var nameColumns = [...][2]string{
	{"dpproxy_meta", "meta_key"},
	{"dpproxy_accounts", "name"},
	{"dpproxy_reservation_accounts", "account"},
	{"dpproxy_state", "state_key"},
}

// schemaStatements returns the idempotent DDL of schema version 2.
func (d Dialect) schemaStatements() []string {
	name, opts := d.nameType(), d.tableOptions()
	return []string{
		`CREATE TABLE IF NOT EXISTS dpproxy_meta (
			meta_key ` + name + ` NOT NULL PRIMARY KEY,
			meta_value BIGINT NOT NULL
		)` + opts,
		// epsilon_used and delta_used sum every reservation not cancelled.
		`CREATE TABLE IF NOT EXISTS dpproxy_accounts (
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
		`CREATE TABLE IF NOT EXISTS dpproxy_state (
			state_key ` + name + ` NOT NULL PRIMARY KEY,
			state_value ` + d.blobType() + ` NOT NULL,
			updated_at BIGINT NOT NULL
		)` + opts,
	}
}

// createSchema creates the ledger tables if they are missing, upgrades a
// version 1 ledger, and checks that the version is one this code
// understands. Every statement is idempotent, so MySQL committing each
// CREATE TABLE or ALTER TABLE implicitly does no harm (two proxies
// upgrading at once both run the same ALTERs).
func (l *Ledger) createSchema(ctx context.Context) error {
	return l.inTx(ctx, func(tx *sql.Tx) error {
		if lock := l.dialect.schemaLock(); lock != "" {
			if _, err := tx.ExecContext(ctx, lock); err != nil {
				return err
			}
		}
		for _, stmt := range l.dialect.schemaStatements() {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		insert := l.dialect.upsert("dpproxy_meta", "meta_key", []string{"meta_key", "meta_value"}, nil)
		if _, err := l.exec(ctx, tx, insert, schemaVersionKey, schemaVersion); err != nil {
			return err
		}
		var version int64
		if err := l.queryRow(ctx, tx, "SELECT meta_value FROM dpproxy_meta WHERE meta_key = ?", schemaVersionKey).Scan(&version); err != nil {
			return err
		}
		if version == 1 {
			return l.upgradeFrom1(ctx, tx)
		}
		if version != schemaVersion {
			return invalid("ledger schema version %d, this dpproxy understands versions 1 and %d", version, schemaVersion)
		}
		return nil
	})
}

// upgradeFrom1 makes a version 1 ledger version 2: on MySQL/MariaDB the
// name columns become VARBINARY (their rows, usage included, are kept;
// names that padding made one stay one row, under the name first stored).
func (l *Ledger) upgradeFrom1(ctx context.Context, tx *sql.Tx) error {
	if l.dialect == MySQL {
		for _, c := range nameColumns {
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c[0]+" MODIFY "+c[1]+" "+l.dialect.nameType()+" NOT NULL"); err != nil {
				return err
			}
		}
	}
	_, err := l.exec(ctx, tx, "UPDATE dpproxy_meta SET meta_value = ? WHERE meta_key = ? AND meta_value = 1", schemaVersion, schemaVersionKey)
	return err
}
