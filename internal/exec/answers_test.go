package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
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

// answersFixture is a SQLite table t(a, b) of 200 rows without synopses or
// an interactive domain, and a ledger giving users a and b ε = 10 each.
type answersFixture struct {
	cat    *catalog.Config
	back   *backend.Backend
	ledger *budget.Ledger
}

func newAnswersFixture(t *testing.T) *answersFixture {
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
		{Name: "b", Source: "b", Type: catalog.Integer, Lower: &lo, Upper: &hiB},
	}}}}
	l, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"user:a", "user:b"} {
		if err := l.SetLimit(context.Background(), u, budget.Cost{Epsilon: 10}); err != nil {
			t.Fatal(err)
		}
	}
	return &answersFixture{cat: cat, back: backend.New(db, sqlrewrite.SQLite, nil), ledger: l}
}

func (f *answersFixture) executor(t *testing.T, window time.Duration) *Executor {
	e := New(f.back, f.ledger, nil)
	e.SetRepeatWindow(window)
	t.Cleanup(e.Wait) // the last commits, before the databases close
	return e
}

func (f *answersFixture) plan(t *testing.T, q string, eps float64) *planner.Plan {
	t.Helper()
	st, err := sqlrewrite.NewParser(f.cat).Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	plan, err := planner.New(f.cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Mechanism: "auto", Trim: planner.DefaultTrim})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return plan
}

