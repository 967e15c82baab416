package main

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestLedgerSessionsCommitSynchronouslyOnPostgres: a PostgreSQL ledger
// whose DSN or database sets synchronous_commit = off (so that a
// reservation reported committed could be lost in a crash of the server
// after its answer was released) commits synchronously in every session
// of the ledger's pool. Before the fix its sessions kept off.
func TestLedgerSessionsCommitSynchronouslyOnPostgres(t *testing.T) {
	for name, offDSN := range map[string]func(t *testing.T) string{
		"DSN": func(t *testing.T) string {
			u := postgresURL(t, testdb.PostgresDSN(t))
			q := u.Query()
			q.Set("synchronous_commit", "off") // lib/pq sends it as a run-time parameter
			u.RawQuery = q.Encode()
			return u.String()
		},
		"ALTER DATABASE": func(t *testing.T) string {
			dsn := testdb.PostgresDatabaseDSN(t, "UTF8")
			if _, err := testdb.Open(t, "postgres", dsn).Exec("ALTER DATABASE " + postgresURL(t, dsn).Path[1:] + " SET synchronous_commit = off"); err != nil {
				t.Fatal(err)
			}
			return dsn
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dsn := offDSN(t)
			var direct string
			if err := testdb.Open(t, "postgres", dsn).QueryRow("SHOW synchronous_commit").Scan(&direct); err != nil || direct != "off" {
				t.Fatalf("a plain session of the DSN: synchronous_commit %q, err %v; want off (the test's premise)", direct, err)
			}
			_, db, err := openLedger(ctx, catalog.Database{Driver: "postgres", DSN: dsn}, 0)
			if err != nil {
				t.Fatalf("openLedger: %v", err)
			}
			defer db.Close()
			for i := range 3 { // three sessions held at once: three connections
				conn, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var got string
				if err := conn.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != "on" {
					t.Errorf("ledger session %d: synchronous_commit = %s, want on", i, got)
				}
			}
		})
	}
}

// TestLedgerRefusesNonDurableSQLiteDSN: the proxy does not start on an
// SQLite ledger DSN that turns synchronous off (or its journal off),
// under which a reservation reported committed could be lost in a crash;
// the error names the pragma. Before the fix it started.
func TestLedgerRefusesNonDurableSQLiteDSN(t *testing.T) {
	for pragma, want := range map[string]string{
		"synchronous(OFF)":     "synchronous = OFF",
		"journal_mode(MEMORY)": "journal_mode = MEMORY",
	} {
		dsn := filepath.Join(t.TempDir(), "ledger.db") + "?_pragma=" + pragma
		_, db, err := openLedger(context.Background(), catalog.Database{Driver: "sqlite", DSN: dsn}, 0)
		if err == nil {
			db.Close()
			t.Errorf("%s: opened the ledger, want a refusal", pragma)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want a refusal naming %q", pragma, err, want)
		}
	}
}

// postgresURL parses a postgres:// DSN, skipping the test for another form.
func postgresURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Skipf("%s is not a postgres:// URL; skipping this test", testdb.PostgresEnv)
	}
	return u
}
