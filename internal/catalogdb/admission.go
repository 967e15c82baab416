package catalogdb

import (
	"context"
	"strings"
	"sync"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// admission hands out the engine's statement slots (heap_watch.go) fairly
// between users. Every analyst's catalog statements share the slots, SHOW
// TABLES, SELECT @@version and SET NAMES of every client's login among
// them: with one queue for all, an independent review's one analyst, 24
// connections looping over cross joins of information_schema.COLLATIONS,
// kept the four slots taken and made another's SHOW TABLES wait 30 s.
// So, as backend.max_user_connections caps one analyst's backend
// connections:
//
//   - a user holds at most perUser slots at once; the user's other
//     statements wait, in the order they came;
//   - a freed slot goes to the waiting user (under perUser) who holds the
//     fewest slots, and among those to the one whose turn came longest
//     ago (round-robin: a user served goes to the back).
//
// A user who holds no slot therefore gets the next one freed unless
// another such user waited first: with perUser at most half the slots,
// one user's load delays another's statement by at most the time one of
// its statements may run (statementTimeout), however many it sends.
type admission struct {
	mu      sync.Mutex
	free    int
	perUser int
	users   map[string]*userSlots
	// turns are the users with waiting statements, whose turn came
	// longest ago first.
	turns []string
}

// userSlots are one user's slots held and statements waiting (in order).
type userSlots struct {
	held    int
	waiting []chan struct{}
}

func newAdmission(slots, perUser int) *admission {
	return &admission{free: slots, perUser: perUser, users: map[string]*userSlots{}}
}

// acquire waits, within ctx, for a slot for one of user's statements; the
// returned function frees it (once). Waiting ends with ctx's error.
func (a *admission) acquire(ctx context.Context, user string) (release func(), err error) {
	a.mu.Lock()
	u := a.users[user]
	if u == nil {
		u = &userSlots{}
		a.users[user] = u
	}
	granted := make(chan struct{})
	u.waiting = append(u.waiting, granted)
	if len(u.waiting) == 1 {
		a.turns = append(a.turns, user)
	}
	a.dispatch()
	a.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { a.release(user) }) }
	select {
	case <-granted:
		return release, nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, w := range u.waiting {
		if w == granted {
			u.waiting = append(u.waiting[:i], u.waiting[i+1:]...)
			if len(u.waiting) == 0 {
				a.dropTurn(user)
				a.forget(user, u)
			}
			return nil, ctx.Err()
		}
	}
	// Granted as ctx ended: the slot goes back.
	a.freeSlot(user, u)
	return nil, ctx.Err()
}

// release frees one of user's slots.
func (a *admission) release(user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.freeSlot(user, a.users[user])
}

func (a *admission) freeSlot(user string, u *userSlots) {
	a.free++
	u.held--
	a.forget(user, u)
	a.dispatch()
}

// forget drops the entry of a user who holds and awaits nothing, so that
// the map holds only users with statements in the engine.
func (a *admission) forget(user string, u *userSlots) {
	if u.held == 0 && len(u.waiting) == 0 {
		delete(a.users, user)
	}
}

// dispatch grants free slots to waiting statements, by the rule above.
func (a *admission) dispatch() {
	for a.free > 0 {
		next := -1
		for i, name := range a.turns {
			u := a.users[name]
			if u.held < a.perUser && (next < 0 || u.held < a.users[a.turns[next]].held) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		name := a.turns[next]
		u := a.users[name]
		close(u.waiting[0])
		u.waiting = u.waiting[1:]
		u.held++
		a.free--
		a.turns = append(a.turns[:next], a.turns[next+1:]...)
		if len(u.waiting) > 0 {
			a.turns = append(a.turns, name)
		}
	}
}

// dropTurn takes user out of turns.
func (a *admission) dropTurn(user string) {
	for i, name := range a.turns {
		if name == user {
			a.turns = append(a.turns[:i], a.turns[i+1:]...)
			return
		}
	}
}

// maxUnqueuedText bounds the text of a statement admit runs without a
// slot (unqueued): Connector/J's login SELECT of 20 variables is 1 KiB.
const maxUnqueuedText = 8 << 10

// unqueued reports whether stmt needs no statement slot: a SELECT without
// FROM of system variables (@@x) and literals only, with at most a
// LIMIT, or a SET of literals only (SET NAMES utf8mb4, SET autocommit =
// 1, SET character_set_results = NULL). Clients send these at login
// (SELECT @@version_comment LIMIT 1 from the mysql client, Connector/J's
// SELECT @@session.auto_increment_increment AS ..., ...), so that a login
// never waits for other users' statements; each reads or sets a few
// small values, with no function, subquery, table or user variable (which
// may hold a megabyte), and its text is short, so such statements cost
// microseconds however many run at once.
func unqueued(stmt sqlparser.Statement) bool {
	switch s := stmt.(type) {
	case *sqlparser.Select:
		if len(s.From) > 0 || s.With != nil || s.Where != nil || s.GroupBy != nil || s.Having != nil ||
			s.OrderBy != nil || s.Into != nil || s.Window != nil || !literalLimit(s.Limit) {
			return false
		}
		for _, e := range s.SelectExprs {
			a, ok := e.(*sqlparser.AliasedExpr)
			if !ok {
				return false
			}
			if c, ok := a.Expr.(*sqlparser.ColName); ok && c.Qualifier.IsEmpty() && strings.HasPrefix(c.Name.String(), "@@") {
				continue
			}
			if !isLiteral(a.Expr) {
				return false
			}
		}
		return true
	case *sqlparser.Set:
		for _, e := range s.Exprs {
			if !isLiteral(e.Expr) {
				return false
			}
		}
		return true
	}
	return false
}

// isLiteral reports whether e is a number, string, NULL or boolean literal.
func isLiteral(e sqlparser.Expr) bool {
	switch e.(type) {
	case *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal:
		return true
	}
	return false
}

// literalLimit reports whether l is no LIMIT, or LIMIT of literals.
func literalLimit(l *sqlparser.Limit) bool {
	return l == nil || (l.Rowcount == nil || isLiteral(l.Rowcount)) && (l.Offset == nil || isLiteral(l.Offset))
}
