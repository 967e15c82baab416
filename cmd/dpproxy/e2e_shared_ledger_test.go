package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// sharedLedgers are the ledger databases proxies share in these tests.
var sharedLedgers = []struct {
	name, driver string
	dsn          func(testing.TB) string
}{
	{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "ledger.db") }},
	{"postgres", "postgres", testdb.PostgresDSN},
	{"mariadb", "mysql", testdb.MySQLDSN},
}

// writeSharedConfig writes a configuration of the demo table in the SQLite
// database data, the ledger (driver, dsn), the users (YAML list items
// without the password hash, each user's password being its name) and the
// tables (YAML list items, each with the demo's age column).
func writeSharedConfig(t *testing.T, data, driver, dsn string, users []string, tables []string) (dir, config string) {
	t.Helper()
	dir = t.TempDir()
	var b strings.Builder
	fmt.Fprintf(&b, "backend: {driver: sqlite, dsn: %q}\nledger: {driver: %s, dsn: %q}\nprivacy: {default_epsilon: 0.5, max_epsilon: 10}\nusers:\n", data, driver, dsn)
	for _, u := range users {
		name, _, _ := strings.Cut(u, ",")
		fmt.Fprintf(&b, "  - {%s, password_hash: %q}\n", u, wire.FormatNativePasswordHash(wire.NativePasswordHash(strings.TrimPrefix(name, "name: "))))
	}
	b.WriteString("tables:\n")
	for _, tb := range tables {
		fmt.Fprintf(&b, "  - {%s, columns: [{name: age, type: integer, lower: 0, upper: 100}]}\n", tb)
	}
	config = filepath.Join(dir, "dpproxy.yaml")
	if err := os.WriteFile(config, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, config
}

// demoData loads the demo table pums into a fresh SQLite file.
func demoData(t *testing.T) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data.db")
	if out, err := exec.Command(binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	return data
}

// TestProxiesSharingALedgerEnforceTheirOwnLimits (an independent review,
// README "Several proxies"): proxy A gives alice ε = 1 and caps pums at 2;
// proxy B, started after A, gives alice ε = 100 and names the same
// relation pums_v2 without a cap. B's start does not change what A
// enforces; alice's ε = 5 through B counts against A's limits, for her
// and for the table, whose refusal does not state what remains of it.
// (Proxies wrote their limits into the ledger at start, and the last to
// start set every proxy's; B's statements on the uncapped, renamed table
// were charged to no table account.)
func TestProxiesSharingALedgerEnforceTheirOwnLimits(t *testing.T) {
	data := demoData(t)
	for _, l := range sharedLedgers {
		t.Run(l.name, func(t *testing.T) {
			dsn := l.dsn(t)
			dirA, configA := writeSharedConfig(t, data, l.driver, dsn,
				[]string{"name: alice, epsilon: 1", "name: bob, epsilon: 10"}, []string{"name: pums, epsilon: 2"})
			dirB, configB := writeSharedConfig(t, data, l.driver, dsn,
				[]string{"name: alice, epsilon: 100"}, []string{"name: pums_v2, source: pums"})
			a := startProxy(t, dirA, nil, "--config", configA)
			b := startProxy(t, dirB, nil, "--config", configB)
			session := func(p *proxyProcess, user string) *sql.DB {
				db := p.connect(t, user, user)
				db.SetMaxOpenConns(1)
				return db
			}
			aliceA, bobA, aliceB := session(a, "alice"), session(a, "bob"), session(b, "alice")
			if _, v := queryRow(t, aliceA, "SELECT dp_remaining_epsilon()"); v[0] != 1 {
				t.Errorf("alice's remaining ε on A after B started: %v, want A's 1", v[0])
			}
			if _, err := aliceB.Exec("SET @dp_epsilon = 5"); err != nil {
				t.Fatal(err)
			}
			if _, err := aliceB.Exec("SELECT COUNT(*) FROM pums_v2"); err != nil {
				t.Fatalf("alice's ε = 5 through B: %v", err)
			}
			if _, v := queryRow(t, aliceB, "SELECT dp_remaining_epsilon()"); math.Abs(v[0]-95) > 1e-9 {
				t.Errorf("alice's remaining ε on B: %v, want 95", v[0])
			}
			if _, v := queryRow(t, aliceA, "SELECT dp_remaining_epsilon()"); v[0] != 0 {
				t.Errorf("alice's remaining ε on A after 5 through B: %v, want 0", v[0])
			}
			_, err := aliceA.Exec("SELECT COUNT(*) FROM pums")
			if mysqlCode(err) != 1226 || !strings.Contains(err.Error(), "user alice: remaining epsilon=0") {
				t.Errorf("alice on A: got %v, want 1226 for her own budget", err)
			}
			_, err = bobA.Exec("SELECT COUNT(*) FROM pums")
			if mysqlCode(err) != 1226 || !strings.Contains(err.Error(), "table pums") || strings.Contains(err.Error(), "remaining") {
				t.Errorf("bob on A after ε = 5 on the relation through B: got %v, want 1226 for the cap of 2, its remaining not stated", err)
			}
			if _, v := queryRow(t, bobA, "SELECT dp_remaining_epsilon()"); v[0] != 10 {
				t.Errorf("bob's remaining ε after the refusal: %v, want 10", v[0])
			}
		})
	}
}

// TestRenamedTableKeepsItsCapUsage: a ledger in which a table's cap was
// spent under its old, name-keyed account (table:pums_v2, as before caps
// were keyed on the backend relation) is carried over once, at start, to
// the relation's account: the renamed table does not start a fresh cap,
// and neither does another name for it, nor a restart. The refusals do
// not state what is left of the cap (an independent review: they did,
// telling one analyst what all the others spent).
func TestRenamedTableKeepsItsCapUsage(t *testing.T) {
	data := demoData(t)
	for _, l := range sharedLedgers {
		t.Run(l.name, func(t *testing.T) {
			dsn := l.dsn(t)
			ctx := context.Background()
			db := testdb.Open(t, l.driver, dsn)
			dialect, err := budget.ParseDialect(l.driver)
			if err != nil {
				t.Fatal(err)
			}
			ledger, err := budget.Open(ctx, db, dialect)
			if err != nil {
				t.Fatal(err)
			}
			if err := ledger.SetLimit(ctx, "table:pums_v2", budget.Cost{Epsilon: 2}); err != nil {
				t.Fatal(err)
			}
			if _, err := ledger.Reserve(ctx, []budget.Account{{Name: "table:pums_v2"}}, budget.Cost{Epsilon: 1.75}, "spent before the upgrade"); err != nil {
				t.Fatal(err)
			}
			dir, config := writeSharedConfig(t, data, l.driver, dsn,
				[]string{"name: alice, epsilon: 10"}, []string{"name: pums_v2, source: pums, epsilon: 2", "name: pums_v3, source: pums, epsilon: 2"})
			for start := range 2 { // a restart carries nothing again
				p := startProxy(t, dir, nil, "--config", config)
				alice := p.connect(t, "alice", "alice")
				alice.SetMaxOpenConns(1)
				for _, table := range []string{"pums_v2", "pums_v3", "pums"} {
					_, err := alice.Exec("SELECT COUNT(*) FROM " + table)
					if table == "pums" {
						if mysqlCode(err) != 1146 {
							t.Errorf("pums is not configured: got %v, want 1146", err)
						}
						continue
					}
					if mysqlCode(err) != 1226 || !strings.Contains(err.Error(), "table "+table+":") || strings.Contains(err.Error(), "0.25") {
						t.Errorf("%s with 0.25 left of the relation's cap: got %v, want 1226 not stating the 0.25", table, err)
					}
				}
				if carried := strings.Contains(p.Logs(), "carried over"); carried != (start == 0) {
					t.Errorf("start %d logged a carry-over: %v, want only the first", start, carried)
				}
				p.stop(syscall.SIGTERM)
			}
			c, err := ledger.RemainingUnder(ctx, catalog.TableAccount("pums"), budget.Cost{Epsilon: 2})
			if err != nil || math.Abs(c.Epsilon-0.25) > 1e-9 {
				t.Errorf("the relation's remaining ε under 2: %v, %v; want 0.25 (carried over once)", c, err)
			}
		})
	}
}

// TestPaddedUserNamesAreRefusedAtStart: a user name with trailing white
// space (which MySQL/MariaDB ledgers used to compare equal to the name
// without it, one budget for both) is refused at start-up, naming the
// field.
func TestPaddedUserNamesAreRefusedAtStart(t *testing.T) {
	data := demoData(t)
	_, config := writeSharedConfig(t, data, "sqlite", filepath.Join(t.TempDir(), "ledger.db"),
		[]string{"name: alice, epsilon: 1", "name: 'alice ', epsilon: 1"}, []string{"name: pums"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--config", config, "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "users[1].name") || !strings.Contains(string(out), "white space") {
		t.Errorf("start with user 'alice ': %v\n%s\nwant a refusal naming users[1].name", err, out)
	}
}
