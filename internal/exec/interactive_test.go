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
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// interactiveFixture is a SQLite table t(a, b) of rows rows, a catalog with
// an interactive domain a in 0..15 × b in 0..3 (64 cells) at ε = 2,
// α = 0.1 forced to mechanism, and a ledger giving user a ε = 10.
type interactiveFixture struct {
	cat    *catalog.Config
	back   *backend.Backend
	ledger *budget.Ledger
}

func newInteractiveFixture(t *testing.T, rows int, mechanism string) *interactiveFixture {
	t.Helper()
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE t (a INTEGER, b INTEGER)"); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	var values []string
	for range rows {
		values = append(values, fmt.Sprintf("(%d, %d)", r.IntN(16)*r.IntN(2), r.IntN(4)))
	}
	if _, err := db.Exec("INSERT INTO t (a, b) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hiA, hiB := 0.0, 15.0, 3.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hiA},
		{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hiB},
	}, Interactive: &catalog.Interactive{
		Columns: []catalog.InteractiveColumn{
			{Name: "a", Edges: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
			{Name: "b", Values: []string{"0", "1", "2", "3"}},
		},
		Epsilon: 2, Alpha: 0.1, Beta: 0.05, PlannedQueries: 1000, Mechanism: mechanism,
	}}}}
	l, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(context.Background(), "user:a", budget.Cost{Epsilon: 10}); err != nil {
		t.Fatal(err)
	}
	return &interactiveFixture{cat: cat, back: backend.New(db, sqlrewrite.SQLite, nil), ledger: l}
}

// count plans and runs one query with executor e.
func (f *interactiveFixture) count(t *testing.T, e *Executor, src *rand.ChaCha8, q string) (*Result, error) {
	t.Helper()
	st, err := sqlrewrite.NewParser(f.cat).Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	plan, err := planner.New(f.cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.1})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if plan.Interactive == nil {
		t.Fatalf("%s: not planned over the interactive domain", q)
	}
	return e.Run(context.Background(), "a", plan, src)
}

// TestMedianSessionHaltsAndResumes runs distinct counts through the Median
// Mechanism until its hard-query cap refuses one with 1226, then restarts
// (a new executor on the same ledger): the stored instance is resumed,
// still halted, its ε charged once.
func TestMedianSessionHaltsAndResumes(t *testing.T) {
	f := newInteractiveFixture(t, 3000, catalog.InteractiveMedian)
	src := rand.NewChaCha8([32]byte{42})
	e := New(f.back, f.ledger, nil)
	var refused string
	answered := 0
	for lo := 0; lo < 16 && refused == ""; lo++ {
		for hi := lo; hi < 16; hi++ {
			q := fmt.Sprintf("SELECT COUNT(*) FROM t WHERE a BETWEEN %d AND %d OR b = %d", lo, hi, (lo+hi)%4)
			if _, err := f.count(t, e, src, q); err != nil {
				if got, want := dperr.KindOf(err), dperr.BudgetExhausted; got != want {
					t.Fatalf("%s: got %v, want %v", q, err, want)
				}
				refused = q
				break
			}
			answered++
		}
	}
	if refused == "" {
		t.Fatalf("no refusal after %d queries; want the hard-query cap reached", answered)
	}
	t.Logf("answered %d before the cap", answered)
	if got, want := remaining(t, f.ledger), 8.0; got != want {
		t.Errorf("remaining ε: got %v, want %v (the instance's ε = 2, once)", got, want)
	}
	restarted := New(f.back, f.ledger, nil)
	if _, err := f.count(t, restarted, src, refused); dperr.KindOf(err) != dperr.BudgetExhausted {
		t.Errorf("after restart, %s: got %v, want budget exhausted", refused, err)
	}
	if got, want := remaining(t, f.ledger), 8.0; got != want {
		t.Errorf("remaining ε after restart: got %v, want %v", got, want)
	}
}

// TestHistogramAnswersFreeAfterCreation: the noisy histogram is released
// once; later counts, any predicate, cost nothing, and an unsatisfiable
// predicate is 0 exactly.
func TestHistogramAnswersFreeAfterCreation(t *testing.T) {
	f := newInteractiveFixture(t, 2000, catalog.InteractiveHistogram)
	src := rand.NewChaCha8([32]byte{43})
	e := New(f.back, f.ledger, nil)
	res, err := f.count(t, e, src, "SELECT COUNT(*) FROM t WHERE NOT a < 8 OR b IN (1, 2)")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Warnings[0].Message, "epsilon=2 ") {
		t.Errorf("first warning: got %q, want the creation's epsilon=2", res.Warnings[0].Message)
	}
	for _, q := range []string{"SELECT COUNT(*) FROM t WHERE a <> 3", "SELECT COUNT(*) FROM t WHERE a < 0 AND b = 1"} {
		res, err := f.count(t, e, src, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !strings.Contains(res.Warnings[0].Message, "epsilon=0 ") {
			t.Errorf("%s: got %q, want epsilon=0", q, res.Warnings[0].Message)
		}
		if strings.Contains(q, "a < 0") && res.Row[0] != int64(0) {
			t.Errorf("%s: got %v, want 0", q, res.Row[0])
		}
	}
	if got, want := remaining(t, f.ledger), 8.0; got != want {
		t.Errorf("remaining ε: got %v, want %v", got, want)
	}
}
