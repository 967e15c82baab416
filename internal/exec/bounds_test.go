package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// newBoundsExecutor is the reviewer's setup: a SQLite table t(a, b) of
// 200 rows, a ledger of dialect giving user a ε = 1, and an executor with
// the repeat window.
func newBoundsExecutor(t *testing.T, dialect budget.Dialect, dsn string, window time.Duration) (*Executor, *catalog.Config, *budget.Ledger) {
	t.Helper()
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE t (a INTEGER, b INTEGER)"); err != nil {
		t.Fatal(err)
	}
	var values []string
	for i := range 200 {
		values = append(values, fmt.Sprintf("(%d, %d)", i%100, i%4))
	}
	if _, err := db.Exec("INSERT INTO t (a, b) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hiA, hiB := 0.0, 100.0, 3.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "a", Source: "a", Type: catalog.Integer, Lower: &lo, Upper: &hiA},
		{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hiB}}}}}
	l, err := budget.Open(context.Background(), testdb.Open(t, dialect.String(), dsn), dialect)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(context.Background(), "user:a", budget.Cost{Epsilon: 1}); err != nil {
		t.Fatal(err)
	}
	e := New(backend.New(db, sqlrewrite.SQLite, nil), l, nil)
	e.SetRepeatWindow(window)
	t.Cleanup(e.Wait)
	return e, cat, l
}

// groupedStatement runs the i-th GROUP BY statement of the reviewer's
// test (each a distinct plan, its answer up to ~130 KB stored) at ε = 1e-12.
func groupedStatement(t *testing.T, e *Executor, cat *catalog.Config, i int) *Result {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(fmt.Sprintf("SELECT FLOOR(a / 1) * 1 AS g, b DIV 1 AS h, COUNT(*) FROM t WHERE a >= %d GROUP BY g, h", i))
	if err != nil {
		t.Fatal(err)
	}
	qp, err := planner.New(cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: 1e-12, Mechanism: "auto", Trim: planner.DefaultTrim})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(i)}))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// charges returns how many reservations user a has in the ledger.
func charges(t *testing.T, e *Executor, l *budget.Ledger) int {
	t.Helper()
	e.Wait()
	h, err := l.History(context.Background(), "user:a", 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(h)
}

// storedAnswers returns the stored answers' count and bytes.
func storedAnswers(t *testing.T, l *budget.Ledger) (int64, int64) {
	t.Helper()
	n, size, err := l.StateUsage(context.Background(), answerKeyPrefix, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return n, size
}

func isRepeated(res *Result) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "repeated answer") {
			return true
		}
	}
	return false
}

// TestRepeatWindowBoundsAnalystStorage (the reviewer's failing test, on
// every ledger): 100 distinct statements at ε = 1e-12 of one analyst with
// ε = 1 stored 7.5 MB of answers (68 MB in 6 s in the review); now the
// analyst's answers stay within maxSpaceBytes, every statement is charged,
// a stored answer is repeated for free, and a statement whose answer was
// not stored (over the bound) is charged again when repeated.
func TestRepeatWindowBoundsAnalystStorage(t *testing.T) {
	for _, b := range ledgerBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			e, cat, l := newBoundsExecutor(t, b.dialect, b.dsn(t), time.Hour)
			for i := range 100 {
				groupedStatement(t, e, cat, i)
			}
			n, size := storedAnswers(t, l)
			if size > maxSpaceBytes || n > maxSpaceAnswers || n == 0 {
				t.Errorf("the ledger holds %d answers, %d bytes, of one analyst; want 1 to %d answers within %d bytes", n, size, maxSpaceAnswers, maxSpaceBytes)
			}
			if got := charges(t, e, l); got != 100 {
				t.Fatalf("%d reservations for 100 statements", got)
			}
			if res := groupedStatement(t, e, cat, 0); !isRepeated(res) {
				t.Error("the first statement, repeated, was answered afresh")
			}
			if got := charges(t, e, l); got != 100 {
				t.Errorf("a repeated stored answer was charged (%d reservations)", got)
			}
			if res := groupedStatement(t, e, cat, 99); isRepeated(res) {
				t.Error("a statement whose answer could not be stored was repeated")
			}
			if got := charges(t, e, l); got != 101 {
				t.Errorf("%d reservations: a statement whose answer was not stored was repeated for free", got)
			}
		})
	}
}

// TestRepeatWindowDeletesExpiredAnswers: an answer older than the window
// is deleted by the next statement that stores one; the expired statement,
// asked again, is answered afresh and charged, and stored again.
func TestRepeatWindowDeletesExpiredAnswers(t *testing.T) {
	for _, b := range ledgerBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			const window = 2 * time.Second // well over three statements, even under -race
			e, cat, l := newBoundsExecutor(t, b.dialect, b.dsn(t), window)
			for i := range 3 {
				groupedStatement(t, e, cat, i)
			}
			if n, _ := storedAnswers(t, l); n != 3 {
				t.Fatalf("%d answers stored, want 3", n)
			}
			time.Sleep(window + 200*time.Millisecond)
			groupedStatement(t, e, cat, 50)
			if n, _ := storedAnswers(t, l); n != 1 {
				t.Errorf("%d answers stored after the window, want only the newest", n)
			}
			if res := groupedStatement(t, e, cat, 0); isRepeated(res) {
				t.Error("an expired answer was repeated")
			}
			if got := charges(t, e, l); got != 5 {
				t.Errorf("%d reservations for 5 fresh statements", got)
			}
			if n, _ := storedAnswers(t, l); n != 2 {
				t.Errorf("%d answers stored, want 2", n)
			}
		})
	}
}

