package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// newTextSession is a session over a table t with a text column state
// (declared values), an integer column n and a real column amount, and
// no backend: what it answers comes from the catalog engine and plans.
func newTextSession(t *testing.T) *Session {
	t.Helper()
	cfg, err := catalog.ParseConfig(strings.NewReader(`
backend: {driver: sqlite, dsn: unused}
ledger: {driver: sqlite, dsn: unused}
privacy: {default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: ana, password_hash: "*C142FB215B6E05B7C134B1A653AD4B455157FD79", epsilon: 100, delta: 1.0e-3}
tables:
  - name: t
    columns:
      - {name: state, type: text, values: [CA, NY]}
      - {name: n, type: integer, lower: 0, upper: 10}
      - {name: amount, type: real, lower: 0, upper: 100}
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ledger, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(cfg, nil, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.Open("ana", 7)
}

// columnDefs renders column definitions as name:type/length/flags/charset/decimals.
func columnDefs(cols []catalogdb.Column) string {
	var out []string
	for _, c := range cols {
		out = append(out, fmt.Sprintf("%s:%d/%d/%d/%d/%d", c.Name, c.Type, c.Length, c.Flags, c.Charset, c.Decimals))
	}
	return strings.Join(out, " ")
}

// TestZeroRowProbeColumns: a zero-row probe (LIMIT 0, a WHERE true for
// no row) announces the column definitions of the statement it probes
// as the private path answers it (VARCHAR(255) text, BIGINT counts,
// DOUBLE sums), and a probe the private path would refuse (SELECT *)
// announces its text columns VARCHAR too. Before, the catalog engine's
// definitions went out: state as BLOB of length 262140, while the
// answered statement announces VAR_STRING of length 1020 (an independent
// review of README's "Result types").
func TestZeroRowProbeColumns(t *testing.T) {
	s := newTextSession(t)
	answered := func(q string) string {
		t.Helper()
		stmt, err := s.parse(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols := s.plannedColumns(stmt, false)
		if cols == nil {
			t.Fatalf("%s: no plan", q)
		}
		return columnDefs(cols)
	}
	for _, c := range []struct{ probe, answered string }{
		{"SELECT state, COUNT(*) FROM t GROUP BY state LIMIT 0", "SELECT state, COUNT(*) FROM t GROUP BY state"},
		{"SELECT state, COUNT(*) FROM t WHERE amount = NULL GROUP BY state", "SELECT state, COUNT(*) FROM t GROUP BY state"},
		{"SELECT state, SUM(amount), AVG(n) FROM t WHERE 1 = 0 GROUP BY state", "SELECT state, SUM(amount), AVG(n) FROM t GROUP BY state"},
		{"SELECT COUNT(*), SUM(amount) FROM t WHERE amount = NULL", "SELECT COUNT(*), SUM(amount) FROM t"},
		{"SELECT COUNT(*), SUM(amount) FROM t LIMIT 0", "SELECT COUNT(*), SUM(amount) FROM t"},
		{"SELECT FLOOR(n / 2) * 2 AS b, COUNT(*) FROM t GROUP BY b ORDER BY b LIMIT 0", "SELECT FLOOR(n / 2) * 2 AS b, COUNT(*) FROM t GROUP BY b ORDER BY b"},
		{"SELECT SUM(amount = NULL) AS s, COUNT(CASE WHEN n = NULL THEN 1 END) AS c FROM t", "SELECT SUM(amount) AS s, COUNT(*) AS c FROM t"},
	} {
		r := run(t, s, c.probe)
		if got, want := columnDefs(r.Typed), answered(c.answered); got != want {
			t.Errorf("%s: announced %s, want %s as answered", c.probe, got, want)
		}
	}
	r := run(t, s, "SELECT * FROM t LIMIT 0")
	if got, want := columnDefs(r.Typed), "state:253/1020/0/45/0 n:8/20/128/63/0 amount:5/22/128/63/31"; got != want {
		t.Errorf("SELECT * FROM t LIMIT 0: announced %s, want %s", got, want)
	}
}
