package budget

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// casBackends are the ledger databases that run a batch as one
// compare-and-swap (casbatch.go): PostgreSQL and MariaDB.
var casBackends = backends[1:]

// proxyAccounts are the accounts of a statement as the proxy charges them:
// the analyst's, held to the proxy's own limit, and the table's, unbounded.
func proxyAccounts(limit float64) []Account {
	return []Account{
		{Name: "user:alice", Limit: OwnLimit(Cost{Epsilon: limit}), Disclose: true},
		{Name: "table:pums", Limit: NoLimit()},
	}
}

// usedBy returns what account has used, read from db, a database of dialect d.
func usedBy(t *testing.T, d Dialect, db *sql.DB, account string) float64 {
	t.Helper()
	var used float64
	if err := db.QueryRow(d.rebind("SELECT epsilon_used FROM dpproxy_accounts_v3 WHERE name = ?"), account).Scan(&used); err != nil {
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

// countingDB opens dsn, a database of b, in a pool that counts what it
// sends (testdb.RoundTrips).
func countingDB(t *testing.T, b backend, dsn string) (*sql.DB, *testdb.RoundTrips) {
	t.Helper()
	if b.dialect == Postgres {
		return testdb.PostgresCounting(t, dsn)
	}
	return testdb.MySQLCounting(t, dsn)
}

// TestBatchRoundTrips: on PostgreSQL and MariaDB, once a ledger knows the
// usage of a statement's accounts, its Reserve is one round trip to the
// database (PostgreSQL's prepared statement, MariaDB's compound statement,
// each of which commits by itself), and so is a Commit. The locked
// transaction took eight and three on PostgreSQL; on MariaDB, whose
// driver prepares each statement with arguments (and closes it, a packet
// without an answer), 18 packets (13 round trips) and 6 (5).
func TestBatchRoundTrips(t *testing.T) {
	for _, b := range casBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			db, trips := countingDB(t, b, b.freshDSN(t))
			l, err := Open(ctx, db, b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			// Each transaction (and the compound statement) sets the lock
			// timeout, as the proxy's ledger does.
			l.SetLockTimeout(5 * time.Second)
			accounts := proxyAccounts(10)
			// The first Reserve reads the usage under the accounts' locks;
			// on PostgreSQL the first Commit prepares the statement.
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
		})
	}
}

// TestBatchAfterOtherWriters: a ledger whose knowledge of an account's
// usage is out of date (another proxy charged it, a Cancel gave budget
// back, its stored limit changed) writes nothing with its compare-and-swap
// and charges on the locked path, against the usage it reads there: limits
// hold to the last statement, nothing is charged twice.
func TestBatchAfterOtherWriters(t *testing.T) {
	for _, be := range casBackends {
		t.Run(be.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := be.freshDSN(t)
			db := openDB(t, be, dsn)
			a := openLedger(t, be, dsn)
			b := openLedger(t, be, dsn)
			accounts := proxyAccounts(1)
			// 0.25 each: the fifth does not fit, whichever ledger asks, and
			// each ledger asks with the usage it last saw.
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
			if used := usedBy(t, be.dialect, db, "user:alice"); used != 1 {
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
			if used := usedBy(t, be.dialect, db, "user:alice"); used != 1 {
				t.Errorf("used %v, want 1", used)
			}
			if got := states(t, a, "user:alice"); got[Committed] != 4 || got[Cancelled] != 1 || got[Reserved] != 0 {
				t.Errorf("reservations by state: %v, want 4 committed and 1 cancelled", got)
			}
		})
	}
}

