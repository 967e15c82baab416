package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// sqliteDeployment writes a configuration with a SQLite backend holding the
// demo table and a SQLite ledger file, for user carol with budget ε = eps.
func sqliteDeployment(t *testing.T, eps float64) (dir, config string) {
	t.Helper()
	dir = t.TempDir()
	data := filepath.Join(dir, "data.db")
	if out, err := exec.Command(binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	config = filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 1}
users:
  - {name: carol, password_hash: %q, epsilon: %g, delta: 0}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: income, type: real, lower: 0, upper: 500000}
`, data, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("carol-pw")), eps)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, config
}

// TestDeltaBudgetZeroNamesWhatNeedsDelta: carol's δ budget is 0; an IQR
// (only ptr answers it, with δ) and a MEDIAN forced to ptr are refused with
// 1226 saying that δ is what is missing, what her δ budget is, and the
// form that needs none; nothing is charged.
func TestDeltaBudgetZeroNamesWhatNeedsDelta(t *testing.T) {
	dir, config := sqliteDeployment(t, 1)
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "carol", "carol-pw")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET @dp_delta = 1e-7"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ set, sql, want string }{
		{"SET @dp_mechanism = 'auto'", "SELECT IQR(income) FROM pums", "PERCENTILE_CONT(income, 0.75) - PERCENTILE_CONT(income, 0.25) needs none"},
		{"SET @dp_mechanism = 'ptr'", "SELECT MEDIAN(age) FROM pums", "ptr needs delta for quantile(age, 0.5); SET @dp_mechanism = 'auto' answers it without delta"},
	} {
		if _, err := db.Exec(c.set); err != nil {
			t.Fatal(err)
		}
		_, err := db.Exec(c.sql)
		if mysqlCode(err) != 1226 || !strings.Contains(err.Error(), "needs delta=1e-07, and the delta budget of user carol is 0") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want 1226 naming carol's delta budget and %q", c.sql, err, c.want)
		}
	}
	if _, v := queryRow(t, db, "SELECT dp_remaining_epsilon()"); v[0] != 1 {
		t.Errorf("remaining ε: got %v, want 1 (nothing charged)", v[0])
	}
}

func TestBudgetExhaustionSurvivesRestartAndKill(t *testing.T) {
	dir, config := sqliteDeployment(t, 1)
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "carol", "carol-pw")
	db.SetMaxOpenConns(1) // one connection, so the session's SET applies to every query
	if _, err := db.Exec("SET @dp_epsilon = 0.3"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := db.Exec("SELECT AVG(age) FROM pums"); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	_, err := db.Exec("SELECT AVG(age) FROM pums")
	if mysqlCode(err) != 1226 {
		t.Fatalf("4th query at ε=0.3 with 0.1 left: got %v, want error 1226", err)
	}
	if !strings.Contains(err.Error(), "remaining epsilon=0.1") {
		t.Errorf("1226 message %q does not give the remaining budget", err)
	}
	remaining := func(p *proxyProcess) float64 {
		_, v := queryRow(t, p.connect(t, "carol", "carol-pw"), "SELECT dp_remaining_epsilon()")
		return v[0]
	}
	if r := remaining(p); math.Abs(r-0.1) > 1e-9 {
		t.Fatalf("remaining: got %v, want 0.1", r)
	}

	// A graceful restart keeps the spent budget.
	p.stop(syscall.SIGTERM)
	p = startProxy(t, dir, nil, "--config", config)
	if r := remaining(p); math.Abs(r-0.1) > 1e-9 {
		t.Fatalf("after restart: remaining %v, want 0.1", r)
	}
	// Spend the rest, then kill -9: the spent budget is still spent.
	db = p.connect(t, "carol", "carol-pw")
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET @dp_epsilon = 0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT COUNT(*) FROM pums"); err != nil {
		t.Fatal(err)
	}
	p.stop(syscall.SIGKILL)
	p = startProxy(t, dir, nil, "--config", config)
	if r := remaining(p); r != 0 {
		t.Fatalf("after kill -9: remaining %v, want 0", r)
	}
	_, err = p.connect(t, "carol", "carol-pw").Exec("SELECT COUNT(*) FROM pums")
	if mysqlCode(err) != 1226 {
		t.Fatalf("with nothing left: got %v, want error 1226", err)
	}
}

func TestConcurrentConnectionsNeverOverspend(t *testing.T) {
	dir, config := sqliteDeployment(t, 1)
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "carol", "carol-pw")
	db.SetMaxOpenConns(32)
	const clients = 32
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	start := make(chan struct{})
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 0.1"); err != nil {
				t.Error(err)
				return
			}
			<-start
			_, err = conn.ExecContext(t.Context(), "SELECT COUNT(*) FROM pums")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case mysqlCode(err) == 1226:
				refused++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ok != 10 || refused != clients-10 {
		t.Errorf("32 connections racing for ε=1 at 0.1 each: %d answered, %d refused; want 10 and 22", ok, refused)
	}
	_, v := queryRow(t, db, "SELECT dp_remaining_epsilon()")
	if v[0] != 0 {
		t.Errorf("remaining: got %v, want 0", v[0])
	}
}

// TestBackendErrorIsGenericAndCharged points the table at a SQLite view
// whose column age fails when a row is read (integer overflow; a missing
// table or column is refused before the reservation, 1146 and 1054): the
// client gets 1105 with a query id and none of the driver's text, and the
// statement is charged, because the fetch was sent (DESIGN.md §2: a query
// that fails after data was read is charged).
func TestBackendErrorIsGenericAndCharged(t *testing.T) {
	dir, config := sqliteDeployment(t, 1)
	data := testdb.Open(t, "sqlite", filepath.Join(dir, "data.db"))
	if _, err := data.Exec("CREATE VIEW pums_failing AS SELECT abs(-9223372036854775807 - 1) AS age, income FROM pums"); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(raw), "  - name: pums\n", "  - name: pums\n    source: pums_failing\n", 1)
	if broken == string(raw) {
		t.Fatal("no table pums in the configuration")
	}
	if err := os.WriteFile(config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "carol", "carol-pw")
	_, err = db.Exec("SELECT COUNT(*) FROM pums WHERE age > 30")
	if mysqlCode(err) != 1105 {
		t.Fatalf("got %v, want error 1105", err)
	}
	if !strings.Contains(err.Error(), "query id") || strings.Contains(err.Error(), "overflow") || strings.Contains(err.Error(), "pums_failing") {
		t.Errorf("client saw %q: want a generic message with a query id", err)
	}
	// The log line may follow the answer by a moment.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Logs(), "integer overflow") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.Logs(), "integer overflow") {
		t.Errorf("the proxy log lacks the backend's error")
	}
	_, v := queryRow(t, db, "SELECT dp_remaining_epsilon()")
	if math.Abs(v[0]-0.9) > 1e-9 {
		t.Errorf("remaining after a failed fetch: got %v, want 0.9 (charged)", v[0])
	}
}

// TestExpressionsOverBudgetFunctions: a FROM-less SELECT of expressions
// over dp_remaining_epsilon() and the @dp_* settings is answered with the
// session's values (ROUND(dp_remaining_epsilon(), 2) and
// dp_remaining_epsilon() + 0 were refused with 1235).
func TestExpressionsOverBudgetFunctions(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1)
	for _, q := range []string{"SET @dp_epsilon = 0.5", "SET @dp_mechanism = 'laplace'", "SELECT COUNT(*) FROM pums"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var rounded, plus, twice float64
	var mech string
	err := db.QueryRow("SELECT ROUND(dp_remaining_epsilon(), 2), dp_remaining_epsilon() + 0, @dp_epsilon * 2, CONCAT(@dp_mechanism, '!')").Scan(&rounded, &plus, &twice, &mech)
	if err != nil {
		t.Fatal(err)
	}
	if rounded != 99.5 || math.Abs(plus-99.5) > 1e-9 || twice != 1 || mech != "laplace!" {
		t.Errorf("got %v, %v, %v, %q; want 99.5, 99.5, 1, \"laplace!\"", rounded, plus, twice, mech)
	}
}

// TestBackslashLiteralsStayLiterals: a string literal ending in an escaped
// backslash stays one literal in the SQL the catalog engine runs, in an
// expression over the budget functions, a catalog SELECT with :=
// assignments and a SHOW ... WHERE (printed back without escaping the
// backslash, 'x\\' became 'x\', whose quote the engine read as escaped:
// the next literal became code, a SLEEP or an unbounded REPEAT that every
// check had seen as text, found by an independent review).
func TestBackslashLiteralsStayLiterals(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1)
	for _, c := range []struct{ query, suffix string }{
		{`SELECT CONCAT(dp_remaining_epsilon(), 'x\\', ', SLEEP(3)) #')`, `x\, SLEEP(3)) #`},
		{`SELECT CONCAT('a\\b', dp_remaining_epsilon())`, `a\b100`},
	} {
		var got string
		if err := db.QueryRow(c.query).Scan(&got); err != nil || !strings.HasSuffix(got, c.suffix) {
			t.Errorf("%s: %q, %v; want a value ending in %q", c.query, got, err, c.suffix)
		}
	}
	var one int
	var text string
	q := `SELECT @x := 1, CONCAT('x\\', ', SLEEP(3)) #') FROM information_schema.schemata LIMIT 1`
	if err := db.QueryRow(q).Scan(&one, &text); err != nil || text != `x\, SLEEP(3)) #` {
		t.Errorf("%s: %q, %v", q, text, err)
	}
	q = `SHOW TABLE STATUS WHERE Name = 'x\\' OR Name = ' OR 1 = 1 #'`
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 0 {
		t.Errorf("%s: %d tables, want none (no table has either name)", q, n)
	}
}

