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
// 10,000 bytes, as a MariaDB ledger refuses a value above its
// max_allowed_packet, on any ledger.
func refuseLargeStates(t *testing.T, dialect budget.Dialect, dsn, prefix string) {
	t.Helper()
	db := testdb.Open(t, dialect.String(), dsn)
	var stmts []string
	switch dialect {
	case budget.SQLite:
		stmts = []string{`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3
			WHEN NEW.state_key LIKE '` + prefix + `%' AND length(NEW.state_value) > 10000
			BEGIN SELECT RAISE(ABORT, 'packet too large'); END`}
	case budget.Postgres:
		stmts = []string{`CREATE FUNCTION refuse_large() RETURNS trigger AS $$ BEGIN
			IF NEW.state_key LIKE '` + prefix + `%' AND length(NEW.state_value) > 10000 THEN RAISE EXCEPTION 'packet too large'; END IF;
			RETURN NEW; END $$ LANGUAGE plpgsql`,
			`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3 FOR EACH ROW EXECUTE FUNCTION refuse_large()`}
	case budget.MySQL:
		stmts = []string{`CREATE TRIGGER refuse_large BEFORE INSERT ON dpproxy_state_v3 FOR EACH ROW BEGIN
			IF NEW.state_key LIKE '` + prefix + `%' AND LENGTH(NEW.state_value) > 10000 THEN
			SIGNAL SQLSTATE '08S01' SET MESSAGE_TEXT = 'packet too large'; END IF; END`}
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInteractiveFailedStoreChargedOnce: a creation that read the data but
// could not store its instance is charged once; every later count is
// refused, uncharged, saying so, instead of reopening the claim and
// paying for the creation again. Before the fix every count was charged
// ε = 2 and failed the same way (10 → 8 → 6 → 4).
func TestInteractiveFailedStoreChargedOnce(t *testing.T) {
	ctx := context.Background()
	f := newInteractiveFixture(t, 3000, catalog.InteractiveMedian)
	plan := f.plan(t, "SELECT COUNT(*) FROM t WHERE a < 8 OR b = 1")
	for _, lb := range ledgerBackends {
		t.Run(lb.dialect.String(), func(t *testing.T) {
			dsn := lb.dsn(t)
			l := sharedLedgers(t, lb.dialect, dsn, 1)[0]
			refuseLargeStates(t, lb.dialect, dsn, "interactive:")
			e := New(f.back, l, nil)
			if _, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1})); dperr.KindOf(err) != dperr.Internal {
				t.Fatalf("creation whose store fails: got %v, want 1105", err)
			}
			for i := range 3 {
				other := New(f.back, l, nil) // another proxy, or a restart
				_, err := []*Executor{e, other}[i%2].Run(ctx, "a", plan, rand.NewChaCha8([32]byte{2}))
				if dperr.KindOf(err) != dperr.BudgetExhausted || !strings.Contains(fmt.Sprint(err), "could not be stored") {
					t.Fatalf("count after a failed store: got %v, want 1226 saying the instance could not be stored", err)
				}
			}
			if r := remaining(t, l); r != 8 {
				t.Errorf("remaining ε: got %v, want 8 (the failed creation's 2, once)", r)
			}
		})
	}
}
