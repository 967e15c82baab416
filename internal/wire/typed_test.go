package wire

import (
	"bytes"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// Binary-protocol encodings of typed values, checked by hand against the
// protocol's layouts (integers little-endian in their type's width, dates as
// length + year(2) month day [h m s [µs(4)]], times as length + sign +
// days(4) h m s [µs(4)]).
func TestTypedBinaryValues(t *testing.T) {
	for _, tc := range []struct {
		f    Field
		text string
		want []byte
	}{
		{Field{Type: gomysql.MYSQL_TYPE_LONG}, "-2", []byte{0xfe, 0xff, 0xff, 0xff}},
		{Field{Type: gomysql.MYSQL_TYPE_LONG, Flags: gomysql.UNSIGNED_FLAG}, "7", []byte{7, 0, 0, 0}},
		{Field{Type: gomysql.MYSQL_TYPE_TINY}, "1", []byte{1}},
		{Field{Type: gomysql.MYSQL_TYPE_LONGLONG, Flags: gomysql.UNSIGNED_FLAG}, "18446744073709551615", bytes.Repeat([]byte{0xff}, 8)},
		{Field{Type: gomysql.MYSQL_TYPE_DOUBLE}, "1", []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{Field{Type: gomysql.MYSQL_TYPE_DATE}, "2026-11-25", []byte{4, 0xea, 0x07, 11, 25}},
		{Field{Type: gomysql.MYSQL_TYPE_DATETIME}, "2026-11-25 18:21:57", []byte{7, 0xea, 0x07, 11, 25, 18, 21, 57}},
		{Field{Type: gomysql.MYSQL_TYPE_DATETIME}, "2026-11-25 00:00:00.5", []byte{11, 0xea, 0x07, 11, 25, 0, 0, 0, 0x20, 0xa1, 0x07, 0}},
		{Field{Type: gomysql.MYSQL_TYPE_TIME}, "-26:00:01", []byte{8, 1, 1, 0, 0, 0, 2, 0, 1}},
		{Field{Type: gomysql.MYSQL_TYPE_TIME}, "00:00:00", []byte{0}},
		{Field{Type: gomysql.MYSQL_TYPE_VAR_STRING}, "ab", []byte{2, 'a', 'b'}},
		{Field{Type: gomysql.MYSQL_TYPE_NEWDECIMAL}, "1.50", []byte{4, '1', '.', '5', '0'}},
	} {
		got, err := binaryValue(tc.f, tc.text)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("type %d %q: got % x, %v; want % x", tc.f.Type, tc.text, got, err, tc.want)
		}
	}
}

// A typed result keeps its declared types even with no rows or only NULLs.
func TestTypedResultColumns(t *testing.T) {
	r := &Result{Fields: []Field{{Name: "n", Type: gomysql.MYSQL_TYPE_LONGLONG}, {Name: "s", Type: gomysql.MYSQL_TYPE_VAR_STRING}},
		Rows: [][]any{{nil, nil}}}
	for _, binaryProtocol := range []bool{false, true} {
		res, err := toMySQLResult(r, binaryProtocol)
		if err != nil {
			t.Fatal(err)
		}
		f := res.Resultset.Fields
		if f[0].Type != gomysql.MYSQL_TYPE_LONGLONG || f[0].Charset != binaryCollation || f[1].Charset != utf8mb4Collation {
			t.Errorf("binary=%v: fields %+v %+v", binaryProtocol, f[0], f[1])
		}
	}
	if _, err := toMySQLResult(&Result{Fields: r.Fields, Rows: [][]any{{int64(1), "x"}}}, false); err == nil {
		t.Error("a typed result accepted a non-string value")
	}
}

// fixedDouble is a FixedDouble: ROUND(1e0, 2) / 3, which MariaDB writes
// as 0.333333 in the text protocol.
type fixedDouble struct{}

func (fixedDouble) MySQLText() string    { return "0.333333" }
func (fixedDouble) MySQLDouble() float64 { return 1.0 / 3 }

// A FixedDouble in a DOUBLE column is its text in the text protocol and
// its double, not the double of its text, in the binary protocol.
func TestTypedFixedDouble(t *testing.T) {
	r := &Result{Fields: []Field{{Name: "x", Type: gomysql.MYSQL_TYPE_DOUBLE, Decimals: 6}}, Rows: [][]any{{fixedDouble{}}}}
	for _, binaryProtocol := range []bool{false, true} {
		res, err := toMySQLResult(r, binaryProtocol)
		if err != nil {
			t.Fatal(err)
		}
		rs := res.Resultset
		values, err := rs.RowDatas[0].Parse(rs.Fields, binaryProtocol, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.333333
		if binaryProtocol {
			want = 1.0 / 3
		}
		if got := values[0].AsFloat64(); got != want || rs.Fields[0].Decimal != 6 {
			t.Errorf("binary=%v: %v with %d decimals, want %v with 6", binaryProtocol, got, rs.Fields[0].Decimal, want)
		}
	}
}

// singleFloat is a FixedDouble of a FLOAT column: CAST(123456789 AS
// FLOAT), which MariaDB writes as 123457000 in the text protocol and
// sends as the float 123456792 in the binary one.
type singleFloat struct{}

func (singleFloat) MySQLText() string    { return "123457000" }
func (singleFloat) MySQLDouble() float64 { return float64(float32(123456789)) }

// A FixedDouble in a FLOAT column is its text in the text protocol and its
// four bytes in the binary protocol, not the float of its text.
func TestTypedFloat(t *testing.T) {
	r := &Result{Fields: []Field{{Name: "x", Type: gomysql.MYSQL_TYPE_FLOAT, Length: 12, Decimals: 31}}, Rows: [][]any{{singleFloat{}}}}
	for _, binaryProtocol := range []bool{false, true} {
		res, err := toMySQLResult(r, binaryProtocol)
		if err != nil {
			t.Fatal(err)
		}
		rs := res.Resultset
		values, err := rs.RowDatas[0].Parse(rs.Fields, binaryProtocol, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := 123457000.0
		if binaryProtocol {
			want = 123456792
		}
		if got := values[0].AsFloat64(); got != want {
			t.Errorf("binary=%v: %v, want %v", binaryProtocol, got, want)
		}
	}
}
