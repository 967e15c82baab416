package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestFixedDecimalsAsMariaDB runs ROUND, TRUNCATE, FLOOR and CEIL of
// released DOUBLEs (AVG, SUM), and what is computed from them, through
// the proxy and the same statements on MariaDB over the same five rows
// (besideMariaDB's), and compares what each sends on the wire, through
// go-mysql's client, which keeps the bytes of each row: the type and
// decimals of each column, each cell's text in the text protocol, and
// each value in the binary protocol (the statement prepared). MariaDB
// writes a DOUBLE whose type fixes its decimals with them (ROUND(x, 2) is
// 1.00, FLOOR(x) 1000000000000000 without an exponent), and the binary
// protocol sends the double itself (ROUND(x, 2) / 3 is 0.333333 as text,
// 0.3333333333333333 in binary). Each released value appears as
// AVG(y) * 0 or SUM(y) * 0, so that the proxy's answers are exact.
func TestFixedDecimalsAsMariaDB(t *testing.T) {
	proxy, reference := besideMariaDBOnTheWire(t, fiveRows, fiveRowsTables)
	for _, q := range []string{
		"SELECT ROUND(AVG(y) * 0 + 1, 2), FLOOR(SUM(y) * 0 + 1e15), CEIL(AVG(y) * 0 + 1.5e15), ROUND(AVG(y) * 0 + 123.456, -1), TRUNCATE(AVG(y) * 0 + 1.23456, 3) FROM t",
		"SELECT FLOOR(AVG(y) * 0 + 1e20), CEIL(SUM(y) * 0 - 1e22), ROUND(AVG(y) * 0 + 1e300, 2), ROUND(AVG(y) * 0 + 2.675, 2), ROUND(AVG(y) * 0 - 0.001, 2), ROUND(AVG(y) * 0 + 2.5) FROM t",
		// Arithmetic keeps the most decimals of its operands, 4 more for /.
		"SELECT ROUND(AVG(y) * 0 + 1, 2) + 1, ROUND(AVG(y) * 0 + 1, 2) / 3, FLOOR(AVG(y) * 0 + 1) / 2, ROUND(AVG(y) * 0 + 1, 2) * 1.555, ROUND(AVG(y) * 0 + 1.23, 2) * 1.5, " +
			"-ROUND(AVG(y) * 0 + 1, 2), ABS(ROUND(AVG(y) * 0 - 1, 2)), ROUND(AVG(y) * 0 + 1, 2) + SQRT(AVG(y) * 0 + 4), ROUND(AVG(y) * 0 - 1, 2) / 3000000 FROM t",
		// IF, COALESCE and GREATEST take the most decimals of their
		// arguments.
		"SELECT IF(COUNT(*) * 0 = 0, ROUND(AVG(y) * 0 + 1, 2), 1.5), IF(COUNT(*) * 0 = 0, ROUND(AVG(y) * 0 + 1, 2), AVG(y) * 0), COALESCE(FLOOR(AVG(y) * 0 + 1e15), 0), GREATEST(ROUND(AVG(y) * 0 + 1, 2), 0) FROM t",
		// As text.
		"SELECT CONCAT(ROUND(AVG(y) * 0 + 1, 2)), CAST(FLOOR(AVG(y) * 0 + 1e15) AS CHAR), CONCAT(ROUND(AVG(y) * 0 + 44.6, 1), '%'), IF(COUNT(*) * 0 = 1, 'none', ROUND(AVG(y) * 0 + 1, 2)), CONCAT(ROUND(AVG(y) * 0 + 1, 2)) LIKE '1.00' FROM t",
		// Digits: constant ones fix the decimals (none from 31 on), others
		// leave the argument's.
		"SELECT ROUND(AVG(y) * 0 + 1, 1 + 1), ROUND(AVG(y) * 0 + 1, '2'), ROUND(AVG(y) * 0 + 1.5, 31), ROUND(AVG(y) * 0 + 1, 40), ROUND(AVG(y) * 0 + 1.25, COUNT(*) * 0 + 1), TRUNCATE(AVG(y) * 0 + 1.5, 30) FROM t",
		// Groups, WITH ROLLUP, window functions and an outer query.
		"SELECT i, ROUND(AVG(y) * 0 + i, 2), FLOOR(SUM(y) * 0 + i * 1e15) FROM t GROUP BY i",
		"SELECT i, SUM(ROUND(AVG(y) * 0 + 1.5, 1)) OVER (), AVG(ROUND(AVG(y) * 0 + 1, 2)) OVER (), MAX(FLOOR(AVG(y) * 0 + 1e15)) OVER () FROM t GROUP BY i",
		"SELECT SUM(a), AVG(a), MIN(a), STDDEV_POP(a), VAR_POP(n), AVG(f) FROM (SELECT i, ROUND(AVG(y) * 0 + i, 2) AS a, COUNT(*) * 0 + i AS n, FLOOR(AVG(y) * 0 + i) AS f FROM t GROUP BY i) AS s",
	} {
		for _, binary := range []bool{false, true} {
			got, want := wireAnswer(proxy, q, binary), wireAnswer(reference, q, binary)
			if got != want {
				t.Errorf("%s (binary protocol %v):\n proxy   %s\n MariaDB %s", q, binary, got, want)
			}
		}
	}
}