// TestBatchWithStaleCommitKnownUsage: a compare-and-swap whose usage is
// current but one of whose Commits finds its reservation already
// committed writes nothing (the other Commit, the Reserve and the
// accounts' usage included); run again on the locked path, only that
// Commit fails, and every cost is charged once.
func TestBatchWithStaleCommitKnownUsage(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
		stale := reserve(t, l, Cost{Epsilon: 0.125}, "user:alice")
		commit(t, stale)
		fresh := reserve(t, l, Cost{Epsilon: 0.125}, "user:alice")
		now := time.Now().UnixMicro()
		batch := []*request{
			{commit: fresh, now: now, done: make(chan error, 1)},
			{commit: stale, now: now, done: make(chan error, 1)},
			{reserve: &reserveRequest{accounts: stored("user:alice"), sorted: []string{"user:alice"}, cost: Cost{Epsilon: 0.25}, memo: "m"}, now: now, done: make(chan error, 1)},
		}
		l.runBatch(batch)
		if err := <-batch[0].done; err != nil {
			t.Errorf("commit of the pending reservation: %v", err)
		}
		if err := <-batch[1].done; !errors.Is(err, ErrSettled) {
			t.Errorf("commit of the committed reservation: got %v, want ErrSettled", err)
		}
		if err := <-batch[2].done; err != nil || batch[2].id == 0 {
			t.Errorf("reserve in the batch: id %d, %v", batch[2].id, err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.5})
		if got := states(t, l, "user:alice"); got[Committed] != 2 || got[Reserved] != 1 || len(got) != 2 {
			t.Errorf("reservations by state: %v, want 2 committed and 1 reserved", got)
		}
	})
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

// droppingDB opens dsn, a database of b, in a pool whose connections
// drop (dropDialer) once armed.
func droppingDB(t *testing.T, b backend, dsn string, armed *atomic.Bool) *sql.DB {
	t.Helper()
	d := dropDialer{armed}
	var db *sql.DB
	if b.dialect == Postgres {
		c, err := pq.NewConnector(dsn)
		if err != nil {
			t.Fatal(err)
		}
		c.Dialer(d)
		db = sql.OpenDB(c)
	} else {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		cfg.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
			return d.Dial(network, address)
		}
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db = sql.OpenDB(c)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestBatchAnswerLost: the connection of the one-round-trip batch dies
// after the compare-and-swap was sent, so that the ledger cannot tell
// whether it committed. The Reserve is charged on the locked path and
// succeeds; the lost compare-and-swap's charge, if the server committed
// it, stays spent: the statement is charged once or twice, never less
// than once.
func TestBatchAnswerLost(t *testing.T) {
	for _, b := range casBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := b.freshDSN(t)
			armed := &atomic.Bool{}
			l, err := Open(ctx, droppingDB(t, b, dsn, armed), b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			accounts := proxyAccounts(10)
			first, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "first")
			if err != nil {
				t.Fatal(err)
			}
			commit(t, first)
			armed.Store(true) // the next statement is the Reserve's compare-and-swap
			r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "lost")
			if err != nil {
				t.Fatalf("Reserve whose one-round-trip batch lost its connection: %v", err)
			}
			if armed.Load() {
				t.Fatal("the Reserve sent nothing")
			}
			commit(t, r)
			admin := openDB(t, b, dsn)
			used := usedBy(t, b.dialect, admin, "user:alice")
			if used != 2 && used != 3 {
				t.Fatalf("used %v after two statements of 1, want 2 (or 3, the lost compare-and-swap committed)", used)
			}
			got := states(t, l, "user:alice")
			if want := map[State]int{Committed: 2, Reserved: int(used) - 2}; got[Committed] != want[Committed] || got[Reserved] != want[Reserved] || got[Cancelled] != 0 {
				t.Errorf("reservations by state: %v, want %v", got, want)
			}
			t.Logf("the lost compare-and-swap committed: %v", used == 3)
		})
	}
}

// casWaiter is a query of the session id of the compare-and-swap of the
// test's database while it waits for a row lock (on MariaDB the
// processlist shows the compound statement's statement that waits), and
// the statement that ends a session by its id.
var casWaiter = map[Dialect][2]string{
	Postgres: {`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
		AND wait_event_type = 'Lock' AND query LIKE 'WITH acct%'`, "SELECT pg_terminate_backend($1)"},
	MySQL: {`SELECT t.trx_mysql_thread_id FROM information_schema.innodb_trx t
		JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
		WHERE p.db = DATABASE() AND t.trx_state = 'LOCK WAIT'
		AND p.info LIKE 'SELECT COUNT(*) INTO v_n FROM dpproxy_accounts_v3 %'`, "KILL CONNECTION ?"},
}

