package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestVitessShardKeyConstants: behind Vitess, a COUNT(*) filtered by =
// or IN on the table's sharding column answers what the MariaDB backend
// answers for the same rows, whatever the constants' form. The table is
// sharded by a hash vindex on big, a BIGINT holding 9007199254740980 to
// 9007199254741010 (around 2^53), 2 and -5. The proxy sent
// `big` = 9.007199254740992e+15 for big = 9007199254740992e0, for big =
// '9007199254740992' and for a prepared big = ? bound to a float64;
// vtgate's hash vindex read that literal as no integer and sent the
// COUNT(*) to one shard chosen at random (0 or the count), and
// big IN (9007199254740990e0, 9007199254740992e0) to no shard at all (0;
// an independent review). Such constants are now sent as closed ranges,
// which vtgate sends to every shard; integers still route. At ε = 90
// the noise is 0 but with probability e^-45; each statement runs five
// times, as a random shard is right half the time.
func TestVitessShardKeyConstants(t *testing.T) {
	dsn, _ := vitessServer(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["workload"] = "olap"
	olap, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { olap.Close() })
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	table := "w3_" + hex.EncodeToString(b[:])
	ctx := t.Context()
	exec := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.100s: %v", q, err)
		}
	}
	exec(olap, "ALTER VSCHEMA ON "+table+" ADD VINDEX hash(big) USING hash")
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE IF EXISTS " + table, "ALTER VSCHEMA DROP TABLE " + table} {
			if _, err := olap.ExecContext(context.Background(), q); err != nil {
				t.Errorf("cleanup: %s: %v", q, err)
			}
		}
	})
	refDSN := testdb.MySQLDSN(t) // the MariaDB backend, the same rows
	ref := testdb.Open(t, "mysql", refDSN)
	count := map[int64]int64{}
	var rows []string
	id := 0
	add := func(v int64, n int) {
		for range n {
			id++
			rows = append(rows, fmt.Sprintf("(%d, %d)", id, v))
		}
		count[v] += int64(n)
	}
	for v := int64(9007199254740980); v <= 9007199254741010; v++ {
		add(v, 1+int(v%5))
	}
	add(2, 3)
	add(-5, 2)
	for _, db := range []*sql.DB{olap, ref} {
		exec(db, "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, big BIGINT)")
		exec(db, "INSERT INTO "+table+" (id, big) VALUES "+strings.Join(rows, ", "))
	}

	const p53 = 9007199254740992
	statements := []struct {
		where string
		args  []any
		want  int64
	}{
		{"big = 9007199254740992e0", nil, count[p53]},
		{"big = '9007199254740992'", nil, count[p53]},
		{"big = ?", []any{float64(p53)}, count[p53]},
		{"big IN (9007199254740990e0, 9007199254740992e0)", nil, count[p53-2] + count[p53]},
		{"big IN (?, ?)", []any{float64(p53 - 2), float64(p53)}, count[p53-2] + count[p53]},
		{"big IN (9007199254740992e0, 5.5e0)", nil, count[p53]},
		{"big IN (2, 9007199254741010e0)", nil, count[2] + count[p53+18]},
		{"big = 9007199254740992", nil, count[p53]},
		{"big IN (9007199254740990, 9007199254740992)", nil, count[p53-2] + count[p53]},
		{"big = -5e0", nil, count[-5]},
		{"big = 2.0", nil, count[2]},
		{"big IN (1.5, 2)", nil, count[2]},
		{"big = 5.5e0", nil, 0},
		{"big <> 9007199254740992e0", nil, int64(id) - count[p53]},
	}
	dir := t.TempDir()
	answers := func(backend string, dsn string) []int64 {
		t.Helper()
		config := filepath.Join(dir, backend+".yaml")
		yaml := fmt.Sprintf(`
backend: {driver: mysql, dsn: %q, isolation: none}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 100, default_delta: 1.0e-7, max_delta: 1.0e-4}
users:
  - {name: vera, password_hash: %q, epsilon: 100000, delta: 0.5}
tables:
  - name: w3
    source: %s
    columns:
      - {name: big, type: integer, lower: -10, upper: 9007199254741010}
`, dsn, filepath.Join(dir, backend+"-ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("vera-pw")), table)
		if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startProxy(t, dir, nil, "--config", config)
		db := p.connect(t, "vera", "vera-pw")
		db.SetMaxOpenConns(1)
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SET @dp_epsilon = 90"); err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, s := range statements {
			q := "SELECT COUNT(*) FROM w3 WHERE " + s.where
			for range 5 {
				var n int64
				if err := conn.QueryRowContext(ctx, q, s.args...).Scan(&n); err != nil {
					t.Fatalf("%s: %s %v: %v", backend, q, s.args, err)
				}
				if n != s.want {
					t.Errorf("%s: %s %v = %d, want %d", backend, q, s.args, n, s.want)
				}
				out = append(out, n)
			}
		}
		return out
	}
	vitess := answers("vitess", cfg.FormatDSN())
	mariadb := answers("mariadb", refDSN)
	if fmt.Sprint(vitess) != fmt.Sprint(mariadb) {
		t.Errorf("Vitess answered %v, MariaDB %v", vitess, mariadb)
	}
}
