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

// LongCJKUnitIDs creates, in MariaDB database db, the table lv3 (pid
// utf8mb4_general_ci, amt INT) of the unit-bound tests: two persons of
// 400 rows each whose ids are 7,000 three-byte characters and a letter
// (21,001 bytes, 7,001 characters, a weight string of 14,002 bytes: over
// the 16 KiB sort key in bytes only), and 200 persons of one row with
// short ids. A fetch that bounds persons by their ids counts the 200
// short ids alone.
func LongCJKUnitIDs(t testing.TB, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"CREATE TABLE lv3 (pid VARCHAR(16000) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, amt INT)",
		"INSERT INTO lv3 SELECT CONCAT(REPEAT(_utf8mb4 0xE4B8AD, 7000), IF(seq % 2 = 0, 'A', 'B')), seq % 100 FROM seq_1_to_800",
		"INSERT INTO lv3 SELECT CONCAT('c', seq), 1 FROM seq_1_to_200",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}