// TestPartitionSelectionDeltaRefusalNamesForms: on PostgreSQL, bob's δ
// budget is 0 and educ is open to partition selection; GROUP BY educ is
// refused with 1226 saying that the partition selection of educ needs δ
// and which forms need none (the message had no hint: only the releases'
// mechanisms were looked at), and the bucket form it names is answered;
// the refusal charges nothing.
func TestPartitionSelectionDeltaRefusalNamesForms(t *testing.T) {
	bob := pumsAnalystOnPostgres(t, "{default_epsilon: 0.1, max_epsilon: 1, default_delta: 1.0e-7, max_delta: 1.0e-5}", "bob", "epsilon: 1, delta: 0", `
  - name: pums
    columns:
      - {name: educ, type: integer, lower: 1, upper: 16, partition_selection: true}
      - {name: income, type: real, lower: 0, upper: 500000}
`)
	_, err := bob.Exec("SELECT educ, COUNT(*) FROM pums GROUP BY educ")
	want := "needs delta=5e-08, and the delta budget of user bob is 0, of which 0 remains (its epsilon would fit: it needs epsilon=0.1 of the 1 remaining): " +
		"partition selection needs delta to release the values of the GROUP BY key educ; GROUP BY FLOOR(educ / w) * w, buckets over its declared bounds, or declaring the values of educ in the configuration (values: [...]) needs none"
	if mysqlCode(err) != 1226 || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v, want 1226 ending %q", err, want)
	}
	checkRemaining(t, bob, 1)
	if rows := queryRows(t, bob, "SELECT FLOOR(educ / 4) * 4 AS b, COUNT(*) FROM pums GROUP BY b"); len(rows) != 5 {
		t.Errorf("buckets of educ: %v, want 5 rows (0 to 16)", rows)
	}
	checkRemaining(t, bob, 0.9)
}

