package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestCatalogCastAsMariaDB runs constant CASTs to CHAR(n), DATETIME(p)
// and TIME(p), which the catalog engine answers, through the proxy and on
// MariaDB, in the text and the binary protocols (a string parameter in
// the latter), and compares each cell, each column's type and decimals,
// and what SHOW WARNINGS lists after a statement in the text protocol. The proxy sent CAST('abcdef' AS
// CHAR(3)) as abcdef in a TEXT column without a warning, rounded
// DATETIME(6) of seven digits, and wrote CAST('10:00' AS TIME(6)) with no
// fraction.
func TestCatalogCastAsMariaDB(t *testing.T) {
	proxy, reference := besideMariaDBOnTheWire(t, fiveRows, fiveRowsTables)
	for _, c := range []struct {
		q    string
		args []any
	}{
		{"SELECT CAST('abcdef' AS CHAR(3)) a, CAST(CONCAT('abc','def') AS CHAR(3)) b, CAST(123456 AS CHAR(3)) c", nil},
		{"SELECT CAST(? AS CHAR(3))", []any{"abcdef"}},
		{"SELECT CAST(? AS TIME(6)), CAST(? AS DATETIME(2))", []any{"10:00", "2020-01-01 10:00:00.999"}},
		{"SELECT CAST('2020-01-01 10:00:00.1234567' AS DATETIME(6)), CAST('2020-01-01 10:00:00.1239' AS DATETIME(3))", nil},
		{"SELECT CAST('10:00' AS TIME(6)), CAST('10:00:00.9999' AS TIME(2)), CAST('10:00:00.9999' AS TIME), CAST('10:00:00.1234567' AS TIME(6))", nil},
	} {
		for _, binary := range []bool{false, true} {
			if c.args != nil && !binary {
				continue
			}
			got, want := castShape(proxy, c.q, binary, c.args), castShape(reference, c.q, binary, c.args)
			if got != want {
				t.Errorf("%s (binary protocol %v):\n proxy   %s\n MariaDB %s", c.q, binary, got, want)
			}
		}
	}
}

// castShape runs q on c (prepared, with args, when binary) and describes
// what it sent: the error, or each column's type and decimals and each
// cell, then, in the text protocol, the rows of SHOW WARNINGS (MariaDB
// lists an earlier prepared statement's warnings after the execution of
// one that has none, even past a SELECT 1 between them).
func castShape(c *client.Conn, q string, binary bool, args []any) string {
	r, cells, err := firstRow(c, q, binary, args)
	if err != nil {
		return "error " + err.Error()
	}
	var out []string
	for j, f := range r.Fields {
		out = append(out, fmt.Sprintf("type %d decimals %d %q", f.Type, f.Decimal, cells[j]))
	}
	if binary {
		return strings.Join(out, "; ")
	}
	w, err := c.Execute("SHOW WARNINGS")
	if err != nil {
		return "SHOW WARNINGS: " + err.Error()
	}
	for i := range w.RowNumber() {
		level, _ := w.GetString(i, 0)
		code, _ := w.GetInt(i, 1)
		message, _ := w.GetString(i, 2)
		out = append(out, fmt.Sprintf("%s %d %s", level, code, message))
	}
	return strings.Join(out, "; ")
}

// firstRow runs q on c, prepared and executed with args when binary, and
// returns its result and the first row's cells as text.
func firstRow(c *client.Conn, q string, binary bool, args []any) (*gomysql.Result, []string, error) {
	var (
		r   *gomysql.Result
		err error
	)
	if binary {
		var st *client.Stmt
		if st, err = c.Prepare(q); err == nil {
			defer st.Close()
			r, err = st.Execute(args...)
		}
	} else {
		r, err = c.Execute(q)
	}
	if err != nil {
		return nil, nil, err
	}
	cells := make([]string, len(r.Fields))
	for j := range r.Fields {
		v, err := r.GetValue(0, j)
		if err != nil {
			return nil, nil, fmt.Errorf("value: %w", err)
		}
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		cells[j] = fmt.Sprint(v)
	}
	return r, cells, nil
}
