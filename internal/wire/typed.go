package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// Field is an explicit column definition, for results whose column types are
// known in advance (catalog answers) rather than derived from the values.
type Field struct {
	Name string
	// Type is a MySQL column type code (MYSQL_TYPE_* of go-mysql's mysql package).
	Type byte
	// Flags are MySQL column flags (NOT_NULL_FLAG, UNSIGNED_FLAG, BINARY_FLAG, ENUM_FLAG, ...).
	Flags uint16
	// Charset is the collation id of a text column; 0 means utf8mb4_general_ci
	// for character types and binary (63) for everything else.
	Charset  uint16
	Length   uint32
	Decimals uint8
}

// typedResult converts a Result whose Fields are set. Its values are nil or
// strings in MySQL's text format for the column's type; the binary protocol
// encodes each by its column type.
func typedResult(r *Result, binaryProtocol bool) (*gomysql.Result, error) {
	rs := gomysql.NewResultset(len(r.Fields))
	for j, f := range r.Fields {
		rs.Fields[j] = f.mysqlField()
	}
	for i, row := range r.Rows {
		if len(row) != len(r.Fields) {
			return nil, fmt.Errorf("wire: result row %d has %d values for %d columns", i, len(row), len(r.Fields))
		}
		var data []byte
		var err error
		if binaryProtocol {
			data, err = typedBinaryRow(r.Fields, row)
		} else {
			data, err = typedTextRow(row)
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

// mysqlField is f's column definition, as a result set and a prepared
// statement's announcement of its columns send it.
func (f Field) mysqlField() *gomysql.Field {
	cs := f.Charset
	if cs == 0 {
		cs = binaryCollation
		if isCharacterType(f) {
			cs = utf8mb4Collation
		}
	}
	return &gomysql.Field{
		Name: []byte(f.Name), OrgName: []byte(f.Name), Type: f.Type, Flag: f.Flags,
		Charset: cs, ColumnLength: f.Length, Decimal: f.Decimals,
	}
}

// isCharacterType reports whether f holds text rather than numbers, times or bytes.
func isCharacterType(f Field) bool {
	switch f.Type {
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING,
		gomysql.MYSQL_TYPE_TINY_BLOB, gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_MEDIUM_BLOB,
		gomysql.MYSQL_TYPE_LONG_BLOB, gomysql.MYSQL_TYPE_ENUM, gomysql.MYSQL_TYPE_SET, gomysql.MYSQL_TYPE_JSON:
		return f.Flags&gomysql.BINARY_FLAG == 0
	}
	return false
}

// FixedDouble is a value of a typed result's DOUBLE column whose type
// fixes its decimals (Field.Decimals below 31, as MariaDB's ROUND(x, 2)),
// or of its FLOAT column: the text protocol sends MySQLText, written with
// those decimals (1.00) or a FLOAT's six digits, and the binary protocol
// the number itself, MySQLDouble (a FLOAT's as its four bytes), which
// that text may round (0.333333 of 0.3333333333333333).
type FixedDouble interface {
	MySQLText() string
	MySQLDouble() float64
}

func typedText(v any) (string, bool, error) {
	switch v := v.(type) {
	case nil:
		return "", true, nil
	case string:
		return v, false, nil
	case FixedDouble:
		return v.MySQLText(), false, nil
	}
	return "", false, fmt.Errorf("wire: a typed result holds %T; want string, FixedDouble or nil", v)
}

func typedTextRow(row []any) ([]byte, error) {
	var data []byte
	for _, v := range row {
		s, null, err := typedText(v)
		if err != nil {
			return nil, err
		}
		if null {
			data = append(data, 0xfb)
			continue
		}
		data = append(data, gomysql.PutLengthEncodedString([]byte(s))...)
	}
	return data, nil
}

// typedBinaryRow encodes a row in the binary protocol from the text form of
// its values: integers in the width of their column type, floating point in
// IEEE little-endian (a FixedDouble's double, not its text), dates and
// times in MySQL's binary date/time structure, everything else (decimals,
// strings, enums, sets, JSON, bit) as length-encoded strings.
func typedBinaryRow(fields []Field, row []any) ([]byte, error) {
	bitmap := make([]byte, (len(fields)+7+2)/8)
	var values []byte
	for j, v := range row {
		if x, ok := v.(FixedDouble); ok && fields[j].Type == gomysql.MYSQL_TYPE_DOUBLE {
			values = binary.LittleEndian.AppendUint64(values, math.Float64bits(x.MySQLDouble()))
			continue
		}
		if x, ok := v.(FixedDouble); ok && fields[j].Type == gomysql.MYSQL_TYPE_FLOAT {
			values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(x.MySQLDouble())))
			continue
		}
		s, null, err := typedText(v)
		if err != nil {
			return nil, err
		}
		if null {
			bitmap[(j+2)/8] |= 1 << ((j + 2) % 8)
			continue
		}
		b, err := binaryValue(fields[j], s)
		if err != nil {
			return nil, fmt.Errorf("wire: column %q: %w", fields[j].Name, err)
		}
		values = append(values, b...)
	}
	data := append([]byte{0}, bitmap...)
	return append(data, values...), nil
}

func binaryValue(f Field, s string) ([]byte, error) {
	switch f.Type {
	case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_YEAR,
		gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_LONGLONG:
		var u uint64
		if f.Flags&gomysql.UNSIGNED_FLAG != 0 {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, err
			}
			u = n
		} else {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, err
			}
			u = uint64(n)
		}
		width := map[byte]int{
			gomysql.MYSQL_TYPE_TINY: 1, gomysql.MYSQL_TYPE_SHORT: 2, gomysql.MYSQL_TYPE_YEAR: 2,
			gomysql.MYSQL_TYPE_INT24: 4, gomysql.MYSQL_TYPE_LONG: 4, gomysql.MYSQL_TYPE_LONGLONG: 8,
		}[f.Type]
		b := binary.LittleEndian.AppendUint64(nil, u)
		return b[:width], nil
	case gomysql.MYSQL_TYPE_DOUBLE:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)), nil
	case gomysql.MYSQL_TYPE_FLOAT:
		x, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, err
		}
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(x))), nil
	case gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_DATETIME, gomysql.MYSQL_TYPE_TIMESTAMP:
		return binaryDateTime(s)
	case gomysql.MYSQL_TYPE_TIME:
		return binaryTime(s)
	}
	return gomysql.PutLengthEncodedString([]byte(s)), nil
}

