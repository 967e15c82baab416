package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestInteractiveStateTooLargeRefusedUncharged: a Median Mechanism over
// 12,000 cells keeps a state of about 19 MB (200 candidates × 12,000 cells
// × 8 bytes), more than a MariaDB ledger takes (max_allowed_packet, 16 MiB
// by default) and than the limit every ledger shares. Each count is
// refused before any reservation, naming the limit, on every ledger.
// Before the fix each count on MariaDB read the data, failed to store the
// instance with 1105 and was charged ε = 5 again (100 → 95 → 90), and on
// SQLite and PostgreSQL the instance was created and stored.
func TestInteractiveStateTooLargeRefusedUncharged(t *testing.T) {
	ctx := context.Background()
	db := testdb.SQLite(t)
	if _, err := db.Exec(`CREATE TABLE big (a INTEGER, b INTEGER);
		WITH RECURSIVE s(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM s WHERE x < 199999)
		INSERT INTO big SELECT x % 100, (x / 100) % 120 FROM s`); err != nil {
		t.Fatal(err)
	}
	values := make([]string, 100)
	for i := range values {
		values[i] = fmt.Sprint(i)
	}
	edges := make([]float64, 121)
	for i := range edges {
		edges[i] = float64(i)
	}
	lo, hiA, hiB := 0.0, 99.0, 119.0
	f := &interactiveFixture{cat: &catalog.Config{Tables: []catalog.Table{{Name: "big", Source: "big", Columns: []catalog.Column{
		{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hiA},
		{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hiB},
	}, Interactive: &catalog.Interactive{
		Columns: []catalog.InteractiveColumn{{Name: "a", Values: values}, {Name: "b", Edges: edges}},
		Epsilon: 5, Alpha: 0.1, Beta: 0.05, PlannedQueries: 100, Mechanism: catalog.InteractiveMedian,
	}}}}, back: backend.New(db, sqlrewrite.SQLite, nil)}
	plan := f.plan(t, "SELECT COUNT(*) FROM big WHERE a < 50 OR b = 3")
	for _, lb := range ledgerBackends {
		t.Run(lb.dialect.String(), func(t *testing.T) {
			l := sharedLedgers(t, lb.dialect, lb.dsn(t), 1)[0]
			if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 100}); err != nil {
				t.Fatal(err)
			}
			e := New(f.back, l, nil)
			for range 3 {
				_, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
				if dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(fmt.Sprint(err), "max_allowed_packet") ||
					!strings.Contains(fmt.Sprint(err), "12000 cells") {
					t.Fatalf("count over a domain too large for the ledger: got %v, want 1235 naming the limit", err)
				}
			}
			if r := remaining(t, l); r != 100 {
				t.Errorf("remaining ε: got %v, want 100 (nothing charged)", r)
			}
		})
	}
}

// refuseLargeStates makes the ledger database refuse to store a state
// whose key starts with prefix ("interactive:", "synopsis:") of more than
// over bytes, as a MariaDB ledger refuses a value above its
// max_allowed_packet, or any ledger a write while it fails, on any
// ledger; allow ends the refusals.
func refuseLargeStates(t *testing.T, dialect budget.Dialect, dsn, prefix string, over int) (allow func()) {
	t.Helper()
	db := testdb.Open(t, dialect.String(), dsn)
	var stmts []string
	drop := []string{"DROP TRIGGER refuse_large"}
	switch dialect {
	case budget.SQLite:
		stmts = []string{fmt.Sprintf(`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3
			WHEN NEW.state_key LIKE '%s%%' AND length(NEW.state_value) > %d
			BEGIN SELECT RAISE(ABORT, 'packet too large'); END`, prefix, over)}
	case budget.Postgres:
		stmts = []string{fmt.Sprintf(`CREATE FUNCTION refuse_large() RETURNS trigger AS $$ BEGIN
			IF NEW.state_key LIKE '%s%%' AND length(NEW.state_value) > %d THEN RAISE EXCEPTION 'packet too large'; END IF;
			RETURN NEW; END $$ LANGUAGE plpgsql`, prefix, over),
			`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3 FOR EACH ROW EXECUTE FUNCTION refuse_large()`}
		drop = []string{"DROP TRIGGER refuse_large ON dpproxy_state_v3", "DROP FUNCTION refuse_large()"}
	case budget.MySQL:
		stmts = []string{fmt.Sprintf(`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3 FOR EACH ROW BEGIN
			IF NEW.state_key LIKE '%s%%' AND LENGTH(NEW.state_value) > %d THEN
			SIGNAL SQLSTATE '08S01' SET MESSAGE_TEXT = 'packet too large'; END IF; END`, prefix, over)}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		for _, s := range drop {
			if _, err := db.Exec(s); err != nil {
				t.Error(err) // not Fatal: allow may run on another goroutine
			}
		}
	}
}

