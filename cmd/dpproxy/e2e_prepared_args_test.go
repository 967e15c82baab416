package main

import (
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// boundRows runs q with args through the binary protocol (go-sql-driver
// prepares it on the server) and returns its rows as text.
func boundRows(db *sql.DB, q string, args ...any) ([][]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		r := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range r {
			dest[i] = &r[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range r {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// TestPreparedArgumentsAsMariaDB runs, through the proxy over MariaDB and
// on MariaDB 10.11 itself, statements whose prepared arguments MariaDB
// reads by their type:
//
//   - EXECUTE ... USING a DOUBLE user variable binds a DOUBLE: ROUND(?)
//     of 2.5 is 2 and ? * 3 of 0.1 is 0.30000000000000004, in a private
//     statement too (they were 3 and 0.3, the variable bound as a
//     decimal); a DATETIME variable (NOW(), UTC_TIMESTAMP(), TIMESTAMP())
//     binds as one (it was bound bare: 1064).
//   - LIMIT ? reads its argument unsigned, a DOUBLE rounded half to even:
//     -1 keeps every row, 2.5 two, 0.4 none (-1 and 2.5 were 1064).
//   - k = -? with the BIGINT -9223372036854775808 is 1690 (22003), before
//     anything is charged (it was answered and charged); the text forms
//     k = -(-9223372036854775808) and k = - -9223372036854775808, which
//     MariaDB answers, are answered.
func TestPreparedArgumentsAsMariaDB(t *testing.T) {
	load := []string{"CREATE TABLE tq (k INT)", "INSERT INTO tq VALUES (1), (2), (3), (4), (5)"}
	ref := testdb.Open(t, "mysql", testdb.MySQLDSN(t))
	ref.SetMaxOpenConns(1)
	execAll(t, ref, load)
	dsn := testdb.MySQLDSN(t)
	execAll(t, testdb.Open(t, "mysql", dsn), load)
	_, db := startCarolProxy(t, "mysql", dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `  - name: tq
    columns:
      - {name: k, type: integer, lower: 0, upper: 10}
`)
	both := func(q string) (got, want string) {
		t.Helper()
		g, err := queryText(db, q)
		if err != nil {
			t.Fatalf("proxy: %s: %v", q, err)
		}
		return fmt.Sprint(g), fmt.Sprint(textRows(t, ref, q))
	}
	for _, q := range []string{"SET @v = 2.5e0, @w = 0.1e0",
		"PREPARE s FROM 'SELECT ROUND(?) AS r, ? * 3 AS m'", "PREPARE p FROM 'SELECT ROUND(?) AS r, ? * 3 AS m, COUNT(*) * 0 + ? AS z FROM tq'",
		"PREPARE c FROM 'SELECT ? AS a'"} {
		both(q)
	}
	for _, q := range []string{"EXECUTE s USING @v, @w", "EXECUTE p USING @v, @w, @w"} {
		if got, want := both(q); got != want {
			t.Errorf("%s: got %s, want MariaDB's %s", q, got, want)
		}
	}
	for _, set := range []string{"SET @t = TIMESTAMP('2024-01-02 03:04:05')", "SET @t = NOW()", "SET @t = UTC_TIMESTAMP()"} {
		both(set)
		if _, err := queryText(db, "EXECUTE c USING @t"); err != nil {
			t.Errorf("%s; EXECUTE c USING @t: %v", set, err)
		}
	}
	both("SET @t = TIMESTAMP('2024-01-02 03:04:05')")
	if got, want := both("EXECUTE c USING @t"); got != want {
		t.Errorf("EXECUTE c USING @t: got %s, want MariaDB's %s", got, want)
	}

	q := "SELECT COUNT(*) AS n FROM tq LIMIT ?"
	for _, arg := range []any{int64(-1), 2.5, 0.4, 2.9} {
		got, err := boundRows(db, q, arg)
		want, werr := boundRows(ref, q, arg)
		if werr != nil {
			t.Fatalf("MariaDB: %s with %v: %v", q, arg, werr)
		}
		if err != nil || len(got) != len(want) {
			t.Errorf("%s with %v: %v %v, want MariaDB's %d rows", q, arg, got, err, len(want))
		}
	}

	remaining := func() float64 {
		t.Helper()
		var r float64
		if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := remaining()
	for _, q := range []string{"SELECT COUNT(*) FROM tq WHERE k = -?", "SELECT COUNT(*) FROM tq WHERE k = -(-?)"} {
		_, err := boundRows(db, q, int64(math.MinInt64))
		_, werr := boundRows(ref, q, int64(math.MinInt64))
		if mysqlCode(werr) != 1690 {
			t.Fatalf("MariaDB: %s: %v, want 1690", q, werr)
		}
		if mysqlCode(err) != 1690 {
			t.Errorf("%s with %d: %v, want 1690 as MariaDB", q, int64(math.MinInt64), err)
		}
	}
	if after := remaining(); after != before {
		t.Errorf("the 1690s moved dp_remaining_epsilon() from %g to %g", before, after)
	}
	for _, q := range []string{"SELECT COUNT(*) FROM tq WHERE k = -(-9223372036854775808)", "SELECT COUNT(*) FROM tq WHERE k = - -9223372036854775808"} {
		textRows(t, ref, q)
		if _, err := queryText(db, q); err != nil {
			t.Errorf("%s: %v, want an answer as MariaDB's", q, err)
		}
	}
}
