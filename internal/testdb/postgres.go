package testdb

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"
)

// PostgresDSN creates a fresh schema on the server of DPPROXY_TEST_POSTGRES_DSN
// and returns a DSN whose search_path is that schema, so that unqualified
// tables are created and found there. The schema is dropped, with everything
// in it, when the test ends. It skips the test when the variable is unset and
// fails it when the server cannot be reached.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	server := serverDSN(t, PostgresEnv)
	admin := Open(t, "postgres", server)
	schema := freshName(t)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("testdb: create schema %s: %v", schema, err)
	}
	dropOnCleanup(t, admin, "DROP SCHEMA "+schema+" CASCADE")
	dsn, err := withSearchPath(server, schema)
	if err != nil {
		t.Fatalf("testdb: %s: %v", PostgresEnv, err)
	}
	return dsn
}

// Postgres opens a fresh PostgreSQL schema (see PostgresDSN), closed and
// dropped when the test ends.
func Postgres(t testing.TB) *sql.DB {
	t.Helper()
	return Open(t, "postgres", PostgresDSN(t))
}

// withSearchPath adds search_path=schema to a lib/pq DSN in URL or key=value
// form; lib/pq sends unknown keys to the server as run-time parameters.
func withSearchPath(dsn, schema string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// PostgresDatabaseDSN creates a fresh PostgreSQL database with the given
// server encoding (LATIN1, SQL_ASCII, ...) and the C locale, dropped when
// the test ends, and returns the DSN of DPPROXY_TEST_POSTGRES_DSN's
// server with that database; it skips the test when the variable is unset.
func PostgresDatabaseDSN(t testing.TB, encoding string) string {
	t.Helper()
	server := serverDSN(t, PostgresEnv)
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Skipf("testdb: %s is not a postgres:// URL; skipping this test", PostgresEnv)
	}
	admin := Open(t, "postgres", server)
	name := freshName(t)
	if _, err := admin.Exec("CREATE DATABASE " + name + " ENCODING '" + encoding + "' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'"); err != nil {
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	dropOnCleanup(t, admin, "DROP DATABASE "+name+" WITH (FORCE)")
	u.Path = "/" + name
	return u.String()
}
