package planner

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// The string functions of post-processing, as MariaDB 10.11 computes
// them over utf8mb4 text: counts and positions in characters, matches
// (REPLACE, TRIM) byte for byte whatever the collation, a number read as
// the text CONCAT makes of it (text). Their results are text in the
// collation of their text arguments (Warnings.madeText: a released key's
// column's when one is among them), FORMAT's in the connection's;
// LENGTH and CHAR_LENGTH are integers.

// textFuncs are the functions whose value is text made from their
// arguments (CONCAT, CAST AS CHAR and the string functions but LENGTH and
// CHAR_LENGTH): VARCHARs of textChars, which may hold a literal's text
// (collationCheck.literalText).
var textFuncs = map[string]bool{
	"concat": true, "cast-char": true, "concat_ws": true, "format": true, "lpad": true, "rpad": true, "repeat": true,
	"replace": true, "upper": true, "lower": true, "trim": true, "ltrim": true, "rtrim": true, "left": true, "right": true,
	"substring": true,
}

// packetWarning is MariaDB's warning 1301 for a string function fn whose
// result would exceed max_allowed_packet, which then is NULL.
const packetWarning = 1301

// evalString evaluates the string function name over its arguments a
// (ok), with MariaDB's NULLs: NULL when an argument is NULL, except
// CONCAT_WS, which skips NULL values (NULL only for a NULL separator),
// and REPLACE, which returns its string unchanged for an empty search
// string whatever the replacement. FORMAT is formatFunc's. A result
// longer than max_allowed_packet is NULL with warning 1301, checked as
// MariaDB checks it (LPAD and RPAD against 4 bytes a character of the
// padded length, REPEAT against the repeated text, CONCAT_WS and REPLACE
// against the result as it grows). ok is false for other functions.
func evalString(name string, a []Datum, w *Warnings) (d Datum, ok bool) {
	switch name {
	case "concat_ws":
		return concatWS(a, w), true
	case "replace":
		return replace(a, w), true
	case "lpad", "rpad", "repeat", "upper", "lower", "left", "right", "substring",
		"length", "char_length", "trim", "ltrim", "rtrim":
	default:
		return Datum{}, false
	}
	for _, x := range a {
		if x.Null {
			return Datum{Null: true}, true
		}
	}
	s := text(a[0])
	made := func(v string, args ...Datum) Datum {
		return Datum{Str: v, IsText: true, coll: w.madeText(args)}
	}
	switch name {
	case "length":
		return num(float64(len(s)), true), true
	case "char_length":
		return num(float64(utf8.RuneCountInString(s)), true), true
	case "upper":
		return made(caseMap(s, upperRune), a[0]), true
	case "lower":
		return made(caseMap(s, lowerRune), a[0]), true
	case "left", "right":
		n := intArg(a[1], w)
		chars := utf8.RuneCountInString(s)
		switch {
		case n <= 0:
			s = ""
		case n >= int64(chars):
		case name == "left":
			s = s[:charOffset(s, int(n))]
		default:
			s = s[charOffset(s, chars-int(n)):]
		}
		return made(s, a[0]), true
	case "substring":
		return made(substring(s, a[1:], w), a[0]), true
	case "trim", "ltrim", "rtrim":
		return made(trimText(name, s, text(a[1])), a[0], a[1]), true
	case "repeat":
		n := intArg(a[1], w)
		switch {
		case n <= 0:
			return made("", a[0]), true
		case int64(len(s)) > w.maxPacket()/n:
			return w.packetOverflow(name), true
		}
		return made(strings.Repeat(s, int(n)), a[0]), true
	}
	// LPAD and RPAD.
	pad := " "
	if len(a) == 3 {
		pad = text(a[2])
	}
	// MariaDB reads at most 2^31 - 1 characters of a count.
	n, chars := min(intArg(a[1], w), math.MaxInt32), int64(utf8.RuneCountInString(s))
	switch {
	case n < 0:
		return Datum{Null: true}, true
	case n <= chars:
		return made(s[:charOffset(s, int(n))], a...), true
	case n*utf8.UTFMax > w.maxPacket():
		return w.packetOverflow(name), true
	case pad == "":
		return Datum{Null: true}, true
	}
	fill := padding(pad, int(n-chars))
	if name == "lpad" {
		return made(fill+s, a...), true
	}
	return made(s+fill, a...), true
}

