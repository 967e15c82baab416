package wire

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestConnectionLimit: the connection over the limit gets 1040 (08004) in
// place of the handshake; once a slot frees up, logins work again.
func TestConnectionLimit(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 1})
	first := ts.open(t)
	conn, err := first.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}

	second := ts.open(t)
	me := mysqlError(t, second.Ping())
	if me.Number != 1040 || string(me.SQLState[:]) != "08004" {
		t.Errorf("got %d (%s) %q, want 1040 (08004)", me.Number, me.SQLState[:], me.Message)
	}

	conn.Close()
	first.Close()
	waitFor(t, "first session closed", 2*time.Second, func() bool { return ts.engine.session(t, 0).isClosed() })
	if err := second.Ping(); err != nil {
		t.Errorf("got %v after the first connection closed, want a login", err)
	}
}

// TestIdleTimeout: a connection that sends nothing for IdleTimeout is closed
// and its session released; one that keeps sending commands stays open.
func TestIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	ts := startServer(t, Config{IdleTimeout: idle})
	db := ts.open(t)
	busy, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for range 6 { // 6 × idle/3 = 2 idle periods, never idle for one
		if err := busy.PingContext(context.Background()); err != nil {
			t.Fatalf("got %v from a connection active every idle/3, want it open", err)
		}
		time.Sleep(idle / 3)
	}
	if ts.engine.session(t, 0).isClosed() {
		t.Fatalf("the active connection's session was closed")
	}

	waitFor(t, "idle session closed", 10*idle, func() bool { return ts.engine.session(t, 0).isClosed() })
	if err := busy.PingContext(context.Background()); err == nil {
		t.Errorf("got a ping answer on a connection closed for idleness, want an error")
	}
}

// TestGracefulShutdown: cancelling Serve's context stops new connections and
// ends idle ones at once, lets a running statement finish and answer, and
// Serve returns nil once it has.
func TestGracefulShutdown(t *testing.T) {
	ts := startServer(t, Config{ShutdownGrace: 10 * time.Second})
	db := ts.open(t)
	db.SetMaxIdleConns(2)
	idle, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := idle.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	idleSession := ts.engine.session(t, 0)

	answer := make(chan error, 1)
	go func() {
		var done int64
		answer <- db.QueryRow(qBlock).Scan(&done)
	}()
	<-ts.engine.started
	ts.cancel()

	waitFor(t, "idle session closed", 2*time.Second, idleSession.isClosed)
	waitFor(t, "listener closed", 2*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", ts.addr(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-ts.done:
		t.Fatalf("Serve returned %v while a statement was running", err)
	case <-time.After(100 * time.Millisecond):
	}

	close(ts.engine.release)
	if err := <-answer; err != nil {
		t.Errorf("got %v from the statement running at shutdown, want its answer", err)
	}
	select {
	case err := <-ts.done:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
		ts.done <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatalf("Serve did not return after the last statement finished")
	}
}

// TestShutdownGraceExpires: a statement still running after ShutdownGrace
// sees its context cancelled, its connection is closed, and Serve returns.
func TestShutdownGraceExpires(t *testing.T) {
	const grace = 200 * time.Millisecond
	ts := startServer(t, Config{ShutdownGrace: grace})
	db := ts.open(t)
	answer := make(chan error, 1)
	go func() {
		var done int64
		answer <- db.QueryRow(qBlock).Scan(&done)
	}()
	<-ts.engine.started
	shutDown(t, ts, grace)
	if err := <-answer; err == nil {
		t.Errorf("got an answer from a statement cancelled at shutdown, want an error")
	}
	s := ts.engine.session(t, 0)
	s.mu.Lock()
	ctxErr := s.ctxErr
	s.mu.Unlock()
	if !errors.Is(ctxErr, context.Canceled) {
		t.Errorf("got statement context error %v, want context.Canceled", ctxErr)
	}
}

// TestShutdownAbandonsStatementsIgnoringCancellation: a statement that
// ignores its cancelled context does not keep Serve (and so the process,
// on SIGTERM) from returning: Serve waits one more grace period after
// cancelling, then returns and logs the connection it abandons.
func TestShutdownAbandonsStatementsIgnoringCancellation(t *testing.T) {
	const grace = 200 * time.Millisecond
	ts := startServer(t, Config{ShutdownGrace: grace})
	t.Cleanup(func() { close(ts.engine.release) }) // runs before startServer's cleanup
	db := ts.open(t)
	go func() {
		var done int64
		_ = db.QueryRow(qStuck).Scan(&done)
	}()
	<-ts.engine.started
	shutDown(t, ts, 2*grace)
	if logs := ts.logs.String(); !strings.Contains(logs, "abandons a connection") || !strings.Contains(logs, "user="+testUser) {
		t.Errorf("the log does not name the abandoned connection:\n%s", logs)
	}
}

// TestServeTwice: a Server serves one listener.
func TestServeTwice(t *testing.T) {
	ts := startServer(t, Config{})
	if err := ts.open(t).Ping(); err != nil { // the first Serve is running
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Serve(context.Background(), l); err == nil {
		t.Errorf("got nil from a second Serve, want an error")
	}
}

// TestListenAndServe listens on Config.Addr and stops on cancel.
func TestListenAndServe(t *testing.T) {
	srv, err := NewServer(Config{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, fakeAccounts{}, newFakeEngine())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("got %v, want nil after cancel", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("ListenAndServe did not return after cancel")
	}
}

// shutDown cancels ts's Serve, as SIGTERM does, and checks that it returns
// nil, within 5 seconds but not before atLeast.
func shutDown(t *testing.T, ts *testServer, atLeast time.Duration) {
	t.Helper()
	start := time.Now()
	ts.cancel()
	select {
	case err := <-ts.done:
		if err != nil {
			t.Errorf("Serve returned %v, want nil", err)
		}
		ts.done <- err
	case <-time.After(5 * time.Second):
		t.Fatalf("Serve did not return within 5s of shutting down")
	}
	if waited := time.Since(start); waited < atLeast {
		t.Errorf("Serve returned after %v, want at least %v", waited, atLeast)
	}
}
