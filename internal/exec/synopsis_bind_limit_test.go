package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestSynopsisBuildBindLimitRefusedUncharged: a range count answered from
// a synopsis whose other-column predicate is a text IN list of 70,000
// values (the synopsis build's filter, SynopsisSpec.Histogram) is refused
// with 1235 before anything is claimed or reserved, on every backend: it
// used to claim and charge the build's ε, and then the backend refused
// the arguments (1105). Nothing is charged to the analyst, and the
// synopsis's claim account holds no reservation.
func TestSynopsisBuildBindLimitRefusedUncharged(t *testing.T) {
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "tn", Source: "tn", Epsilon: 10, Columns: []catalog.Column{
		{Name: "age", Source: "age", Type: catalog.Integer, Lower: &lo, Upper: &hi, Histogram: &catalog.Histogram{Epsilon: 0.5, Bins: 101}},
		{Name: "name", Source: "name", Type: catalog.Text},
	}}}}
	vs := make([]string, 70000)
	for i := range vs {
		vs[i] = fmt.Sprintf("'v%d'", i)
	}
	st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM tn WHERE age BETWEEN 10 AND 20 AND name IN (" + strings.Join(vs, ", ") + ")")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Synopsis == nil || len(plan.Synopsis.Synopses) != 1 {
		t.Fatal("want a plan answered from one synopsis")
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec("CREATE TABLE tn (age INTEGER, name VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO tn (age, name) VALUES (12, 'v1'), (15, 'w'), (40, 'v2')"); err != nil {
				t.Fatal(err)
			}
			l := openLedgers(t, 1)[0]
			if err := l.SetLimit(context.Background(), catalog.TableAccount("tn"), budget.Cost{Epsilon: 10}); err != nil {
				t.Fatal(err)
			}
			e := New(backend.New(db, b.dialect, nil), l, nil)
			t.Cleanup(e.Wait)
			ctx := context.Background()
			_, err := e.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{1}))
			if dperr.KindOf(err) != dperr.Unsupported {
				t.Fatalf("got %v, want 1235 naming the bind limit", err)
			}
			e.Wait()
			if rem := remaining(t, l); rem != 10 {
				t.Errorf("analyst's remaining ε %v, want 10 (nothing charged)", rem)
			}
			for _, account := range []string{"user:a", claimAccount(plan.Synopsis.Synopses[0].Key)} {
				h, err := l.History(ctx, account, 0)
				if err != nil && !errors.Is(err, budget.ErrUnknownAccount) {
					t.Fatal(err)
				}
				for _, r := range h {
					if r.State != budget.Cancelled {
						t.Errorf("%s: reservation %d is %v, want none but cancelled ones", account, r.ID, r.State)
					}
				}
			}
		})
	}
}
