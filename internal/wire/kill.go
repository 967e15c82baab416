package wire

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errKilled and errHungUp are the causes a statement's context is cancelled
// with when KILL reaches it or its client hangs up.
var (
	errKilled = errors.New("wire: statement killed")
	errHungUp = errors.New("wire: client hung up")
)

// hangupCheckInterval is how often a statement in flight looks whether its
// client is still there (see watchHangup).
const hangupCheckInterval = 200 * time.Millisecond

// runningStatement is what Server.Kill can reach of a connection: its identity
// once logged in, and the cancel function of the statement in flight.
type runningStatement struct {
	mu     sync.Mutex
	id     uint32
	user   string
	cancel context.CancelCauseFunc // of the statement in flight, or nil
	killed bool                    // KILL CONNECTION reached it
}

// begin returns the context of a statement about to run on c: c.ctx, also
// cancelled by KILL QUERY or KILL CONNECTION (Server.Kill) and when the
// client hangs up while it runs (watchHangup). end must be called once the
// statement has answered.
func (c *connection) begin() (ctx context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(c.ctx)
	c.running.mu.Lock()
	c.running.cancel = cancel
	if c.running.killed {
		cancel(errKilled)
	}
	c.running.mu.Unlock()
	stopWatching := watchHangup(c.raw.Conn, func() {
		c.log.Info("wire: client hung up during a statement; cancelling it")
		cancel(errHungUp)
	})
	return ctx, func() {
		stopWatching()
		c.running.mu.Lock()
		c.running.cancel = nil
		c.running.mu.Unlock()
		cancel(nil)
	}
}

// loggedIn records who the connection belongs to, for Server.Kill.
func (c *connection) loggedIn(id uint32, user string) {
	c.running.mu.Lock()
	c.running.id, c.running.user = id, user
	c.running.mu.Unlock()
}

// KillOutcome is what Server.Kill did.
type KillOutcome int

const (
	// Killed: the statement in flight (if any) was interrupted, and for
	// KILL CONNECTION the connection closed.
	Killed KillOutcome = iota
	// NoSuchConnection: no logged-in connection of the user has the id.
	// Another user's connection gets this answer too, so that KILL does
	// not tell which ids other users' connections have.
	NoSuchConnection
)

// Kill interrupts, on behalf of user, the statement connection id is
// running (the statement fails with the session's cancellation error; a
// connection between statements is unaffected) and, when wholeConnection
// is set, also closes that connection, as MySQL's KILL QUERY id and KILL
// [CONNECTION] id do: at once if it is between statements, else once its
// statement has answered (so KILL of one's own connection is answered). Users may kill only their own connections (MySQL's
// rule for users without the PROCESS or SUPER privilege, which dpproxy
// does not grant); another user's connection is answered as an unknown id
// (MySQL says 1095 "You are not owner of thread", which would reveal that
// the id is in use). A statement killed after its fetch was sent is still
// charged (the budget rule of a cancelled statement).
func (s *Server) Kill(user string, id uint32, wholeConnection bool) KillOutcome {
	s.mu.Lock()
	var target *connection
	for c := range s.conns {
		c.running.mu.Lock()
		if c.running.id == id && c.running.user != "" {
			target = c
		}
		c.running.mu.Unlock()
		if target != nil {
			break
		}
	}
	s.mu.Unlock()
	if target == nil {
		return NoSuchConnection
	}
	target.running.mu.Lock()
	defer target.running.mu.Unlock()
	if target.running.user != user {
		return NoSuchConnection
	}
	if target.running.cancel != nil {
		target.running.cancel(errKilled)
	}
	if wholeConnection {
		target.running.killed = true
		if target.running.cancel == nil {
			target.raw.Close() // its command loop's pending or next read fails
		}
		// Else the statement in flight (KILL itself, on the killed
		// connection) answers, and the command loop then ends (wasKilled).
	}
	return Killed
}

// wasKilled reports whether KILL CONNECTION reached c.
func (c *connection) wasKilled() bool {
	c.running.mu.Lock()
	defer c.running.mu.Unlock()
	return c.running.killed
}