// TestRemainingIsRounded: on PostgreSQL, dp_remaining_epsilon() and
// dp_remaining_delta() are what remains rounded to ten significant
// digits, as the 1226 messages print amounts (they were the float
// residue 3.6999999999999997 and 9.950000000000001e-06), and a statement
// costing exactly the remainder reported is answered.
func TestRemainingIsRounded(t *testing.T) {
	carol := pumsAnalystOnPostgres(t, "{default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-5}", "carol", "epsilon: 4, delta: 1.0e-5", `
  - name: pums
    columns:
      - {name: educ, type: integer, lower: 1, upper: 16, partition_selection: true}
`)
	// ε 0.1 three times, and δ 5e-8 for the partition selection of educ.
	for _, q := range []string{"SELECT COUNT(*) FROM pums", "SELECT COUNT(*) FROM pums", "SELECT educ, COUNT(*) FROM pums GROUP BY educ"} {
		queryRows(t, carol, q)
	}
	_, v := queryRow(t, carol, "SELECT dp_remaining_epsilon(), dp_remaining_delta()")
	if v[0] != 3.7 || v[1] != 9.95e-6 {
		t.Fatalf("remaining: got %v, %v; want 3.7, 9.95e-06", v[0], v[1])
	}
	for _, q := range []string{"SET @dp_epsilon = 3.7", "SELECT COUNT(*) FROM pums"} {
		if _, err := carol.Exec(q); err != nil {
			t.Fatalf("%s (the reported remainder): %v", q, err)
		}
	}
	if _, v := queryRow(t, carol, "SELECT dp_remaining_epsilon()"); v[0] != 0 {
		t.Errorf("remaining after spending it: %v, want 0", v[0])
	}
}

// pumsAnalystOnPostgres loads the demo's pums into PostgreSQL and starts a
// proxy with that database as backend and ledger, the privacy settings
// privacy, one analyst name (password name + "-pw") with budget (its
// epsilon and delta fields) and tables (the YAML list under tables:), and
// returns the analyst's connection, one statement at a time.
func pumsAnalystOnPostgres(t *testing.T, privacy, name, budget, tables string) *sql.DB {
	t.Helper()
	dsn := testdb.PostgresDSN(t)
	dir := t.TempDir()
	if out, err := exec.Command(binary, "load-demo", "--driver", "postgres", "--dsn", dsn).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf("backend: {driver: postgres, dsn: %q}\nledger: {driver: postgres, dsn: %q}\nprivacy: %s\nusers:\n  - {name: %s, password_hash: %q, %s}\ntables:%s",
		dsn, dsn, privacy, name, wire.FormatNativePasswordHash(wire.NativePasswordHash(name+"-pw")), budget, tables)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	db := startProxy(t, dir, nil, "--config", config).connect(t, name, name+"-pw")
	db.SetMaxOpenConns(1)
	return db
}
