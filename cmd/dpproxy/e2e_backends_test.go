package main

import (
	"math"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestExampleConfigsOnNativeDatabases serves the demo table from PostgreSQL
// and from MariaDB with the configurations docker-compose.yml uses
// (examples/*.yaml), the DSNs pointing at the native services, and the
// ledger on PostgreSQL as in the compose file.
func TestExampleConfigsOnNativeDatabases(t *testing.T) {
	for _, b := range []struct {
		name, config, driver string
		dsn                  func(testing.TB) string
	}{
		{"postgres", "postgres.yaml", "postgres", testdb.PostgresDSN},
		{"mariadb", "mysql.yaml", "mysql", testdb.MySQLDSN},
	} {
		t.Run(b.name, func(t *testing.T) {
			backendDSN := b.dsn(t)
			ledgerDSN := testdb.PostgresDSN(t)
			if out, err := exec.Command(binary, "load-demo", "--driver", b.driver, "--dsn", backendDSN).CombinedOutput(); err != nil {
				t.Fatalf("load-demo: %v\n%s", err, out)
			}
			config, err := filepath.Abs(filepath.Join("..", "..", "examples", b.config))
			if err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, "", []string{"DPPROXY_BACKEND_DSN=" + backendDSN, "DPPROXY_LEDGER_DSN=" + ledgerDSN}, "--config", config)
			db := p.connect(t, "alice", "alice-secret")
			db.SetMaxOpenConns(1)
			if _, err := db.Exec("SET @dp_epsilon = 1"); err != nil {
				t.Fatal(err)
			}
			cols, got := queryRow(t, db, issueQuery)
			if len(cols) != 6 {
				t.Fatalf("got columns %v", cols)
			}
			n, avg, variance, sum, median := truth()
			// ε = 1 over six releases: each has ε = 1/6, so every Laplace
			// scale is 6 times that of TestDemoAnswersTheIssueQuery; the
			// tolerances are again about 15 scales (failure below 1e-6).
			for _, c := range []struct {
				name           string
				got, want, tol float64
			}{
				{"count", got[0], n, 90},
				{"avg", got[1], avg, 6 * 15 * 50 / n},
				{"variance", got[2], variance, 6 * 15 * 2500 / n * 2},
				{"sum", got[4], sum, 6 * 15 * 500000},
				{"median", got[5], median, 60000},
			} {
				if math.Abs(c.got-c.want) > c.tol {
					t.Errorf("%s: got %v, want %v ± %v", c.name, c.got, c.want, c.tol)
				}
			}
			// Refusals and budget functions behave the same on every backend.
			if _, err := db.Exec("SELECT * FROM pums"); mysqlCode(err) != 1235 {
				t.Errorf("SELECT *: got %v, want 1235", err)
			}
			_, rem := queryRow(t, db, "SELECT dp_remaining_epsilon()")
			if math.Abs(rem[0]-4) > 1e-9 {
				t.Errorf("alice's remaining ε after spending 1 of 5: got %v, want 4", rem[0])
			}
		})
	}
}
