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
