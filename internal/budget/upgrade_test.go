package budget

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// oldLedger reads and writes a ledger of schema version 1 or 2 as a
// binary of that version does, with its DDL and its statements (those of
// commit 9f5b635, the last of version 1; version 2 differs only in its
// VARBINARY names on MySQL/MariaDB): a proxy of that version that is
// already running when an upgraded one opens the ledger, and never reads
// the version again.
type oldLedger struct {
	db      *sql.DB
	dialect Dialect
	version int64
}

// openOldLedger opens dsn for an old binary; on MySQL/MariaDB with an
// empty sql_mode, as old binaries did not set it (a NOT NULL column
// without a default does not stop an INSERT then).
func openOldLedger(t *testing.T, b backend, dsn string, version int64) *oldLedger {
	t.Helper()
	if b.dialect == MySQL {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Params = map[string]string{"sql_mode": "''"}
		dsn = cfg.FormatDSN()
	}
	return &oldLedger{db: openDB(t, b, dsn), dialect: b.dialect, version: version}
}

// tx runs fn in a transaction, as the old binaries did (without retries).
func (o *oldLedger) tx(fn func(tx *sql.Tx) error) error {
	tx, err := o.db.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (o *oldLedger) exec(tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	return tx.Exec(o.dialect.rebind(query), args...)
}

// start is the old binary's Open: its idempotent DDL, then its version
// check.
func (o *oldLedger) start() error {
	name := "VARCHAR(255)"
	if o.version == 2 && o.dialect == MySQL {
		name = "VARBINARY(255)"
	}
	if o.dialect != MySQL {
		name = "TEXT"
	}
	opts := o.dialect.tableOptions()
	ddl := []string{
		`CREATE TABLE IF NOT EXISTS dpproxy_meta (meta_key ` + name + ` NOT NULL PRIMARY KEY, meta_value BIGINT NOT NULL)` + opts,
		`CREATE TABLE IF NOT EXISTS dpproxy_accounts (name ` + name + ` NOT NULL PRIMARY KEY,
			epsilon_limit DOUBLE PRECISION NOT NULL, delta_limit DOUBLE PRECISION NOT NULL,
			epsilon_used DOUBLE PRECISION NOT NULL, delta_used DOUBLE PRECISION NOT NULL,
			created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)` + opts,
		`CREATE TABLE IF NOT EXISTS dpproxy_reservations (` + o.dialect.idColumn() + `, accounts TEXT NOT NULL,
			epsilon DOUBLE PRECISION NOT NULL, delta DOUBLE PRECISION NOT NULL, memo TEXT NOT NULL,
			state VARCHAR(16) NOT NULL, reserved_at BIGINT NOT NULL, settled_at BIGINT)` + opts,
		`CREATE TABLE IF NOT EXISTS dpproxy_reservation_accounts (account ` + name + ` NOT NULL,
			reservation_id BIGINT NOT NULL, PRIMARY KEY (account, reservation_id))` + opts,
		`CREATE TABLE IF NOT EXISTS dpproxy_state (state_key ` + name + ` NOT NULL PRIMARY KEY,
			state_value ` + o.dialect.blobType() + ` NOT NULL, updated_at BIGINT NOT NULL)` + opts,
	}
	return o.tx(func(tx *sql.Tx) error {
		if o.dialect == Postgres {
			if _, err := tx.Exec("SELECT pg_advisory_xact_lock(7319418520457031107)"); err != nil {
				return err
			}
		}
		for _, stmt := range ddl {
			if _, err := tx.Exec(stmt); err != nil {
				return err
			}
		}
		insert := o.dialect.upsert("dpproxy_meta", "meta_key", []string{"meta_key", "meta_value"}, nil)
		if _, err := o.exec(tx, insert, schemaVersionKey, o.version); err != nil {
			return err
		}
		var version int64
		if err := tx.QueryRow(o.dialect.rebind("SELECT meta_value FROM dpproxy_meta WHERE meta_key = ?"), schemaVersionKey).Scan(&version); err != nil {
			return err
		}
		if version != o.version {
			return fmt.Errorf("ledger schema version %d, this dpproxy understands version %d", version, o.version)
		}
		return nil
	})
}

// setLimit is the old SetLimit (run at start for every configured user and
// table, and for a claim by a synopsis or interactive creation).
func (o *oldLedger) setLimit(account string, eps float64) error {
	upsert := o.dialect.upsert("dpproxy_accounts", "name",
		[]string{"name", "epsilon_limit", "delta_limit", "epsilon_used", "delta_used", "created_at", "updated_at"},
		[]string{"epsilon_limit", "delta_limit", "updated_at"})
	return o.tx(func(tx *sql.Tx) error {
		_, err := o.exec(tx, upsert, account, eps, 0.0, 0.0, 0.0, 1, 1)
		return err
	})
}

// lock is the old lockAccounts.
func (o *oldLedger) lock(tx *sql.Tx, sorted []string) (map[string][2]float64, error) {
	in := "(" + placeholders(len(sorted)) + ")"
	if o.dialect == SQLite {
		if _, err := o.exec(tx, "UPDATE dpproxy_accounts SET epsilon_limit = epsilon_limit WHERE name IN "+in, anys(sorted)...); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(o.dialect.rebind("SELECT name, epsilon_limit, epsilon_used FROM dpproxy_accounts WHERE name IN "+in+" ORDER BY name"+o.dialect.lockSuffix()), anys(sorted)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	usages := map[string][2]float64{}
	for rows.Next() {
		var name string
		var u [2]float64
		if err := rows.Scan(&name, &u[0], &u[1]); err != nil {
			return nil, err
		}
		usages[name] = u
	}
	return usages, rows.Err()
}

// reserve is the old Reserve of eps on accounts, against their stored
// limits; it returns the reservation's id.
func (o *oldLedger) reserve(eps float64, accounts ...string) (int64, error) {
	sorted := slices.Sorted(slices.Values(accounts))
	var id int64
	err := o.tx(func(tx *sql.Tx) error {
		usages, err := o.lock(tx, sorted)
		if err != nil {
			return err
		}
		for _, a := range sorted {
			u, ok := usages[a]
			if !ok || u[1]+eps > u[0]+1e-9 {
				return fmt.Errorf("%s cannot pay %g", a, eps)
			}
			if _, err := o.exec(tx, "UPDATE dpproxy_accounts SET epsilon_used = ?, updated_at = ? WHERE name = ?", u[1]+eps, 2, a); err != nil {
				return err
			}
		}
		const insert = "INSERT INTO dpproxy_reservations (accounts, epsilon, delta, memo, state, reserved_at) VALUES (?, ?, ?, ?, ?, ?)"
		args := []any{strings.Join(sorted, "\n"), eps, 0.0, "old", string(Reserved), 2}
		if o.dialect == Postgres {
			if err := tx.QueryRow(o.dialect.rebind(insert+" RETURNING id"), args...).Scan(&id); err != nil {
				return err
			}
		} else {
			res, err := o.exec(tx, insert, args...)
			if err != nil {
				return err
			}
			if id, err = res.LastInsertId(); err != nil {
				return err
			}
		}
		for _, a := range sorted {
			if _, err := o.exec(tx, "INSERT INTO dpproxy_reservation_accounts (account, reservation_id) VALUES (?, ?)", a, id); err != nil {
				return err
			}
		}
		return nil
	})
	return id, err
}

// cancel is the old Cancel of reservation id.
func (o *oldLedger) cancel(id int64, eps float64, accounts ...string) error {
	sorted := slices.Sorted(slices.Values(accounts))
	return o.tx(func(tx *sql.Tx) error {
		usages, err := o.lock(tx, sorted)
		if err != nil {
			return err
		}
		if _, err := o.exec(tx, "UPDATE dpproxy_reservations SET state = ?, settled_at = ? WHERE id = ? AND state = ?", string(Cancelled), 3, id, string(Reserved)); err != nil {
			return err
		}
		for _, a := range sorted {
			if _, err := o.exec(tx, "UPDATE dpproxy_accounts SET epsilon_used = ?, updated_at = ? WHERE name = ?", usages[a][1]-eps, 3, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// remaining is the old Remaining (a claim's check, dp_remaining_epsilon()).
func (o *oldLedger) remaining(account string) error {
	return o.tx(func(tx *sql.Tx) error {
		var l, u float64
		return tx.QueryRow(o.dialect.rebind("SELECT epsilon_limit, epsilon_used FROM dpproxy_accounts WHERE name = ?"), account).Scan(&l, &u)
	})
}

// putState is the old PutState and the insert of an insert-if-absent swap.
func (o *oldLedger) putState(key, value string) error {
	upsert := o.dialect.upsert("dpproxy_state", "state_key", []string{"state_key", "state_value", "updated_at"}, []string{"state_value", "updated_at"})
	return o.tx(func(tx *sql.Tx) error {
		_, err := o.exec(tx, upsert, key, []byte(value), 4)
		return err
	})
}

// getState is the old GetState (a stored synopsis, interactive instance,
// turn or lease, or repeated answer).
func (o *oldLedger) getState(key string) error {
	return o.tx(func(tx *sql.Tx) error {
		var v []byte
		return tx.QueryRow(o.dialect.rebind("SELECT state_value FROM dpproxy_state WHERE state_key = ?"), key).Scan(&v)
	})
}

// swapState is the old compare-and-swap (an interactive instance's new
// state, a turn, a lease).
func (o *oldLedger) swapState(key, old, value string) error {
	return o.tx(func(tx *sql.Tx) error {
		res, err := o.exec(tx, "UPDATE dpproxy_state SET state_value = ?, updated_at = ? WHERE state_key = ? AND state_value = ?", []byte(value), 5, key, []byte(old))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errors.Join(errors.New("swap lost"), err)
		}
		return nil
	})
}

// newOldLedger starts an old binary on a fresh database and spends on it:
// alice (limit 10) and the legacy cap account table:pums_v2 (cap 3) have
// used 2.5, 0.5 of it pending; a synopsis is stored.
func newOldLedger(t *testing.T, b backend, dsn string, version int64) (old *oldLedger, pending int64) {
	t.Helper()
	old = openOldLedger(t, b, dsn, version)
	if err := old.start(); err != nil {
		t.Fatalf("old start: %v", err)
	}
	for name, eps := range map[string]float64{"user:alice": 10, "table:pums_v2": 3} {
		if err := old.setLimit(name, eps); err != nil {
			t.Fatalf("old SetLimit: %v", err)
		}
	}
	if _, err := old.reserve(2, "user:alice", "table:pums_v2"); err != nil {
		t.Fatalf("old Reserve: %v", err)
	}
	pending, err := old.reserve(0.5, "user:alice", "table:pums_v2")
	if err != nil {
		t.Fatalf("old Reserve: %v", err)
	}
	if err := old.putState("synopsis:pums:age", "noisy"); err != nil {
		t.Fatalf("old PutState: %v", err)
	}
	return old, pending
}

// TestUpgradeStopsRunningOldProxies: once an upgraded ledger is opened, a
// version 1 or 2 proxy that was already running (and never reads the
// version again) can neither reserve, nor create or read an account, nor
// read or write shared state, nor give back a pending reservation, under
// any sql_mode; its restart is refused and leaves it so. The upgraded
// ledger keeps every row.
func TestUpgradeStopsRunningOldProxies(t *testing.T) {
	for _, version := range []int64{1, 2} {
		t.Run(fmt.Sprintf("from%d", version), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, b backend, dsn string) {
				ctx := context.Background()
				old, pending := newOldLedger(t, b, dsn, version)
				l := openLedger(t, b, dsn)
				for restart := range 2 {
					for what, err := range map[string]error{
						"Reserve":            func() error { _, err := old.reserve(0.1, "user:alice", "table:pums_v2"); return err }(),
						"Reserve of alice":   func() error { _, err := old.reserve(0.1, "user:alice"); return err }(),
						"Cancel":             old.cancel(pending, 0.5, "user:alice", "table:pums_v2"),
						"SetLimit of claim":  old.setLimit("claim:synopsis:pums:age", 1),
						"Remaining":          old.remaining("user:alice"),
						"GetState":           old.getState("synopsis:pums:age"),
						"SwapState":          old.swapState("synopsis:pums:age", "noisy", "noisier"),
						"PutState of a turn": old.putState("turn:pums", "mine"),
					} {
						if err == nil {
							t.Errorf("old binary's %s after the upgrade (restart %d): succeeded, want an error", what, restart)
						}
					}
					if restart == 0 {
						if err := old.start(); err == nil {
							t.Fatal("old binary's start on the upgraded ledger: succeeded, want a refusal")
						}
					}
				}
				var v int64
				if err := l.db.QueryRowContext(ctx, "SELECT meta_value FROM dpproxy_meta WHERE meta_key = 'schema_version'").Scan(&v); err != nil || v != schemaVersion {
					t.Errorf("version after the upgrade: %d, %v; want %d", v, err, schemaVersion)
				}
				for account, want := range map[string]float64{"user:alice": 7.5, "table:pums_v2": 0.5} {
					if got, err := l.Remaining(ctx, account); err != nil || !near(got.Epsilon, want) {
						t.Errorf("Remaining(%s) after the upgrade: %v, %v; want %g", account, got, err, want)
					}
				}
				if got, err := l.RemainingUnder(ctx, "user:alice ", Cost{Epsilon: 10}); err != nil || got.Epsilon != 10 {
					t.Errorf("user:alice with a trailing space after the upgrade: remaining %v, %v; want its own whole limit", got, err)
				}
				if value, ok, err := l.GetState(ctx, "synopsis:pums:age"); err != nil || !ok || string(value) != "noisy" {
					t.Errorf("stored synopsis after the upgrade: %q, %v, %v; want the old one", value, ok, err)
				}
				if h, err := l.History(ctx, "user:alice", 0); err != nil || len(h) != 2 || h[0].ID != pending || h[0].State != Reserved {
					t.Errorf("History after the upgrade: %+v, %v; want the two old reservations, the newest pending", h, err)
				}
				if carried, err := l.CarryOver(ctx, "table:pums_v2", "table:pums"); err != nil || !carried {
					t.Fatalf("CarryOver: %v, %v", carried, err)
				}
				if got, err := l.RemainingUnder(ctx, "table:pums", Cost{Epsilon: 3}); err != nil || !near(got.Epsilon, 0.5) {
					t.Errorf("the relation's remaining cap: %v, %v; want 0.5", got, err)
				}
			})
		})
	}
}

// TestConcurrentUpgradesMoveOnce: proxies opening a version 1 ledger at
// the same moment all succeed, and the ledger is upgraded once, keeping
// every row; an upgrade cut short (MySQL/MariaDB commit each DDL
// statement) is completed by the next Open.
func TestConcurrentUpgradesMoveOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ctx := context.Background()
		newOldLedger(t, b, dsn, 1)
		// Cut short: the accounts moved, the state not, the version still 1.
		cut := &Ledger{db: openDB(t, b, dsn), dialect: b.dialect}
		if err := cut.inTx(ctx, func(tx *sql.Tx) error { return cut.moveTable(ctx, tx, "dpproxy_accounts", "dpproxy_accounts_v3") }); err != nil {
			t.Fatal(err)
		}
		const n = 4
		dbs := make([]*sql.DB, n)
		for i := range dbs {
			dbs[i] = openDB(t, b, dsn)
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				_, errs[i] = Open(ctx, dbs[i], b.dialect)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Open %d: %v", i, err)
			}
		}
		l := openLedger(t, b, dsn)
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 7.5})
		wantRemaining(t, l, "table:pums_v2", Cost{Epsilon: 0.5})
		if value, ok, err := l.GetState(ctx, "synopsis:pums:age"); err != nil || !ok || string(value) != "noisy" {
			t.Errorf("stored synopsis after the upgrade: %q, %v, %v; want the old one", value, ok, err)
		}
	})
}
