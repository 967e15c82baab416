package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestCatalogClockAsMariaDB runs the clock functions with a fraction of a
// second (NOW(6), NOW(2), SYSDATE(6), UTC_TIMESTAMP(6), CURTIME(3),
// UTC_TIME(3)), FROM_UNIXTIME of an integer (a parameter in the binary
// protocol), CAST(... AS DATETIME(6)), a precision past 6 and
// CONVERT('é' USING latin1) through the proxy and on MariaDB, in the text
// and the binary protocols, and compares what each sends: each column's
// type, decimals and collation, and each cell's shape (its digits as d:
// the clocks read different instants) or the error code. The proxy wrote
// NOW(6) without its trailing zeros, announced 6 decimals for every
// DATETIME (FROM_UNIXTIME(?) showed .000000 in a binary client) and none
// for CURTIME(3), which it wrote with 6 digits; NOW(7) was 1105, not
// 1426; and CONVERT('é' USING latin1) sent UTF-8 announced as latin1.
func TestCatalogClockAsMariaDB(t *testing.T) {
	proxy, reference := besideMariaDBOnTheWire(t, fiveRows, fiveRowsTables)
	for _, c := range []struct {
		q    string
		args []any
		// text: compare collations and cells only (go-mysql-server types
		// CONVERT ... USING as LONGTEXT, MariaDB as VARCHAR).
		text bool
	}{
		{"SELECT NOW(6), NOW(2), NOW(3), NOW(), SYSDATE(6), UTC_TIMESTAMP(6), CURTIME(3), UTC_TIME(3), CURTIME()", nil, false},
		{"SELECT FROM_UNIXTIME(1700000000), CAST('2020-01-01 10:00:00.100000' AS DATETIME(6)), CAST('2020-01-01 10:00:00.1' AS DATETIME(3))", nil, false},
		{"SELECT FROM_UNIXTIME(?)", []any{int64(1700000000)}, false},
		{"SELECT NOW(7)", nil, false},
		{"SELECT CURTIME(9)", nil, false},
		{"SELECT UTC_TIMESTAMP(7)", nil, false},
		{"SELECT CONVERT('é' USING latin1), CONVERT('a' USING ascii)", nil, true},
		{"SELECT CONVERT(X'41' USING latin1), CONVERT(X'E9' USING latin1), HEX(CONVERT(X'C3A9' USING latin1))", nil, true},
		{"SELECT FROM_UNIXTIME(1.5) + 0, FROM_UNIXTIME(1.5e0) + 0, FROM_UNIXTIME(2147483648)", nil, false},
		{"SELECT -CAST('2020-01-01 00:00:00' AS DATETIME), -CAST('2020-01-01' AS DATE), -NOW() < 0", nil, true},
		{"SELECT CAST('10:00:00' AS TIME) + 0, CAST('10:00:00' AS TIME) * 2, CAST('10:00:00' AS TIME) - 1, -CAST('10:00:00' AS TIME)", nil, true},
		{"SELECT CAST(CAST('2020-01-01' AS DATETIME) AS SIGNED), CAST(CAST('10:00:00' AS TIME) AS SIGNED)", nil, false},
		{"SELECT CAST(1.5 AS DECIMAL(65, 39))", nil, false},
		{"SELECT CAST(1.5 AS DECIMAL(5, 6))", nil, false},
	} {
		for _, binary := range []bool{false, true} {
			if c.args != nil && !binary {
				continue
			}
			got, want := clockShape(proxy, c.q, binary, c.args, c.text), clockShape(reference, c.q, binary, c.args, c.text)
			if got != want {
				t.Errorf("%s (binary protocol %v):\n proxy   %s\n MariaDB %s", c.q, binary, got, want)
			}
		}
	}
}

var digits = regexp.MustCompile(`[0-9]`)

// clockShape runs q on c (prepared, with args, when binary) and describes
// what it sent: the error code, or each column's type, decimals and
// collation (only the collation with text) and each cell with its digits
// as d.
func clockShape(c *client.Conn, q string, binary bool, args []any, text bool) string {
	r, cells, err := firstRow(c, q, binary, args)
	if err != nil {
		if me, ok := err.(*gomysql.MyError); ok {
			return fmt.Sprintf("error %d (%s) %s", me.Code, me.State, me.Message)
		}
		return "error " + err.Error()
	}
	var out []string
	for j, f := range r.Fields {
		cell := digits.ReplaceAllString(cells[j], "d")
		if text {
			out = append(out, fmt.Sprintf("collation %d %q", f.Charset, cell))
			continue
		}
		out = append(out, fmt.Sprintf("type %d decimals %d collation %d %q", f.Type, f.Decimal, f.Charset, cell))
	}
	return strings.Join(out, "; ")
}
