package budget

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// backend is a ledger database the tests run against.
type backend struct {
	dialect Dialect
	// freshDSN returns the DSN of a new, empty database for the test.
	freshDSN func(t testing.TB) string
}

// backends are all ledger databases. SQLite uses a plain file name, as the
// default configuration does, with no busy_timeout or _txlock in the DSN, so
// the tests exercise the ledger's own locking. PostgreSQL and MariaDB skip
// when their DPPROXY_TEST_*_DSN is unset and fail when it is set but the
// server is unreachable (package testdb).
var backends = []backend{
	{SQLite, func(t testing.TB) string { return filepath.Join(t.TempDir(), "ledger.db") }},
	{Postgres, testdb.PostgresDSN},
	{MySQL, testdb.MySQLDSN},
}

// forEachBackend runs test as a subtest per backend with a fresh database.
func forEachBackend(t *testing.T, test func(t *testing.T, b backend, dsn string)) {
	for _, b := range backends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			test(t, b, b.freshDSN(t))
		})
	}
}

// forEachLedger runs test as a subtest per backend with a new ledger in a
// fresh database.
func forEachLedger(t *testing.T, test func(t *testing.T, l *Ledger)) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		test(t, openLedger(t, b, dsn))
	})
}

// openLedger opens dsn in a new connection pool and the ledger in it.
func openLedger(t testing.TB, b backend, dsn string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), openDB(t, b, dsn), b.dialect)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func openDB(t testing.TB, b backend, dsn string) *sql.DB {
	t.Helper()
	return testdb.Open(t, b.dialect.String(), dsn)
}

// setLimits creates accounts with the given limits or fails the test.
func setLimits(t testing.TB, l *Ledger, limits map[string]Cost) {
	t.Helper()
	for account, limit := range limits {
		if err := l.SetLimit(context.Background(), account, limit); err != nil {
			t.Fatalf("SetLimit(%q, %v): %v", account, limit, err)
		}
	}
}

// reserve reserves cost on accounts or fails the test.
func reserve(t testing.TB, l *Ledger, cost Cost, accounts ...string) *Reservation {
	t.Helper()
	r, err := l.Reserve(context.Background(), stored(accounts...), cost, "test")
	if err != nil {
		t.Fatalf("Reserve(%v, %v): %v", accounts, cost, err)
	}
	return r
}

// wantRemaining checks an account's remaining budget to within float noise.
func wantRemaining(t testing.TB, l *Ledger, account string, want Cost) {
	t.Helper()
	got, err := l.Remaining(context.Background(), account)
	if err != nil {
		t.Fatalf("Remaining(%q): %v", account, err)
	}
	if !near(got.Epsilon, want.Epsilon) || !near(got.Delta, want.Delta) {
		t.Errorf("Remaining(%q): got %v, want %v", account, got, want)
	}
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-12 && d > -1e-12
}

// stored returns the accounts, each checked against its stored limit and
// disclosing what remains of it.
func stored(names ...string) []Account {
	accounts := make([]Account, len(names))
	for i, n := range names {
		accounts[i] = Account{Name: n, Disclose: true}
	}
	return accounts
}
