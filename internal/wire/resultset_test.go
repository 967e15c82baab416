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
