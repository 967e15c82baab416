package testdb

import (
	"context"
	"database/sql"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// RoundTrips counts what a pool opened by PostgresCounting or
// MySQLCounting sends the server: each write is one message batch after
// which the driver waits for the answer (lib/pq), or one packet
// (go-sql-driver, which waits for an answer to every packet but
// COM_STMT_CLOSE), so the count is the round trips, plus the statements
// closed.
type RoundTrips struct{ n atomic.Int64 }

// Take returns the round trips counted since the last Take.
func (r *RoundTrips) Take() int64 { return r.n.Swap(0) }

// PostgresCounting opens a pool on dsn (a PostgreSQL DSN), in lib/pq's
// binary_parameters mode as the proxy's pools are (backend.OpenDB), whose
// connections count their round trips; it is closed when the test ends.
func PostgresCounting(t testing.TB, dsn string) (*sql.DB, *RoundTrips) {
	t.Helper()
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	cfg.BinaryParameters = true
	c, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	r := &RoundTrips{}
	c.Dialer(countingDialer{r})
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db, r
}

// MySQLCounting opens a pool on dsn (a MySQL/MariaDB DSN) whose
// connections count what they send (RoundTrips); it is closed when the
// test ends.
func MySQLCounting(t testing.TB, dsn string) (*sql.DB, *RoundTrips) {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	r := &RoundTrips{}
	cfg.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return countingConn{c, r}, nil
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db, r
}

type countingDialer struct{ r *RoundTrips }

func (d countingDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialTimeout(network, address, 0)
}

func (d countingDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return countingConn{c, d.r}, nil
}

type countingConn struct {
	net.Conn
	r *RoundTrips
}

func (c countingConn) Write(b []byte) (int, error) {
	c.r.n.Add(1)
	return c.Conn.Write(b)
}
