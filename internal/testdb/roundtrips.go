package testdb

import (
	"database/sql"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"
)

// RoundTrips counts what a PostgreSQL pool opened by PostgresCounting
// sends the server: each write is one message batch after which lib/pq
// waits for the answer, so the count is the round trips.
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
