package main

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// charsetStatements are statements that compare latin1 text columns with
// the constant lit, in every form the proxy sends to the backend.
func charsetStatements(table, lit string) []string {
	return []string{
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE txt = '%s'", table, lit),
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE txt LIKE '%%%s%%'", table, lit),
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE txt IN ('a', '%s')", table, lit),
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE LEFT(txt, 1) = '%s'", table, lit),
		fmt.Sprintf("SELECT AVG(txt LIKE '%s%%') FROM %s", lit, table),
		fmt.Sprintf("SELECT SUM(CASE WHEN txt = '%s' THEN 1 ELSE 0 END) FROM %s", lit, table),
		fmt.Sprintf("SELECT grp, COUNT(*) FROM %s WHERE txt <> '%s' GROUP BY grp", table, lit),
	}
}

// TestOutOfCharsetLiteralOnMariaDB: on latin1 columns, a constant latin1
// cannot represent (😀, ā) is refused with MySQL's 1267 before anything
// is reserved, on an empty table and a filled one alike (the backend
// would fail the fetch whatever the data, after the reservation); the
// same statements with é, which latin1 has, answer and are charged; a
// utf8mb4 column compares with 😀.
func TestOutOfCharsetLiteralOnMariaDB(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	be := testdb.Open(t, "mysql", dsn)
	for _, table := range []string{"lat_empty", "lat_full"} {
		if _, err := be.Exec("CREATE TABLE " + table + " (txt VARCHAR(255) CHARACTER SET latin1, grp VARCHAR(10) CHARACTER SET latin1, u VARCHAR(255) CHARACTER SET utf8mb4, age INT)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := be.Exec("INSERT INTO lat_full VALUES ('a', 'a', 'a', 1), ('é', 'é', '😀', 2), ('x', NULL, NULL, 3)"); err != nil {
		t.Fatal(err)
	}
	var tables strings.Builder
	for _, table := range []string{"lat_empty", "lat_full"} {
		fmt.Fprintf(&tables, `  - name: %s
    columns:
      - {name: txt, type: text}
      - {name: grp, type: text, values: [a, é]}
      - {name: u, type: text}
      - {name: age, type: integer, lower: 0, upper: 100}
`, table)
	}
	_, db := startCarolProxy(t, "mysql", dsn, "{default_epsilon: 0.1, max_epsilon: 1}", "epsilon: 10, delta: 0", tables.String())

	remaining := 10.0
	for _, table := range []string{"lat_empty", "lat_full"} {
		for _, lit := range []string{"😀", "ā"} {
			for _, q := range charsetStatements(table, lit) {
				err := drain(db, q)
				if mysqlCode(err) != 1267 || !strings.Contains(err.Error(), "Illegal mix of collations (latin1_swedish_ci,IMPLICIT)") {
					t.Errorf("%s: got %v, want error 1267 naming latin1_swedish_ci", q, err)
				}
				checkRemaining(t, db, remaining)
			}
		}
		for _, q := range append(charsetStatements(table, "é"), fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE u = 'x😀'", table)) {
			if err := drain(db, q); err != nil {
				t.Errorf("%s: %v", q, err)
				continue
			}
			remaining -= 0.1
			checkRemaining(t, db, remaining)
		}
	}
}

// drain runs q and reads all its rows.
func drain(db *sql.DB, q string) error {
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

// TestOutOfEncodingLiteralOnPostgres: in a PostgreSQL database encoded
// LATIN1 (ISO 8859-1), a text constant with a character the encoding
// lacks (€, 😀) cannot be bound, whatever the data; it is refused with
// 1267 before anything is reserved, and é, which LATIN1 has, answers. An
// SQL_ASCII database converts nothing and binds every constant.
func TestOutOfEncodingLiteralOnPostgres(t *testing.T) {
	for _, c := range []struct {
		encoding string
		refused  []string
	}{
		{"LATIN1", []string{"€", "😀"}},
		{"SQL_ASCII", nil},
	} {
		t.Run(c.encoding, func(t *testing.T) {
			dsn := testdb.PostgresDatabaseDSN(t, c.encoding)
			be := testdb.Open(t, "postgres", dsn)
			if _, err := be.Exec("CREATE TABLE lat (txt TEXT, grp TEXT, age INT); INSERT INTO lat VALUES ('a', 'a', 1), ('é', 'é', 2)"); err != nil {
				t.Fatal(err)
			}
			_, db := startCarolProxy(t, "postgres", dsn, "{default_epsilon: 0.1, max_epsilon: 1}", "epsilon: 10, delta: 0", `  - name: lat
    columns:
      - {name: txt, type: text}
      - {name: grp, type: text, values: [a, é]}
      - {name: age, type: integer, lower: 0, upper: 100}
`)
			remaining := 10.0
			for _, lit := range c.refused {
				for _, q := range charsetStatements("lat", lit) {
					err := drain(db, q)
					if mysqlCode(err) != 1267 || !strings.Contains(err.Error(), "encoding LATIN1") {
						t.Errorf("%s: got %v, want error 1267 naming LATIN1", q, err)
					}
					checkRemaining(t, db, remaining)
				}
			}
			answered := charsetStatements("lat", "é")
			if c.refused == nil {
				answered = append(answered, charsetStatements("lat", "😀")...)
			}
			for _, q := range answered {
				if err := drain(db, q); err != nil {
					t.Errorf("%s: %v", q, err)
					continue
				}
				remaining -= 0.1
				checkRemaining(t, db, remaining)
			}
		})
	}
}

// TestLatin1ClientRefusedBeforeCharge: dpproxy reads statements and sends
// text as utf8mb4 only. A client that logs in with a latin1 handshake
// (go-sql-driver's collation=latin1_swedish_ci: id 8, no SET NAMES) is
// let in and told the truth (@@character_set_client and the others say
// utf8mb4); the latin1 bytes it sends for é and ñ, in a statement's text,
// a prepared statement's or a text argument, are refused with MariaDB's
// 1300 before anything is reserved (they gave 1105, or were charged with
// the column named '?'); SET NAMES latin1 and the character_set variables
// set to latin1 are refused with 1235; UTF-8 text is answered and charged,
// its column named as sent. go-sql-driver with charset=latin1 cannot
// connect; with charset=latin1,utf8mb4 it falls back to utf8mb4.
func TestLatin1ClientRefusedBeforeCharge(t *testing.T) {
	p := startProxy(t, "", nil)
	db, err := sql.Open("mysql", fmt.Sprintf("demo:demo@tcp(%s)/dpproxy?timeout=10s&collation=latin1_swedish_ci", p.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	const readCharsets = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results"
	var charsets [3]string
	readSession := func() string {
		t.Helper()
		if err := db.QueryRow(readCharsets).Scan(&charsets[0], &charsets[1], &charsets[2]); err != nil {
			t.Fatal(err)
		}
		return strings.Join(charsets[:], " ")
	}
	if got := readSession(); got != "utf8mb4 utf8mb4 utf8mb4" {
		t.Errorf("after a latin1 handshake: %s, want utf8mb4 throughout", got)
	}
	remaining := 100.0
	checkRemaining(t, db, remaining)

	refused := func(what string, err error, code uint16) {
		t.Helper()
		if mysqlCode(err) != code {
			t.Errorf("%s: got %v, want error %d", what, err, code)
		}
		checkRemaining(t, db, remaining)
		if got := readSession(); got != "utf8mb4 utf8mb4 utf8mb4" {
			t.Errorf("after %s: %s, want utf8mb4 throughout", what, got)
		}
	}
	// é and ñ in latin1: 0xE9, 0xF1.
	refused("latin1 constant and alias", drain(db, "SELECT 'caf\xe9' AS `\xe9`, HEX('\xe9')"), 1300)
	refused("latin1 alias of a private count", drain(db, "SELECT COUNT(*) AS `\xf1` FROM pums"), 1300)
	refused("latin1 alias of a grouped count", drain(db, "SELECT sex AS `s\xe9x`, COUNT(*) FROM pums GROUP BY sex"), 1300)
	_, err = db.Prepare("SELECT COUNT(*) AS `\xf1` FROM pums WHERE age > ?")
	refused("latin1 prepared text", err, 1300)
	var n float64
	refused("latin1 text argument", db.QueryRow("SELECT COUNT(*) AS n FROM pums WHERE age > ? OR age = 0", "caf\xe9").Scan(&n), 1300)
	for _, q := range []string{
		"SET NAMES latin1",
		"SET NAMES latin1 COLLATE latin1_swedish_ci",
		"SET CHARACTER SET latin1",
		"SET character_set_client = latin1",
		"SET character_set_results = latin1",
		"SET character_set_connection = 'latin1', autocommit = 1",
	} {
		_, err := db.Exec(q)
		refused(q, err, 1235)
	}

	// UTF-8 text is answered and charged, its alias as sent.
	rows, err := db.Query("SELECT COUNT(*) AS `ñ` FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil || len(cols) != 1 || cols[0] != "ñ" {
		t.Errorf("UTF-8 alias: got %q (%v), want ñ", cols, err)
	}
	remaining -= 0.1
	checkRemaining(t, db, remaining)

	for _, c := range []struct {
		charset string
		code    uint16
	}{{"latin1", 1235}, {"latin1,utf8mb4", 0}} {
		other, err := sql.Open("mysql", fmt.Sprintf("demo:demo@tcp(%s)/dpproxy?timeout=10s&charset=%s", p.addr, c.charset))
		if err != nil {
			t.Fatal(err)
		}
		err = other.Ping()
		other.Close()
		if mysqlCode(err) != c.code || (c.code == 0 && err != nil) {
			t.Errorf("DSN charset=%s: got %v, want error %d", c.charset, err, c.code)
		}
	}
}
