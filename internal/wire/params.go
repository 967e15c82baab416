package wire

import (
	"bytes"
	"encoding/binary"
	"math"
	"regexp"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// unsignedParam is the flag bit of a parameter type that marks it unsigned.
const unsignedParam = 0x80

// mysqlTypeJSON is MYSQL_TYPE_JSON, which go-mysql does not name.
const mysqlTypeJSON = 245

// decodeArguments decodes the parameter block of a COM_STMT_EXECUTE (what
// follows the statement id, flags and iteration count) for st:
//
//	null bitmap, (params+7)/8 bytes
//	new-params-bound flag, 1 byte; if 1, 2 bytes of type and flags per parameter
//	the non-NULL values, each in its type's binary form
//
// A client may send the types once and omit them on later executions, so
// they are kept in st; one whose arguments are all NULL may send none. Parameters sent with COM_STMT_SEND_LONG_DATA have no
// value in the packet.
func decodeArguments(st *prepared, b []byte) ([]any, error) {
	n := len(st.offsets)
	if n == 0 {
		return nil, nil
	}
	r := packetReader{b: b}
	nulls, err := r.take((n + 7) / 8)
	if err != nil {
		return nil, err
	}
	bound, err := r.take(1)
	if err != nil {
		return nil, err
	}
	if bound[0] == 1 {
		types, err := r.take(2 * n)
		if err != nil {
			return nil, err
		}
		st.types = append(st.types[:0], types...)
	}
	args := make([]any, n)
	for i := range args {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue // NULL needs no type: a client binding only NULLs may send none
		}
		if len(st.types) != 2*n {
			return nil, errMalformedPacket
		}
		typ, unsigned := st.types[2*i], st.types[2*i+1]&unsignedParam != 0
		switch data, long := st.longData[i]; {
		case long:
			args[i], err = longDataValue(typ, data)
		default:
			args[i], err = r.value(typ, unsigned)
		}
		if err != nil {
			return nil, err
		}
	}
	return args, nil
}

// packetReader reads a packet's fields, failing on a short packet instead of
// panicking.
type packetReader struct{ b []byte }

func (r *packetReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b) {
		return nil, errMalformedPacket
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v, nil
}

// lengthEncoded reads a length-encoded string.
func (r *packetReader) lengthEncoded() ([]byte, error) {
	head, err := r.take(1)
	if err != nil {
		return nil, err
	}
	size, width := uint64(head[0]), 0
	switch head[0] {
	case 0xfb, 0xff: // NULL and ERR markers are not lengths
		return nil, errMalformedPacket
	case 0xfc:
		width = 2
	case 0xfd:
		width = 3
	case 0xfe:
		width = 8
	}
	if width > 0 {
		raw, err := r.take(width)
		if err != nil {
			return nil, err
		}
		var buf [8]byte
		copy(buf[:], raw)
		size = binary.LittleEndian.Uint64(buf[:])
	}
	if size > uint64(len(r.b)) {
		return nil, errMalformedPacket
	}
	return r.take(int(size))
}

// value reads one non-NULL parameter of MySQL type typ and returns it as one
// of the Go types sqlLiteral renders.
func (r *packetReader) value(typ byte, unsigned bool) (any, error) {
	switch typ {
	case gomysql.MYSQL_TYPE_NULL:
		return nil, nil
	case gomysql.MYSQL_TYPE_TINY:
		return r.integer(1, unsigned)
	case gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_YEAR:
		return r.integer(2, unsigned)
	case gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_INT24:
		return r.integer(4, unsigned)
	case gomysql.MYSQL_TYPE_LONGLONG:
		return r.integer(8, unsigned)
	case gomysql.MYSQL_TYPE_FLOAT:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
	case gomysql.MYSQL_TYPE_DOUBLE:
		b, err := r.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
	case gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_NEWDATE, gomysql.MYSQL_TYPE_DATETIME, gomysql.MYSQL_TYPE_TIMESTAMP:
		return r.datetime(typ)
	case gomysql.MYSQL_TYPE_TIME:
		return r.duration()
	}
	b, err := r.lengthEncoded()
	if err != nil {
		return nil, err
	}
	return longDataValue(typ, b)
}

// longDataValue interprets the bytes of a length-encoded parameter (or one
// sent with COM_STMT_SEND_LONG_DATA) of type typ. Text types must hold
// UTF-8 (checkUTF8): they become string literals of the statement's text.
// BLOB types are bytes, bound as X'...', and may hold any.
func longDataValue(typ byte, b []byte) (any, error) {
	switch typ {
	case gomysql.MYSQL_TYPE_DECIMAL, gomysql.MYSQL_TYPE_NEWDECIMAL:
		if !decimalSyntax.Match(b) {
			return nil, errWrongArguments("DECIMAL parameter %q is not a number", b)
		}
		if err := checkDecimalExponent(b); err != nil {
			return nil, err
		}
		return decimalText(b), nil
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING,
		gomysql.MYSQL_TYPE_ENUM, gomysql.MYSQL_TYPE_SET, mysqlTypeJSON:
		if err := checkUTF8(string(b), "a string parameter"); err != nil {
			return nil, err
		}
		return string(b), nil
	case gomysql.MYSQL_TYPE_TINY_BLOB, gomysql.MYSQL_TYPE_MEDIUM_BLOB, gomysql.MYSQL_TYPE_LONG_BLOB,
		gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_BIT, gomysql.MYSQL_TYPE_GEOMETRY:
		return append([]byte(nil), b...), nil
	}
	return nil, errWrongArguments("parameter type %d is not supported", typ)
}

