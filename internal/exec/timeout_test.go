package exec

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// slowViews make "SELECT ... FROM t" run for far longer than the test's
// statement timeout on each backend.
var slowViews = []struct {
	name    string
	open    func(testing.TB) *sql.DB
	dialect sqlrewrite.Dialect
	view    string
}{
	{"sqlite", func(t testing.TB) *sql.DB { return testdb.SQLite(t) }, sqlrewrite.SQLite,
		"CREATE VIEW t AS WITH RECURSIVE c(a) AS (SELECT 0 UNION ALL SELECT (a + 1) % 16 FROM c LIMIT 1000000000) SELECT a FROM c"},
	{"postgres", func(t testing.TB) *sql.DB { return testdb.Postgres(t) }, sqlrewrite.PostgreSQL,
		"CREATE VIEW t AS SELECT 1 AS a FROM pg_sleep(30)"},
	{"mariadb", func(t testing.TB) *sql.DB { return testdb.MySQL(t) }, sqlrewrite.MySQL,
		"CREATE VIEW t AS SELECT 1 AS a FROM (SELECT SLEEP(30) AS s) AS z"},
}

// TestStatementTimeout: a statement on a backend that does not answer ends
// at the statement timeout with 3024, and is charged (its fetch was sent:
// the README's rule), where before it waited as long as the backend did;
// so do a GROUP BY and a statement with conditional aggregates (parts),
// which once ran without the timeout.
func TestStatementTimeout(t *testing.T) {
	for _, b := range slowViews {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(b.view); err != nil {
				t.Fatal(err)
			}
			lo, hi := 0.0, 15.0
			cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
				{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hi, Values: []string{"0", "1"}},
			}}}}
			ctx := context.Background()
			l, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 10}); err != nil {
				t.Fatal(err)
			}
			e := New(backend.New(db, b.dialect, nil), l, nil)
			e.SetStatementTimeout(300 * time.Millisecond)
			for i, q := range []string{"SELECT COUNT(*) FROM t", "SELECT a, COUNT(*) FROM t GROUP BY a", "SELECT COUNT(*), SUM(a > 3) FROM t"} {
				st, err := sqlrewrite.NewParser(cat).Parse(q)
				if err != nil {
					t.Fatal(err)
				}
				settings := planner.Settings{Epsilon: 0.5}
				start := time.Now()
				switch st := st.(type) {
				case *sqlrewrite.Select:
					plan, perr := planner.New(cat).Plan(st, settings)
					if perr != nil {
						t.Fatal(perr)
					}
					_, err = e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
				case *sqlrewrite.Query:
					qp, perr := planner.New(cat).PlanQuery(st, settings)
					if perr != nil {
						t.Fatal(perr)
					}
					_, err = e.RunQuery(ctx, "a", qp, rand.NewChaCha8([32]byte{1}))
				default:
					t.Fatalf("%s: a %T", q, st)
				}
				took := time.Since(start)
				if dperr.KindOf(err) != dperr.Timeout {
					t.Errorf("%s: got %v, want a timeout error", q, err)
				}
				if code, _ := dperr.KindOf(err).Code(); code != 3024 {
					t.Errorf("%s: code %d, want 3024", q, code)
				}
				if took > 3*time.Second {
					t.Errorf("%s: the statement took %v with a 300ms timeout", q, took)
				}
				left, err := l.Remaining(ctx, "user:a")
				if err != nil {
					t.Fatal(err)
				}
				if want := 10 - 0.5*float64(i+1); left.Epsilon != want {
					t.Errorf("%s: remaining ε %v, want %v: a statement whose fetch was sent is charged", q, left.Epsilon, want)
				}
			}
		})
	}
}

