package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestLateTableTypesOnDatabases: through the proxy on MariaDB and
// PostgreSQL, tables absent when the proxy starts (a warning names them)
// are created later: one with a text column declared real and one
// declared a date, one with the declared types. A statement on the
// text-typed ones is refused with 1235, naming the column, and charges
// nothing, on both neighbours of a row that text and numbers order apart
// ('10' beside '9') or that holds no date ('garbage'): the independent
// review's reproduction answered without the row '10' and failed with
// 1105, charged, with it. The well-typed table answers.
func TestLateTableTypesOnDatabases(t *testing.T) {
	for _, b := range []struct {
		name, driver, text string
		dsn                func(testing.TB) string
	}{
		{"mariadb", "mysql", "VARCHAR(20)", testdb.MySQLDSN},
		{"postgres", "postgres", "TEXT", testdb.PostgresDSN},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db, err := sql.Open(b.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 10}
users:
  - {name: ana, password_hash: %q, epsilon: 100}
tables:
  - name: late
    columns:
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: d, type: date, lower: '2020-01-01', upper: '2022-12-31'}
  - name: late_dates
    columns:
      - {name: d, type: date, lower: '2020-01-01', upper: '2022-12-31'}
  - name: late_good
    columns:
      - {name: x, type: real, lower: 0, upper: 100}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")))
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			for _, table := range []string{"late", "late_dates", "late_good"} {
				if !strings.Contains(p.Logs(), "table not found in the backend") || !strings.Contains(p.Logs(), "table="+table+" ") {
					t.Errorf("no start warning for the missing table %s:\n%s", table, p.Logs())
				}
			}
			var values []string
			for i := range 100 {
				values = append(values, fmt.Sprintf("('%d', DATE '2021-01-01')", i%10))
			}
			for _, s := range []string{
				"CREATE TABLE late (x " + b.text + ", d DATE)",
				"INSERT INTO late VALUES " + strings.Join(values, ", "),
				"CREATE TABLE late_dates (d " + b.text + ")",
				"INSERT INTO late_dates SELECT '2021-01-01' FROM late",
				"CREATE TABLE late_good (x DOUBLE PRECISION)",
				"INSERT INTO late_good VALUES (1), (2), (3)",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			conn := p.connect(t, "ana", "pw")
			conn.SetMaxOpenConns(1)
			remaining := func() float64 {
				_, eps := queryRow(t, conn, "SELECT dp_remaining_epsilon()")
				return eps[0]
			}
			refused := func(neighbour, query, column string) {
				t.Helper()
				eps := remaining()
				_, err := conn.Exec(query)
				if mysqlCode(err) != 1235 || !strings.Contains(err.Error(), column+" (declared") {
					t.Errorf("%s: %s: got %v, want 1235 naming %s", neighbour, query, err, column)
				}
				if e := remaining(); e != eps {
					t.Errorf("%s: %s charged ε %v", neighbour, query, eps-e)
				}
			}
			for _, neighbour := range []string{"without the row", "with the row"} {
				for _, q := range []string{"SELECT MEDIAN(x) FROM late", "SELECT AVG(x) FROM late", "SELECT COUNT(*) FROM late WHERE x > 5",
					"SELECT FLOOR(x / 10) * 10 AS b, COUNT(*) FROM late GROUP BY b"} {
					refused(neighbour, q, "late.x")
				}
				for _, q := range []string{"SELECT AVG(DATEDIFF(d, '2020-01-01')) FROM late_dates", "SELECT MEDIAN(d) FROM late_dates",
					"SELECT COUNT(*) FROM late_dates WHERE d >= '2021-01-01'"} {
					refused(neighbour, q, "late_dates.d")
				}
				for _, s := range []string{"INSERT INTO late VALUES ('10', DATE '2021-01-01')", "INSERT INTO late_dates VALUES ('garbage')"} {
					if _, err := db.Exec(s); err != nil {
						t.Fatalf("%s: %v", s, err)
					}
				}
			}
			eps := remaining()
			queryRow(t, conn, "SELECT MEDIAN(x) FROM late_good")
			if e := remaining(); e >= eps {
				t.Errorf("the well-typed table's median charged nothing (%v then %v)", eps, e)
			}
		})
	}
}

// TestMissingTextTableOnDatabases: on SQLite, PostgreSQL and MariaDB, a
// configured table of text columns only (COUNT, GROUP BY its keys) that
// the backend does not have is refused with 1146 before any reservation:
// dp_remaining_epsilon() is unchanged. Its type check found no numeric or
// date column to tell it missing, so its fetch failed after the
// reservation, charged, with 1105. A table of the same columns that exists
// but holds no row is not missing: its statements answer (and are
// charged), the check having read the schema, not the rows.
func TestMissingTextTableOnDatabases(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			if _, err := testdb.Open(t, b.driver, dsn).Exec("CREATE TABLE empty_tags (tag VARCHAR(20), note VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			_, conn := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 10}", "epsilon: 100", `
  - name: tags
    columns:
      - {name: tag, type: text, values: [a, b]}
      - {name: note, type: text}
  - name: empty_tags
    columns:
      - {name: tag, type: text, values: [a, b]}
      - {name: note, type: text}
`)
			remaining := func() float64 {
				_, eps := queryRow(t, conn, "SELECT dp_remaining_epsilon()")
				return eps[0]
			}
			statements := []string{"SELECT COUNT(*) FROM %s", "SELECT tag, COUNT(*) FROM %s GROUP BY tag", "SELECT COUNT(*) FROM %s WHERE note = 'x'"}
			for _, s := range statements {
				q := fmt.Sprintf(s, "tags")
				eps := remaining()
				r, err := conn.Query(q)
				if err == nil {
					r.Close()
				}
				if mysqlCode(err) != 1146 || !strings.Contains(err.Error(), "no budget was spent") {
					t.Errorf("%s: %v, want 1146", q, err)
				}
				if e := remaining(); e != eps {
					t.Errorf("%s charged ε %v", q, eps-e)
				}
			}
			for _, s := range statements {
				q := fmt.Sprintf(s, "empty_tags")
				eps := remaining()
				r, err := conn.Query(q)
				if err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				r.Close()
				if e := remaining(); e >= eps {
					t.Errorf("%s charged nothing (%v then %v)", q, eps, e)
				}
			}
		})
	}
}
