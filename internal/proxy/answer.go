package proxy

import (
	"fmt"
	"strconv"

	"github.com/dpproxy/dpproxy/internal/catalogdb"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// MySQL column types, flags and collations of private answers
// (include/field_types.h, mysql_com.h, m_ctype.h).
const (
	mysqlTypeLong       = 3
	mysqlTypeFloat      = 4
	mysqlTypeDouble     = 5
	mysqlTypeNull       = 6
	mysqlTypeLongLong   = 8
	mysqlTypeDate       = 10
	mysqlTypeDateTime   = 12
	mysqlTypeNewDecimal = 246
	mysqlTypeMediumBlob = 250
	mysqlTypeLongBlob   = 251
	mysqlTypeBlob       = 252 // MYSQL_TYPE_BLOB, as MySQL sends TEXT results
	mysqlTypeVarChar    = 253 // MYSQL_TYPE_VAR_STRING, as MySQL sends VARCHAR results
	unsignedFlag        = 32
	binaryFlag          = 128
	binaryCollation     = 63
	utf8mb4Collation    = 45
)

// answerColumn is the column definition of a private answer's column of
// type t; it depends on t only, so that clients see the same definition
// for a statement however the noise falls.
func answerColumn(name string, t planner.ResultType) catalogdb.Column {
	c := catalogdb.Column{Name: name, Flags: binaryFlag, Charset: binaryCollation}
	switch t.Kind() {
	case planner.ResultBigint:
		c.Type, c.Length = mysqlTypeLongLong, 20
	case planner.ResultUnsigned:
		c.Type, c.Length, c.Flags = mysqlTypeLongLong, 20, binaryFlag|unsignedFlag
	case planner.ResultInt:
		c.Type, c.Length = mysqlTypeLong, 11
	case planner.ResultDecimal:
		// MySQL's length of DECIMAL(p, s): its digits, a point, a sign.
		c.Type, c.Length, c.Decimals = mysqlTypeNewDecimal, uint32(t.Precision()+min(t.Scale(), 1)+1), uint8(t.Scale())
	case planner.ResultDouble:
		// 31 (planner.NotFixedDecimals) or the decimals its type fixes.
		c.Type, c.Length, c.Decimals = mysqlTypeDouble, 22, uint8(t.Decimals())
	case planner.ResultFloat:
		c.Type, c.Length, c.Decimals = mysqlTypeFloat, 12, planner.NotFixedDecimals
	case planner.ResultText:
		c.Type, c.Length = textColumn(t.Chars())
		c.Flags, c.Charset = 0, utf8mb4Collation
	case planner.ResultDate:
		c.Type, c.Length = mysqlTypeDate, 10
	case planner.ResultDateTime:
		c.Type, c.Length = mysqlTypeDateTime, 19
	default:
		c.Type, c.Flags = mysqlTypeNull, 0
	}
	return c
}

// textColumn is the MySQL type and length MariaDB 10.11 announces for
// text of at most chars characters of utf8mb4 (its type, not its values,
// so it never depends on the data): VARCHAR of 4 bytes a character up to
// 65528 bytes, beyond that a BLOB, MEDIUMBLOB (from 65536 bytes) or
// LONGBLOB (from 16 MiB) whose length MariaDB announces four times over,
// a LONGBLOB's at most 64 MiB.
func textColumn(chars int) (typ uint8, length uint32) {
	bytes := uint64(chars) * 4
	switch {
	case bytes < 65532:
		return mysqlTypeVarChar, uint32(bytes)
	case bytes < 1<<16:
		return mysqlTypeBlob, uint32(4 * bytes)
	case bytes < 1<<24:
		return mysqlTypeMediumBlob, uint32(4 * bytes)
	}
	return mysqlTypeLongBlob, 4 << 24
}

// answer is the Result of a private answer: its columns typed by
// out.Types, which the plan alone fixes (a No Reply NULL included), and
// each value in MySQL's text format for its column's type: BIGINT, INT
// and BIGINT UNSIGNED in decimal, DECIMAL with its column's decimals,
// DOUBLE as MariaDB writes it (planner.FormatDouble: "3" for an
// integer-valued one, 1e300 and not its 301 digits; the binary protocol
// sends it as a double), and a DOUBLE whose type fixes its decimals
// (planner.DoubleType: ROUND(x, 2), FLOOR(x)) as a planner.FixedDouble,
// which the text protocol writes with them (1.00, 1000000000000000) and
// the binary protocol sends as its double (wire.FixedDouble), a FLOAT as
// a planner.Float (six digits as text, its four bytes in the binary
// protocol), dates and text as they are.
func answer(out *exec.Result) (*Result, error) {
	if len(out.Types) != len(out.Columns) {
		return nil, dperr.New(dperr.Internal, "internal error: %d column types for %d columns", len(out.Types), len(out.Columns))
	}
	res := &Result{Warnings: uint16(min(len(out.Warnings), 65535))}
	for j, name := range out.Columns {
		res.Typed = append(res.Typed, answerColumn(name, out.Types[j]))
	}
	for _, row := range out.ResultRows() {
		if len(row) != len(out.Columns) {
			return nil, dperr.New(dperr.Internal, "internal error: a result row of %d values for %d columns", len(row), len(out.Columns))
		}
		text := make([]any, len(row))
		for j, v := range row {
			switch x := v.(type) {
			case nil:
			case int64:
				text[j] = strconv.FormatInt(x, 10)
			case uint64:
				text[j] = strconv.FormatUint(x, 10)
			case planner.Decimal:
				text[j] = string(x)
			case planner.Float:
				text[j] = x
			case float64:
				text[j] = planner.FormatDouble(x)
				if d := out.Types[j].Decimals(); out.Types[j].Kind() == planner.ResultDouble && d < planner.NotFixedDecimals {
					text[j] = planner.FixedDouble{Num: x, Decimals: d}
				}
			case string:
				text[j] = x
			case planner.Date:
				text[j] = string(x)
			case planner.DateTime:
				text[j] = string(x)
			default:
				return nil, dperr.Wrap(dperr.Internal, fmt.Errorf("column %q holds a %T", out.Columns[j], v), "internal error: malformed result")
			}
		}
		res.Rows = append(res.Rows, text)
	}
	return res, nil
}
