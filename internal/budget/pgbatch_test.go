package budget

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// proxyAccounts are the accounts of a statement as the proxy charges them:
// the analyst's, held to the proxy's own limit, and the table's, unbounded.
func proxyAccounts(limit float64) []Account {
	return []Account{
		{Name: "user:alice", Limit: OwnLimit(Cost{Epsilon: limit}), Disclose: true},
		{Name: "table:pums", Limit: NoLimit()},
	}
}

// usedBy returns what account has used, read from the database.
func usedBy(t *testing.T, db *sql.DB, account string) float64 {
	t.Helper()
	var used float64
	if err := db.QueryRow("SELECT epsilon_used FROM dpproxy_accounts_v3 WHERE name = $1", account).Scan(&used); err != nil {
		t.Fatal(err)
	}
	return used
}

// states counts the reservations charged to account by state.
func states(t *testing.T, l *Ledger, account string) map[State]int {
	t.Helper()
	history, err := l.History(context.Background(), account, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := map[State]int{}
	for _, e := range history {
		n[e.State]++
	}
	return n
}

// TestPostgresBatchRoundTrips: on PostgreSQL, once a ledger knows the
// usage of a statement's accounts, its Reserve is one round trip to the
// database (pgbatch.go's statement, prepared, which commits by itself),
// and so is a Commit; the locked transaction took eight and three.
func TestPostgresBatchRoundTrips(t *testing.T) {
	ctx := context.Background()
	db, trips := testdb.PostgresCounting(t, testdb.PostgresDSN(t))
	l, err := Open(ctx, db, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	accounts := proxyAccounts(10)
	// The first Reserve reads the usage under the accounts' locks; the
	// first Commit prepares the statement.
	first, err := l.Reserve(ctx, accounts, Cost{Epsilon: 0.5}, "first")
	if err != nil {
		t.Fatal(err)
	}
	commit(t, first)
	for i := range 3 {
		trips.Take()
		r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 0.5}, "next")
		if err != nil {
			t.Fatal(err)
		}
		if n := trips.Take(); n != 1 {
			t.Errorf("Reserve %d: %d round trips, want 1", i, n)
		}
		commit(t, r)
		if n := trips.Take(); n != 1 {
			t.Errorf("Commit %d: %d round trips, want 1", i, n)
		}
	}
	left, err := l.RemainingUnder(ctx, "user:alice", Cost{Epsilon: 10})
	if err != nil {
		t.Fatal(err)
	}
	if left.Epsilon != 8 {
		t.Errorf("remaining %v, want 8", left.Epsilon)
	}
	if got := states(t, l, "table:pums"); got[Committed] != 4 || len(got) != 1 {
		t.Errorf("the table's reservations by state: %v, want 4 committed", got)
	}
}

// TestPostgresBatchAfterOtherWriters: a ledger whose knowledge of an
// account's usage is out of date (another proxy charged it, a Cancel gave
// budget back, its stored limit changed) writes nothing with its
// compare-and-swap and charges on the locked path, against the usage it
// reads there: limits hold to the last statement, nothing is charged twice.
func TestPostgresBatchAfterOtherWriters(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.PostgresDSN(t)
	db := testdb.Open(t, "postgres", dsn)
	a := openLedger(t, backends[1], dsn)
	b := openLedger(t, backends[1], dsn)
	accounts := proxyAccounts(1)
	// 0.25 each: the fifth does not fit, whichever ledger asks, and each
	// ledger asks with the usage it last saw.
	var granted []*Reservation
	for i, l := range []*Ledger{a, b, a, b, a, b} {
		r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 0.25}, "alternating")
		switch {
		case i < 4 && err != nil:
			t.Fatalf("Reserve %d: %v", i, err)
		case i >= 4 && dperr.KindOf(err) != dperr.BudgetExhausted:
			t.Fatalf("Reserve %d: got %v, want a refusal", i, err)
		case err == nil:
			granted = append(granted, r)
		}
	}
	if used := usedBy(t, db, "user:alice"); used != 1 {
		t.Errorf("used %v after four statements of 0.25, want 1", used)
	}
	// b gives one back; a, which knew the usage as 1, charges it again.
	if err := granted[3].Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	r, err := a.Reserve(ctx, accounts, Cost{Epsilon: 0.25}, "after a cancel")
	if err != nil {
		t.Fatalf("Reserve after another ledger's Cancel: %v", err)
	}
	commit(t, r)
	// A stored limit lowered by the other ledger binds the next Reserve.
	setLimits(t, a, map[string]Cost{"user:bob": {Epsilon: 1}})
	commit(t, reserve(t, a, Cost{Epsilon: 0.5}, "user:bob"))
	setLimits(t, b, map[string]Cost{"user:bob": {Epsilon: 0.75}})
	if _, err := a.Reserve(ctx, stored("user:bob"), Cost{Epsilon: 0.5}, "over the lowered limit"); dperr.KindOf(err) != dperr.BudgetExhausted {
		t.Errorf("Reserve over a limit lowered by another ledger: got %v, want a refusal", err)
	}
	for _, r := range granted[:3] {
		commit(t, r)
	}
	if used := usedBy(t, db, "user:alice"); used != 1 {
		t.Errorf("used %v, want 1", used)
	}
	if got := states(t, a, "user:alice"); got[Committed] != 4 || got[Cancelled] != 1 || got[Reserved] != 0 {
		t.Errorf("reservations by state: %v, want 4 committed and 1 cancelled", got)
	}
}

