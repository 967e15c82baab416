package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestRefusedBeforeReservation sends, through the proxy, statements and
// settings that the mechanisms cannot use (issue 10 #6): each used to be
// accepted, charged, and then fail with 1105 after the data was read (or,
// for a setting, at every later statement). Each must now be refused with
// 1231 (settings and ε shares) or 1235 (statements) and charge nothing:
// dp_remaining_epsilon() and dp_remaining_delta() stay where they were. It
// runs on SQLite and, for the text literals that PostgreSQL rejects (not
// UTF-8, or with a NUL byte, written in the SQL or bound as a prepared
// statement's parameter), on PostgreSQL.
func TestRefusedBeforeReservation(t *testing.T) {
	for _, b := range []struct {
		name, driver string
		dsn          func(testing.TB) string
		double       string
	}{
		{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "r.db") }, "REAL"},
		{"postgres", "postgres", testdb.PostgresDSN, "DOUBLE PRECISION"},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, s := range []string{
				"DROP TABLE IF EXISTS r",
				fmt.Sprintf("CREATE TABLE r (x %s, s VARCHAR(8))", b.double),
				"INSERT INTO r (x, s) VALUES (10, 'CA'), (20, 'NY'), (30, 'CA'), (40, 'WA'), (50, 'CA')",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 200, default_delta: 1.0e-6, max_delta: 0.9}
users:
  - {name: rita, password_hash: %q, epsilon: 1000, delta: 0.95}
tables:
  - name: r
    columns:
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: s, type: text}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")))
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			conn := p.connect(t, "rita", "pw")
			conn.SetMaxOpenConns(1)
			remaining := func() (float64, float64) {
				_, eps := queryRow(t, conn, "SELECT dp_remaining_epsilon()")
				_, delta := queryRow(t, conn, "SELECT dp_remaining_delta()")
				return eps[0], delta[0]
			}
			for _, c := range []struct {
				setup []string
				sql   string
				code  uint16
				args  []any // bound to ? markers by a server-side prepared statement
			}{
				// One release at ε = 150: mechanisms accept at most 100.
				{[]string{"SET @dp_epsilon = 150", "SET @dp_mechanism = 'auto'"}, "SELECT AVG(x) FROM r", 1231, nil},
				{[]string{"SET @dp_epsilon = 150", "SET @dp_mechanism = 'laplace'"}, "SELECT SUM(x) FROM r", 1231, nil},
				// Below what the smooth median and piecewise mechanisms accept (2^-16).
				{[]string{"SET @dp_epsilon = 1e-5", "SET @dp_mechanism = 'smooth'"}, "SELECT MEDIAN(x) FROM r", 1231, nil},
				{[]string{"SET @dp_epsilon = 1e-5", "SET @dp_mechanism = 'piecewise'"}, "SELECT VARIANCE(x) FROM r", 1231, nil},
				{[]string{"SET @dp_epsilon = 1e-5", "SET @dp_mechanism = 'auto'"}, "SELECT MEDIAN(x) FROM r", 1231, nil},
				// PTR's δ must be at most 0.5.
				{[]string{"SET @dp_epsilon = 1", "SET @dp_delta = 0.9", "SET @dp_mechanism = 'ptr'"}, "SELECT MEDIAN(x) FROM r", 1231, nil},
				{[]string{"SET @dp_epsilon = 1", "SET @dp_delta = 0.9", "SET @dp_mechanism = 'trimmed'"}, "SELECT AVG(x) FROM r", 1231, nil},
				// A string that is not UTF-8: MariaDB's 1300, refused at the wire.
				{[]string{"SET @dp_epsilon = 1", "SET @dp_delta = 1e-6", "SET @dp_mechanism = 'auto'"}, "SELECT COUNT(*) FROM r WHERE s = 'C\xffA'", 1300, nil},
				// A string with a NUL byte (\0 in a MySQL literal, or the
				// byte itself), which PostgreSQL rejects as a bind argument.
				{nil, `SELECT COUNT(*) FROM r WHERE s = 'a\0b'`, 1235, nil},
				{nil, "SELECT COUNT(*) FROM r WHERE s = 'a\x00b'", 1235, nil},
				{nil, `SELECT COUNT(*) FROM r WHERE s LIKE 'a\0b%'`, 1235, nil},
				{nil, `SELECT COUNT(*) FROM r WHERE s IN ('CA', 'a\0b')`, 1235, nil},
				{nil, `SELECT SUM(CASE WHEN s = 'a\0b' THEN 1 ELSE 0 END) FROM r`, 1235, nil},
				// The same as a server-side prepared statement's parameter
				// (COM_STMT_PREPARE and COM_STMT_EXECUTE).
				{nil, "SELECT COUNT(*) FROM r WHERE s = ?", 1235, []any{"a\x00b"}},
				{nil, "SELECT COUNT(*) FROM r WHERE s IN ('CA', ?)", 1300, []any{"C\xffA"}},
			} {
				for _, s := range c.setup {
					if _, err := conn.Exec(s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
				eps, delta := remaining()
				_, err := conn.Exec(c.sql, c.args...)
				if got := mysqlCode(err); got != c.code {
					t.Errorf("%v then %q: got %v, want error %d", c.setup, c.sql, err, c.code)
				}
				if e, d := remaining(); e != eps || d != delta {
					t.Errorf("%v then %q charged ε %v and δ %v", c.setup, c.sql, eps-e, delta-d)
				}
			}
			// A statement ε no mechanism accepts is refused at SET.
			if _, err := conn.Exec("SET @dp_epsilon = 1e-20"); mysqlCode(err) != 1231 {
				t.Errorf("SET @dp_epsilon = 1e-20: got %v, want 1231", err)
			}
			// The same ε split over two releases (75 each) is answered and charged.
			if _, err := conn.Exec("SET @dp_epsilon = 150"); err != nil {
				t.Fatal(err)
			}
			eps, _ := remaining()
			queryRow(t, conn, "SELECT AVG(x), COUNT(*) FROM r")
			if e, _ := remaining(); math.Abs(eps-e-150) > 1e-9 {
				t.Errorf("two releases at ε = 150: charged %v, want 150", eps-e)
			}
		})
	}
}
