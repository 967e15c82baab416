package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// gate is a statement the test controls: SELECT test_gate() tells entered
// the user of the session running it, then returns when the test sends on
// proceed (or the statement ends).
type gate struct {
	entered chan string
	proceed chan struct{}
}

// gatedEngine is testEngine with the function test_gate().
func gatedEngine(t *testing.T) (*Engine, *gate) {
	e := testEngine(t)
	g := &gate{entered: make(chan string, 16), proceed: make(chan struct{})}
	e.gms.Analyzer.Catalog.RegisterFunction(sql.NewEmptyContext(), sql.NewFunction0("test_gate", func() sql.Expression {
		return gateFunc{NoArgFunc: function.NoArgFunc{Name: "test_gate", SQLType: types.Int64}, g: g}
	}))
	return e, g
}

type gateFunc struct {
	function.NoArgFunc
	g *gate
}

func (gateFunc) Description() string { return "waits for the test" }
func (gateFunc) IsNullable() bool    { return false }
func (f gateFunc) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return function.NoArgFuncWithChildren(f, children)
}
func (f gateFunc) Eval(ctx *sql.Context, _ sql.Row) (any, error) {
	f.g.entered <- ctx.Session.Client().User
	select {
	case <-f.g.proceed:
		return int64(1), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run starts SELECT test_gate() on a session of user; its error arrives on
// the returned channel.
func (g *gate) run(ctx context.Context, e *Engine, user string, id uint32) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := e.Open(user, id, nil).Query(ctx, "SELECT test_gate()")
		done <- err
	}()
	return done
}

// next is the user of the next statement to enter the engine (generous
// bound: no timing is asserted, only the order).
func (g *gate) next(t *testing.T) string {
	t.Helper()
	select {
	case user := <-g.entered:
		return user
	case <-time.After(20 * time.Second):
		t.Fatal("no statement entered the engine")
		return ""
	}
}

// TestOneUserCannotTakeEveryCatalogSlot: one user's statements, however
// many, hold at most maxUserStatements of the engine's slots, so another
// user's statement enters at once. Before, the first user's four took
// them all and every other analyst's catalog statements (SHOW TABLES, a
// client's SELECT @@version at login) waited for them.
func TestOneUserCannotTakeEveryCatalogSlot(t *testing.T) {
	e, g := gatedEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var alice []<-chan error
	for i := range maxConcurrentStatements + 2 {
		alice = append(alice, g.run(ctx, e, "alice", uint32(i)))
	}
	for range 2 {
		if user := g.next(t); user != "alice" {
			t.Fatalf("%s entered, want alice", user)
		}
	}
	bob := g.run(ctx, e, "bob", 100)
	if user := g.next(t); user != "bob" {
		t.Fatalf("%s entered before bob's first statement, want bob: one user holds more than 2 slots", user)
	}
	// Each statement that ends lets one of alice's waiting ones in.
	for range len(alice) + 1 {
		g.proceed <- struct{}{}
	}
	for i, done := range append(alice, bob) {
		if err := <-done; err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
}

// TestFreedSlotGoesToTheUserHoldingFewest: with every slot taken by two
// users who have more statements waiting, a third user's statement gets
// the next slot freed, ahead of their statements that came before it.
func TestFreedSlotGoesToTheUserHoldingFewest(t *testing.T) {
	e, g := gatedEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var all []<-chan error
	for i := range 3 {
		all = append(all, g.run(ctx, e, "alice", uint32(i)), g.run(ctx, e, "carol", uint32(10+i)))
	}
	held := map[string]int{}
	for range maxConcurrentStatements {
		held[g.next(t)]++
	}
	if fmt.Sprint(held) != "map[alice:2 carol:2]" {
		t.Fatalf("held %v, want 2 each", held)
	}
	waitFor(t, func() bool { return e.slots.waiting() == 2 })
	all = append(all, g.run(ctx, e, "dave", 20))
	waitFor(t, func() bool { return e.slots.waiting() == 3 })
	g.proceed <- struct{}{} // alice's or carol's first ends
	if user := g.next(t); user != "dave" {
		t.Errorf("%s took the freed slot, want dave, who held none", user)
	}
	for range 2 {
		g.proceed <- struct{}{}
		if user := g.next(t); user != "alice" && user != "carol" {
			t.Errorf("%s entered, want alice's or carol's third", user)
		}
	}
	for range len(all) - 3 {
		g.proceed <- struct{}{}
	}
	for i, done := range all {
		if err := <-done; err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
	}
	if n := e.slots.waiting(); n != 0 || e.slots.free != maxConcurrentStatements || len(e.slots.users) != 0 {
		t.Errorf("after: %d waiting, %d free, users %v", n, e.slots.free, e.slots.users)
	}
}

// waitFor polls cond (generous bound: it states an order, not a time).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
	}
}

