package budget

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

const (
	// maxAttempts bounds how often a transaction that lost a lock race is run.
	maxAttempts = 12
	// firstBackoff and maxBackoff bound the jittered wait between attempts.
	firstBackoff = 2 * time.Millisecond
	maxBackoff   = 250 * time.Millisecond
	// sqliteBusyTimeout is how long an SQLite statement waits for a lock
	// before SQLITE_BUSY, set on every connection the ledger uses.
	sqliteBusyTimeout = "PRAGMA busy_timeout = 5000"
)

// inTx runs fn in a transaction and commits it, running it again (at most
// maxAttempts times in all) when the database aborted it to resolve a
// lock conflict, or when the connection it ran on had died before the
// commit was sent (see lostBeforeCommit). fn must have no effect outside tx
// until inTx returns nil. A lock wait the database gave up at the ledger's
// lock timeout (SetLockTimeout) is not run again, since it already waited
// the whole bound: it fails with a dperr.Timeout error. An attempt that
// failed once ctx had ended returns an error wrapping ctx's (a driver
// reports a query it cancelled in its own words, lib/pq as "canceling
// statement due to user request"), which ledgerError reports as the
// statement's timeout or cancellation.
func (l *Ledger) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := l.tryTx(ctx, fn)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case l.dialect.lockTimedOut(err):
			return dperr.Wrap(dperr.Timeout, err, lockTimedOutText)
		case attempt == maxAttempts || !(l.dialect.retryable(err) || l.dialect.lostBeforeCommit(err)):
			return err
		}
		l.retries.Add(1)
		wait := min(firstBackoff<<(attempt-1), maxBackoff)
		wait = wait/2 + jitter(wait/2+1) // so that racing proxies drift apart
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// tryTx runs fn once in a transaction on a connection of its own, its
// lock waits bounded by the ledger's lock timeout.
func (l *Ledger) tryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if l.dialect == SQLite {
		if _, err := conn.ExecContext(ctx, sqliteBusyTimeout); err != nil {
			return err
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if set := l.dialect.lockWait(l.lockTimeout); set != "" {
		if _, err := tx.ExecContext(ctx, set); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // the error that made us roll back is the one to report
		return err
	}
	if err := tx.Commit(); err != nil {
		return commitError{err}
	}
	return nil
}

// commitError is the error of a transaction's COMMIT, which may have taken
// effect on the server whatever the driver says.
type commitError struct{ err error }

func (e commitError) Error() string { return e.err.Error() }
func (e commitError) Unwrap() error { return e.err }

// lostBeforeCommit reports whether err says the connection was lost before
// the transaction's COMMIT was sent: the driver found it dead
// (driver.ErrBadConn), its socket failed or closed, or the server said it
// was ending it (PostgreSQL's class 57P0, operator intervention; MariaDB's
// connection killed), or the MySQL driver lost it mid-statement. That is
// what a transaction meets on an idle pooled connection the server ended
// (a restart, a failover, pg_terminate_backend, KILL); database/sql retries
// ErrBadConn on a fresh connection itself, but not on the pinned connection
// a transaction runs on. A server rolls back the open transaction of a
// connection it loses, and fn has no effect outside its transaction, so
// running it again charges nothing twice; an error of the COMMIT itself,
// which may have taken effect, is never retried.
func (d Dialect) lostBeforeCommit(err error) bool {
	var commit commitError
	if errors.As(err, &commit) {
		return false
	}
	var netErr *net.OpError
	if errors.Is(err, driver.ErrBadConn) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	switch d {
	case Postgres:
		var e interface{ SQLState() string }
		return errors.As(err, &e) && strings.HasPrefix(e.SQLState(), "57P0")
	case MySQL:
		// go-sql-driver's ErrInvalidConn: the connection failed after the
		// statement was written (BEGIN on a connection the server closed);
		// MariaDB's 1927 ER_CONNECTION_KILLED.
		return mysqlInvalidConnection(err) || mysqlErrorNumber(err) == 1927
	}
	return false
}

// mysqlInvalidConnection reports whether err's chain holds go-sql-driver's
// ErrInvalidConn, recognised by its text as the ledger does not import the
// driver; a test that uses the driver's error keeps this honest.
func mysqlInvalidConnection(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "invalid connection" {
			return true
		}
	}
	return false
}

