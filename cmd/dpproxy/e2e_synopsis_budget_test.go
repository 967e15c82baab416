package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestSynopsisBuildNotPaidWhenStatementRefused: a statement that needs a
// missing synopsis and releases of its own, by an analyst whose budget
// covers the synopsis build but not both, is refused with 1226 and costs
// nothing, and no synopsis is built (the next analyst pays for it); an
// analyst with budget for both gets the answer and pays both. Likewise a
// statement that needs two missing synopses, by an analyst who can pay
// for one: refused, charged nothing, neither built.
func TestSynopsisBuildNotPaidWhenStatementRefused(t *testing.T) {
	dir := t.TempDir()
	data, ledger := filepath.Join(dir, "data.db"), filepath.Join(dir, "ledger.db")
	if out, err := exec.Command(binary, "load-demo", "--driver", "sqlite", "--dsn", data).CombinedOutput(); err != nil {
		t.Fatalf("load-demo: %v\n%s", err, out)
	}
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: sqlite, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 1}
users:
  - {name: poor, password_hash: %q, epsilon: 0.55, delta: 0}
  - {name: rich, password_hash: %q, epsilon: 10, delta: 0}
  - {name: half, password_hash: %q, epsilon: 0.75, delta: 0}
tables:
  - name: pums
    epsilon: 10
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: %g}}
      - {name: income, type: real, lower: 0, upper: 500000, histogram: {epsilon: %g, bins: 1000}}
      - {name: sex, type: integer, lower: 0, upper: 1}
`, data, ledger, wire.FormatNativePasswordHash(wire.NativePasswordHash("poor-pw")), wire.FormatNativePasswordHash(wire.NativePasswordHash("rich-pw")),
		wire.FormatNativePasswordHash(wire.NativePasswordHash("half-pw")), synopsisEpsilon, synopsisEpsilon)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	poor, rich, half := p.connect(t, "poor", "poor-pw"), p.connect(t, "rich", "rich-pw"), p.connect(t, "half", "half-pw")
	poor.SetMaxOpenConns(1)
	rich.SetMaxOpenConns(1)
	half.SetMaxOpenConns(1)

	// Two range counts answered from the synopses of age and income, neither built yet: ε = 0.5 each, 0.75 left.
	two := "SELECT SUM(age BETWEEN 20 AND 30), SUM(income < 1000) FROM pums"
	var a, b any
	if err := half.QueryRow(two).Scan(&a, &b); mysqlCode(err) != 1226 {
		t.Fatalf("half, two synopses: got %v, want error 1226", err)
	}
	checkRemaining(t, half, 0.75)

	// The count is answered from the synopsis of age (ε = 0.5 to build),
	// the sum by a release of its own (ε = 0.1).
	q := "SELECT COUNT(*), SUM(sex) FROM pums WHERE age BETWEEN 20 AND 60"
	var count, sum any
	if err := poor.QueryRow(q).Scan(&count, &sum); mysqlCode(err) != 1226 {
		t.Fatalf("poor: got %v, want error 1226", err)
	}
	checkRemaining(t, poor, 0.55)
	if err := rich.QueryRow(q).Scan(&count, &sum); err != nil {
		t.Fatalf("rich: %v", err)
	}
	checkRemaining(t, rich, 10-synopsisEpsilon-0.1)
	// Now that the synopsis exists, the poor analyst pays only the sum.
	if err := poor.QueryRow(q).Scan(&count, &sum); err != nil {
		t.Fatalf("poor after the build: %v", err)
	}
	checkRemaining(t, poor, 0.45)
	// The income synopsis was not built by the refused statement: the
	// two counts now cost its build only.
	if err := rich.QueryRow(two).Scan(&a, &b); err != nil {
		t.Fatalf("rich, two synopses: %v", err)
	}
	checkRemaining(t, rich, 10-2*synopsisEpsilon-0.1)
}

// TestSynopsisRefusalStatesWholeStatement: on PostgreSQL, carol (ε
// budget 1.55, 1 spent) asks for a count from the synopsis of age (ε =
// 0.5 to build) and an AVG of her own (ε = 0.1). The refusal gives what
// remained before the statement, 0.55, and all it needs, 0.6, with its
// parts (it said remaining 0.45, net of the statement's own pending
// reservation, and needs 0.5, the build alone); nothing is charged.
func TestSynopsisRefusalStatesWholeStatement(t *testing.T) {
	carol := pumsAnalystOnPostgres(t, "{default_epsilon: 0.1, max_epsilon: 1}", "carol", "epsilon: 1.55, delta: 1.0e-6", fmt.Sprintf(`
  - name: pums
    epsilon: 10
    delta: 1.0e-4
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: %g}}
      - {name: race, type: integer, lower: 1, upper: 6}
      - {name: income, type: real, lower: 0, upper: 500000}
`, synopsisEpsilon))
	for _, q := range []string{"SET @dp_epsilon = 1", "SELECT COUNT(*) FROM pums", "SET @dp_epsilon = 0.1"} {
		if _, err := carol.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	checkRemaining(t, carol, 0.55)
	var count, avg any
	err := carol.QueryRow("SELECT COUNT(*), AVG(income) FROM pums WHERE race = 3 AND age < 50").Scan(&count, &avg)
	want := "privacy budget exhausted for user carol: remaining epsilon=0.55, delta=1e-06; this query needs epsilon=0.6, delta=0 (epsilon=0.1, delta=0 for its answers and epsilon=0.5, delta=0 to build the synopsis of age)"
	if mysqlCode(err) != 1226 || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("got %v, want error 1226: %s", err, want)
	}
	checkRemaining(t, carol, 0.55)
}
