package wire

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"testing"
	"time"

	gosqldriver "github.com/go-sql-driver/mysql"
)

// blockCause waits for session i's BLOCK statement to end and returns the
// cause its context was cancelled with.
func (ts *testServer) blockCause(t *testing.T, i int) error {
	t.Helper()
	s := ts.engine.session(t, i)
	var cause error
	waitFor(t, "the blocked statement's context to end", 5*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		cause = s.ctxCause
		return s.ctxErr != nil
	})
	return cause
}

// TestKillQuery: Server.Kill interrupts the statement in flight of a
// connection of the same user, whose connection stays usable; another
// user's connection is answered as an unknown id (NoSuchConnection, so
// that KILL does not reveal other users' connection ids; it was NotOwner,
// 1095), and a connection between statements is unaffected.
func TestKillQuery(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), qOK); err != nil {
		t.Fatal(err)
	}
	victim := ts.engine.session(t, 0)
	if got := ts.Kill(testUser, victim.connID, false); got != Killed {
		t.Errorf("KILL QUERY of an idle connection: %v, want Killed", got)
	}
	if got := ts.Kill(testSHA2User, victim.connID, false); got != NoSuchConnection {
		t.Errorf("KILL QUERY by another user: %v, want NoSuchConnection", got)
	}
	if got := ts.Kill(testUser, victim.connID+1000, false); got != NoSuchConnection {
		t.Errorf("KILL QUERY of an unknown id: %v, want NoSuchConnection", got)
	}
	answer := make(chan error, 1)
	go func() {
		var done int64
		answer <- conn.QueryRowContext(context.Background(), qBlock).Scan(&done)
	}()
	<-ts.engine.started
	if got := ts.Kill(testSHA2User, victim.connID, true); got != NoSuchConnection {
		t.Errorf("KILL CONNECTION by another user: %v, want NoSuchConnection", got)
	}
	if got := ts.Kill(testUser, victim.connID, false); got != Killed {
		t.Errorf("KILL QUERY: %v, want Killed", got)
	}
	if cause := ts.blockCause(t, 0); !errors.Is(cause, errKilled) {
		t.Errorf("statement cancelled with %v, want errKilled", cause)
	}
	if err := <-answer; err == nil {
		t.Errorf("the killed statement answered, want an error")
	}
	var echoed string
	if err := conn.QueryRowContext(context.Background(), "select 1 limit 1").Scan(&echoed); err != nil {
		t.Errorf("connection unusable after KILL QUERY: %v", err)
	}
}

// TestKillConnection: KILL CONNECTION interrupts the statement and closes
// the connection.
func TestKillConnection(t *testing.T) {
	ts := startServer(t, Config{})
	db := ts.open(t)
	db.SetMaxIdleConns(0)
	answer := make(chan error, 1)
	go func() {
		var done int64
		answer <- db.QueryRow(qBlock).Scan(&done)
	}()
	<-ts.engine.started
	victim := ts.engine.session(t, 0)
	if got := ts.Kill(testUser, victim.connID, true); got != Killed {
		t.Errorf("KILL CONNECTION: %v, want Killed", got)
	}
	if cause := ts.blockCause(t, 0); !errors.Is(cause, errKilled) {
		t.Errorf("statement cancelled with %v, want errKilled", cause)
	}
	if err := <-answer; err == nil {
		t.Errorf("the killed statement answered, want an error")
	}
	waitFor(t, "the killed connection's session to close", 5*time.Second, victim.isClosed)
}

// TestHangupCancelsStatement: a client that closes its socket while its
// statement runs has the statement cancelled within a few checks, without
// waiting for the statement timeout; one that stays is not cancelled.
func TestHangupCancelsStatement(t *testing.T) {
	ts := startServer(t, Config{})
	dialed := make(chan net.Conn, 2)
	gosqldriver.RegisterDialContext("hangup-test", func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			dialed <- c
		}
		return c, err
	})
	cfg := gosqldriver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = testUser, testPassword, "hangup-test", ts.addr()
	for i, hangUp := range []bool{false, true} {
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		answer := make(chan error, 1)
		go func() {
			var done int64
			answer <- db.QueryRow(qBlock).Scan(&done)
		}()
		<-ts.engine.started
		nc := <-dialed
		if hangUp {
			nc.Close()
			if cause := ts.blockCause(t, i); !errors.Is(cause, errHungUp) {
				t.Errorf("statement cancelled with %v, want errHungUp", cause)
			}
			<-answer
			continue
		}
		time.Sleep(3 * hangupCheckInterval)
		s := ts.engine.session(t, i)
		s.mu.Lock()
		cancelled := s.ctxErr
		s.mu.Unlock()
		if cancelled != nil {
			t.Errorf("statement of a connected client cancelled: %v", cancelled)
		}
		nc.Close()
		ts.blockCause(t, i)
		<-answer
	}
}

// TestLongStatementIsNotAHangup: a statement that runs past the read
// timeout (the deadline of the command's last read) is not taken for a
// client that hung up.
func TestLongStatementIsNotAHangup(t *testing.T) {
	ts := startServer(t, Config{ReadTimeout: 50 * time.Millisecond})
	db := ts.open(t)
	answer := make(chan error, 1)
	go func() {
		var done int64
		answer <- db.QueryRow(qBlock).Scan(&done)
	}()
	<-ts.engine.started
	time.Sleep(4 * hangupCheckInterval)
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	cancelled := s.ctxCause
	s.mu.Unlock()
	if cancelled != nil {
		t.Errorf("a statement longer than the read timeout was cancelled: %v", cancelled)
	}
	close(ts.engine.release)
	if err := <-answer; err != nil {
		t.Errorf("statement: %v", err)
	}
}
