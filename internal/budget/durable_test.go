package budget

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestOpenRefusesNonDurableSQLite: a ledger DSN that turns SQLite's
// synchronous below FULL or its journal off or into memory is refused at
// Open, naming the pragma, before any table is created (a commit could
// be lost, or the file corrupted, in a crash: an uncharged release); the
// durable settings are accepted. Before the fix every one was accepted.
func TestOpenRefusesNonDurableSQLite(t *testing.T) {
	for _, c := range []struct {
		pragmas string
		refused string // "" when accepted
	}{
		{"", ""},
		{"_pragma=journal_mode(WAL)", ""},
		{"_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)", ""},
		{"_pragma=synchronous(EXTRA)", ""},
		{"_pragma=journal_mode(TRUNCATE)", ""},
		{"_pragma=synchronous(OFF)", "synchronous = OFF"},
		{"_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", "synchronous = NORMAL"},
		{"_pragma=journal_mode(OFF)", "journal_mode = OFF"},
		{"_pragma=journal_mode(MEMORY)", "journal_mode = MEMORY"},
	} {
		t.Run(c.pragmas, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ledger.db")
			dsn := path
			if c.pragmas != "" {
				dsn += "?" + c.pragmas
			}
			_, err := Open(context.Background(), testdb.Open(t, "sqlite", dsn), SQLite)
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("Open: %v", err)
			case c.refused == "":
				return
			case err == nil || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "durable"):
				t.Fatalf("Open: got %v, want a refusal naming %q", err, c.refused)
			}
			var tables int
			if err := testdb.Open(t, "sqlite", path).QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").Scan(&tables); err != nil {
				t.Fatal(err)
			}
			if tables != 0 {
				t.Errorf("the refused Open created %d tables", tables)
			}
		})
	}
}

// TestOpenRefusesPostgresWithoutSynchronousCommit: a PostgreSQL pool whose
// sessions run with synchronous_commit = off (here from the DSN; ALTER
// ROLE or ALTER DATABASE … SET do the same) is refused at Open; the same
// DSN's pool whose connections ran Dialect.Session opens, and its
// sessions commit synchronously. Before the fix Open accepted the first.
func TestOpenRefusesPostgresWithoutSynchronousCommit(t *testing.T) {
	dsn := withParam(t, testdb.PostgresDSN(t), "synchronous_commit", "off")
	ctx := context.Background()
	unpinned := testdb.Open(t, "postgres", dsn)
	if got := setting(t, unpinned, "synchronous_commit"); got != "off" {
		t.Fatalf("the DSN's sessions: synchronous_commit = %s, want off (the test's premise)", got)
	}
	if _, err := Open(ctx, unpinned, Postgres); err == nil || !strings.Contains(err.Error(), "synchronous_commit = off") {
		t.Errorf("Open of a pool with synchronous_commit off: got %v, want a refusal naming it", err)
	}
	pinned := testdb.Open(t, "postgres", dsn)
	pinned.SetMaxOpenConns(1) // one connection, which ran Session
	for _, stmt := range Postgres.Session() {
		if _, err := pinned.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(ctx, pinned, Postgres); err != nil {
		t.Fatalf("Open of a pool that ran Session: %v", err)
	}
	if got := setting(t, pinned, "synchronous_commit"); got != "on" {
		t.Errorf("after Session: synchronous_commit = %s, want on", got)
	}
}

// TestOpenChecksInnoDBFlushAtCommit: Open reads the MySQL/MariaDB
// server's innodb_flush_log_at_trx_commit and refuses the values that
// flush the redo log about once a second (0 and 2), naming the variable.
// Setting it on the shared test server (SET GLOBAL) would change every
// other client's, so the live server is checked for the value it has (1
// by default) and the refusal on the values themselves.
func TestOpenChecksInnoDBFlushAtCommit(t *testing.T) {
	for _, c := range []struct {
		value   int64
		durable bool
	}{{0, false}, {1, true}, {2, false}, {3, true}} {
		err := checkFlushAtCommit(c.value)
		if c.durable != (err == nil) {
			t.Errorf("innodb_flush_log_at_trx_commit = %d: got %v, want durable %v", c.value, err, c.durable)
		}
		if err != nil && !strings.Contains(err.Error(), "innodb_flush_log_at_trx_commit") {
			t.Errorf("innodb_flush_log_at_trx_commit = %d: the refusal %q does not name the variable", c.value, err)
		}
	}
	db := testdb.Open(t, "mysql", testdb.MySQLDSN(t))
	var value int64
	if err := db.QueryRow("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit").Scan(&value); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), db, MySQL)
	if want := checkFlushAtCommit(value); (err == nil) != (want == nil) || err != nil && err.Error() != want.Error() {
		t.Errorf("Open with innodb_flush_log_at_trx_commit = %d: got %v, want %v", value, err, want)
	}
}

// withParam adds key=value to a lib/pq DSN in URL form; lib/pq sends an
// unknown key to the server as a run-time parameter.
func withParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Skipf("%s is not a postgres:// URL; skipping this test", testdb.PostgresEnv)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// setting reads a PostgreSQL run-time setting of one of db's sessions.
func setting(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("SELECT pg_catalog.current_setting($1)", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