// TestTimeoutWaitingForTheLedgerIsFree: a statement whose timeout ends it
// while its reservation waits for the ledger (another transaction holds
// the ledger's lock) fails with 3024 and costs nothing, once the ledger is
// free again: it read no data (the reservation the ledger grants for it
// afterwards was kept, spent, before).
func TestTimeoutWaitingForTheLedgerIsFree(t *testing.T) {
	f := newAnswersFixture(t)
	ctx := context.Background()
	ledgerDB := testdb.SQLite(t)
	l, err := budget.Open(ctx, ledgerDB, budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	e := New(f.back, l, nil)
	e.SetStatementTimeout(200 * time.Millisecond)
	t.Cleanup(e.Wait)
	// A first statement creates the table's account (budget.NoLimit), in
	// a transaction of its own that a later Reserve no longer needs.
	if _, err := e.Run(ctx, "a", f.plan(t, repeatQuery, 0.25), rand.NewChaCha8([32]byte{})); err != nil {
		t.Fatal(err)
	}
	conn, err := ledgerDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(ctx, "a", f.plan(t, repeatQuery, 0.25), rand.NewChaCha8([32]byte{}))
	if dperr.KindOf(err) != dperr.Timeout {
		t.Fatalf("Run: %v, want a timeout", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		h, err := l.History(ctx, "user:a", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 2 && h[0].State == budget.Cancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history %+v, want the granted reservation cancelled", h)
		}
	}
	if rem, err := l.Remaining(ctx, "user:a"); err != nil || rem.Epsilon != 0.75 {
		t.Errorf("remaining ε = %v (%v) after a statement that read no data; want 0.75", rem.Epsilon, err)
	}
}

// TestWaitForABackendConnectionIsFree: a statement that waits for a
// backend connection (backend.Backend.SetLimits: one in all, or its
// analyst's one taken) sends no fetch meanwhile, so one that its timeout
// (3024) or a KILL (1317) ends costs nothing, while another analyst's
// statement, with a connection free, answers.
func TestWaitForABackendConnectionIsFree(t *testing.T) {
	f := newAnswersFixture(t)
	ctx := context.Background()
	e := New(f.back, f.ledger, nil)
	e.SetStatementTimeout(200 * time.Millisecond)
	t.Cleanup(e.Wait)
	run := func(ctx context.Context, user string) error {
		_, err := e.Run(ctx, user, f.plan(t, repeatQuery, 0.25), rand.NewChaCha8([32]byte{}))
		return err
	}
	remaining := func(user string) float64 {
		t.Helper()
		e.Wait()
		rem, err := f.ledger.Remaining(ctx, "user:"+user)
		if err != nil {
			t.Fatal(err)
		}
		return rem.Epsilon
	}
	f.back.SetLimits(2, 1)
	held, err := f.back.Snapshot(ctx, "a") // a's one connection
	if err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, "a"); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("a's statement waiting for a's turn: %v, want a timeout", err)
	}
	killed, kill := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, kill)
	if err := run(killed, "a"); dperr.KindOf(err) != dperr.Canceled {
		t.Errorf("a's statement killed while it waits: %v, want 1317", err)
	}
	if err := run(ctx, "b"); err != nil {
		t.Errorf("b's statement beside a's held connection: %v, want an answer", err)
	}
	other, err := f.back.Snapshot(ctx, "c") // the second and last connection
	if err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, "b"); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("b's statement waiting for a connection: %v, want a timeout", err)
	}
	if a, b := remaining("a"), remaining("b"); a != 10 || b != 9.75 {
		t.Errorf("remaining ε: a %v, b %v; want 10 (no fetch sent) and 9.75 (one answer)", a, b)
	}
	held.Close()
	other.Close()
	if err := run(ctx, "a"); err != nil {
		t.Errorf("a's statement once the connections are free: %v", err)
	}
}

// TestStatementTimeoutStopsAMechanism: a statement whose mechanism computes
// past the statement timeout (the piecewise variance at ε = 2^-16 over
// 20000 distinct values: about 12 s of breakpoints, after fetches of a
// few hundred milliseconds) ends at the timeout with 3024, and a KILL
// QUERY (its context cancelled) with 1317, where before it ran to the end
// and answered, ignoring both; each is charged (its data was read).
func TestStatementTimeoutStopsAMechanism(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE t AS WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c LIMIT 20000) SELECT i * 7.3 AS x FROM c"); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 500000.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	ctx := context.Background()
	l, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	e := New(backend.New(db, sqlrewrite.SQLite, nil), l, nil)
	e.SetStatementTimeout(1500 * time.Millisecond)
	t.Cleanup(e.Wait)
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT VARIANCE(x) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	eps := 0x1p-16
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Mechanism: "piecewise"})
	if err != nil {
		t.Fatal(err)
	}
	for i, kills := range []bool{false, true} {
		run, code := ctx, uint16(3024)
		if kills {
			killed, kill := context.WithCancel(ctx)
			defer kill()
			time.AfterFunc(1200*time.Millisecond, kill)
			run, code = killed, 1317
		}
		start := time.Now()
		_, err := e.Run(run, "a", plan, rand.NewChaCha8([32]byte{1}))
		took := time.Since(start)
		if got, _ := dperr.KindOf(err).Code(); got != code {
			t.Errorf("run %d: got %v (code %d), want %d", i, err, got, code)
		}
		if took > 4*time.Second {
			t.Errorf("run %d: the statement took %v, stopped after at most 1.5 s", i, took)
		}
		e.Wait()
		left, err := l.Remaining(ctx, "user:a")
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - eps*float64(i+1); left.Epsilon != want {
			t.Errorf("run %d: remaining ε %v, want %v: a statement that read data is charged", i, left.Epsilon, want)
		}
	}
}
