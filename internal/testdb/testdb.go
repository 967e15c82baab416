// Package testdb gives tests real databases to run against, each isolated in
// a schema or database of its own that is dropped when the test ends.
//
// PostgreSQL and MySQL/MariaDB come from the servers named by the environment
// variables DPPROXY_TEST_POSTGRES_DSN and DPPROXY_TEST_MYSQL_DSN. The rule for
// every integration test: when the variable is unset the test is skipped with
// a message; when it is set and the server cannot be reached the test fails,
// so that CI, which sets them, never passes by skipping. SQLite needs no
// server and always runs.
//
// The package registers the drivers "sqlite" (modernc.org/sqlite), "postgres"
// (github.com/lib/pq) and "mysql" (github.com/go-sql-driver/mysql).
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"
	_ "github.com/lib/pq"              // registers "postgres"
	_ "modernc.org/sqlite"             // registers "sqlite"
)

// The environment variables naming the test servers.
const (
	PostgresEnv = "DPPROXY_TEST_POSTGRES_DSN"
	MySQLEnv    = "DPPROXY_TEST_MYSQL_DSN"
)

// pingTimeout bounds how long a test waits for a server before failing.
const pingTimeout = 10 * time.Second

// dropTimeout bounds a test's cleanup DROP: dropping a PostgreSQL database
// checkpoints, which took more than pingTimeout on a loaded machine (a
// run with other builds and benchmarks beside it failed so).
const dropTimeout = time.Minute

// Open opens dsn with the named driver, fails the test if the database cannot
// be reached, and closes it when the test ends.
func Open(t testing.TB, driverName, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatalf("testdb: open %s: %v", driverName, err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("testdb: cannot reach the %s database: %v", driverName, err)
	}
	return db
}

// serverDSN returns the DSN in the environment variable, skipping the test
// when it is unset.
func serverDSN(t testing.TB, env string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn == "" {
		t.Skipf("%s is not set; skipping this integration test (set it to run against a real server)", env)
	}
	return dsn
}

// freshName returns a new schema or database name, dpproxy_t_ and 16 hex digits.
func freshName(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return "dpproxy_t_" + hex.EncodeToString(b[:])
}

// dropOnCleanup runs drop on admin when the test ends, after everything the
// test registered later (its connections) was closed, then closes admin.
func dropOnCleanup(t testing.TB, admin *sql.DB, drop string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		if _, err := admin.ExecContext(ctx, drop); err != nil {
			t.Errorf("testdb: %s: %v", drop, err)
		}
		admin.Close()
	})
}

// Strings reads every row of rows as text, NULL as "NULL", closing rows;
// what fails the test names query.
func Strings(t testing.TB, rows *sql.Rows, query string) [][]string {
	t.Helper()
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		dest := make([]any, len(vals))
		for i := range vals {
			dest[i] = &vals[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}
