package wire

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/bind"
)

// decimalText is a DECIMAL parameter as the client sent it: decimal digits,
// already checked by parseDecimalText.
type decimalText string

// zeroDateText is MySQL's zero DATE or DATETIME, which time.Time cannot hold.
type zeroDateText string

// sqlLiteral renders a decoded statement argument as a MySQL literal that
// the session's parser reads back as the same value:
//
//	nil                         NULL
//	int64, uint64               123, -5
//	float32, float64            5e-01, 1e-07 (NaN and ±Inf are refused)
//	decimalText                 as sent (only digits, sign, point, exponent)
//	string                      '...' with ' and \ doubled
//	[]byte                      X'0a1b'
//	time.Time                   '2024-01-02' or '2024-01-02 03:04:05.000006'
//	time.Duration (TIME)        '-838:59:59.000001'
//	zeroDateText                '0000-00-00 00:00:00'
//
// Strings double both ' and \, which reads back the same with or without
// backslash escapes and never ends the literal early; byte strings use hex,
// so no byte of the argument reaches the text unescaped.
func sqlLiteral(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return floatLiteral(float64(v), 32)
	case float64:
		return floatLiteral(v, 64)
	case decimalText:
		return string(v), nil
	case string:
		return quoteString(v), nil
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'", nil
	case time.Time:
		if v.Hour() == 0 && v.Minute() == 0 && v.Second() == 0 && v.Nanosecond() == 0 {
			return "'" + v.Format(time.DateOnly) + "'", nil
		}
		return "'" + v.Format("2006-01-02 15:04:05.999999") + "'", nil
	case time.Duration:
		return "'" + timeText(v) + "'", nil
	case zeroDateText:
		return "'" + string(v) + "'", nil
	default:
		return "", fmt.Errorf("wire: no SQL literal for %T", v)
	}
}

// floatLiteral writes a DOUBLE (or FLOAT) argument with an exponent,
// 2.25e+00, so that it stays a DOUBLE literal: 2.25 would be a DECIMAL,
// and ROUND(?, 1) of 2.25 2.3 where MariaDB, binding a DOUBLE, gives 2.2.
func floatLiteral(f float64, bits int) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("%v is not a number MySQL can hold", f)
	}
	return strconv.FormatFloat(f, 'e', -1, bits), nil
}

// quoteString quotes s as a string literal, doubling ' and \.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte(s[i])
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// timeText renders a TIME value as [-]H:MM:SS[.ffffff].
func timeText(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	h, m, s := d/time.Hour, d/time.Minute%60, d/time.Second%60
	text := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
	if us := d % time.Second / time.Microsecond; us != 0 {
		text += fmt.Sprintf(".%06d", us)
	}
	return text
}

// bindArguments returns query with the markers at offsets replaced by the
// literals of args. An argument of a LIMIT or OFFSET marker is written as
// the unsigned integer MariaDB reads it as (limitLiteral). A BIGINT
// argument -9223372036854775808 negated by a unary minus (k = -?) is
// refused with MariaDB's 1690, the negation being out of range for a
// BIGINT: bound as text it would read as - -9223372036854775808, which
// MariaDB computes as the DECIMAL 9223372036854775808. The literals go in
// as bind.Replace puts them, a space apart from text they would join.
func bindArguments(query string, offsets []uint32, args []any) (string, error) {
	if len(args) != len(offsets) {
		return "", errWrongArguments("%d arguments for %d parameters", len(args), len(offsets))
	}
	literals := make([]string, len(args))
	var negated []bool // bind.Negations, read once when a minimum is bound
	for i, offset := range offsets {
		at := int(offset)
		if v, ok := args[i].(int64); ok && v == math.MinInt64 {
			if negated == nil {
				negated = bind.Negations(query)
			}
			if i < len(negated) && negated[i] {
				return "", errNegatedMinimum()
			}
		}
		lit, err := sqlLiteral(args[i])
		if bind.LimitMarker(query, at) {
			lit, err = limitLiteral(args[i], lit, err)
		}
		if err != nil {
			return "", errWrongArguments("parameter %d: %v", i+1, err)
		}
		literals[i] = lit
	}
	return bind.Replace(query, offsets, literals), nil
}

// limitLiteral writes an argument of a LIMIT or OFFSET marker (lit and
// err, its sqlLiteral) as the unsigned integer MariaDB 10.11 reads it as:
// a negative integer as its two's complement (-1 is
// 18446744073709551615, every row); a DOUBLE or FLOAT rounded half to
// even (rint: 2.5 is 2, 2.9 is 3), saturated to a BIGINT and then read
// unsigned as an integer is (-1.5 is -2, every row); a DECIMAL rounded
// half away from zero (2.5 is 3); a string or byte string by its leading
// integer (bind.LeadingInteger: '2' is 2, '2.9' 2, 'abc' 0), each
// saturated to a BIGINT and read unsigned (bind.Integer.Unsigned).
// LIMIT and OFFSET literals are unsigned integers: -1, 2.5 and '2' there
// were 1064 or 1210 where MariaDB answers.
func limitLiteral(arg any, lit string, err error) (string, error) {
	var f float64
	switch v := arg.(type) {
	case int64:
		return strconv.FormatUint(uint64(v), 10), nil
	case decimalText:
		return strconv.FormatUint(bind.RoundDecimal(string(v)).Unsigned(), 10), nil
	case string:
		return strconv.FormatUint(bind.LeadingInteger(v).Unsigned(), 10), nil
	case []byte:
		return strconv.FormatUint(bind.LeadingInteger(string(v)).Unsigned(), 10), nil
	case float32:
		f = float64(v)
	case float64:
		f = v
	default:
		return lit, err
	}
	if err != nil {
		return "", err
	}
	r := math.RoundToEven(f)
	switch {
	case r >= 0x1p63:
		return strconv.FormatInt(math.MaxInt64, 10), nil
	case r < -0x1p63:
		return strconv.FormatUint(1<<63, 10), nil
	}
	return strconv.FormatUint(uint64(int64(r)), 10), nil
}