// TestRepeatWindowBoundsAnalystAnswerCount: an analyst stores at most
// maxSpaceAnswers small answers within the window; the statements beyond
// are answered and charged, and their answers not stored.
func TestRepeatWindowBoundsAnalystAnswerCount(t *testing.T) {
	e, cat, l := newBoundsExecutor(t, budget.SQLite, testdb.SQLiteDSN(t), time.Hour)
	const statements = maxSpaceAnswers + 4
	for i := range statements {
		st, err := sqlrewrite.NewParser(cat).Parse(fmt.Sprintf("SELECT COUNT(*) FROM t WHERE a >= %d AND b >= %d", i%100, i/100))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1e-12, Mechanism: "auto", Trim: planner.DefaultTrim})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{byte(i)})); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := storedAnswers(t, l); n != maxSpaceAnswers {
		t.Errorf("%d answers stored, want %d", n, maxSpaceAnswers)
	}
	if got := charges(t, e, l); got != statements {
		t.Errorf("%d reservations for %d statements", got, statements)
	}
}

// TestRepeatedStoresAfterAConcurrentSweep: when another proxy deletes the
// expired answer a statement found (its sweep) while the statement pays
// for a fresh one, the statement stores its answer as the first and
// releases it, instead of failing after paying.
func TestRepeatedStoresAfterAConcurrentSweep(t *testing.T) {
	for _, b := range ledgerBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			const window = 100 * time.Millisecond
			e, _, l := newBoundsExecutor(t, b.dialect, b.dsn(t), window)
			ctx := context.Background()
			key := answerKeyPrefix + "0123456789abcdef:" + strings.Repeat("0", 64)
			expired := []byte(fmt.Sprintf(`{"released_at":%d,"values":[]}`, time.Now().Add(-time.Hour).UnixMicro()))
			if err := l.PutState(ctx, key, expired); err != nil {
				t.Fatal(err)
			}
			time.Sleep(window)
			fresh := func() (*Result, *storedAnswer, error) {
				// Another proxy's sweep, while this statement reads data.
				if _, err := l.DeleteStaleStates(ctx, answerKeyPrefix, time.Now(), answerSweep); err != nil {
					t.Fatal(err)
				}
				return &Result{Row: []any{1.0}}, &storedAnswer{Values: []storedValue{{Value: 1}}}, nil
			}
			replay := func(*storedAnswer) (*Result, error) { return &Result{Row: []any{"replayed"}}, nil }
			res, err := e.repeated(ctx, key, "", fresh, replay)
			if err != nil {
				t.Fatalf("repeated: %v", err)
			}
			if res.Row[0] != 1.0 {
				t.Errorf("released %v, want the statement's own answer", res.Row)
			}
			if _, ok, err := l.GetState(ctx, key); err != nil || !ok {
				t.Errorf("the answer is not stored (%v)", err)
			}
		})
	}
}

// TestRepeatWindowSharedTableQuotaPerAnalyst: on a table with a table cap,
// analyst a fills their part of the table's answers (maxSpaceAnswers
// distinct statements at ε = 1e-12, one more not stored); analyst b's
// answers are still stored and repeated for free, to b and to a alike
// (lookups are shared across the table), and a's stored answers are
// repeated free to b.
func TestRepeatWindowSharedTableQuotaPerAnalyst(t *testing.T) {
	f := newAnswersFixture(t)
	f.cat.Tables[0].Epsilon = 100
	if err := f.ledger.SetLimit(context.Background(), catalog.TableAccount("t"), budget.Cost{Epsilon: 100}); err != nil {
		t.Fatal(err)
	}
	e := f.executor(t, time.Hour)
	query := func(i int) string {
		return fmt.Sprintf("SELECT COUNT(*) FROM t WHERE a >= %d AND b >= %d", i%100, i/100)
	}
	for i := range maxSpaceAnswers + 1 {
		f.run(t, e, "a", query(i), 1e-12, byte(i))
	}
	if n, _ := storedAnswers(t, f.ledger); n != 2*maxSpaceAnswers {
		// Each stored answer is the answer and its table's pointer to it.
		t.Errorf("%d answers and pointers stored, want %d", n, 2*maxSpaceAnswers)
	}
	if isRepeated(f.run(t, e, "a", query(maxSpaceAnswers), 1e-12, 1)) {
		t.Error("the statement beyond a's quota was stored")
	}
	before := f.remaining(t, "b")
	first := f.run(t, e, "b", "SELECT COUNT(*), SUM(b) FROM t WHERE a < 42", 0.5, 2)
	for _, user := range []string{"b", "a"} {
		again := f.run(t, e, user, "SELECT COUNT(*), SUM(b) FROM t WHERE a < 42", 0.5, 3)
		if !isRepeated(again) || !reflect.DeepEqual(again.Row, first.Row) {
			t.Errorf("%s repeating b's statement after a filled their quota: %v (repeated %v), want b's answer %v", user, again.Row, isRepeated(again), first.Row)
		}
	}
	if got := f.remaining(t, "b"); got != before-0.5 {
		t.Errorf("b: remaining %v, want %v (one payment)", got, before-0.5)
	}
	if !isRepeated(f.run(t, e, "b", query(7), 1e-12, 4)) {
		t.Error("b repeating a statement a paid for was answered afresh")
	}
}