// padding is n characters of pad repeated, the last repetition cut.
func padding(pad string, n int) string {
	per := utf8.RuneCountInString(pad)
	out := strings.Repeat(pad, n/per)
	return out + pad[:charOffset(pad, n%per)]
}

// charOffset is the byte offset of the n-th character of s (len(s) past
// its last).
func charOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// substring is SUBSTRING(s, pos[, len]) as MariaDB computes it: from
// character pos (1 the first, a negative one counted from the end) for
// len characters (to the end without len); empty for pos 0, a position
// outside s, or len at most 0.
func substring(s string, a []Datum, w *Warnings) string {
	pos := intArg(a[0], w)
	length := int64(math.MaxInt32)
	if len(a) > 1 {
		if length = intArg(a[1], w); length <= 0 {
			return ""
		}
		length = min(length, math.MaxInt32)
	}
	if pos < math.MinInt32 || pos > math.MaxInt32 {
		return ""
	}
	chars := int64(utf8.RuneCountInString(s))
	start := pos - 1
	if pos < 0 {
		start = chars + pos
	}
	if start < 0 || start >= chars {
		return ""
	}
	from := charOffset(s, int(start))
	rest := s[from:]
	return rest[:charOffset(rest, int(min(length, chars-start)))]
}

// trimText removes rem, repeated, from the start (ltrim), the end (rtrim) or
// both ends (trim) of s, byte for byte; nothing for an empty rem.
func trimText(name, s, rem string) string {
	if rem == "" {
		return s
	}
	if name != "rtrim" {
		for strings.HasPrefix(s, rem) {
			s = s[len(rem):]
		}
	}
	if name != "ltrim" {
		for strings.HasSuffix(s, rem) {
			s = s[:len(s)-len(rem)]
		}
	}
	return s
}

// concatWS is CONCAT_WS(sep, x, ...): the texts of the values that are
// not NULL joined by sep; NULL for a NULL separator, and with warning
// 1301 for a result longer than max_allowed_packet.
func concatWS(a []Datum, w *Warnings) Datum {
	if a[0].Null {
		return Datum{Null: true}
	}
	sep := text(a[0])
	var b strings.Builder
	first := true
	for _, x := range a[1:] {
		if x.Null {
			continue
		}
		v := text(x)
		if !first {
			if int64(b.Len()+len(sep)+len(v)) > w.maxPacket() {
				return w.packetOverflow("concat_ws")
			}
			b.WriteString(sep)
		}
		b.WriteString(v)
		first = false
	}
	return Datum{Str: b.String(), IsText: true, coll: w.madeText(a)}
}

// replace is REPLACE(s, from, to): every occurrence of from in s, left to
// right, replaced by to, byte for byte (case and accents count, whatever
// the collation); s itself for an empty from, even when to is NULL;
// otherwise NULL when any argument is. A result that would grow beyond
// max_allowed_packet is NULL with warning 1301.
func replace(a []Datum, w *Warnings) Datum {
	if a[0].Null || a[1].Null {
		return Datum{Null: true}
	}
	s, from := text(a[0]), text(a[1])
	made := Datum{Str: s, IsText: true, coll: w.madeText(a)}
	if from == "" {
		return made
	}
	if a[2].Null {
		return Datum{Null: true}
	}
	to := text(a[2])
	// MariaDB checks the text after each replacement: the last is the
	// longest when to is longer than from, else the first.
	if n := int64(strings.Count(s, from)); n > 0 {
		delta := int64(len(to) - len(from))
		if int64(len(s))+max(delta, n*delta) > w.maxPacket() {
			return w.packetOverflow("replace")
		}
	}
	made.Str = strings.ReplaceAll(s, from, to)
	return made
}

