package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// newTextSession is a session over a table t with a text column state
// (declared values), an integer column n and a real column amount; a
// table v whose text column k and integer column m are keys chosen by
// partition selection, beside an integer n and a real amount; a table u
// protecting each person_id whose text column site is such a key; and
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
  - name: v
    columns:
      - {name: k, type: text, partition_selection: true}
      - {name: m, type: integer, lower: 0, upper: 1000, partition_selection: true}
      - {name: n, type: integer, lower: 0, upper: 10}
      - {name: amount, type: real, lower: 0, upper: 100}
  - name: u
    privacy_unit: person_id
    max_rows_per_unit: 5
    max_groups_per_unit: 2
    columns:
      - {name: site, type: text, partition_selection: true}
      - {name: spend, type: real, lower: 0, upper: 100}
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

// TestZeroRowProbeSelectedKeyColumns: a zero-row probe of a GROUP BY key
// chosen by partition selection (WHERE 1 = 0, col = NULL, a prepared
// WHERE k <> ? whose marker Describe stands in NULL for) announces the
// key's column as the answered statement does, VARCHAR(255) for a text
// key and BIGINT for an integer one, on a table protecting persons too,
// and COM_STMT_PREPARE announces what the execution sends. Before, the
// key was MySQL's type NULL of length 0 there: the plan of a WHERE true
// for no row stops before partition selection is planned, and the key's
// type was read from the selection (an independent review).
func TestZeroRowProbeSelectedKeyColumns(t *testing.T) {
	s := newTextSession(t)
	ctx := context.Background()
	answered := func(q string) string {
		t.Helper()
		stmt, err := s.parse(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols := s.plannedColumns(stmt, false)
		if cols == nil {
			t.Fatalf("%s: no plan", q)
		}
		return columnDefs(cols)
	}
	// executed are the columns the execution of q announces: the
	// catalog engine's answer to a zero-row probe it runs, or the
	// private plan's (RunQuery's answer over no row, which reads
	// nothing, has its plan's types).
	executed := func(q string) string {
		t.Helper()
		stmt, err := s.parse(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, isCatalog := stmt.(*sqlrewrite.Catalog); isCatalog {
			return columnDefs(run(t, s, q).Typed)
		}
		return answered(q)
	}
	const text, bigint = "253/1020/0/45/0", "8/20/128/63/0"
	for _, c := range []struct{ probe, answered, key string }{
		{"SELECT k, COUNT(*) FROM v WHERE 1 = 0 GROUP BY k", "SELECT k, COUNT(*) FROM v GROUP BY k", text},
		{"SELECT k, COUNT(*) FROM v WHERE n = NULL GROUP BY k", "SELECT k, COUNT(*) FROM v GROUP BY k", text},
		{"SELECT k, COUNT(*) FROM v WHERE k <> NULL GROUP BY k", "SELECT k, COUNT(*) FROM v WHERE k <> 'x' GROUP BY k", text},
		{"SELECT k, COUNT(*) FROM v GROUP BY k LIMIT 0", "SELECT k, COUNT(*) FROM v GROUP BY k", text},
		{"SELECT k, AVG(amount), MEDIAN(amount) FROM v WHERE 1 = 0 GROUP BY k", "SELECT k, AVG(amount), MEDIAN(amount) FROM v GROUP BY k", text},
		{"SELECT m, COUNT(*) FROM v WHERE 1 = 0 GROUP BY m", "SELECT m, COUNT(*) FROM v GROUP BY m", bigint},
		{"SELECT m AS g, AVG(amount) FROM v WHERE amount = NULL GROUP BY g", "SELECT m AS g, AVG(amount) FROM v GROUP BY g", bigint},
		{"SELECT m, COUNT(*) FROM v WHERE m <> NULL GROUP BY m", "SELECT m, COUNT(*) FROM v WHERE m <> 5 GROUP BY m", bigint},
		{"SELECT site, COUNT(*), AVG(spend) FROM u WHERE 1 = 0 GROUP BY site", "SELECT site, COUNT(*), AVG(spend) FROM u GROUP BY site", text},
		{"SELECT site, MEDIAN(spend) FROM u WHERE spend = NULL GROUP BY site", "SELECT site, MEDIAN(spend) FROM u GROUP BY site", text},
	} {
		got, want := executed(c.probe), answered(c.answered)
		if got != want {
			t.Errorf("%s: announced %s, want %s as answered", c.probe, got, want)
		}
		if key, _, _ := strings.Cut(got, " "); !strings.HasSuffix(key, ":"+c.key) {
			t.Errorf("%s: announced the key as %s, want %s", c.probe, key, c.key)
		}
	}
	for _, c := range []struct{ prepared, bound string }{
		{"SELECT k, COUNT(*) FROM v WHERE k <> ? GROUP BY k", "SELECT k, COUNT(*) FROM v WHERE k <> 'x' GROUP BY k"},
		{"SELECT k, AVG(amount) FROM v WHERE n = ? GROUP BY k", "SELECT k, AVG(amount) FROM v WHERE n = 3 GROUP BY k"},
		{"SELECT m, COUNT(*), MEDIAN(amount) FROM v WHERE m <> ? GROUP BY m", "SELECT m, COUNT(*), MEDIAN(amount) FROM v WHERE m <> 5 GROUP BY m"},
		{"SELECT site, COUNT(*) FROM u WHERE site <> ? GROUP BY site", "SELECT site, COUNT(*) FROM u WHERE site <> 'x' GROUP BY site"},
	} {
		described := columnDefs(s.Describe(ctx, c.prepared, 1))
		if want := answered(c.bound); described != want {
			t.Errorf("%s: described %s, executed %s (bound to a value)", c.prepared, described, want)
		}
		unbound := strings.Replace(c.prepared, "?", "NULL", 1)
		if want := executed(unbound); described != want {
			t.Errorf("%s: described %s, executed %s (bound to NULL)", c.prepared, described, want)
		}
	}
	if eps, delta, err := s.remaining(ctx); err != nil || eps != 100 || delta != 1e-3 {
		t.Errorf("probing and describing left epsilon %g, delta %g (%v), want all of 100 and 1e-3", eps, delta, err)
	}
}
