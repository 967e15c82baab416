package catalogdb

import (
	"context"
	"fmt"
	"testing"
)

// CAST and CONVERT to CHAR(n), DATETIME(p) and TIME(p) answer as MariaDB
// 10.11 does (each row checked against it): text cut to n characters
// with warning 1292, typed VARCHAR(n); digits of a second cut, not
// rounded, to p, a text's past the sixth with note 1292; a TIME(p) with p
// digits. go-mysql-server dropped CAST('abcdef' AS CHAR(3)) (its operand
// being LONGTEXT already), cut bytes without a warning, rounded
// DATETIME(p) and ignored TIME(p).
func TestCastAsMariaDB(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	s.SetDatabase("dpproxy")
	for _, c := range []struct {
		query    string
		want     string
		warnings string
	}{
		{"SELECT CAST('abcdef' AS CHAR(3)) a, CAST(CONCAT('abc','def') AS CHAR(3)) b, CAST(123456 AS CHAR(3)) c",
			"[abc abc 123]",
			"[{Warning 1292 Truncated incorrect CHAR(3) value: 'abcdef'} {Warning 1292 Truncated incorrect CHAR(3) value: 'abcdef'} {Warning 1292 Truncated incorrect CHAR(3) value: '123456'}]"},
		{"SELECT CAST('ééé' AS CHAR(2)), LENGTH(CAST('ééé' AS CHAR(2))), CONVERT('abcdef', CHAR(2)), CAST('ab' AS CHAR(3)), CAST('abc' AS CHAR(0)), CAST(NULL AS CHAR(2))",
			"[éé 4 ab ab  <nil>]",
			"[{Warning 1292 Truncated incorrect CHAR(2) value: 'ééé'} {Warning 1292 Truncated incorrect CHAR(2) value: 'ééé'} {Warning 1292 Truncated incorrect CHAR(2) value: 'abcdef'} {Warning 1292 Truncated incorrect CHAR(0) value: 'abc'}]"},
		{"SELECT CAST(CAST('abcdef' AS CHAR(4)) AS CHAR(2)), (SELECT CAST('abcdef' AS CHAR(3))), CAST('abcdef' AS CHAR(3)) = 'abc'",
			"[ab abc 1]",
			"[{Warning 1292 Truncated incorrect CHAR(4) value: 'abcdef'} {Warning 1292 Truncated incorrect CHAR(2) value: 'abcd'} {Warning 1292 Truncated incorrect CHAR(3) value: 'abcdef'} {Warning 1292 Truncated incorrect CHAR(3) value: 'abcdef'}]"},
		{"SELECT CAST('2020-01-01 10:00:00.1234567' AS DATETIME(6)), CAST('2020-01-01 10:00:00.1239' AS DATETIME(3)), CAST('2020-01-01 10:00:00.9999' AS DATETIME), CAST('2020-01-01' AS DATETIME(2))",
			"[2020-01-01 10:00:00.123456 2020-01-01 10:00:00.123 2020-01-01 10:00:00 2020-01-01 00:00:00.00]",
			"[{Note 1292 Truncated incorrect datetime value: '2020-01-01 10:00:00.1234567'}]"},
		{"SELECT CAST('10:00' AS TIME(6)), CAST('10:00:00.1234567' AS TIME(6)), CAST('10:00:00.9999' AS TIME(2)), CAST('10:00:00.9999' AS TIME), CAST('-10:00:00.999' AS TIME(2))",
			"[10:00:00.000000 10:00:00.123456 10:00:00.99 10:00:00 -10:00:00.99]",
			"[{Note 1292 Truncated incorrect time value: '10:00:00.1234567'}]"},
		{"SELECT CAST(100000.999 AS TIME(2)), CAST(-100000.999 AS TIME(1)), CAST(20200101100000.9999 AS DATETIME(2)), CAST(20200101 AS DATETIME), CAST(100000.1234567 AS TIME(6))",
			"[10:00:00.99 -10:00:00.9 2020-01-01 10:00:00.99 2020-01-01 00:00:00 10:00:00.123456]",
			"[]"},
		{"SELECT CAST('abc' AS DATETIME), CAST('abc' AS TIME(2)), CAST(CAST('2020-01-01 10:00:00.987654' AS DATETIME(6)) AS DATETIME(2)), CAST(CAST('2020-01-01 10:00:00.987654' AS DATETIME(6)) AS TIME(3))",
			"[<nil> <nil> 2020-01-01 10:00:00.98 10:00:00.987]",
			"[{Warning 1292 Incorrect datetime value: 'abc'} {Warning 1292 Incorrect time value: 'abc'}]"},
	} {
		r := query(t, s, c.query)
		if len(r.Rows) != 1 {
			t.Errorf("%s: %d rows", c.query, len(r.Rows))
			continue
		}
		if got := fmt.Sprint(r.Rows[0]); got != c.want {
			t.Errorf("%s: %s, want %s", c.query, got, c.want)
		}
		if got := fmt.Sprint(r.Warnings); got != c.warnings {
			t.Errorf("%s: warnings %s, want %s", c.query, got, c.warnings)
		}
	}
	// The columns are announced as MariaDB announces them: VARCHAR(3)
	// (253, 12 bytes of utf8mb4), TIME(6) and DATETIME(3) with their
	// decimals, each nullable.
	r := query(t, s, "SELECT CAST('abcdef' AS CHAR(3)), CAST('10:00' AS TIME(6)), CAST('2020-01-01' AS DATETIME(3)), CAST('10:00' AS TIME)")
	for i, want := range []struct {
		typ      byte
		length   uint32
		decimals uint8
	}{{253, 12, 0}, {11, 0, 6}, {12, 0, 3}, {11, 0, 0}} {
		got := r.Columns[i]
		if got.Type != want.typ || (want.length != 0 && got.Length != want.length) || got.Decimals != want.decimals || got.Flags&notNullFlag != 0 {
			t.Errorf("column %d: %+v, want type %d, length %d, %d decimals, nullable", i+1, got, want.typ, want.length, want.decimals)
		}
	}
	// A prepared statement's description announces the same.
	cols, err := s.Describe(context.Background(), "SELECT CAST(? AS CHAR(3)), CAST(? AS TIME(6))")
	if err != nil || len(cols) != 2 || cols[0].Type != 253 || cols[0].Length != 12 || cols[1].Decimals != 6 {
		t.Errorf("described %+v, %v", cols, err)
	}
}