// intArg reads d, not NULL, as MariaDB reads a count or a position (its
// val_int): an integer as it is, a DECIMAL rounded half away from zero, a
// DOUBLE to even, each saturated at BIGINT's ends; text as the integer it
// starts with (leading spaces, a sign, digits), 0 without one, with
// warning 1292 of type INTEGER when anything but spaces follows.
func intArg(d Datum, w *Warnings) int64 {
	var x *big.Int
	switch {
	case d.IsText:
		x = textInteger(d.Str, w)
	case approximate(d):
		f := math.RoundToEven(d.Num)
		switch {
		case f >= math.MaxInt64:
			return math.MaxInt64
		case f <= math.MinInt64:
			return math.MinInt64
		}
		return int64(f)
	default:
		x = exactOf(d).round(0, false).unscaled
	}
	switch {
	case x.Cmp(maxBigintI) > 0:
		return math.MaxInt64
	case x.Cmp(minBigint) < 0:
		return math.MinInt64
	}
	return x.Int64()
}

// textInteger is the integer text s starts with, as intArg reads text.
func textInteger(s string, w *Warnings) *big.Int {
	isSpace := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	x, ok := new(big.Int).SetString(strings.TrimPrefix(s[start:i], "+"), 10)
	if !ok || i == digits {
		x = new(big.Int)
	}
	if strings.TrimLeft(s[i:], " \t\n\v\f\r") != "" || i == digits {
		w.truncated(s, "INTEGER")
	}
	return x
}

// truncated counts MySQL's 1292 for text s read as a number of type typ.
func (w *Warnings) truncated(s, typ string) {
	if w != nil {
		w.Truncations = append(w.Truncations, Truncation{Value: s, Type: typ})
	}
}

// maxPacket is the session's max_allowed_packet (Query.MaxAllowedPacket).
func (w *Warnings) maxPacket() int64 {
	if w == nil || w.packet <= 0 {
		return catalog.DefaultMaxAllowedPacket
	}
	return w.packet
}

// packetOverflow is the NULL of string function fn whose result would
// exceed max_allowed_packet, counting MariaDB's warning 1301.
func (w *Warnings) packetOverflow(fn string) Datum {
	w.warn(false, packetWarning, fmt.Sprintf("Result of %s() was larger than max_allowed_packet (%d) - truncated", fn, w.maxPacket()))
	return Datum{Null: true}
}

// warn counts a warning (a note when note is set) other than a division
// by zero or a truncation, in Warnings.Casts.
func (w *Warnings) warn(note bool, code uint16, message string) {
	if w != nil {
		w.Casts = append(w.Casts, CastWarning{Note: note, Code: code, Message: message})
	}
}

// caseMap is s with every character mapped by f.
func caseMap(s string, f func(rune) rune) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(f(r))
	}
	return b.String()
}

// castChar is CAST(a[0] AS CHAR), or AS CHAR(n) with the constant n as
// a[1], as MariaDB 10.11 casts: text of at most n characters, cut with
// warning 1292 "Truncated incorrect CHAR(n) value: '…'" (the whole text,
// catalog.ErrConvText) when it is longer. An n beyond max_allowed_packet counts
// warning 1301 first, NULL or not, and then cuts nothing (MariaDB lowers
// n to the packet, which no text exceeds), the value kept.
func castChar(a []Datum, w *Warnings) Datum {
	n := int64(-1)
	if len(a) > 1 {
		n = int64(number(a[1]))
		if n > w.maxPacket() {
			w.warn(false, packetWarning, fmt.Sprintf("Result of cast_as_char() was larger than max_allowed_packet (%d) - truncated", w.maxPacket()))
			n = -1
		}
	}
	if a[0].Null {
		return Datum{Null: true}
	}
	s := text(a[0])
	if n >= 0 && int64(len(s)) > n {
		if cut := cutChars(s, n); cut != s {
			w.warn(false, truncatedCode, fmt.Sprintf("Truncated incorrect CHAR(%d) value: '%s'", n, catalog.ErrConvText(s)))
			s = cut
		}
	}
	return Datum{Str: s, IsText: true, coll: w.madeText(nil)}
}

// truncatedCode is MySQL's ER_TRUNCATED_WRONG_VALUE, 1292.
const truncatedCode = 1292

// cutChars is s cut to its first n characters.
func cutChars(s string, n int64) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