// TestPostgresBatchPlannedOnce: on a connection that ran Dialect.Session,
// the prepared batch statement is planned once (a generic plan), not at
// every execution, which took PostgreSQL longer than running it.
func TestPostgresBatchPlannedOnce(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, "postgres", testdb.PostgresDSN(t))
	db.SetMaxOpenConns(1) // the statement's connection is the one queried below
	for _, stmt := range Postgres.Session() {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(ctx, db, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		commit(t, mustReserve(t, l, proxyAccounts(100), "planned"))
	}
	var generic, custom int64
	if err := db.QueryRow("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'WITH acct %'").Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if custom != 0 || generic < 8 {
		t.Errorf("the batch statement was planned for %d executions and ran %d times on a generic plan, want 0 and at least 8", custom, generic)
	}
}

// dropDialer opens connections that close themselves right after their
// next write once armed: the statement reaches the server, which runs it,
// but its answer is lost.
type dropDialer struct{ armed *atomic.Bool }

func (d dropDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialTimeout(network, address, 0)
}

func (d dropDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return dropConn{c, d.armed}, nil
}

type dropConn struct {
	net.Conn
	armed *atomic.Bool
}

func (c dropConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if c.armed.CompareAndSwap(true, false) {
		c.Conn.Close()
	}
	return n, err
}

// TestPostgresBatchAnswerLost: the connection of the one-statement batch
// dies after the statement was sent, so that the ledger cannot tell
// whether it committed. The Reserve is charged on the locked path and
// succeeds; the lost statement's charge, if the server committed it, stays
// spent: the statement is charged once or twice, never less than once.
func TestPostgresBatchAnswerLost(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.PostgresDSN(t)
	c, err := pq.NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	armed := &atomic.Bool{}
	c.Dialer(dropDialer{armed})
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	l, err := Open(ctx, db, Postgres)
	if err != nil {
		t.Fatal(err)
	}
	accounts := proxyAccounts(10)
	first, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "first")
	if err != nil {
		t.Fatal(err)
	}
	commit(t, first)
	armed.Store(true) // the next statement is the Reserve's, run as one statement
	r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "lost")
	if err != nil {
		t.Fatalf("Reserve whose one-statement batch lost its connection: %v", err)
	}
	if armed.Load() {
		t.Fatal("the Reserve sent nothing")
	}
	commit(t, r)
	admin := testdb.Open(t, "postgres", dsn)
	used := usedBy(t, admin, "user:alice")
	if used != 2 && used != 3 {
		t.Fatalf("used %v after two statements of 1, want 2 (or 3, the lost statement committed)", used)
	}
	got := states(t, l, "user:alice")
	if want := map[State]int{Committed: 2, Reserved: int(used) - 2}; got[Committed] != want[Committed] || got[Reserved] != want[Reserved] || got[Cancelled] != 0 {
		t.Errorf("reservations by state: %v, want %v", got, want)
	}
	t.Logf("the lost statement committed: %v", used == 3)
}

