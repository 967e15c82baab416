package testdb

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// MySQLDSN creates a fresh database dpproxy_t_<random> (utf8mb4) on the server
// of DPPROXY_TEST_MYSQL_DSN and returns a DSN that uses it; the database is
// dropped when the test ends. It skips the test when the variable is unset and
// fails it when the server cannot be reached.
func MySQLDSN(t testing.TB) string {
	t.Helper()
	server := serverDSN(t, MySQLEnv)
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		t.Fatalf("testdb: %s: %v", MySQLEnv, err)
	}
	admin := Open(t, "mysql", server)
	name := freshName(t)
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatalf("testdb: create database %s: %v", name, err)
	}
	dropOnCleanup(t, admin, "DROP DATABASE "+name)
	cfg.DBName = name
	return cfg.FormatDSN()
}

// MySQL opens a fresh MySQL/MariaDB database (see MySQLDSN), closed and
// dropped when the test ends.
func MySQL(t testing.TB) *sql.DB {
	t.Helper()
	return Open(t, "mysql", MySQLDSN(t))
}