// waiting counts the statements waiting for a slot.
func (a *admission) waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, u := range a.users {
		n += len(u.waiting)
	}
	return n
}

// TestLoginStatementsNeedNoSlot: what clients send at login, SELECTs of
// system variables and SETs of literals, answers while other users'
// statements hold every slot; anything more waits for one.
func TestLoginStatementsNeedNoSlot(t *testing.T) {
	e := testEngine(t)
	var others []func()
	for i := range maxConcurrentStatements {
		release, err := e.slots.acquire(context.Background(), fmt.Sprint("user", i))
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, release)
	}
	defer func() {
		for _, release := range others {
			release()
		}
	}()
	s := e.Open("bob", 1, nil)
	// A deadline, so that a statement that waits fails rather than hangs;
	// these answer at once.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, q := range []string{
		"select @@version_comment limit 1",
		"/* mysql-connector-j */SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@max_allowed_packet AS max_allowed_packet",
		"SELECT @@version, 1, 'x', NULL, TRUE FROM DUAL",
		"SET NAMES utf8mb4",
		"SET autocommit = 1, character_set_results = NULL, @x = 'y'",
	} {
		if _, err := s.Query(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"SELECT @x", "SELECT UPPER(@@version)", "SELECT @@version, (SELECT 1)", "SELECT @@version FROM information_schema.SCHEMATA",
		"SELECT @@version ORDER BY 1", "SET @a = CONCAT('a', 'b')", "SET sql_mode = @@sql_mode", "SHOW TABLES",
		"SELECT @@version_comment LIMIT " + strings.Repeat(" ", maxUnqueuedText) + "1",
	} {
		timed, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		var me *Error
		if _, err := s.Query(timed, q); !errors.As(err, &me) || me.Code != 3024 {
			t.Errorf("%.60s: %v, want 3024 waiting for a slot", q, err)
		}
		cancel()
	}
}

// TestInterruptedStatementErrors: a statement its caller cancels while it
// runs (KILL QUERY) is 1317, and one the caller's deadline cuts (the
// proxy's bound of a catalog statement) 3024, in MySQL's words; they were
// 1105 with Go's "context canceled" and "context deadline exceeded",
// which the proxy sent as 1235.
func TestInterruptedStatementErrors(t *testing.T) {
	e, g := gatedEngine(t)
	killed, kill := context.WithCancel(context.Background())
	done := g.run(killed, e, "alice", 1)
	g.next(t)
	kill()
	var me *Error
	if err := <-done; !errors.As(err, &me) || me.Code != 1317 || me.State != "70100" || strings.Contains(me.Msg, "context") {
		t.Errorf("killed: %v, want 1317 in MySQL's words", err)
	}
	timed, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // the gate never opens
	defer cancel()
	done = g.run(timed, e, "alice", 2)
	g.next(t)
	if err := <-done; !errors.As(err, &me) || me.Code != 3024 || me.State != "HY000" || strings.Contains(me.Msg, "context") {
		t.Errorf("past the caller's deadline: %v, want 3024 in MySQL's words", err)
	}
}