// TestInteractiveStoreFailureKeptAndRetried: a creation that read the
// data but whose instance the ledger failed to store (a write refused, as
// a ledger that lost its connection or timed out refuses it) leaves no
// mark: the instance is kept, paid, in the process. A noisy histogram
// answers from it at once and at every later count, uncharged; a Median
// Mechanism, whose answers commit its stored state, fails its counts
// (uncharged) until the ledger takes it. Once the ledger works again the
// next count stores it and answers without a second charge, and a
// restarted proxy reads it for free. Before the fix the creation stored a
// permanent mark instead and every later count was refused with 1226
// ("could not be stored"), even after the ledger recovered, until the
// configuration changed.
func TestInteractiveStoreFailureKeptAndRetried(t *testing.T) {
	ctx := context.Background()
	const q = "SELECT COUNT(*) FROM t WHERE a < 8 OR b = 1"
	for _, mechanism := range []string{catalog.InteractiveHistogram, catalog.InteractiveMedian} {
		f := newInteractiveFixture(t, 3000, mechanism)
		plan := f.plan(t, q)
		for _, lb := range ledgerBackends {
			t.Run(mechanism+"/"+lb.dialect.String(), func(t *testing.T) {
				dsn := lb.dsn(t)
				l := sharedLedgers(t, lb.dialect, dsn, 1)[0]
				allow := refuseLargeStates(t, lb.dialect, dsn, "interactive:", 600)
				e := New(f.back, l, nil)
				var answer any
				for i := range 2 {
					res, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{byte(i + 1)}))
					switch {
					case mechanism == catalog.InteractiveMedian && dperr.KindOf(err) != dperr.Internal:
						t.Fatalf("count %d while the ledger refuses the state: got %v, want 1105 (the ledger failed), not an answer or a mark", i, err)
					case mechanism == catalog.InteractiveHistogram && err != nil:
						t.Fatalf("count %d while the ledger refuses the state: %v; want the answer from the paid instance", i, err)
					case mechanism == catalog.InteractiveHistogram && i > 0 && res.Row[0] != answer:
						t.Fatalf("count %d: %v, want %v from the same instance", i, res.Row[0], answer)
					case err == nil:
						answer = res.Row[0]
					}
				}
				if _, ok, err := l.GetState(ctx, plan.Interactive.StateKey()); err != nil || ok {
					t.Fatalf("state while the ledger refuses it: stored %v, %v; want nothing stored (no mark)", ok, err)
				}
				allow()
				res, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{3}))
				if err != nil || answer != nil && res.Row[0] != answer {
					t.Fatalf("count once the ledger works: %v, %v; want the answer of the paid instance (%v)", res, err, answer)
				}
				answer = res.Row[0]
				if _, ok, err := l.GetState(ctx, plan.Interactive.StateKey()); err != nil || !ok {
					t.Fatalf("state once the ledger works: stored %v, %v; want stored", ok, err)
				}
				res, err = New(f.back, l, nil).Run(ctx, "a", plan, rand.NewChaCha8([32]byte{4})) // a restart
				if err != nil || res.Row[0] != answer {
					t.Fatalf("count after a restart: %v, %v; want %v from the stored instance", res, err, answer)
				}
				if r := remaining(t, l); r != 8 {
					t.Errorf("remaining ε: got %v, want 8 (the creation's 2, once)", r)
				}
			})
		}
	}
}
