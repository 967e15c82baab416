package wire

import (
	"fmt"
	"math"
	"reflect"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// Column metadata constants (MySQL's include/mysql_com.h and m_ctype.h).
const (
	binaryCollation  = 63 // "binary": numbers and byte strings
	utf8mb4Collation = 45 // utf8mb4_general_ci, known to MySQL and MariaDB clients
	notFixedDecimals = 31 // a DOUBLE whose scale is not fixed
)

// toMySQLResult converts a Session's Result for go-mysql: an OK packet when it
// has no columns, else a resultset whose rows are in the text format
// (COM_QUERY) or the binary one (COM_STMT_EXECUTE).
//
// It builds the resultset itself instead of with mysql.BuildSimpleResultset,
// which types a column from its first row only: in the binary format a NULL
// in the first row makes every later value of the column unreadable, and a
// result with no rows loses its column names.
func toMySQLResult(r *Result, binary bool) (*gomysql.Result, error) {
	if r != nil && len(r.Fields) > 0 {
		return typedResult(r, binary)
	}
	if r == nil || len(r.Columns) == 0 {
		var affected uint64
		var warnings uint16
		if r != nil {
			affected, warnings = r.AffectedRows, r.Warnings
		}
		return &gomysql.Result{AffectedRows: affected, Warnings: warnings}, nil
	}
	fields, err := columnFields(r.Columns, r.Rows)
	if err != nil {
		return nil, err
	}
	rs := gomysql.NewResultset(len(fields))
	copy(rs.Fields, fields)
	for _, row := range r.Rows {
		var data []byte
		if binary {
			data, err = binaryRow(fields, row)
		} else {
			data, err = textRow(row)
		}
		if err != nil {
			return nil, err
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	res := gomysql.NewResult(rs)
	res.Warnings = r.Warnings
	return res, nil
}

// columnFields derives each column's MySQL type from the Go type of its
// non-nil values, which must agree; a column of NULLs only has type NULL.
func columnFields(names []string, rows [][]any) ([]*gomysql.Field, error) {
	fields := make([]*gomysql.Field, len(names))
	for j, name := range names {
		var first any
		nullable := false
		var maxLen int
		for i, row := range rows {
			if len(row) != len(names) {
				return nil, fmt.Errorf("wire: result row %d has %d values for %d columns", i, len(row), len(names))
			}
			v := row[j]
			switch v := v.(type) {
			case nil:
				nullable = true
				continue
			case string:
				maxLen = max(maxLen, len(v))
			case []byte:
				maxLen = max(maxLen, len(v))
			}
			if first == nil {
				first = v
			} else if reflect.TypeOf(v) != reflect.TypeOf(first) {
				return nil, fmt.Errorf("wire: result column %q mixes %T and %T", name, first, v)
			}
		}
		f, err := fieldFor(name, first, maxLen)
		if err != nil {
			return nil, err
		}
		if !nullable && first != nil {
			f.Flag |= gomysql.NOT_NULL_FLAG
		}
		fields[j] = f
	}
	return fields, nil
}

// Temporal is a result value of a MySQL DATE or DATETIME column: Text is
// "YYYY-MM-DD" (DateTime false) or "YYYY-MM-DD hh:mm:ss" (DateTime true).
// A type of another package satisfies it without importing wire; every
// non-NULL value of a column is then of that one type.
type Temporal interface {
	MySQLTemporal() (text string, dateTime bool)
}

// fieldFor is the column definition for values of sample's type; maxLen is
// the longest string or byte value.
func fieldFor(name string, sample any, maxLen int) (*gomysql.Field, error) {
	f := &gomysql.Field{Name: []byte(name), Charset: binaryCollation}
	if t, ok := sample.(Temporal); ok {
		f.Type, f.Flag, f.ColumnLength = gomysql.MYSQL_TYPE_DATE, gomysql.BINARY_FLAG, 10
		if _, dateTime := t.MySQLTemporal(); dateTime {
			f.Type, f.ColumnLength = gomysql.MYSQL_TYPE_DATETIME, 19
		}
		return f, nil
	}
	switch sample.(type) {
	case nil:
		f.Type = gomysql.MYSQL_TYPE_NULL
	case int64:
		f.Type, f.Flag, f.ColumnLength = gomysql.MYSQL_TYPE_LONGLONG, gomysql.BINARY_FLAG, 20
	case uint64:
		f.Type, f.Flag, f.ColumnLength = gomysql.MYSQL_TYPE_LONGLONG, gomysql.BINARY_FLAG|gomysql.UNSIGNED_FLAG, 20
	case float64:
		f.Type, f.Flag, f.ColumnLength, f.Decimal = gomysql.MYSQL_TYPE_DOUBLE, gomysql.BINARY_FLAG, 22, notFixedDecimals
	case string:
		// ColumnLength counts bytes: 4 per utf8mb4 character.
		f.Type, f.Charset, f.ColumnLength = gomysql.MYSQL_TYPE_VAR_STRING, utf8mb4Collation, uint32(min(4*maxLen, math.MaxUint32))
	case []byte:
		f.Type, f.Flag, f.ColumnLength = gomysql.MYSQL_TYPE_VAR_STRING, gomysql.BINARY_FLAG, uint32(min(maxLen, math.MaxUint32))
	default:
		return nil, fmt.Errorf("wire: result column %q has a value of type %T; want int64, uint64, float64, string, []byte or a Temporal", name, sample)
	}
	return f, nil
}

// textRow encodes a row in the text protocol: each value a length-encoded
// string, NULL as 0xfb.
func textRow(row []any) ([]byte, error) {
	var data []byte
	for _, v := range row {
		if v == nil {
			data = append(data, 0xfb)
			continue
		}
		var b []byte
		if t, ok := v.(Temporal); ok {
			text, _ := t.MySQLTemporal()
			b = []byte(text)
		} else {
			var err error
			if b, err = gomysql.FormatTextValue(v); err != nil {
				return nil, err
			}
		}
		data = append(data, gomysql.PutLengthEncodedString(b)...)
	}
	return data, nil
}

// binaryRow encodes a row in the binary protocol: a 0x00 header, a NULL
// bitmap with an offset of 2 bits, then each non-NULL value in its column
// type's binary form (8 bytes for LONGLONG and DOUBLE, length-encoded
// strings).
func binaryRow(fields []*gomysql.Field, row []any) ([]byte, error) {
	bitmap := make([]byte, (len(fields)+7+2)/8)
	var values []byte
	for j, v := range row {
		if v == nil {
			bitmap[(j+2)/8] |= 1 << ((j + 2) % 8)
			continue
		}
		if t, ok := v.(Temporal); ok {
			text, _ := t.MySQLTemporal()
			b, err := binaryDateTime(text)
			if err != nil {
				return nil, fmt.Errorf("wire: column %q: %w", fields[j].Name, err)
			}
			values = append(values, b...)
			continue
		}
		b, err := gomysql.FormatBinaryValue(v)
		if err != nil {
			return nil, err
		}
		if fields[j].Type == gomysql.MYSQL_TYPE_VAR_STRING {
			b = gomysql.PutLengthEncodedString(b)
		}
		values = append(values, b...)
	}
	data := append([]byte{0}, bitmap...)
	return append(data, values...), nil
}