// TestPostgresBatchKilledBeforeCommit: a one-statement batch whose
// connection is terminated while the statement waits for an account's
// lock (another transaction holds it) commits nothing; the Reserve is
// charged once, once the lock is free.
func TestPostgresBatchKilledBeforeCommit(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.PostgresDSN(t)
	l := openLedger(t, backends[1], dsn)
	accounts := proxyAccounts(10)
	commit(t, mustReserve(t, l, accounts, "first"))
	commit(t, mustReserve(t, l, accounts, "second")) // prepared
	admin := testdb.Open(t, "postgres", dsn)
	holder, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec("SELECT 1 FROM dpproxy_accounts_v3 WHERE name = 'user:alice' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "killed")
		if err == nil {
			err = r.Commit(ctx)
		}
		done <- err
	}()
	// Terminate the statement's session once it waits for the lock.
	var killed bool
	for deadline := time.Now().Add(10 * time.Second); !killed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var pid int64
		err := admin.QueryRow(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
			AND wait_event_type = 'Lock' AND query LIKE 'WITH acct%'`).Scan(&pid)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec("SELECT pg_terminate_backend($1)", pid); err != nil {
			t.Fatal(err)
		}
		killed = true
	}
	if !killed {
		t.Fatal("the one-statement batch never waited for the lock")
	}
	time.Sleep(100 * time.Millisecond) // the Reserve runs again and waits for the lock
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Reserve whose statement was terminated: %v", err)
	}
	if used := usedBy(t, admin, "user:alice"); used != 3 {
		t.Errorf("used %v after three statements of 1, want 3: the terminated statement committed nothing", used)
	}
	if got := states(t, l, "user:alice"); got[Committed] != 3 || len(got) != 1 {
		t.Errorf("reservations by state: %v, want 3 committed", got)
	}
}

func mustReserve(t *testing.T, l *Ledger, accounts []Account, memo string) *Reservation {
	t.Helper()
	r, err := l.Reserve(context.Background(), accounts, Cost{Epsilon: 1}, memo)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPgArrays: the array literals of the batch statement read back as
// exactly the values written, quotes, backslashes, braces, commas and
// line breaks in names and memos included.
func TestPgArrays(t *testing.T) {
	db := testdb.Postgres(t)
	texts := []string{"user:a\"b", `table:c\d`, "x,{y}", "memo\nline", "", " space ", "NULL", "ünï"}
	var got []string
	rows, err := db.Query("SELECT x FROM unnest(CAST($1 AS TEXT[])) WITH ORDINALITY AS t (x, o) ORDER BY o", pgTextArray(texts))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if strings.Join(got, "|") != strings.Join(texts, "|") || len(got) != len(texts) {
		t.Errorf("text array: got %q, want %q", got, texts)
	}
	floats := []float64{0.1, 1e-300, 0.30000000000000004, 1e9, 5e-324, 0}
	var back []float64
	rows, err = db.Query("SELECT x FROM unnest(CAST($1 AS DOUBLE PRECISION[])) WITH ORDINALITY AS t (x, o) ORDER BY o", pgFloatArray(floats))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		back = append(back, v)
	}
	for i := range floats {
		if i >= len(back) || back[i] != floats[i] {
			t.Errorf("float array: got %v, want %v", back, floats)
			break
		}
	}
}

// TestPostgresBatchWithFewFloatDigits: two ledgers taking turns on one
// account, on connections whose role or database sets extra_float_digits
// to 0 (PostgreSQL 11's default), which rounds a double read back to 15
// digits. The batch statement compares usage exactly, so Dialect.Session
// sets the digits back to 3; without that, every batch after the first
// usage that 15 digits cannot carry (0.30000000000000004) failed closed
// and each Reserve was refused.
func TestPostgresBatchWithFewFloatDigits(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.PostgresDSN(t)
	var ledgers []*Ledger
	for range 2 {
		db := testdb.Open(t, "postgres", dsn)
		db.SetMaxOpenConns(1) // the one connection the settings below run on
		for _, stmt := range append([]string{"SET extra_float_digits = 0"}, Postgres.Session()...) {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Open(ctx, db, Postgres)
		if err != nil {
			t.Fatal(err)
		}
		ledgers = append(ledgers, l)
	}
	for i := range 8 {
		r, err := ledgers[i%2].Reserve(ctx, proxyAccounts(10), Cost{Epsilon: 0.1}, "digits")
		if err != nil {
			t.Fatalf("Reserve %d: %v", i+1, err)
		}
		commit(t, r)
	}
}