func (f *answersFixture) run(t *testing.T, e *Executor, user, q string, eps float64, seed byte) *Result {
	t.Helper()
	res, err := e.Run(context.Background(), user, f.plan(t, q, eps), rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

func (f *answersFixture) remaining(t *testing.T, user string) float64 {
	t.Helper()
	c, err := f.ledger.Remaining(context.Background(), "user:"+user)
	if err != nil {
		t.Fatal(err)
	}
	return c.Epsilon
}

const repeatQuery = "SELECT COUNT(*), AVG(a), SUM(b) FROM t WHERE a > 10 AND b IN (1, 2)"

// TestRepeatedStatementGetsTheSameAnswerFree: the same plan, written
// differently (alias, case, conditions and IN list reordered), gets the
// first answer back, says so without saying when, and costs nothing; a
// different ε or predicate is a new statement and pays. Another analyst
// gets it too only on a table with a table cap: without one, they pay for
// an answer of their own, so an analyst cannot read, for free, what only
// others paid for, nor learn that someone asked the statement.
func TestRepeatedStatementGetsTheSameAnswerFree(t *testing.T) {
	const rewritten = "select count(*) AS n, avg(a), sum(b) from t where b in (2, 1) and 10 < a"
	for _, capped := range []bool{false, true} {
		t.Run(fmt.Sprintf("table cap %v", capped), func(t *testing.T) {
			f := newAnswersFixture(t)
			if capped {
				f.cat.Tables[0].Epsilon = 100
				if err := f.ledger.SetLimit(context.Background(), catalog.TableAccount("t"), budget.Cost{Epsilon: 100}); err != nil {
					t.Fatal(err)
				}
			}
			e := f.executor(t, time.Hour)
			first := f.run(t, e, "a", repeatQuery, 0.5, 1)
			if got := f.remaining(t, "a"); got != 9.5 {
				t.Fatalf("first statement: remaining %v, want 9.5", got)
			}
			for _, w := range first.Warnings {
				if strings.Contains(w.Message, "repeated answer") {
					t.Errorf("first answer described as repeated: %s", w.Message)
				}
			}
			again := f.run(t, e, "a", rewritten, 0.5, 2)
			if !reflect.DeepEqual(again.Row, first.Row) {
				t.Errorf("repeated statement: got %v, want the first answer %v", again.Row, first.Row)
			}
			if again.Columns[0] != "n" {
				t.Errorf("repeated statement's columns %v: want its own labels", again.Columns)
			}
			if got := f.remaining(t, "a"); got != 9.5 {
				t.Errorf("repeated statement charged: remaining %v, want 9.5", got)
			}
			for _, w := range again.Warnings {
				if !strings.Contains(w.Message, "repeated answer") || strings.Contains(w.Message, time.Now().UTC().Format("2006-01-02")) {
					t.Errorf("note without \"repeated answer\", or with the release date: %s", w.Message)
				}
			}
			other := f.run(t, e, "b", rewritten, 0.5, 3)
			if shared := reflect.DeepEqual(other.Row, first.Row); shared != capped {
				t.Errorf("another analyst got %v (the first answer %v): shared %v, want %v", other.Row, first.Row, shared, capped)
			}
			if got, want := f.remaining(t, "b"), map[bool]float64{false: 9.5, true: 10}[capped]; got != want {
				t.Errorf("another analyst: remaining %v, want %v", got, want)
			}
			for _, q := range []struct {
				sql string
				eps float64
			}{{repeatQuery, 0.25}, {strings.Replace(repeatQuery, "a > 10", "a > 11", 1), 0.5}} {
				before := f.remaining(t, "a")
				res := f.run(t, e, "a", q.sql, q.eps, 4)
				if reflect.DeepEqual(res.Row, first.Row) {
					t.Errorf("%s at ε=%v: got the other statement's answer", q.sql, q.eps)
				}
				if got := f.remaining(t, "a"); got != before-q.eps {
					t.Errorf("%s at ε=%v: remaining %v, want %v", q.sql, q.eps, got, before-q.eps)
				}
			}
		})
	}
}

// TestRepeatWindow: without a window every statement is answered afresh;
// after the window ends the statement is answered and paid again, and the
// new answer replaces the old.
func TestRepeatWindow(t *testing.T) {
	f := newAnswersFixture(t)
	off := f.executor(t, 0)
	a := f.run(t, off, "a", repeatQuery, 0.5, 1)
	b := f.run(t, off, "a", repeatQuery, 0.5, 2)
	if reflect.DeepEqual(a.Row, b.Row) || f.remaining(t, "a") != 9 {
		t.Errorf("without a window: %v then %v, remaining %v; want two answers paid", a.Row, b.Row, f.remaining(t, "a"))
	}
	short := f.executor(t, 20*time.Millisecond)
	c := f.run(t, short, "b", repeatQuery, 0.5, 3)
	time.Sleep(40 * time.Millisecond)
	d := f.run(t, short, "b", repeatQuery, 0.5, 4)
	if reflect.DeepEqual(c.Row, d.Row) || f.remaining(t, "b") != 9 {
		t.Errorf("after the window: %v then %v, remaining %v; want two answers paid", c.Row, d.Row, f.remaining(t, "b"))
	}
	e := f.run(t, f.executor(t, time.Hour), "b", repeatQuery, 0.5, 5)
	if !reflect.DeepEqual(e.Row, d.Row) {
		t.Errorf("after the replacement: got %v, want the newest answer %v", e.Row, d.Row)
	}
}

// TestRacingIdenticalStatementsReleaseOneAnswer: two proxies (executors)
// sharing the ledger, 8 connections each, send the same statement at
// once: every connection gets the same answer. On a table with a table
// cap the connections are two analysts', whose answers are shared.
func TestRacingIdenticalStatementsReleaseOneAnswer(t *testing.T) {
	for _, capped := range []bool{false, true} {
		t.Run(fmt.Sprintf("table cap %v", capped), func(t *testing.T) {
			f := newAnswersFixture(t)
			users := []string{"a"}
			if capped {
				f.cat.Tables[0].Epsilon = 100
				if err := f.ledger.SetLimit(context.Background(), catalog.TableAccount("t"), budget.Cost{Epsilon: 100}); err != nil {
					t.Fatal(err)
				}
				users = append(users, "b")
			}
			proxies := []*Executor{f.executor(t, time.Hour), f.executor(t, time.Hour)}
			plan := f.plan(t, repeatQuery, 0.1)
			const conns = 16
			rows := make([][]any, conns)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range conns {
				wg.Go(func() {
					<-start
					res, err := proxies[i%2].Run(context.Background(), users[i/2%len(users)], plan, rand.NewChaCha8([32]byte{byte(i)}))
					if err != nil {
						t.Errorf("connection %d: %v", i, err)
						return
					}
					rows[i] = res.Row
				})
			}
			close(start)
			wg.Wait()
			for i := range rows {
				if !reflect.DeepEqual(rows[i], rows[0]) {
					t.Errorf("connection %d got %v, connection 0 got %v", i, rows[i], rows[0])
				}
			}
			// Each proxy pays at most once (the loser of the race discards its answer).
			spent := 0.0
			for _, u := range users {
				spent += 10 - f.remaining(t, u)
			}
			if spent > 2*0.1+1e-9 {
				t.Errorf("ε %v spent: more than one payment per proxy", spent)
			}
		})
	}
}

// TestAnswerKeyCoversThePlan: plans that differ in anything but the labels,
// the order of the filter's conditions and of IN lists have different keys,
// and so do the answers of one plan by backends of different identities;
// a plan holding something without a canonical encoding has none.
func TestAnswerKeyCoversThePlan(t *testing.T) {
	f := newAnswersFixture(t)
	key := func(q string, eps float64) string {
		k, err := answerKey(f.plan(t, q, eps), "", "")
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return k
	}
	base := key(repeatQuery, 0.5)
	for _, same := range []string{
		"SELECT COUNT(*) AS c, AVG(a) AS m, SUM(b) FROM t WHERE b IN (2, 1) AND a > 10",
	} {
		if key(same, 0.5) != base {
			t.Errorf("%s: a different key from %s", same, repeatQuery)
		}
	}
	for _, other := range []string{
		"SELECT COUNT(*), AVG(a), SUM(b) FROM t WHERE a >= 10 AND b IN (1, 2)",
		"SELECT COUNT(*), AVG(a), SUM(b) FROM t WHERE a > 10 AND b IN (1, 3)",
		"SELECT AVG(a), COUNT(*), SUM(b) FROM t WHERE a > 10 AND b IN (1, 2)",
		"SELECT COUNT(*), AVG(a), SUM(a) FROM t WHERE a > 10 AND b IN (1, 2)",
		"SELECT COUNT(*), AVG(a), SUM(b) FROM t WHERE a > 10",
		"SELECT COUNT(*), AVG(a), SUM(b) FROM t WHERE a > 10 OR b IN (1, 2)",
	} {
		if key(other, 0.5) == base {
			t.Errorf("%s: the key of %s", other, repeatQuery)
		}
	}
	// The deepest predicate a statement may have (sqlrewrite's bound of
	// 100 nested AND, OR and NOT) has a key, and a different leaf changes it.
	deep := func(last int) string {
		return "SELECT COUNT(*) FROM t WHERE " + strings.Repeat("(a < 50 OR NOT (", 49) + fmt.Sprintf("a = %d", last) + strings.Repeat("))", 49)
	}
	if key(deep(1), 0.5) == key(deep(2), 0.5) {
		t.Error("two predicates nested 99 deep that differ in their last leaf: one key")
	}
	if key(repeatQuery, 0.5000001) == base {
		t.Error("another ε: the same key")
	}
	owned := func(owner string) string {
		k, err := answerKey(f.plan(t, repeatQuery, 0.5), owner, "")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if a, b := owned("user:a"), owned("user:b"); a == b || a == base || b == base {
		t.Error("answers of different owners, or of an owner and everyone, share a key")
	}
	seen := map[string]bool{base: true}
	for _, backend := range []string{"a backend", "another backend"} {
		k, err := answerKey(f.plan(t, repeatQuery, 0.5), "", backend)
		if err != nil || seen[k] {
			t.Errorf("the answer of %s has the key of another backend's (%v)", backend, err)
		}
		seen[k] = true
	}
	if a, _ := answerKey(f.plan(t, repeatQuery, 0.5), "", "a"); a == owned("a") {
		t.Error("a backend's identity and an owner are confused in the key")
	}
	plan := f.plan(t, repeatQuery, 0.5)
	plan.Releases[0].Mechanism = funcMechanism{plan.Releases[0].Mechanism, func() {}}
	if _, err := answerKey(plan, "", ""); err == nil {
		t.Error("a plan holding a function got a key")
	}
}

// funcMechanism is a mechanism value holding a function, which has no
// canonical encoding.
type funcMechanism struct {
	planner.Mechanism
	f func()
}

// TestAnswerLocksAreForgotten: statements of one key wait for each other,
// and once none holds or waits for a key its mutex is forgotten, so the
// store does not grow with every statement ever answered.
func TestAnswerLocksAreForgotten(t *testing.T) {
	var s answerStore
	var inside, most atomic.Int64
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			unlock, err := s.lock(context.Background(), fmt.Sprintf("key %d", i%4))
			if err != nil {
				t.Error(err)
				return
			}
			defer unlock()
			if n := inside.Add(1); n > most.Load() {
				most.Store(n)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
		})
	}
	wg.Wait()
	if most.Load() > 4 {
		t.Errorf("%d statements inside at once over 4 keys, want at most 4", most.Load())
	}
	if len(s.keys.locks) != 0 {
		t.Errorf("%d mutexes kept after every statement ended", len(s.keys.locks))
	}
}

// TestWaitForIdenticalStatementEndsWithItsContext: a statement waiting for
// an identical one in flight gives up when its own context ends (its
// timeout or KILL) with a timeout or cancel error, nothing charged, and
// the key is usable again afterwards.
func TestWaitForIdenticalStatementEndsWithItsContext(t *testing.T) {
	var store answerStore
	unlock, err := store.lock(context.Background(), "answer:k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := store.lock(ctx, "answer:k"); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("waiting past the deadline: got %v, want a timeout", err)
	}
	killed, kill := context.WithCancel(context.Background())
	kill()
	if _, err := store.lock(killed, "answer:k"); dperr.KindOf(err) != dperr.Canceled {
		t.Errorf("waiting when killed: got %v, want canceled", err)
	}
	unlock()
	again, err := store.lock(context.Background(), "answer:k")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(store.keys.locks) != 0 {
		t.Errorf("%d locks left after every statement let go", len(store.keys.locks))
	}
}

// TestRepeatedGroupedStatementsAreFree: within the window, a GROUP BY
// statement and one with aggregates of their own conditions (parts) get
// their first answer back, every row, at no cost, with a note saying so;
// another analyst on a table without a cap pays for an answer of their
// own; another ε is another statement.
func TestRepeatedGroupedStatementsAreFree(t *testing.T) {
	for _, sql := range []string{
		"SELECT FLOOR(a / 10) * 10 AS g, COUNT(*), AVG(a) FROM t GROUP BY g",
		"SELECT SUM(CASE WHEN b = 1 THEN a END), COUNT(CASE WHEN a > 50 THEN 1 END) FROM t",
	} {
		t.Run(sql, func(t *testing.T) {
			f := newAnswersFixture(t)
			e := f.executor(t, time.Hour)
			run := func(user string, eps float64, seed byte) *Result {
				t.Helper()
				st, err := sqlrewrite.NewParser(f.cat).Parse(sql)
				if err != nil {
					t.Fatal(err)
				}
				qp, err := planner.New(f.cat).PlanQuery(st.(*sqlrewrite.Query), planner.Settings{Epsilon: eps, Mechanism: "auto", Trim: planner.DefaultTrim})
				if err != nil {
					t.Fatal(err)
				}
				res, err := e.RunQuery(context.Background(), user, qp, rand.NewChaCha8([32]byte{seed}))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := run("a", 0.5, 1)
			if len(first.Rows) == 0 || f.remaining(t, "a") != 9.5 {
				t.Fatalf("first: %d rows, remaining %v; want rows and 9.5", len(first.Rows), f.remaining(t, "a"))
			}
			again := run("a", 0.5, 2)
			if !reflect.DeepEqual(again.Rows, first.Rows) || !reflect.DeepEqual(again.Columns, first.Columns) {
				t.Errorf("repeated: got %v, want the first answer %v", again.Rows, first.Rows)
			}
			if f.remaining(t, "a") != 9.5 {
				t.Errorf("repeated statement charged: remaining %v, want 9.5", f.remaining(t, "a"))
			}
			if last := again.Warnings[len(again.Warnings)-1].Message; !strings.Contains(last, "repeated answer") {
				t.Errorf("last note %q does not say the answer is repeated", last)
			}
			if other := run("b", 0.5, 3); reflect.DeepEqual(other.Rows, first.Rows) || f.remaining(t, "b") != 9.5 {
				t.Errorf("another analyst (no table cap): got %v, remaining %v; want an answer of their own, paid", other.Rows, f.remaining(t, "b"))
			}
			if res := run("a", 0.25, 4); reflect.DeepEqual(res.Rows, first.Rows) || f.remaining(t, "a") != 9.25 {
				t.Errorf("another ε: got %v, remaining %v; want a new answer, paid", res.Rows, f.remaining(t, "a"))
			}
		})
	}
}