// binaryDateTime encodes "YYYY-MM-DD[ hh:mm:ss[.ffffff]]" in the binary
// protocol's date structure (length 0, 4, 7 or 11).
func binaryDateTime(s string) ([]byte, error) {
	if strings.HasPrefix(s, "0000-00-00") {
		return []byte{0}, nil
	}
	layout := time.DateOnly
	if len(s) > len(time.DateOnly) {
		layout = "2006-01-02 15:04:05.999999"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return nil, err
	}
	b := binary.LittleEndian.AppendUint16([]byte{0}, uint16(t.Year()))
	b = append(b, byte(t.Month()), byte(t.Day()))
	switch {
	case t.Nanosecond() != 0:
		b = append(b, byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Nanosecond()/1000))
	case t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0:
		b = append(b, byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
	}
	b[0] = byte(len(b) - 1)
	return b, nil
}

// binaryTime encodes "[-]hhh:mm:ss[.ffffff]" in the binary protocol's time
// structure (length 0, 8 or 12).
func binaryTime(s string) ([]byte, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var frac uint32
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits := (s[i+1:] + "000000")[:6]
		n, err := strconv.ParseUint(digits, 10, 32)
		if err != nil {
			return nil, err
		}
		frac, s = uint32(n), s[:i]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("bad TIME value %q", s)
	}
	var hms [3]uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, err
		}
		hms[i] = n
	}
	if hms == [3]uint64{} && frac == 0 {
		return []byte{0}, nil
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	b := []byte{0, sign}
	b = binary.LittleEndian.AppendUint32(b, uint32(hms[0]/24))
	b = append(b, byte(hms[0]%24), byte(hms[1]), byte(hms[2]))
	if frac != 0 {
		b = binary.LittleEndian.AppendUint32(b, frac)
	}
	b[0] = byte(len(b) - 1)
	return b, nil
}
