package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
	_ "github.com/go-sql-driver/mysql"
)

// binary is the dpproxy executable built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dpproxy-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "dpproxy")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dpproxy:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proxyProcess is a running dpproxy.
type proxyProcess struct {
	cmd         *exec.Cmd
	addr        string
	metricsAddr string // /metrics and /healthz
	dir         string
	mu          sync.Mutex
	logs        bytes.Buffer
	done        chan struct{}
}

func (p *proxyProcess) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.Write(b)
}

// Logs returns what the proxy has logged so far.
func (p *proxyProcess) Logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// startProxy runs dpproxy in dir (a fresh temporary directory if empty) with
// args plus free loopback --listen and --metrics-listen addresses, and
// waits until it accepts.
func startProxy(t *testing.T, dir string, env []string, args ...string) *proxyProcess {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	addrs := freeAddrs(t, 2)
	p := &proxyProcess{addr: addrs[0], metricsAddr: addrs[1], dir: dir, done: make(chan struct{})}
	p.cmd = exec.Command(binary, append(args, "--listen", p.addr, "--metrics-listen", p.metricsAddr)...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("proxy log:\n%s", p.Logs())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("dpproxy exited at start:\n%s", p.Logs())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dpproxy did not listen on %s:\n%s", p.addr, p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends sig and waits for the process to exit.
func (p *proxyProcess) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// freeAddrs returns n distinct loopback addresses that were free a moment ago.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		// Each listener stays open until all are picked, so that the n
		// addresses differ (one closed at once could be handed out again).
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// connect opens a go-sql-driver pool to the proxy as user/password.
func (p *proxyProcess) connect(t *testing.T, user, password string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/dpproxy?timeout=10s", user, password, p.addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mariadbPath returns the path of the real mariadb client, skipping the
// test where it is not installed (failing it under CI, which installs it).
func mariadbPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("mariadb")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the mariadb client is not installed (CI must install it)")
		}
		t.Skip("the mariadb client is not installed")
	}
	return path
}

// mariadbCLI runs the real mariadb client in batch mode and returns its stdout.
func (p *proxyProcess) mariadbCLI(t *testing.T, user, password string, extra ...string) (string, error) {
	t.Helper()
	path := mariadbPath(t)
	host, port, _ := net.SplitHostPort(p.addr)
	args := append([]string{"-h" + host, "-P" + port, "-u" + user, "-p" + password, "--ssl=0"}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// visitsBackend is a backend the end-to-end tests over demo.Visits run on.
type visitsBackend struct {
	name, driver string
	dsn          func(testing.TB) string
}

// visitsBackends are SQLite, PostgreSQL and MariaDB.
var visitsBackends = []visitsBackend{
	{"sqlite", "sqlite", testdb.SQLiteDSN},
	{"postgres", "postgres", testdb.PostgresDSN},
	{"mariadb", "mysql", testdb.MySQLDSN},
}

// load creates table, and each table of also, in the backend's test
// database from rows (demo.LoadVisits) and returns the database's DSN.
// A table with a privacy unit and a row-level one over the same rows
// need two copies: one configuration may not read one relation under
// two units.
func (b visitsBackend) load(t *testing.T, table string, rows []demo.VisitRow, also ...string) string {
	dsn := b.dsn(t)
	db := testdb.Open(t, b.driver, dsn)
	for _, name := range append([]string{table}, also...) {
		if err := demo.LoadVisits(t.Context(), db, b.driver, name, rows); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

// startCarolProxy writes a configuration of a backend (driver, dsn), a
// SQLite ledger in a fresh directory, the privacy line privacy (e.g.
// "{default_epsilon: 1, max_epsilon: 50}"), the one user carol (password
// carol-pw) with the budget user (e.g. "epsilon: 100, delta: 1.0e-5") and
// the YAML of tables (the list under tables:), starts the proxy on it, and
// returns the proxy and a session of carol on one connection.
func startCarolProxy(t *testing.T, driver, dsn, privacy, user, tables string) (*proxyProcess, *sql.DB) {
	t.Helper()
	dir := t.TempDir()
	config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: %s, dsn: %q", driver, dsn), privacy, user, tables)
	p := startProxy(t, dir, nil, "--config", config)
	db := p.connect(t, "carol", "carol-pw")
	db.SetMaxOpenConns(1)
	return p, db
}

// carolConfig writes, as startCarolProxy does, the configuration file
// name in dir, its backend the YAML mapping's body backend (e.g. "driver:
// sqlite, dsn: ..."), its ledger dir/ledger.db, and returns its path.
func carolConfig(t *testing.T, dir, name, backend, privacy, user, tables string) string {
	t.Helper()
	config := filepath.Join(dir, name)
	yaml := fmt.Sprintf("backend: {%s}\nledger: {driver: sqlite, dsn: %q}\nprivacy: %s\nusers:\n  - {name: carol, password_hash: %q, %s}\ntables:\n%s",
		backend, filepath.Join(dir, "ledger.db"), privacy, wire.FormatNativePasswordHash(wire.NativePasswordHash("carol-pw")), user, tables)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// execAll runs each statement on db, failing the test at the first error.
func execAll(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%.200s: %v", s, err)
		}
	}
}

// connectAtHighEpsilon starts a proxy over the backend (driver, dsn) with
// the tables YAML (the list under tables:, indented by two spaces) at
// ε = 100 a statement, a SQLite ledger (in memory where it can: memoryDir)
// and one analyst, eve, whose budget
// never runs out, and returns eve's single connection: for tests that
// compare outcomes on neighbouring rows, where noise must be negligible.
func connectAtHighEpsilon(t *testing.T, driver, dsn, tables string) *sql.DB {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 100, max_epsilon: 100, default_delta: 1.0e-6, max_delta: 1.0e-4}
users:
  - {name: eve, password_hash: %q, epsilon: 1.0e+12, delta: 0.5}
tables:
%s`, driver, dsn, filepath.Join(memoryDir(t), "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("pw")), tables)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, dir, nil, "--config", config)
	conn := p.connect(t, "eve", "pw")
	conn.SetMaxOpenConns(1)
	return conn
}

// memoryDir returns a fresh directory in memory (under /dev/shm) where
// there is one, else on disk: the ledger syncs each statement's charge to
// its file, which on disk takes most of the time of tests that send
// thousands of statements, and is not what they test.
func memoryDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "dpproxy-ledger")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// holdLock runs the statements (a transaction that takes a table lock) on
// a connection of its own and returns it, closed at the test's end: the
// backend queries of statements that read the table then wait for it.
func holdLock(t *testing.T, db *sql.DB, stmts []string) *sql.Conn {
	t.Helper()
	lock, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	for _, s := range stmts {
		if _, err := lock.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return lock
}
