package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestBucketLabelsOnTheWireAsMariaDB serves bl (i BIGINT, d DOUBLE, n
// BIGINT and e DOUBLE that are never negative) through the proxy and
// runs GROUP BY buckets of each on MariaDB itself, in the text and the
// binary protocol: the bucket column's type, decimals and (for a
// DECIMAL) length are MariaDB's, and every label MariaDB answers is one
// of the proxy's, as sent (the proxy answers every bucket of the bounds,
// MariaDB those with rows). Before, FLOOR(d / 0.3) * 0.3 came out as a
// DOUBLE without fixed decimals, -7.199999999999999 where MariaDB writes
// -7.2, and FLOOR(i / 0.3) * 0.3 as a DOUBLE where MariaDB's is a
// DECIMAL(23,1) (3.0).
func TestBucketLabelsOnTheWireAsMariaDB(t *testing.T) {
	proxy, reference := besideMariaDBOnTheWire(t, []string{
		"CREATE TABLE bl (i BIGINT, d DOUBLE, n BIGINT, e DOUBLE)",
		"INSERT INTO bl VALUES (-22, -7.2, 7, 2.1), (7, 2.1, 100, 100.5), (100, 100.5, 3, 0.3), (3, 0.3, 0, 0)",
	}, `
  - name: bl
    columns:
      - {name: i, type: integer, lower: -30, upper: 120}
      - {name: d, type: real, lower: -10, upper: 120}
      - {name: n, type: integer, lower: 0, upper: 120}
      - {name: e, type: real, lower: 0, upper: 120}
`)
	for _, key := range []string{
		"FLOOR(i / 5)", "FLOOR(i / 5) * 5", "FLOOR(i / 0.25) * 0.25", "FLOOR(i / 0.3) * 0.3", "FLOOR(i / 2.5)",
		"FLOOR((i - 1) / 2.5) * 2.5 + 1", "FLOOR((i - 0.5) / 2) * 2 + 0.5", "FLOOR(i / 5e0) * 5e0", "FLOOR(i / 12.5) * 12.5",
		"n DIV 10", "n DIV 10 * 10", "n DIV 2.5 * 2.5",
		"FLOOR(d / 5)", "FLOOR(d / 5) * 5", "FLOOR(d / 0.25) * 0.25", "FLOOR(d / 0.3) * 0.3", "FLOOR(d / 2.5)",
		"FLOOR((d - 1) / 2.5) * 2.5 + 1", "FLOOR((d - 0.5) / 2) * 2 + 0.5", "FLOOR(d / 5e0) * 5e0", "FLOOR(d / 12.5) * 12.5",
		"e DIV 10", "e DIV 10 * 10", "e DIV 2.5 * 2.5",
		"ROUND(i, -1)", "TRUNCATE(i, -1)", "FLOOR(i)", "ROUND(d, -1)", "TRUNCATE(d, -1)", "FLOOR(d)", "CEIL(d)",
	} {
		q := "SELECT " + key + " AS b, COUNT(*) FROM bl GROUP BY b"
		for _, binary := range []bool{false, true} {
			gotKind, got := bucketLabels(proxy, q, binary)
			wantKind, want := bucketLabels(reference, q, binary)
			if gotKind != wantKind {
				t.Errorf("%s (binary protocol %v): column %s, MariaDB's %s", key, binary, gotKind, wantKind)
			}
			for _, label := range want {
				if !slices.Contains(got, label) {
					t.Errorf("%s (binary protocol %v): MariaDB's label %s is none of the proxy's %.200v", key, binary, label, got)
				}
			}
		}
	}
}

// bucketLabels runs q on c and returns its first column's type, decimals
// and (for a DECIMAL, whose precision the proxy gives as MariaDB does)
// length, and its cells: as sent in the text protocol, as values in the
// binary one.
func bucketLabels(c *client.Conn, q string, binary bool) (kind string, labels []string) {
	r, failed := executeOnWire(c, q, binary)
	if r == nil {
		return failed, nil
	}
	f := r.Fields[0]
	kind = fmt.Sprintf("type %d decimals %d", f.Type, f.Decimal)
	if f.Type == gomysql.MYSQL_TYPE_NEWDECIMAL {
		kind += fmt.Sprintf(" length %d", f.ColumnLength)
	}
	if !binary {
		for _, row := range rowTexts(r.Resultset) {
			labels = append(labels, row[0])
		}
		return kind, labels
	}
	for i := range r.Values {
		v, err := r.GetValue(i, 0)
		if err != nil {
			return "value: " + err.Error(), nil
		}
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		labels = append(labels, strings.TrimSpace(fmt.Sprintf("%T %v", v, v)))
	}
	return kind, labels
}

// TestCastAsCharOnTheWireAsMariaDB runs CAST(x AS CHAR(n)) of released
// values (where their noise cannot matter: COUNT(*) * 0) through the
// proxy and on MariaDB over the same five rows, in both protocols: each
// column's type and length, the cells, and SHOW WARNINGS' levels, codes
// and messages (the proxy's notes left out) are MariaDB's. Before, n was
// ignored: no cut, no warning, the argument's length.
func TestCastAsCharOnTheWireAsMariaDB(t *testing.T) {
	proxy, reference := besideMariaDBOnTheWire(t, fiveRows, fiveRowsTables)
	for _, c := range []*client.Conn{proxy, reference} {
		if _, err := c.Execute("SET NAMES utf8mb4"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		"SELECT CAST(COUNT(*) * 0 + 12345 AS CHAR(2)), CONCAT(CAST(AVG(y) * 0 + 2.5 AS CHAR(2)), 'x'), CAST(COUNT(*) * 0 + 7 AS CHAR(0)), CAST(COUNT(*) * 0 + 7 AS CHAR(10)) FROM t",
		"SELECT CAST((COUNT(*) * 0 + 3000) / 7 AS CHAR(4)), CAST(CONCAT(REPEAT('é', 200), COUNT(*) * 0) AS CHAR(3)) FROM t",
		"SELECT CAST(COUNT(*) * 0 + i * 1111 AS CHAR(3)) FROM t GROUP BY i",
		"SELECT CAST(COUNT(*) * 0 + 1 AS CHAR(4294967296)) FROM t",
		// A long value in 1292's message is cut at 128 bytes, as MariaDB
		// cuts it.
		"SELECT CAST(CONCAT(REPEAT('a', 200), COUNT(*) * 0) AS SIGNED) FROM t",
	} {
		for _, binary := range []bool{false, true} {
			got, want := castAnswer(proxy, q, binary), castAnswer(reference, q, binary)
			if got != want {
				t.Errorf("%s (binary protocol %v):\n proxy   %s\n MariaDB %s", q, binary, got, want)
			}
		}
	}
}

// castAnswer runs q on c and describes its columns' types (and a text's
// length),
// its cells and SHOW WARNINGS (but the proxy's notes), or its error code.
func castAnswer(c *client.Conn, q string, binary bool) string {
	r, failed := executeOnWire(c, q, binary)
	if r == nil {
		return failed
	}
	var out []string
	for _, f := range r.Fields {
		switch f.Type {
		case gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_MEDIUM_BLOB, gomysql.MYSQL_TYPE_LONG_BLOB:
			out = append(out, fmt.Sprintf("type %d length %d", f.Type, f.ColumnLength))
		default: // the proxy's BIGINT is 20 long, a count's 21 in MariaDB
			out = append(out, fmt.Sprintf("type %d", f.Type))
		}
	}
	for i := range r.Values {
		for j := range r.Fields {
			v, err := r.GetValue(i, j)
			if err != nil {
				return "value: " + err.Error()
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			out = append(out, fmt.Sprintf("%q", fmt.Sprint(v)))
		}
	}
	ws, err := c.Execute("SHOW WARNINGS")
	if err != nil {
		return "SHOW WARNINGS: " + err.Error()
	}
	for _, row := range rowTexts(ws.Resultset) {
		if row[1] != "1003" {
			out = append(out, strings.Join(row, " "))
		}
	}
	return strings.Join(out, "; ")
}
