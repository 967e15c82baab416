package testdb

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// SQLiteDSN returns the DSN of a new SQLite database file in t.TempDir(),
// in WAL mode with a busy timeout so that several connections can share it.
func SQLiteDSN(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "test.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
}

// SQLite opens a new SQLite database file (see SQLiteDSN), closed when the
// test ends.
func SQLite(t testing.TB) *sql.DB {
	t.Helper()
	return Open(t, "sqlite", SQLiteDSN(t))
}
