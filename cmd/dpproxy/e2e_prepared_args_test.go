package main

import (
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

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
//   - a DECIMAL argument of LIMIT ? rounds half away from zero and a
//     string reads as its leading integer (they were 1064 and 1210);
//     EXECUTE ... USING reads a DOUBLE variable truncated, a string by
//     its leading integer, a negative one as 1210 (1064 before).
//   - k = -? with the BIGINT -9223372036854775808 is 1690 (22003), before
//     anything is charged (it was answered and charged), through
//     EXECUTE ... USING too; the text forms
//     k = -(-9223372036854775808) and k = - -9223372036854775808, which
//     MariaDB answers, are answered.
func TestPreparedArgumentsAsMariaDB(t *testing.T) {
	load := []string{"CREATE TABLE tq (k INT)", "INSERT INTO tq VALUES (1), (2), (3), (4), (5)"}
	refDSN := testdb.MySQLDSN(t)
	ref := testdb.Open(t, "mysql", refDSN)
	ref.SetMaxOpenConns(1)
	execAll(t, ref, load)
	dsn := testdb.MySQLDSN(t)
	execAll(t, testdb.Open(t, "mysql", dsn), load)
	p, db := startCarolProxy(t, "mysql", dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `  - name: tq
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
	for _, arg := range []any{int64(-1), 2.5, 0.4, 2.9, "0", "2", "abc", "-1"} {
		got, err := boundRows(db, q, arg)
		want, werr := boundRows(ref, q, arg)
		if werr != nil {
			t.Fatalf("MariaDB: %s with %v: %v", q, arg, werr)
		}
		if err != nil || len(got) != len(want) {
			t.Errorf("%s with %v: %v %v, want MariaDB's %d rows", q, arg, got, err, len(want))
		}
	}

	// A DECIMAL argument (go-sql-driver sends none) rounds half away
	// from zero: 0.5 keeps the row, 0.4 none.
	cfg, err := mysql.ParseDSN(refDSN)
	if err != nil {
		t.Fatal(err)
	}
	ref2 := dialClient(t, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName)
	pc := dialClient(t, p.addr, "carol", "carol-pw", "dpproxy")
	for _, dec := range []string{"0.5", "0.4", "-0.5"} {
		arg := gomysql.TypedBytes{Type: gomysql.MYSQL_TYPE_NEWDECIMAL, Bytes: []byte(dec)}
		want, werr := decimalLimitRows(ref2, q, arg)
		got, err := decimalLimitRows(pc, q, arg)
		if werr != nil || err != nil || got != want {
			t.Errorf("%s with DECIMAL %s: %d rows, %v, want MariaDB's %d (%v)", q, dec, got, err, want, werr)
		}
	}

	// EXECUTE ... USING reads LIMIT's variable as MariaDB does: a DOUBLE
	// truncated, a string by its leading integer, a negative value 1210.
	both("PREPARE l FROM 'SELECT COUNT(*) AS n FROM tq LIMIT ?'")
	for _, v := range []string{"0.9e0", "1.5e0", "0.5", "0.4", "'1'", "'abc'", "NULL", "-1e0", "-1", "'-1'"} {
		both("SET @l = " + v)
		g, err := queryText(db, "EXECUTE l USING @l")
		w, werr := queryText(ref, "EXECUTE l USING @l")
		if mysqlCode(err) != mysqlCode(werr) || len(g) != len(w) {
			t.Errorf("SET @l = %s; EXECUTE l USING @l: %d rows, %v, want MariaDB's %d, %v", v, len(g), err, len(w), werr)
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
	both("SET @m = -9223372036854775808")
	both("PREPARE m FROM 'SELECT COUNT(*) FROM tq WHERE k = -?'")
	if _, werr := queryText(ref, "EXECUTE m USING @m"); mysqlCode(werr) != 1690 {
		t.Fatalf("MariaDB: EXECUTE m USING @m: %v, want 1690", werr)
	}
	if _, err := queryText(db, "EXECUTE m USING @m"); mysqlCode(err) != 1690 {
		t.Errorf("EXECUTE m USING @m: %v, want 1690 as MariaDB", err)
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

// decimalLimitRows runs q, prepared on c, with the one argument arg and
// returns its rows.
func decimalLimitRows(c *client.Conn, q string, arg any) (int, error) {
	st, err := c.Prepare(q)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	r, err := st.Execute(arg)
	if err != nil {
		return 0, err
	}
	return len(r.Values), nil
}
