package budget

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// sqliteBusyError returns the error of a real SQLite write that finds the
// database locked by another connection and does not wait.
func sqliteBusyError(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, backends[0], backends[0].freshDSN(t))
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	for _, stmt := range []string{"CREATE TABLE t (x INTEGER)", "BEGIN IMMEDIATE"} {
		if _, err := holder.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	defer holder.ExecContext(ctx, "ROLLBACK")
	if _, err := waiter.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	_, err = waiter.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	if err == nil {
		t.Fatal("INSERT while another connection holds the write lock: got nil, want SQLITE_BUSY")
	}
	return err
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		name    string
		dialect Dialect
		err     error
		want    bool
	}{
		{"sqlite busy", SQLite, sqliteBusyError(t), true},
		{"sqlite busy wrapped", SQLite, fmt.Errorf("commit: %w", sqliteBusyError(t)), true},
		{"sqlite other", SQLite, errors.New("no such table"), false},
		{"postgres serialization failure", Postgres, &pq.Error{Code: "40001"}, true},
		{"postgres deadlock", Postgres, &pq.Error{Code: "40P01"}, true},
		{"postgres unique violation", Postgres, &pq.Error{Code: "23505"}, false},
		{"mysql deadlock wrapped", MySQL, fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1213}), true},
		{"postgres lock timeout", Postgres, &pq.Error{Code: "55P03"}, false},
		{"mysql lock wait timeout", MySQL, fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1205}), false},
		{"mysql duplicate key", MySQL, &mysql.MySQLError{Number: 1062}, false},
		{"mysql error under another dialect", Postgres, &mysql.MySQLError{Number: 1213}, false},
		{"context canceled", MySQL, context.Canceled, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.dialect.retryable(tt.err); got != tt.want {
				t.Errorf("retryable(%v): got %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestLockTimedOut: the errors of a lock wait the database gave up at the
// ledger's lock timeout, which inTx reports as a timeout and does not run
// again.
func TestLockTimedOut(t *testing.T) {
	for _, c := range []struct {
		dialect Dialect
		err     error
		want    bool
	}{
		{Postgres, &pq.Error{Code: "55P03"}, true},
		{Postgres, fmt.Errorf("x: %w", &pq.Error{Code: "55P03"}), true},
		{Postgres, &pq.Error{Code: "40P01"}, false},
		{MySQL, fmt.Errorf("x: %w", &mysql.MySQLError{Number: 1205}), true},
		{MySQL, &mysql.MySQLError{Number: 1213}, false},
		{MySQL, &pq.Error{Code: "55P03"}, false},
		{Postgres, &mysql.MySQLError{Number: 1205}, false},
		{SQLite, sqliteBusyError(t), false},
	} {
		if got := c.dialect.lockTimedOut(c.err); got != c.want {
			t.Errorf("%v lockTimedOut(%v) = %v, want %v", c.dialect, c.err, got, c.want)
		}
	}
}
