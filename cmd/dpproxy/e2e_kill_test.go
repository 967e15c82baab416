package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gosqldriver "github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// killBackend is a real database whose table the test locks, so that the
// proxy's statement on it waits in the backend until it is cancelled.
type killBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	// lock holds a lock on kpeople that makes reads wait; unlock releases it.
	lock   []string
	unlock string
	// waiting counts the backend statements other than the caller's that
	// read kpeople and are running (waiting for the lock).
	waiting string
}

var killBackends = []killBackend{
	{"postgres", "postgres", testdb.PostgresDSN,
		[]string{"BEGIN", "LOCK TABLE kpeople IN ACCESS EXCLUSIVE MODE"}, "COMMIT",
		`SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%kpeople%' AND query NOT LIKE '%LOCK TABLE%' AND pid <> pg_backend_pid()`},
	{"mariadb", "mysql", testdb.MySQLDSN,
		[]string{"LOCK TABLES kpeople WRITE"}, "UNLOCK TABLES",
		`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%kpeople%' AND INFO NOT LIKE '%LOCK TABLES%' AND ID <> CONNECTION_ID()`},
}

// TestKillStopsBackendQuery: on PostgreSQL and MariaDB, a private statement
// waiting in the backend (its table locked by another session) is stopped
// in the backend too, not only in the proxy, when
//   - the same user sends KILL QUERY id on another connection (the client
//     gets 1317 and its connection stays usable; another user gets 1094,
//     as for an unknown id, so that ids of others' connections are not
//     revealed),
//   - the real mariadb client is interrupted with Ctrl-C (SIGINT: it sends
//     KILL QUERY itself and prints "query killed"),
//   - the client hangs up (its socket closes) while it waits;
//
// and KILL CONNECTION id closes an idle connection.
func TestKillStopsBackendQuery(t *testing.T) {
	for _, b := range killBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			for _, s := range []string{"CREATE TABLE kpeople (id BIGINT, age BIGINT)", "INSERT INTO kpeople VALUES (1, 30), (2, 40), (3, 50)"} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			p := startKillProxy(t, b, dsn)
			waiting := func() int {
				var n int
				if err := db.QueryRow(b.waiting).Scan(&n); err != nil {
					t.Fatalf("backend activity: %v", err)
				}
				return n
			}
			waitUntil := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for !cond() {
					if time.Now().After(deadline) {
						t.Fatalf("%s: not after 10 s", what)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			lock := holdLock(t, db, b.lock)

			eve := p.connect(t, "eve", "pw")
			bob := p.connect(t, "bob", "pw")
			victim, err := eve.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close()
			var id uint32
			if err := victim.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			answer := make(chan error, 1)
			go func() {
				var n float64
				answer <- victim.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM kpeople").Scan(&n)
			}()
			waitUntil("the statement waiting in the backend", func() bool { return waiting() == 1 })
			expectCode(t, "KILL QUERY by another user", bob, fmt.Sprintf("KILL QUERY %d", id), 1094)
			expectCode(t, "KILL QUERY of an unknown id", eve, "KILL QUERY 4000000000", 1094)
			if _, err := eve.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
				t.Fatalf("KILL QUERY: %v", err)
			}
			select {
			case err := <-answer:
				if me := (*gosqldriver.MySQLError)(nil); !errors.As(err, &me) || me.Number != 1317 {
					t.Errorf("killed statement: %v, want error 1317", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the killed statement did not end")
			}
			waitUntil("the backend statement to stop after KILL QUERY", func() bool { return waiting() == 0 })

			// The real mariadb client, interrupted as a user does with Ctrl-C.
			cli := startMariadbCLI(t, p, "SELECT COUNT(*) FROM kpeople")
			waitUntil("the mariadb client's statement waiting in the backend", func() bool { return waiting() == 1 })
			if err := cli.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			out := cli.wait(t)
			if !strings.Contains(out, "query killed") || !strings.Contains(out, "1317") {
				t.Errorf("mariadb client after Ctrl-C printed %q, want \"query killed\" and error 1317", out)
			}
			waitUntil("the backend statement to stop after Ctrl-C", func() bool { return waiting() == 0 })

			// A client that hangs up: go-sql-driver closes its socket when
			// the context of a query in flight ends.
			ctx, cancel := context.WithCancel(context.Background())
			hungUp := make(chan error, 1)
			go func() {
				var n float64
				hungUp <- eve.QueryRowContext(ctx, "SELECT COUNT(*) FROM kpeople").Scan(&n)
			}()
			waitUntil("the hanging-up client's statement waiting in the backend", func() bool { return waiting() == 1 })
			cancel()
			<-hungUp
			waitUntil("the backend statement to stop after the client hung up", func() bool { return waiting() == 0 })

			if _, err := lock.ExecContext(context.Background(), b.unlock); err != nil {
				t.Fatal(err)
			}
			var n float64
			if err := victim.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM kpeople").Scan(&n); err != nil {
				t.Errorf("the connection whose statement was killed: %v, want an answer", err)
			}
			if _, err := eve.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
				t.Fatalf("KILL CONNECTION: %v", err)
			}
			if err := victim.QueryRowContext(context.Background(), "SELECT 1").Scan(&n); err == nil {
				t.Errorf("a killed connection answered, want it closed")
			}
		})
	}
}

// startKillProxy starts the proxy on b's database with users eve and bob
// (password pw) and the table kpeople.
func startKillProxy(t *testing.T, b killBackend, dsn string) *proxyProcess {
	t.Helper()
	dir := t.TempDir()
	hash := wire.FormatNativePasswordHash(wire.NativePasswordHash("pw"))
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: eve, password_hash: %q, epsilon: 1000, delta: 0.5}
  - {name: bob, password_hash: %q, epsilon: 1000, delta: 0.5}
tables:
  - name: kpeople
    columns:
      - {name: id, type: integer, lower: 0, upper: 1000}
      - {name: age, type: integer, lower: 0, upper: 100}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), hash, hash)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProxy(t, dir, nil, "--config", config)
}

// expectCode runs query on db and requires MySQL error code.
func expectCode(t *testing.T, what string, db *sql.DB, query string, code uint16) {
	t.Helper()
	_, err := db.Exec(query)
	var me *gosqldriver.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Errorf("%s: %v, want error %d", what, err, code)
	}
}

// cliProcess is a mariadb client running one statement in batch mode.
type cliProcess struct {
	cmd *exec.Cmd
	out *bytes.Buffer
}

// startMariadbCLI starts the real mariadb client as eve running query.
func startMariadbCLI(t *testing.T, p *proxyProcess, query string) *cliProcess {
	t.Helper()
	path := mariadbPath(t)
	host, port, _ := net.SplitHostPort(p.addr)
	out := &bytes.Buffer{}
	cmd := exec.Command(path, "-h"+host, "-P"+port, "-ueve", "-ppw", "--ssl=0", "dpproxy", "-e", query)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return &cliProcess{cmd: cmd, out: out}
}

// wait waits up to 10 s for the client to exit and returns what it printed.
func (c *cliProcess) wait(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the mariadb client did not exit")
	}
	return c.out.String()
}
