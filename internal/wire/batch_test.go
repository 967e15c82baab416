package wire

import (
	"context"
	"database/sql"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// writeCountingListener counts the writes to the connections it accepts.
type writeCountingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *writeCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeCountingConn{Conn: c, writes: &l.writes}, nil
}

type writeCountingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *writeCountingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestAnswerIsOneWrite: a command's whole answer, here a result set of
// three rows (column count, five columns, EOF, three rows, EOF: eleven
// packets), reaches the socket in one write, and a large answer still
// arrives whole.
func TestAnswerIsOneWrite(t *testing.T) {
	cfg := Config{
		Logger:        slog.New(slog.DiscardHandler),
		ShutdownGrace: 2 * time.Second,
	}
	srv, err := NewServer(cfg, testAccounts, newFakeEngine())
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &writeCountingListener{Listener: inner}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() {
		cancel()
		<-done
	}()
	ts := &testServer{Server: srv, address: inner.Addr().String()}
	db, err := sql.Open("mysql", ts.dsn(testUser, testPassword, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}

	before := l.writes.Load()
	cols, rows, err := scanAll(conn.QueryContext(context.Background(), qRows))
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != len(rowsColumns) || len(rows) != len(rowsValues) {
		t.Fatalf("got %d columns and %d rows, want %d and %d", len(cols), len(rows), len(rowsColumns), len(rowsValues))
	}
	if got := l.writes.Load() - before; got != 1 {
		t.Errorf("the result set took %d writes, want 1", got)
	}

	var big string
	if err := conn.QueryRowContext(context.Background(), qBig).Scan(&big); err != nil {
		t.Fatal(err)
	}
	if len(big) != bigRowBytes {
		t.Errorf("big row: got %d bytes, want %d", len(big), bigRowBytes)
	}
	var v string
	if err := conn.QueryRowContext(context.Background(), "after big").Scan(&v); err != nil || v != "after big" {
		t.Errorf("after the big row: got %q, %v", v, err)
	}
}
