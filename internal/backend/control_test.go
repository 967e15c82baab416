package backend

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// controlCase is a backend of limitsBackends, a login on it that may hold
// 4 connections, and a Backend of that login with SetLimits(3, 3).
type controlCase struct {
	limitsBackend
	admin   *sql.DB
	limited string
	b       *Backend
}

// newControlCase opens c's controlCase, its table pl created.
func newControlCase(t *testing.T, c limitsBackend) *controlCase {
	t.Helper()
	dsn := c.dsn(t)
	admin := testdb.Open(t, c.driver, dsn)
	limited := testdb.LimitedLogin(t, c.driver, dsn, 4)
	b, err := Open(context.Background(), c.driver, limited, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	b.SetLimits(3, 3)
	t.Cleanup(func() { // a victim a failed run left running
		if c.driver == "mysql" {
			var id int64
			if admin.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%dpproxy_limits_victim%' AND ID <> CONNECTION_ID()").Scan(&id) == nil {
				_, _ = admin.Exec(fmt.Sprintf("KILL QUERY %d", id))
			}
		}
	})
	return &controlCase{c, admin, limited, b}
}

// waitUntil polls cond until it holds, failing the test after within.
func waitUntil(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, within)
		}
	}
}

// running counts the other sessions running a query whose text
// contains label.
func (c *controlCase) running(t *testing.T, label string) int {
	t.Helper()
	var n int
	if err := c.admin.QueryRow(c.limitsBackend.running, "%"+label+"%").Scan(&n); err != nil {
		t.Fatalf("backend activity: %v", err)
	}
	return n
}

// sessions counts the login's sessions on the server.
func (c *controlCase) sessions(t *testing.T) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = ?"
	var user string
	if c.driver == "postgres" {
		q = "SELECT COUNT(*) FROM pg_stat_activity WHERE usename = $1"
		u, err := url.Parse(c.limited)
		if err != nil {
			t.Fatal(err)
		}
		user = u.User.Username()
	} else {
		cfg, err := mysql.ParseDSN(c.limited)
		if err != nil {
			t.Fatal(err)
		}
		user = cfg.User
	}
	var n int
	if err := c.admin.QueryRow(q, user).Scan(&n); err != nil {
		t.Fatalf("counting sessions: %v", err)
	}
	return n
}

// breakControl ends the control connection's session on the server, as
// an administrator or an idle timeout does, and waits until it is gone.
func (c *controlCase) breakControl(t *testing.T) {
	t.Helper()
	q, kill := "SELECT CONNECTION_ID()", "KILL %d"
	if c.driver == "postgres" {
		q, kill = "SELECT pg_backend_pid()", "SELECT pg_terminate_backend(%d)"
	}
	before := c.sessions(t)
	var id int64
	if err := c.b.control.QueryRow(q).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.Exec(fmt.Sprintf(kill, id)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the control session to end", 10*time.Second, func() bool { return c.sessions(t) == before-1 })
}

// fill takes every connection the login has left with other clients'
// sessions, until the server refuses one, and returns a func that ends
// one of them.
func (c *controlCase) fill(t *testing.T) (free func()) {
	t.Helper()
	others, err := sql.Open(c.driver, c.limited)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { others.Close() })
	others.SetMaxIdleConns(0)
	var held []*sql.Conn
	for {
		conn, err := others.Conn(context.Background())
		if err == nil {
			err = conn.PingContext(context.Background())
		}
		if err != nil {
			break
		}
		held = append(held, conn)
	}
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	return func() {
		held[0].Close() // closed, not kept idle (SetMaxIdleConns(0))
		held = held[1:]
	}
}

// TestKillWithoutControlConnection: on PostgreSQL and MariaDB, with the
// control connection closed by the server and the login's connections
// all taken (others' sessions, the statements' own), the end of a
// statement's context still stops its backend query:
//   - PostgreSQL by the driver's cancel request, which no connection
//     limit stops;
//   - MariaDB over an idle connection of the statements' pool, when
//     there is one; before, the KILL QUERY needed the control connection
//     reopened, which the server refused (1226), and the query ran on
//     until the backend's statement timeout;
//   - MariaDB without an idle connection, once another client leaves:
//     the kill is retried until the statement's deadline; before, it was
//     tried once.
func TestKillWithoutControlConnection(t *testing.T) {
	for _, c := range limitsBackends {
		for _, idle := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/idle=%v", c.name, idle), func(t *testing.T) {
				cc := newControlCase(t, c)
				cc.breakControl(t)
				ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
				defer stop()
				snap, err := cc.b.Snapshot(ctx, "bob")
				if err != nil {
					t.Fatal(err)
				}
				defer snap.Close()
				if idle {
					other, err := cc.b.Snapshot(context.Background(), "alice")
					if err != nil {
						t.Fatal(err)
					}
					other.Close()
				}
				free := cc.fill(t)
				if db, err := sql.Open(c.driver, cc.limited); err == nil {
					if err := db.Ping(); err == nil {
						t.Fatal("the login took one more connection; want it full")
					}
					db.Close()
				}
				done := make(chan error, 1)
				go func() {
					rows, err := snap.q.QueryContext(ctx, c.endless)
					if err == nil {
						rows.Close()
					}
					done <- err
				}()
				waitUntil(t, "the query running", 10*time.Second, func() bool { return cc.running(t, "dpproxy_limits_victim") == 1 })
				stop()
				if err := <-done; err == nil {
					t.Fatal("the query answered after its context ended")
				}
				if !idle && c.driver == "mysql" {
					// Disarm returns once the first attempt is over: it
					// found no connection.
					snap.Disarm()
					if cc.running(t, "dpproxy_limits_victim") != 1 {
						t.Fatal("the query stopped with no connection to spare")
					}
					free()
				}
				waitUntil(t, "the query to stop in the backend", 10*time.Second, func() bool { return cc.running(t, "dpproxy_limits_victim") == 0 })
			})
		}
	}
}

// TestPingWithoutControlConnection: on PostgreSQL and MariaDB, Ping (the
// proxy's /healthz) succeeds right after the server closed the control
// connection, when the server has a connection to spare (PostgreSQL's
// first ping failed with "driver: bad connection": the ping that finds
// the connection broken was not tried again); fails while the login's
// connections are all taken; and succeeds again once one is freed.
func TestPingWithoutControlConnection(t *testing.T) {
	for _, c := range limitsBackends {
		t.Run(c.name, func(t *testing.T) {
			cc := newControlCase(t, c)
			ctx := context.Background()
			cc.breakControl(t)
			if err := cc.b.Ping(ctx); err != nil {
				t.Errorf("ping after the control connection was closed: %v", err)
			}
			cc.breakControl(t)
			free := cc.fill(t)
			if err := cc.b.Ping(ctx); err == nil {
				t.Errorf("ping succeeded with the control connection closed and no connection to spare")
			}
			free()
			waitUntil(t, "a ping to succeed once a connection is freed", 10*time.Second, func() bool { return cc.b.Ping(ctx) == nil })
		})
	}
}
