package budget

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// TestReserveAfterLedgerConnectionsDied checks that a statement after the
// ledger database ended the proxy's idle connections (a restart, a failover,
// pg_terminate_backend, KILL) is charged on a fresh connection rather than
// refused: the driver reports the dead connection before anything ran, so
// running the transaction again cannot charge twice.
func TestReserveAfterLedgerConnectionsDied(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends[1:] {
		t.Run(b.dialect.String(), func(t *testing.T) {
			dsn := b.freshDSN(t)
			if b.dialect == MySQL {
				// go-sql-driver checks an idle connection before handing it
				// out, which would hide the dead one from the transaction;
				// a connection can die between that check and BEGIN too.
				cfg, err := mysql.ParseDSN(dsn)
				if err != nil {
					t.Fatal(err)
				}
				cfg.CheckConnLiveness = false
				dsn = cfg.FormatDSN()
			}
			l := openLedger(t, b, dsn)
			l.db.SetMaxOpenConns(1) // the connection ended below is the one the next statement gets
			setLimits(t, l, map[string]Cost{"alice": {Epsilon: 1}})
			commit(t, reserve(t, l, Cost{Epsilon: 0.25}, "alice"))

			var id int64
			query, kill := "SELECT pg_backend_pid()", "SELECT pg_terminate_backend($1)"
			if b.dialect == MySQL {
				query, kill = "SELECT CONNECTION_ID()", "KILL ?"
			}
			if err := l.db.QueryRowContext(ctx, query).Scan(&id); err != nil {
				t.Fatal(err)
			}
			admin := openDB(t, b, dsn)
			if _, err := admin.ExecContext(ctx, kill, id); err != nil {
				t.Fatalf("ending the ledger's connection %d: %v", id, err)
			}

			r, err := l.Reserve(ctx, stored("alice"), Cost{Epsilon: 0.25}, "test")
			if err != nil {
				t.Fatalf("Reserve after the ledger's connection died: %v", err)
			}
			commit(t, r)
			left, err := l.Remaining(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if left.Epsilon != 0.5 {
				t.Fatalf("alice's remaining = %v, want 0.5: each statement charged exactly once", left)
			}
		})
	}
}

// TestLostBeforeCommit checks which errors run a ledger transaction again:
// a connection lost before the COMMIT, never an error of the COMMIT itself
// (which may have taken effect) nor an error the server answered.
func TestLostBeforeCommit(t *testing.T) {
	for _, c := range []struct {
		dialect Dialect
		err     error
		want    bool
	}{
		{Postgres, driver.ErrBadConn, true},
		{MySQL, fmt.Errorf("begin: %w", driver.ErrBadConn), true},
		{Postgres, &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{MySQL, io.ErrUnexpectedEOF, true},
		{Postgres, &pq.Error{Code: "57P01"}, true}, // admin_shutdown
		{Postgres, &pq.Error{Code: "23505"}, false},
		{MySQL, &pq.Error{Code: "57P01"}, false},
		{MySQL, fmt.Errorf("begin: %w", mysql.ErrInvalidConn), true},
		{Postgres, mysql.ErrInvalidConn, false},
		{MySQL, &mysql.MySQLError{Number: 1927, Message: "Connection was killed"}, true},
		{MySQL, &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{MySQL, commitError{mysql.ErrInvalidConn}, false},
		{Postgres, commitError{driver.ErrBadConn}, false},
		{MySQL, commitError{io.EOF}, false},
		{SQLite, errors.New("disk I/O error"), false},
	} {
		if got := c.dialect.lostBeforeCommit(c.err); got != c.want {
			t.Errorf("%v lostBeforeCommit(%v) = %v, want %v", c.dialect, c.err, got, c.want)
		}
	}
}