// retryable reports whether err means the transaction was aborted only
// because of concurrent transactions: a serialization failure or a
// deadlock, which running it again resolves. A lock wait that timed out
// is not (lockTimedOut).
func (d Dialect) retryable(err error) bool {
	switch d {
	case SQLite:
		var e interface{ Code() int }
		if errors.As(err, &e) {
			switch e.Code() & 0xff { // the primary result code
			case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
				return true
			}
		}
	case Postgres:
		var e interface{ SQLState() string }
		if errors.As(err, &e) {
			switch e.SQLState() {
			case "40001", "40P01": // serialization_failure, deadlock_detected
				return true
			}
		}
	case MySQL:
		switch mysqlErrorNumber(err) {
		case 1213, 1020: // deadlock, record changed (MariaDB snapshot isolation)
			return true
		}
	}
	return false
}

// lockTimedOut reports whether err is the database giving up a row-lock
// wait at its lock timeout (lockWait): PostgreSQL's lock_not_available,
// MySQL/MariaDB's lock wait timeout. The statement that waited failed
// before the transaction's COMMIT, and the transaction is rolled back
// (tryTx; MariaDB itself rolls back only the statement), so nothing of it
// was committed.
func (d Dialect) lockTimedOut(err error) bool {
	switch d {
	case Postgres:
		var e interface{ SQLState() string }
		return errors.As(err, &e) && e.SQLState() == "55P03"
	case MySQL:
		return mysqlErrorNumber(err) == 1205
	}
	return false
}

// lockWait returns the statement that bounds the row-lock waits of the
// transaction it runs in to d, rounded up to a whole second and at least
// one (MySQL/MariaDB count seconds): PostgreSQL's SET LOCAL lock_timeout,
// MySQL/MariaDB's innodb_lock_wait_timeout for the session (each
// transaction sets it again). It returns "" for d = 0 (the database's own
// bound: none on PostgreSQL, 50 s on MariaDB) and on SQLite, whose lock
// waits busy_timeout bounds.
func (d Dialect) lockWait(timeout time.Duration) string {
	bound := d.lockWaitBound(timeout)
	if bound == 0 {
		return ""
	}
	secs := int64(bound / time.Second)
	switch d {
	case Postgres:
		return fmt.Sprintf("SET LOCAL lock_timeout = '%ds'", secs)
	case MySQL:
		return fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", secs)
	}
	return ""
}

// lockWaitBound is the bound lockWait sets: timeout rounded up to a whole
// second and at least one, on PostgreSQL and MySQL/MariaDB; 0 for
// timeout ≤ 0 and on SQLite.
func (d Dialect) lockWaitBound(timeout time.Duration) time.Duration {
	if timeout <= 0 || (d != Postgres && d != MySQL) {
		return 0
	}
	return max((timeout+time.Second-1)/time.Second, 1) * time.Second
}

// lockTimedOutText is the message of a ledger write that gave up waiting
// for a row lock at the ledger's lock timeout.
const lockTimedOutText = "timed out waiting for a lock in the privacy budget ledger, which another session holds"

// mysqlErrorNumber returns the Number of a *mysql.MySQLError in err's chain,
// or 0. The ledger does not import the driver, and the driver's error has no
// method that returns the number, so the field is read by reflection; a test
// that builds the driver's error keeps this honest.
func mysqlErrorNumber(err error) uint64 {
	for ; err != nil; err = errors.Unwrap(err) {
		v := reflect.ValueOf(err)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			continue
		}
		v = v.Elem()
		if v.Kind() != reflect.Struct || v.Type().Name() != "MySQLError" {
			continue
		}
		if n := v.FieldByName("Number"); n.IsValid() && n.CanUint() {
			return n.Uint()
		}
	}
	return 0
}

// jitter returns a duration uniform in [0, d) (d > 0), from crypto/rand.
func jitter(d time.Duration) time.Duration {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return time.Duration(binary.LittleEndian.Uint64(b[:]) % uint64(d))
}
