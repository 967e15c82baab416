package proxy

import (
	"strconv"
	"testing"

	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// A private answer's columns are typed by the plan's types, a NULL (No
// Reply) included, in one row or in several (a grouped answer), and each
// value is the text of its column's type.
func TestPrivateAnswerKeepsItsTypeWhenNull(t *testing.T) {
	out := &exec.Result{
		Columns: []string{"COUNT(*)", "IQR(income)", "AVG(age)", "MIN(d)", "k"},
		Types:   []planner.ResultType{planner.ResultBigint, planner.ResultDouble, planner.ResultDouble, planner.ResultDate, planner.ResultText},
		Rows:    [][]any{{int64(12), nil, 41.5, planner.Date("2024-01-02"), "a"}, {nil, nil, 3.0, nil, nil}},
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []byte{mysqlTypeLongLong, mysqlTypeDouble, mysqlTypeDouble, mysqlTypeDate, mysqlTypeVarChar}
	wantRows := [][]any{{"12", nil, "41.5", "2024-01-02", "a"}, {nil, nil, "3", nil, nil}}
	for i := range wantTypes {
		if r.Typed[i].Type != wantTypes[i] || r.Typed[i].Name != out.Columns[i] {
			t.Errorf("column %d: %+v, want type %d", i, r.Typed[i], wantTypes[i])
		}
		for k := range wantRows {
			if r.Rows[k][i] != wantRows[k][i] {
				t.Errorf("row %d column %d = %v, want %v", k, i, r.Rows[k][i], wantRows[k][i])
			}
		}
	}
	if err := checkResult(r); err != nil {
		t.Error(err)
	}
}

// TestExactAnswerColumns: a DECIMAL(p, s) column is sent as MySQL's
// NEWDECIMAL with its length and decimals, a BIGINT UNSIGNED as a
// LONGLONG with the unsigned flag, an INT as a LONG, and their values as
// their text.
func TestExactAnswerColumns(t *testing.T) {
	out := &exec.Result{
		Columns: []string{"COUNT(*) / 3", "CAST(COUNT(*) AS UNSIGNED)", "YEAR(d)"},
		Types:   []planner.ResultType{planner.DecimalType(23, 4), planner.ResultUnsigned, planner.ResultInt},
		Rows:    [][]any{{planner.Decimal("333.3333"), uint64(1<<64 - 1), int64(2024)}},
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		typ      byte
		flags    uint16
		length   uint32
		decimals uint8
		text     string
	}{
		{mysqlTypeNewDecimal, binaryFlag, 25, 4, "333.3333"},
		{mysqlTypeLongLong, binaryFlag | unsignedFlag, 20, 0, "18446744073709551615"},
		{mysqlTypeLong, binaryFlag, 11, 0, "2024"},
	} {
		c := r.Typed[i]
		if c.Type != want.typ || c.Flags != want.flags || c.Length != want.length || c.Decimals != want.decimals || r.Rows[0][i] != want.text {
			t.Errorf("column %d: %+v %v, want %+v", i, c, r.Rows[0][i], want)
		}
	}
	if err := checkResult(r); err != nil {
		t.Error(err)
	}
}

// TestDoubleAnswerAsMariaDB: a DOUBLE result cell is sent as MariaDB
// 10.11 sends it in the text protocol (checked there with the mariadb
// client: SELECT AVG(d) of each value). Before, the proxy sent every digit
// of its fixed notation: 1e300 as 301 digits, 1e16 as 10000000000000000.
func TestDoubleAnswerAsMariaDB(t *testing.T) {
	values := []float64{1e300, 1e15, 1e16, 123456789012345678, 1e-5, 1e-7, 1e-16, 1e14, 1234567890123456.7, 0.30000000000000004, 38.123456789, 41.5, 3}
	want := []string{"1e300", "1e15", "1e16", "1.2345678901234568e17", "0.00001", "0.0000001", "1e-16", "100000000000000", "1234567890123456.8", "0.30000000000000004", "38.123456789", "41.5", "3"}
	out := &exec.Result{}
	for i := range values {
		out.Columns = append(out.Columns, "c"+strconv.Itoa(i))
		out.Types = append(out.Types, planner.ResultDouble)
	}
	out.Rows = [][]any{make([]any, len(values))}
	for i, x := range values {
		out.Rows[0][i] = x
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range values {
		if r.Rows[0][i] != want[i] {
			t.Errorf("%v is sent as %v, want %s", values[i], r.Rows[0][i], want[i])
		}
	}
}

// TestFixedDoubleAnswer: a DOUBLE whose type fixes its decimals
// (ROUND(AVG(x), 2), FLOOR(SUM(x))) announces them and is sent as a
// planner.FixedDouble, which the text protocol writes with them (1.00,
// 1000000000000000, as MariaDB 10.11); a DOUBLE of decimals not fixed
// announces 31 and is sent as its shortest text.
func TestFixedDoubleAnswer(t *testing.T) {
	out := &exec.Result{
		Columns: []string{"ROUND(AVG(x), 2)", "FLOOR(SUM(x))", "AVG(x)"},
		Types:   []planner.ResultType{planner.DoubleType(2), planner.DoubleType(0), planner.ResultDouble},
		Rows:    [][]any{{1.0, 1e15, 1e15}},
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		decimals uint8
		text     string
	}{{2, "1.00"}, {0, "1000000000000000"}, {31, "1e15"}} {
		c, v := r.Typed[i], r.Rows[0][i]
		if x, ok := v.(planner.FixedDouble); ok {
			v = x.MySQLText()
		}
		if c.Type != mysqlTypeDouble || c.Decimals != want.decimals || v != want.text {
			t.Errorf("column %d: %+v %v, want DOUBLE of %d decimals %s", i, c, v, want.decimals, want.text)
		}
	}
	if err := checkResult(r); err != nil {
		t.Error(err)
	}
}

// TestTextAndFloatAnswerColumns: a VARCHAR of n characters is announced
// as MariaDB 10.11 announces text of that length in utf8mb4 (measured
// there with mariadb --column-type-info on SELECT LPAD(COUNT(*), n, '0')):
// VAR_STRING of 4n bytes up to 16,382 characters, then BLOB, MEDIUM_BLOB
// and LONG_BLOB of four times their bytes, a LONG_BLOB's at most 64 MiB;
// ResultText, a text key's, is 255 characters. A FLOAT column is
// MYSQL_TYPE_FLOAT of length 12 and decimals 31, its value a
// planner.Float, which the result check accepts there only.
func TestTextAndFloatAnswerColumns(t *testing.T) {
	for _, c := range []struct {
		t      planner.ResultType
		typ    byte
		length uint32
	}{
		{planner.ResultText, mysqlTypeVarChar, 1020},
		{planner.TextType(0), mysqlTypeVarChar, 0},
		{planner.TextType(8), mysqlTypeVarChar, 32},
		{planner.TextType(16382), mysqlTypeVarChar, 65528},
		{planner.TextType(16383), mysqlTypeBlob, 262128},
		{planner.TextType(16384), mysqlTypeMediumBlob, 262144},
		{planner.TextType(4194303), mysqlTypeMediumBlob, 67108848},
		{planner.TextType(4194304), mysqlTypeLongBlob, 67108864},
		{planner.TextType(1 << 30), mysqlTypeLongBlob, 67108864},
	} {
		col := answerColumn("x", c.t)
		if col.Type != c.typ || col.Length != c.length || col.Charset != utf8mb4Collation || col.Flags != 0 {
			t.Errorf("%v: %+v, want type %d length %d", c.t, col, c.typ, c.length)
		}
	}
	out := &exec.Result{
		Columns: []string{"CAST(AVG(age) AS FLOAT)"},
		Types:   []planner.ResultType{planner.ResultFloat},
		Rows:    [][]any{{planner.Float(44.6123)}},
	}
	r, err := answer(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Typed[0]; c.Type != mysqlTypeFloat || c.Length != 12 || c.Decimals != planner.NotFixedDecimals || c.Flags != binaryFlag {
		t.Errorf("FLOAT column %+v", c)
	}
	if f, ok := r.Rows[0][0].(planner.Float); !ok || f.MySQLText() != "44.6123" {
		t.Errorf("FLOAT cell %#v", r.Rows[0][0])
	}
	if err := checkResult(r); err != nil {
		t.Error(err)
	}
	r.Typed[0].Type = mysqlTypeDouble
	if err := checkResult(r); err == nil {
		t.Error("a Float in a DOUBLE column passed the result check")
	}
}