// TestReleasedFixedDecimals: the README's forms on the demo, whose noise
// differs from run to run: ROUND(AVG(age), 2) is a DOUBLE of 2 decimals
// written with exactly 2 (44.61, 44.60), FLOOR(SUM(income)) one of none
// written with its digits (35295695; CEIL(SUM(income) * 1e9) never with
// an exponent), and CONCAT shows them so; a prepared statement announces
// the same types, and its binary values have those decimals.
func TestReleasedFixedDecimals(t *testing.T) {
	p := startProxy(t, "", nil)
	conn := dialClient(t, p.addr, "demo", "demo", "dpproxy")
	if _, err := conn.Execute("SET @dp_epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT ROUND(AVG(age), 2), FLOOR(SUM(income)), CEIL(SUM(income) * 1e9), TRUNCATE(AVG(income), 1), CONCAT(ROUND(AVG(age), 1), '%') FROM pums"
	want := []struct {
		kind string
		text *regexp.Regexp
	}{
		{"DOUBLE(2)", regexp.MustCompile(`^-?[0-9]+\.[0-9]{2}$`)},
		{"DOUBLE(0)", regexp.MustCompile(`^-?[0-9]+$`)},
		{"DOUBLE(0)", regexp.MustCompile(`^-?[0-9]{16,}$`)},
		{"DOUBLE(1)", regexp.MustCompile(`^-?[0-9]+\.[0-9]$`)},
		{"VARCHAR", regexp.MustCompile(`^-?[0-9]+\.[0-9]%$`)},
	}
	r, err := conn.Execute(q)
	if err != nil {
		t.Fatal(err)
	}
	texts := rowTexts(r.Resultset)
	if len(texts) != 1 || len(texts[0]) != len(want) {
		t.Fatalf("%s: rows %q", q, texts)
	}
	for j, w := range want {
		if kind := columnKind(r.Fields[j]); kind != w.kind || !w.text.MatchString(texts[0][j]) {
			t.Errorf("%s: column %d is %s %q, want %s matching %s", q, j+1, kind, texts[0][j], w.kind, w.text)
		}
	}
	st, err := conn.Prepare("SELECT ROUND(AVG(age), 2), FLOOR(SUM(income)) FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	br, err := st.Execute()
	if err != nil {
		t.Fatal(err)
	}
	for j, decimals := range []int{2, 0} {
		x, err := br.GetFloat(0, j)
		if err != nil {
			t.Fatal(err)
		}
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', decimals, 64), 64)
		if kind := columnKind(br.Fields[j]); kind != want[j].kind || rounded != x {
			t.Errorf("prepared: column %d is %s %v, want %s", j+1, kind, x, want[j].kind)
		}
	}
}

// dialClient connects go-mysql's client to addr, closed when the test ends.
func dialClient(t *testing.T, addr, user, password, db string) *client.Conn {
	t.Helper()
	c, err := client.Connect(addr, user, password, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wireAnswer runs q on c, prepared with binary, and describes what it
// sent: the error code, or each column's kind (columnKind) and each
// row's cells, in the text protocol as sent, in the binary protocol as
// values (a DOUBLE's shortest digits).
func wireAnswer(c *client.Conn, q string, binary bool) string {
	r, failed := executeOnWire(c, q, binary)
	if r == nil {
		return failed
	}
	var kinds []string
	for _, f := range r.Fields {
		kinds = append(kinds, columnKind(f))
	}
	out := strings.Join(kinds, " ")
	if !binary {
		return fmt.Sprintf("%s: %q", out, rowTexts(r.Resultset))
	}
	for i := range r.Values {
		out += " |"
		for j := range r.Fields {
			v, err := r.GetValue(i, j)
			if err != nil {
				return "value: " + err.Error()
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			out += fmt.Sprintf(" %v", v)
		}
	}
	return out
}

// columnKind is f's type, with its decimals for a DOUBLE or a DECIMAL:
// DOUBLE(2), DOUBLE(31) for one whose decimals are not fixed,
// DECIMAL(4); INTEGER for any integer type, VARCHAR for text.
func columnKind(f *gomysql.Field) string {
	switch f.Type {
	case gomysql.MYSQL_TYPE_DOUBLE:
		return fmt.Sprintf("DOUBLE(%d)", f.Decimal)
	case gomysql.MYSQL_TYPE_NEWDECIMAL:
		return fmt.Sprintf("DECIMAL(%d)", f.Decimal)
	case gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONGLONG:
		return "INTEGER"
	case gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_VARCHAR:
		return "VARCHAR"
	}
	return fmt.Sprintf("type %d", f.Type)
}

// rowTexts are the cells of a text protocol result as sent (NULL as
// "NULL").
func rowTexts(r *gomysql.Resultset) [][]string {
	var rows [][]string
	for _, data := range r.RowDatas {
		var cells []string
		for pos := 0; pos < len(data); {
			v, null, n, err := gomysql.LengthEncodedString(data[pos:])
			if err != nil {
				return append(rows, []string{"malformed row: " + err.Error()})
			}
			pos += n
			if null {
				v = []byte("NULL")
			}
			cells = append(cells, string(v))
		}
		rows = append(rows, cells)
	}
	return rows
}

// besideMariaDBOnTheWire runs the statements rows on the test's MariaDB
// database and returns go-mysql clients, which keep each row's bytes, of
// a proxy over it configured with tables (as dora, at @dp_epsilon = 1)
// and of MariaDB itself.
func besideMariaDBOnTheWire(t *testing.T, rows []string, tables string) (proxy, reference *client.Conn) {
	t.Helper()
	dsn := testdb.MySQLDSN(t)
	ref := testdb.Open(t, "mysql", dsn)
	for _, s := range rows {
		if _, err := ref.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	p := doraProxy(t, visitsBackend{"mariadb", "mysql", testdb.MySQLDSN}, dsn, tables)
	proxy = dialClient(t, p.addr, "dora", "dora-pw", "dpproxy")
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	reference = dialClient(t, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName)
	if _, err := proxy.Execute("SET @dp_epsilon = 1"); err != nil {
		t.Fatal(err)
	}
	return proxy, reference
}

// executeOnWire runs q on c, prepared with binary, and returns its
// result, or nil and its error described: the MySQL error code, or the
// client's error text.
func executeOnWire(c *client.Conn, q string, binary bool) (*gomysql.Result, string) {
	var (
		r   *gomysql.Result
		err error
	)
	if binary {
		var st *client.Stmt
		if st, err = c.Prepare(q); err == nil {
			defer st.Close()
			r, err = st.Execute()
		}
	} else {
		r, err = c.Execute(q)
	}
	var me *gomysql.MyError
	switch {
	case errors.As(err, &me):
		return nil, fmt.Sprintf("error %d", me.Code)
	case err != nil:
		return nil, "error " + err.Error()
	}
	return r, ""
}
