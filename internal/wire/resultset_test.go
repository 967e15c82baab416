package wire

import (
	"bytes"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

func TestColumnFields(t *testing.T) {
	fields, err := columnFields(rowsColumns, rowsValues)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		typ     uint8
		flag    uint16
		charset uint16
	}{
		{gomysql.MYSQL_TYPE_LONGLONG, gomysql.BINARY_FLAG, binaryCollation},
		{gomysql.MYSQL_TYPE_DOUBLE, gomysql.BINARY_FLAG, binaryCollation},
		{gomysql.MYSQL_TYPE_VAR_STRING, 0, utf8mb4Collation},
		{gomysql.MYSQL_TYPE_VAR_STRING, gomysql.BINARY_FLAG, binaryCollation},
		{gomysql.MYSQL_TYPE_LONGLONG, gomysql.BINARY_FLAG | gomysql.UNSIGNED_FLAG, binaryCollation},
	} {
		f := fields[i]
		if string(f.Name) != rowsColumns[i] || f.Type != want.typ || f.Flag != want.flag || f.Charset != want.charset {
			t.Errorf("column %d: got %s type %d flag %#x charset %d, want %s type %d flag %#x charset %d",
				i, f.Name, f.Type, f.Flag, f.Charset, rowsColumns[i], want.typ, want.flag, want.charset)
		}
	}

	notNull, err := columnFields([]string{"n", "all null"}, [][]any{{int64(1), nil}})
	if err != nil {
		t.Fatal(err)
	}
	if notNull[0].Flag&gomysql.NOT_NULL_FLAG == 0 {
		t.Errorf("got flag %#x for a column without NULLs, want NOT_NULL", notNull[0].Flag)
	}
	if notNull[1].Type != gomysql.MYSQL_TYPE_NULL || notNull[1].Flag&gomysql.NOT_NULL_FLAG != 0 {
		t.Errorf("got type %d flag %#x for a NULL-only column, want type NULL, nullable", notNull[1].Type, notNull[1].Flag)
	}

	for _, tc := range []struct {
		name string
		rows [][]any
	}{
		{"mixed types", [][]any{{int64(1)}, {1.5}}},
		{"short row", [][]any{{}}},
		{"unsupported type", [][]any{{int32(1)}}},
	} {
		if _, err := columnFields([]string{"c"}, tc.rows); err == nil {
			t.Errorf("%s: got no error, want one", tc.name)
		}
	}
}

func TestRowEncodings(t *testing.T) {
	fields, err := columnFields([]string{"i", "f", "s"}, [][]any{{nil, 0.5, "ab"}, {int64(-1), nil, nil}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		binary bool
		row    []any
		want   []byte
	}{
		{"text", false, []any{nil, 0.5, "ab"}, []byte{0xfb, 3, '0', '.', '5', 2, 'a', 'b'}},
		// binary: header, NULL bitmap (bit 2+0 set), DOUBLE 0.5, length-encoded "ab"
		{"binary", true, []any{nil, 0.5, "ab"}, []byte{0, 0b100, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 2, 'a', 'b'}},
		{"binary, NULL later", true, []any{int64(-1), nil, nil}, []byte{0, 0b11000, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	} {
		var got []byte
		if tc.binary {
			got, err = binaryRow(fields, tc.row)
		} else {
			got, err = textRow(tc.row)
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: got %v, %v, want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestOKResult(t *testing.T) {
	for _, r := range []*Result{nil, {AffectedRows: 3, Warnings: 1}, {Columns: []string{}, AffectedRows: 3, Warnings: 1}} {
		got, err := toMySQLResult(r, false)
		if err != nil {
			t.Fatal(err)
		}
		if got.HasResultset() {
			t.Errorf("%+v: got a resultset, want an OK packet", r)
		}
		if r != nil && (got.AffectedRows != 3 || got.Warnings != 1) {
			t.Errorf("%+v: got %d rows %d warnings, want 3 and 1", r, got.AffectedRows, got.Warnings)
		}
	}
}

// testDate and testDateTime are Temporal values as another package
// declares them.
type (
	testDate     string
	testDateTime string
)

func (d testDate) MySQLTemporal() (string, bool)     { return string(d), false }
func (d testDateTime) MySQLTemporal() (string, bool) { return string(d), true }

// TestTemporalValues checks the column definitions of Temporal values
// (DATE of length 10, DATETIME of length 19, binary charset) and their
// encodings by hand: text as written, binary as the date structure
// (length 4: year LE, month, day; length 7 adds hour, minute, second).
func TestTemporalValues(t *testing.T) {
	fields, err := columnFields([]string{"d", "ts"}, [][]any{{testDate("2024-02-29"), testDateTime("2023-01-02 01:01:01")}, {nil, testDateTime("2023-01-02 00:00:00")}})
	if err != nil {
		t.Fatal(err)
	}
	if f := fields[0]; f.Type != gomysql.MYSQL_TYPE_DATE || f.ColumnLength != 10 || f.Charset != binaryCollation || f.Flag&gomysql.NOT_NULL_FLAG != 0 {
		t.Errorf("date column: type %d length %d charset %d flag %#x", f.Type, f.ColumnLength, f.Charset, f.Flag)
	}
	if f := fields[1]; f.Type != gomysql.MYSQL_TYPE_DATETIME || f.ColumnLength != 19 || f.Flag&gomysql.NOT_NULL_FLAG == 0 {
		t.Errorf("datetime column: type %d length %d flag %#x", f.Type, f.ColumnLength, f.Flag)
	}
	text, err := textRow([]any{testDate("2024-02-29"), testDateTime("2023-01-02 01:01:01")})
	if want := append([]byte{10}, "2024-02-29\x132023-01-02 01:01:01"...); err != nil || !bytes.Equal(text, want) {
		t.Errorf("text row %q, %v, want %q", text, err, want)
	}
	bin, err := binaryRow(fields, []any{testDate("2024-02-29"), testDateTime("2023-01-02 01:01:01")})
	if want := []byte{0, 0, 4, 0xe8, 0x07, 2, 29, 7, 0xe7, 0x07, 1, 2, 1, 1, 1}; err != nil || !bytes.Equal(bin, want) {
		t.Errorf("binary row %v, %v, want %v", bin, err, want)
	}
	bin, err = binaryRow(fields, []any{nil, testDateTime("2023-01-02 00:00:00")})
	if want := []byte{0, 0b100, 4, 0xe7, 0x07, 1, 2}; err != nil || !bytes.Equal(bin, want) {
		t.Errorf("binary row at midnight %v, %v, want %v", bin, err, want)
	}
	if _, err := columnFields([]string{"c"}, [][]any{{testDate("2024-01-01")}, {testDateTime("2024-01-01 00:00:00")}}); err == nil {
		t.Error("a column mixing DATE and DATETIME values: no error")
	}
}
