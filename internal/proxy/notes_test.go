package proxy

import (
	"context"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// newDataSession returns a session of the demo user over the demo
// catalog and the demo table in SQLite, with a real ledger.
func newDataSession(t *testing.T) *Session {
	t.Helper()
	cfg, err := demo.Config("unused", "unused")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := testdb.SQLite(t)
	if err := demo.LoadPUMS(ctx, db, catalog.DriverSQLite, "pums"); err != nil {
		t.Fatal(err)
	}
	ledger, err := budget.Open(ctx, testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.SetLimit(ctx, catalog.UserAccount(demo.User), budget.Cost{Epsilon: 100, Delta: 1e-3}); err != nil {
		t.Fatal(err)
	}
	executor := exec.New(backend.New(db, sqlrewrite.SQLite, nil), ledger, nil)
	t.Cleanup(executor.Wait) // before the ledger closes
	e, err := NewEngine(cfg, executor, ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.Open(demo.User, 7)
}

// TestMaxErrorCount: a session keeps, for SHOW WARNINGS, at most
// max_error_count of a statement's conditions (64 by default, as
// MariaDB), the first ones, while @@warning_count, @@error_count, SHOW
// COUNT(*) WARNINGS and the result's own warning count count them all:
// for a grouped private statement (a note per released value: 96 groups
// here; 40,001 notes, 12.6 MB, at the cap of 10,000 groups of four
// aggregates, which every session kept until its next statement), for a
// statement of the catalog engine (a warning per row), and for an error.
// SET max_error_count = 65535 keeps them all; 0 keeps none.
func TestMaxErrorCount(t *testing.T) {
	s := newDataSession(t)
	shown := func() int { return len(run(t, s, "SHOW WARNINGS").Rows) }
	counted := func(what string) string {
		return fmt.Sprint(run(t, s, "SHOW COUNT(*) "+what).Rows[0][0])
	}
	check := func(stmt string, keep int) {
		t.Helper()
		var all int
		res, err := s.Execute(context.Background(), stmt)
		if err == nil {
			all = int(res.Warnings)
			if all == 0 { // the catalog engine's: one per row
				all = len(res.Rows)
			}
		} else {
			all = 1
		}
		if all <= 64 {
			t.Fatalf("%s: %d conditions, want more than 64", stmt, all)
		}
		if n := counted("WARNINGS"); n != fmt.Sprint(all) {
			t.Errorf("%s: SHOW COUNT(*) WARNINGS %s, want %d", stmt, n, all)
		}
		if n := shown(); n != min(keep, all) {
			t.Errorf("%s: SHOW WARNINGS lists %d, want %d", stmt, n, min(keep, all))
		}
		if got := fmt.Sprint(run(t, s, "SELECT @@warning_count").Rows); got != fmt.Sprintf("[[%d]]", all) {
			t.Errorf("%s: @@warning_count %s, want %d", stmt, got, all)
		}
	}
	if got := fmt.Sprint(run(t, s, "SELECT @@max_error_count").Rows); got != "[[64]]" {
		t.Errorf("@@max_error_count %s, want 64", got)
	}
	const grouped = "SELECT educ, race, COUNT(*) FROM pums GROUP BY educ, race"
	const catalogRows = "SELECT 1 / 0 FROM information_schema.COLUMNS"
	check(grouped, 64)
	check(catalogRows, 64)
	run(t, s, "SET max_error_count = 65535")
	check(grouped, 65535)
	check(catalogRows, 65535)
	run(t, s, "SET max_error_count = 0")
	check(grouped, 0)
	if _, err := s.Execute(context.Background(), "SELECT nosuch FROM pums"); err == nil {
		t.Fatal("SELECT nosuch: answered")
	}
	if n, e := shown(), counted("ERRORS"); n != 0 || e != "1" {
		t.Errorf("an error under max_error_count = 0: SHOW WARNINGS lists %d, SHOW COUNT(*) ERRORS %s; want 0 and 1", n, e)
	}
}
