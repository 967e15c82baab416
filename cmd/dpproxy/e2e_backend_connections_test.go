package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestBackendConnectionLimits: on PostgreSQL and MariaDB, the proxy's
// backend login may hold 4 connections, and the proxy is configured with
// backend.max_open_connections 3 and backend.max_user_connections 2. Six
// statements of alice on a locked table wait, two of them in the backend
// and four for her turn; bob's statement on another table answers
// meanwhile; carol's on the locked table takes the last connection, and
// /healthz still answers (over the control connection); once the table is
// unlocked all of alice's and carol's statements answer. Before,
// the proxy opened a backend connection per statement: past the login's
// limit alice's and bob's statements failed with 1105 (the log showing
// "too many connections"), and a burst from one analyst took every
// connection the backend allowed.
func TestBackendConnectionLimits(t *testing.T) {
	for _, b := range killBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			for _, s := range []string{
				"CREATE TABLE kpeople (id BIGINT, age BIGINT)", "INSERT INTO kpeople VALUES (1, 30), (2, 40), (3, 50)",
				"CREATE TABLE kother (id BIGINT, age BIGINT)", "INSERT INTO kother VALUES (1, 30), (2, 40)",
			} {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			limited := testdb.LimitedLogin(t, b.driver, dsn, 4)
			p := startLimitsProxy(t, b, limited)
			alice := p.connect(t, "alice", "pw")
			bob := p.connect(t, "bob", "pw")
			carol := p.connect(t, "carol", "pw")
			count := func(db *sql.DB, ctx context.Context, table string) error {
				var n float64
				return db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
			}
			// Each table's schema check is done before the lock, which
			// would make it wait too.
			for _, table := range []string{"kpeople", "kother"} {
				if err := count(alice, context.Background(), table); err != nil {
					t.Fatalf("%s before the lock: %v", table, err)
				}
			}
			waiting := func() int {
				var n int
				if err := db.QueryRow(b.waiting).Scan(&n); err != nil {
					t.Fatalf("backend activity: %v", err)
				}
				return n
			}

			lock := holdLock(t, db, b.lock)
			unlocked := false
			defer func() {
				if !unlocked {
					_, _ = lock.ExecContext(context.Background(), b.unlock)
				}
			}()

			answers := make(chan error, 7)
			for range 6 {
				go func() { answers <- count(alice, context.Background(), "kpeople") }()
			}
			for deadline := time.Now().Add(10 * time.Second); waiting() < 2; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("alice's statements not waiting in the backend after 10 s")
				}
			}
			time.Sleep(300 * time.Millisecond)
			select {
			case err := <-answers:
				t.Fatalf("one of alice's statements ended while the table is locked: %v", err)
			default:
			}
			if n := waiting(); n != 2 {
				t.Errorf("%d of alice's statements in the backend, want 2 (backend.max_user_connections)", n)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := count(bob, ctx, "kother"); err != nil {
				t.Errorf("bob's statement while alice's wait: %v, want an answer", err)
			}

			go func() { answers <- count(carol, context.Background(), "kpeople") }()
			for deadline := time.Now().Add(10 * time.Second); waiting() < 3; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("carol's statement not waiting in the backend after 10 s")
				}
			}
			if got := httpGet(t, "http://"+p.metricsAddr+"/healthz"); strings.TrimSpace(got) != "ok" {
				t.Errorf("/healthz with every backend connection taken: %q, want ok", got)
			}

			if _, err := lock.ExecContext(context.Background(), b.unlock); err != nil {
				t.Fatal(err)
			}
			unlocked = true
			for range 7 {
				select {
				case err := <-answers:
					if err != nil {
						t.Errorf("a statement on kpeople: %v, want an answer", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the statements on kpeople did not answer after the unlock")
				}
			}
			if logs := p.Logs(); strings.Contains(logs, "backend fetch failed") {
				t.Errorf("the proxy logged backend failures:\n%s", logs)
			}
		})
	}
}

// startLimitsProxy starts the proxy on dsn (b's database) with users
// alice, bob and carol (password pw), the tables kpeople and kother, and at most
// 3 backend connections, 2 for one analyst.
func startLimitsProxy(t *testing.T, b killBackend, dsn string) *proxyProcess {
	t.Helper()
	dir := t.TempDir()
	hash := wire.FormatNativePasswordHash(wire.NativePasswordHash("pw"))
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q, max_open_connections: 3, max_user_connections: 2}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 0.1, max_epsilon: 10, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: alice, password_hash: %q, epsilon: 1000, delta: 0.5}
  - {name: bob, password_hash: %q, epsilon: 1000, delta: 0.5}
  - {name: carol, password_hash: %q, epsilon: 1000, delta: 0.5}
tables:
  - name: kpeople
    columns:
      - {name: id, type: integer, lower: 0, upper: 1000}
      - {name: age, type: integer, lower: 0, upper: 100}
  - name: kother
    columns:
      - {name: id, type: integer, lower: 0, upper: 1000}
      - {name: age, type: integer, lower: 0, upper: 100}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), hash, hash, hash)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProxy(t, dir, nil, "--config", config)
}