// TestBatchKilledBeforeCommit: a one-round-trip batch whose connection
// is terminated while the compare-and-swap waits for an account's lock
// (another transaction holds it) commits nothing; the Reserve is charged
// once, once the lock is free.
func TestBatchKilledBeforeCommit(t *testing.T) {
	for _, b := range casBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := b.freshDSN(t)
			l := openLedger(t, b, dsn)
			accounts := proxyAccounts(10)
			commit(t, mustReserve(t, l, accounts, "first"))
			commit(t, mustReserve(t, l, accounts, "second")) // prepared
			admin, holder := lockAlice(t, b, dsn)
			done := make(chan error, 1)
			go func() {
				r, err := l.Reserve(ctx, accounts, Cost{Epsilon: 1}, "killed")
				if err == nil {
					err = r.Commit(ctx)
				}
				done <- err
			}()
			// Terminate the compare-and-swap's session once it waits for
			// the lock.
			var killed bool
			for deadline := time.Now().Add(10 * time.Second); !killed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				var id int64
				err := admin.QueryRow(casWaiter[b.dialect][0]).Scan(&id)
				if err == sql.ErrNoRows {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if _, err := admin.Exec(casWaiter[b.dialect][1], id); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
			if !killed {
				t.Fatal("the one-round-trip batch never waited for the lock")
			}
			time.Sleep(100 * time.Millisecond) // the Reserve runs again and waits for the lock
			if err := holder.Rollback(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("Reserve whose compare-and-swap was terminated: %v", err)
			}
			if used := usedBy(t, b.dialect, admin, "user:alice"); used != 3 {
				t.Errorf("used %v after three statements of 1, want 3: the terminated compare-and-swap committed nothing", used)
			}
			if got := states(t, l, "user:alice"); got[Committed] != 3 || len(got) != 1 {
				t.Errorf("reservations by state: %v, want 3 committed", got)
			}
		})
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

// TestBatchCutOffCommitsNothing checks that a compare-and-swap that waits
// for a row lock gives up before its batch's time ends: on MariaDB the
// server does not stop a compound statement whose client has gone, so one
// still waiting when the batch gave up would commit its reservation once
// the lock is released, after the statement was told it was not charged.
func TestBatchCutOffCommitsNothing(t *testing.T) {
	for _, b := range casBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			dsn := b.freshDSN(t)
			l := openLedger(t, b, dsn)
			l.SetLockTimeout(time.Minute) // longer than the batch's time, as the default statement timeout is
			accounts := proxyAccounts(10)
			commit(t, mustReserve(t, l, accounts, "first"))
			commit(t, mustReserve(t, l, accounts, "second")) // the accounts' usage is known
			admin, holder := lockAlice(t, b, dsn)
			req := &request{
				reserve: &reserveRequest{accounts: accounts, sorted: []string{"table:pums", "user:alice"}, cost: Cost{Epsilon: 1}, memo: "cut off"},
				now:     time.Now().UnixMicro(),
			}
			batchCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			done, err := l.casBatch(batchCtx, []*request{req}, make([]error, 1))
			if !done || err == nil {
				t.Fatalf("compare-and-swap behind a held lock: done %v, err %v; want a failure", done, err)
			}
			if err := holder.Rollback(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Millisecond) // a statement still waiting would now commit
			if used := usedBy(t, b.dialect, admin, "user:alice"); used != 2 {
				t.Errorf("used %v after two statements of 1 and a cut-off compare-and-swap, want 2", used)
			}
		})
	}
}

// lockAlice opens an administrator's connection to dsn and, in a
// transaction it returns (rolled back at the test's end if still open),
// locks user:alice's account row, as a paused session would.
func lockAlice(t *testing.T, b backend, dsn string) (*sql.DB, *sql.Tx) {
	t.Helper()
	admin := openDB(t, b, dsn)
	holder, err := admin.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Rollback() })
	if _, err := holder.Exec("SELECT 1 FROM dpproxy_accounts_v3 WHERE name = 'user:alice' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	return admin, holder
}