// decimalSyntax is what a DECIMAL parameter may look like.
var decimalSyntax = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// checkDecimalExponent refuses a DECIMAL parameter with an exponent whose
// magnitude passes DOUBLE's range, as the parser refuses the literal it
// would become (1e400 is read as a DOUBLE): 1367 (22007), naming the
// parameter as sent, its sign included, where the parser's message would
// name the literal without its sign.
func checkDecimalExponent(b []byte) error {
	if !bytes.ContainsAny(b, "eE") {
		return nil
	}
	if f, _ := strconv.ParseFloat(string(b), 64); math.IsInf(f, 0) {
		return gomysql.NewDefaultError(gomysql.ER_ILLEGAL_VALUE_FOR_TYPE, "double", b)
	}
	return nil
}

func (r *packetReader) integer(size int, unsigned bool) (any, error) {
	b, err := r.take(size)
	if err != nil {
		return nil, err
	}
	var buf [8]byte
	copy(buf[:], b)
	u := binary.LittleEndian.Uint64(buf[:])
	if unsigned {
		return u, nil
	}
	shift := 64 - 8*size // sign-extend from size bytes
	return int64(u<<shift) >> shift, nil
}

// datetime reads a binary DATE/DATETIME/TIMESTAMP: a length of 0, 4, 7 or 11,
// then year (2 bytes), month, day, hour, minute, second, microseconds (4).
// The wall-clock value is kept as is; it has no time zone. A component out
// of its range (year above 9999, month above 12, a day past its month's
// end, hour above 23, minute or second above 59, microseconds above
// 999999) is refused with 1210 rather than carried into the next one as
// time.Date would (MySQL reads such a value as NULL).
func (r *packetReader) datetime(typ byte) (any, error) {
	head, err := r.take(1)
	if err != nil {
		return nil, err
	}
	b, err := r.take(int(head[0]))
	if err != nil {
		return nil, err
	}
	var year, month, day, hour, minute, second, micro int
	switch len(b) {
	case 0:
		return zeroDateText("0000-00-00 00:00:00"), nil
	case 11:
		micro = int(binary.LittleEndian.Uint32(b[7:11]))
		fallthrough
	case 7:
		hour, minute, second = int(b[4]), int(b[5]), int(b[6])
		fallthrough
	case 4:
		year, month, day = int(binary.LittleEndian.Uint16(b[0:2])), int(b[2]), int(b[3])
	default:
		return nil, errMalformedPacket
	}
	if year == 0 || month == 0 || day == 0 {
		return zeroDateText("0000-00-00 00:00:00"), nil
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, micro*1000, time.UTC)
	if year > 9999 || month > 12 || t.Day() != day || hour > 23 || minute > 59 || second > 59 || micro > 999999 {
		return nil, errWrongArguments("%s parameter %04d-%02d-%02d %02d:%02d:%02d.%06d is not a valid date and time",
			temporalTypeName(typ), year, month, day, hour, minute, second, micro)
	}
	return t, nil
}

// temporalTypeName names a date type for messages.
func temporalTypeName(typ byte) string {
	switch typ {
	case gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_NEWDATE:
		return "DATE"
	case gomysql.MYSQL_TYPE_TIMESTAMP:
		return "TIMESTAMP"
	}
	return "DATETIME"
}

// maxTime is the largest magnitude of a MySQL TIME, 838:59:59.999999.
const maxTime = 839*time.Hour - time.Microsecond

// duration reads a binary TIME: a length of 0, 8 or 12, then a sign byte
// (1 negative, 0 not), days (4 bytes), hour, minute, second, microseconds
// (4). A sign byte other than 0 or 1, an hour above 23, a minute or
// second above 59, microseconds above 999999 or a magnitude above
// 838:59:59.999999 is refused with 1210.
func (r *packetReader) duration() (any, error) {
	head, err := r.take(1)
	if err != nil {
		return nil, err
	}
	b, err := r.take(int(head[0]))
	if err != nil {
		return nil, err
	}
	var micro uint32
	switch len(b) {
	case 0:
		return time.Duration(0), nil
	case 12:
		micro = binary.LittleEndian.Uint32(b[8:12])
	case 8:
	default:
		return nil, errMalformedPacket
	}
	days, hour, minute, second := binary.LittleEndian.Uint32(b[1:5]), b[5], b[6], b[7]
	if b[0] > 1 || hour > 23 || minute > 59 || second > 59 || micro > 999999 {
		return nil, errWrongArguments("TIME parameter of sign %d, %d days, %02d:%02d:%02d.%06d is not a valid time",
			b[0], days, hour, minute, second, micro)
	}
	if days > uint32(maxTime/(24*time.Hour)) {
		return nil, errWrongArguments("TIME parameter of %d days is out of range", days)
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute +
		time.Duration(second)*time.Second + time.Duration(micro)*time.Microsecond
	if d > maxTime {
		return nil, errWrongArguments("TIME parameter %s is out of range", timeText(d))
	}
	if b[0] == 1 {
		d = -d
	}
	return d, nil
}
