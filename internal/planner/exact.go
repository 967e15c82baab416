package planner

import (
	"cmp"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// MySQL's exact arithmetic (MariaDB 10.11's, strings/decimal.c): a
// DECIMAL is held in at most decimalWords words of wordDigits digits; its
// type shows at most maxDecimalScale decimals; a quotient keeps
// divIncrement more decimals than its dividend's type
// (div_precision_increment).
const (
	decimalWords    = 9
	wordDigits      = 9
	maxDecimalScale = 38
	divIncrement    = 4
)

// decimal is an exact number as MySQL's DECIMAL arithmetic holds one:
// unscaled·10^-frac, frac being the digits it keeps after the point (5 / 3
// keeps nine: 1.666666666).
type decimal struct {
	unscaled *big.Int
	frac     int
}

// parseDecimal reads "-12.340" (an optional minus, digits, an optional
// point and digits) keeping every digit after the point.
func parseDecimal(s string) (decimal, bool) {
	body := strings.TrimPrefix(s, "-")
	whole, fraction, _ := strings.Cut(body, ".")
	digits := whole + fraction
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return decimal{}, false
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return decimal{}, false
	}
	if len(body) < len(s) {
		v.Neg(v)
	}
	return decimal{v, len(fraction)}, true
}

// floatDecimal is the shortest decimal that reads back as the finite x,
// as MySQL converts a DOUBLE to a DECIMAL (0.15e0 is 0.15).
func floatDecimal(x float64) decimal {
	d, _ := parseDecimal(strconv.FormatFloat(x, 'f', -1, 64))
	return d
}

func intDecimal(x *big.Int) decimal { return decimal{x, 0} }

// String writes x with all its digits after the point: "-0.50".
func (x decimal) String() string {
	s := new(big.Int).Abs(x.unscaled).String()
	if x.frac > 0 {
		if len(s) <= x.frac {
			s = strings.Repeat("0", x.frac-len(s)+1) + s
		}
		s = s[:len(s)-x.frac] + "." + s[len(s)-x.frac:]
	}
	if x.unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// Float64 is the float64 nearest to x.
func (x decimal) Float64() float64 {
	f, _ := strconv.ParseFloat(x.String(), 64)
	return f + 0 // no negative zero
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// digits is the number of digits of x's unscaled value (0 for zero).
func (x decimal) digits() int {
	if x.unscaled.Sign() == 0 {
		return 0
	}
	return len(new(big.Int).Abs(x.unscaled).String())
}

// round returns x with d digits after the point, MySQL's
// decimal_round: rounded half away from zero (truncated toward zero
// when truncate) to a multiple of 10^-d, a negative d rounding to tens,
// hundreds, ...; x itself, its digits kept, when it has at most d
// decimals.
func (x decimal) round(d int, truncate bool) decimal {
	frac := max(d, 0)
	switch {
	case d >= x.frac:
		return x
	case x.frac-d > x.digits()+1: // |x| is below half of 10^-d
		return decimal{new(big.Int), frac}
	}
	unit := pow10(x.frac - d)
	q, r := new(big.Int).QuoRem(x.unscaled, unit, new(big.Int))
	if r.Abs(r).Lsh(r, 1).Cmp(unit) >= 0 && !truncate {
		q.Add(q, big.NewInt(int64(x.unscaled.Sign())))
	}
	if d < 0 {
		q.Mul(q, pow10(-d))
	}
	return decimal{q, frac}
}

// withFrac is x with exactly frac digits after the point: padded with
// zeros, or rounded half away from zero.
func (x decimal) withFrac(frac int) decimal {
	if frac < x.frac {
		return x.round(frac, false)
	}
	return decimal{new(big.Int).Mul(x.unscaled, pow10(frac-x.frac)), frac}
}

// align returns x and y with the same number of digits after the point.
func align(x, y decimal) (a, b *big.Int, frac int) {
	frac = max(x.frac, y.frac)
	return x.withFrac(frac).unscaled, y.withFrac(frac).unscaled, frac
}

func (x decimal) cmp(y decimal) int {
	a, b, _ := align(x, y)
	return a.Cmp(b)
}

func (x decimal) sign() int { return x.unscaled.Sign() }

// fit applies the bounds of MySQL's decimal buffer to x, computed by op:
// digits after the point beyond what the words left by the integer part
// hold are truncated; an integer part beyond them all is MySQL's 1690.
func (x decimal) fit(op string) (decimal, error) {
	words := func(n int) int { return (n + wordDigits - 1) / wordDigits }
	intg := words(max(x.digits()-x.frac, 0))
	if intg > decimalWords {
		return decimal{}, dperr.New(dperr.OutOfRange, "DECIMAL value is out of range in '%s' of released values", op)
	}
	if keep := (decimalWords - intg) * wordDigits; x.frac > keep {
		x = x.round(keep, true)
	}
	return x, nil
}

func addDecimal(x, y decimal, op string) (decimal, error) {
	a, b, frac := align(x, y)
	return decimal{a.Add(a, b), frac}.fit(op)
}

func subDecimal(x, y decimal, op string) (decimal, error) {
	a, b, frac := align(x, y)
	return decimal{a.Sub(a, b), frac}.fit(op)
}

func mulDecimal(x, y decimal, op string) (decimal, error) {
	return decimal{new(big.Int).Mul(x.unscaled, y.unscaled), x.frac + y.frac}.fit(op)
}

// quoDecimal is x / y (y not 0) as MySQL's do_div_mod computes it with
// div_precision_increment incr: truncated toward zero after whole words
// of digits, as many as the operands' decimals rounded up to words hold
// plus incr decimals where those words leave fewer spare ones (5 / 3 is
// 1.666666666, nine decimals; its type shows four).
func quoDecimal(x, y decimal, incr int, op string) (decimal, error) {
	up := func(n int) int { return (n + wordDigits - 1) / wordDigits * wordDigits }
	a, b := up(x.frac), up(y.frac)
	incr = max(incr-(a-x.frac)-(b-y.frac), 0)
	frac := up(a + b + incr)
	num := new(big.Int).Mul(x.unscaled, pow10(y.frac+frac))
	den := new(big.Int).Mul(y.unscaled, pow10(x.frac))
	return decimal{num.Quo(num, den), frac}.fit(op)
}

// remDecimal is x MOD y (y not 0): the remainder of the truncated
// quotient, of x's sign, with the decimals of the finer operand.
func remDecimal(x, y decimal) decimal {
	a, b, frac := align(x, y)
	return decimal{a.Rem(a, b), frac}
}

// truncQuo is x DIV y (y not 0): the quotient truncated toward zero.
func truncQuo(x, y decimal) *big.Int {
	a, b, _ := align(x, y)
	return a.Quo(a, b)
}

// isExact reports whether the datum d is a number MySQL computes
// exactly: an integer or a DECIMAL, neither NULL, text nor a DOUBLE.
func isExact(d Datum) bool { return !d.Null && !d.IsText && !d.Double }

// exactOf is the value of the exact number d: the digits post-processing
// computed, else Num (a released count, a key) as the shortest decimal
// that reads back as it.
func exactOf(d Datum) decimal {
	if x, ok := parseDecimal(d.exact); ok {
		return x
	}
	return floatDecimal(d.Num)
}

// scaleOf is the scale of the exact number d's type, the decimals MySQL
// shows of it: 0 for an integer, the decimals of a decimal literal, 4
// for 5 / 3.
func scaleOf(d Datum) int {
	if d.exact != "" || d.Int {
		return d.scale
	}
	return exactOf(d).frac
}

// decimalDatum is the datum of x, a DECIMAL whose type shows scale
// decimals (at most maxDecimalScale).
func decimalDatum(x decimal, scale int) Datum {
	return Datum{Num: x.Float64(), exact: x.String(), scale: min(max(scale, 0), maxDecimalScale)}
}

var (
	minBigint   = big.NewInt(math.MinInt64)
	maxBigintI  = big.NewInt(math.MaxInt64)
	maxUnsigned = new(big.Int).SetUint64(math.MaxUint64)
)

// integerDatum is the datum of the integer x that op computed, a BIGINT
// or, when unsigned, a BIGINT UNSIGNED; MySQL's 1690 when x is outside
// that type's range.
func integerDatum(x *big.Int, unsigned bool, op string) (Datum, error) {
	lo, hi, name := minBigint, maxBigintI, "BIGINT"
	if unsigned {
		lo, hi, name = new(big.Int), maxUnsigned, "BIGINT UNSIGNED"
	}
	if x.Cmp(lo) < 0 || x.Cmp(hi) > 0 {
		return Datum{}, dperr.New(dperr.OutOfRange, "%s value is out of range in '%s' of released values", name, op)
	}
	return Datum{Num: intDecimal(x).Float64(), Int: true, exact: x.String(), unsigned: unsigned}, nil
}

// decimalText is the exact number d as MySQL prints it: an integer's
// digits, a DECIMAL's rounded half away from zero (or padded) to the
// decimals of its type (1.6667 for 5 / 3).
func decimalText(d Datum) string {
	if d.Int {
		return exactOf(d).String()
	}
	return exactOf(d).withFrac(scaleOf(d)).String()
}

// exactArithmetic is op (+, -, *, /, div, %) of the exact numbers a and b
// as MySQL computes integers and DECIMALs: integers in BIGINT (BIGINT
// UNSIGNED when either is one; for % when the dividend is), whose
// overflow is 1690; DECIMALs exactly, their type's scale the larger of
// the operands' for + - and %, their sum for *, the dividend's plus
// divIncrement for / (whose quotient is a DECIMAL even of integers,
// quoDecimal); x / 0, x DIV 0 and x % 0 are NULL, counted in w.
func exactArithmetic(op string, a, b Datum, w *Warnings) (Datum, error) {
	x, y := exactOf(a), exactOf(b)
	ints, unsigned := a.Int && b.Int, a.unsigned || b.unsigned
	sa, sb := scaleOf(a), scaleOf(b)
	if (op == "/" || op == "div" || op == "%") && y.sign() == 0 {
		w.DivisionsByZero++
		return Datum{Null: true}, nil
	}
	var (
		z   decimal
		err error
	)
	switch op {
	case "+":
		z, err = addDecimal(x, y, op)
	case "-":
		z, err = subDecimal(x, y, op)
	case "*":
		z, err = mulDecimal(x, y, op)
		sa, sb = sa+sb, 0
	case "/":
		z, err = quoDecimal(x, y, divIncrement, op)
		return decimalDatum(z, sa+divIncrement), err
	case "div":
		return integerDatum(truncQuo(x, y), unsigned, "DIV")
	case "%":
		z, unsigned = remDecimal(x, y), a.unsigned
	default:
		return Datum{}, dperr.New(dperr.Internal, "internal error: exact operator %q", op)
	}
	if err != nil {
		return Datum{}, err
	}
	if ints {
		return integerDatum(z.unscaled, unsigned, op)
	}
	return decimalDatum(z, max(sa, sb)), nil
}

// negateExact is -d of the exact number d: of an integer a BIGINT (also
// of a BIGINT UNSIGNED), 1690 beyond its range.
func negateExact(d Datum) (Datum, error) {
	x := exactOf(d)
	x.unscaled = new(big.Int).Neg(x.unscaled)
	if d.Int {
		return integerDatum(x.unscaled, false, "-")
	}
	return decimalDatum(x, scaleOf(d)), nil
}

// absExact is ABS of the exact number d, of its type.
func absExact(d Datum) (Datum, error) {
	x := exactOf(d)
	x.unscaled = new(big.Int).Abs(x.unscaled)
	if d.Int {
		return integerDatum(x.unscaled, d.unsigned, "ABS")
	}
	return decimalDatum(x, scaleOf(d)), nil
}

// floorExact is FLOOR (or, with ceil, CEIL) of the exact number d: an
// integer itself, a DECIMAL a DECIMAL without decimals, as MariaDB types
// FLOOR of a DECIMAL as wide as arithmetic makes them.
func floorExact(d Datum, ceil bool) Datum {
	if d.Int {
		return d
	}
	x := exactOf(d)
	z := x.round(0, true)
	if c := x.cmp(z); ceil && c > 0 || !ceil && c < 0 {
		step := -1
		if ceil {
			step = 1
		}
		z.unscaled.Add(z.unscaled, big.NewInt(int64(step)))
	}
	return decimalDatum(z, 0)
}

// roundExact is ROUND (or, with truncate, TRUNCATE) of the exact number d
// to digits decimals, MySQL's: half away from zero; an integer to
// digits ≥ 0 (and truncated to any) is itself, to digits < 0 rounded a
// DECIMAL; a DECIMAL's type shows max(digits, 0) decimals.
func roundExact(d Datum, digits float64, truncate bool) (Datum, error) {
	n := int(max(min(digits, 1000), -1000))
	x := exactOf(d)
	switch {
	case d.Int && (n >= 0 || truncate):
		return integerDatum(x.round(n, truncate).unscaled, d.unsigned, "TRUNCATE")
	case d.Int:
		return decimalDatum(x.round(n, false), 0), nil
	}
	return decimalDatum(x.round(n, truncate), n), nil
}

// compareNumbers compares two numbers as MySQL does: two exact numbers
// (integers, DECIMALs) exactly, each DECIMAL first rounded half away
// from zero to the decimals of its type, as MariaDB compares them (5 / 3
// = 1.6667 is true, 5 / 3 = 1.66666667 false); any other pair as doubles.
func compareNumbers(a, b Datum) int {
	if !isExact(a) || !isExact(b) {
		return cmp.Compare(number(a), number(b))
	}
	x, y := exactOf(a), exactOf(b)
	if !a.Int {
		x = x.round(scaleOf(a), false)
	}
	if !b.Int {
		y = y.round(scaleOf(b), false)
	}
	return x.cmp(y)
}

// exactAggregate is SUM or AVG of exact numbers as MySQL computes them:
// a SUM of integers an integer (1690 beyond BIGINT), of DECIMALs a DECIMAL
// of the largest scale; an AVG a DECIMAL, the sum divided by the count as
// / divides, its type showing divIncrement more decimals. ok is false for
// any other function.
func exactAggregate(fn string, vals []Datum) (d Datum, ok bool, err error) {
	if fn != "sum" && fn != "avg" {
		return Datum{}, false, nil
	}
	sum, scale, ints := intDecimal(new(big.Int)), 0, true
	for _, v := range vals {
		if sum, err = addDecimal(sum, exactOf(v), strings.ToUpper(fn)); err != nil {
			return Datum{}, true, err
		}
		scale, ints = max(scale, scaleOf(v)), ints && v.Int
	}
	if fn == "avg" {
		mean, err := quoDecimal(sum, intDecimal(big.NewInt(int64(len(vals)))), divIncrement, "AVG")
		return decimalDatum(mean, scale+divIncrement), true, err
	}
	if ints {
		d, err := integerDatum(sum.unscaled, false, "SUM")
		return d, true, err
	}
	return decimalDatum(sum, scale), true, nil
}

// CastWarning is a warning or note MySQL gives where a CAST changes a
// value to fit its target type (Warnings.Casts): 1264 (a Warning) for a
// value beyond DECIMAL(p, s), clipped to its largest; 1916 for a number
// beyond BIGINT's or BIGINT UNSIGNED's range, saturated (a Warning for a
// DECIMAL, a Note for a DOUBLE); 1105 (a Note) for a negative integer
// cast to UNSIGNED, which wraps around 2^64.
type CastWarning struct {
	Note    bool
	Code    uint16
	Message string
}

// castInteger is CAST(d AS SIGNED), or AS UNSIGNED, as MariaDB casts:
// an integer wraps to the other signedness (a negative one to UNSIGNED
// with note 1105); text reads its integer prefix (castText); a DECIMAL
// rounds half away from zero and a DOUBLE to even; either saturates at
// the type's ends with 1916, a Warning for a DECIMAL and a Note for a
// DOUBLE.
func castInteger(d Datum, unsigned bool, w *Warnings) Datum {
	lo, hi := minBigint, maxBigintI
	if unsigned {
		lo, hi = new(big.Int), maxUnsigned
	}
	wrap := func(x *big.Int) Datum {
		x = new(big.Int).Set(x)
		switch {
		case x.Cmp(lo) < 0:
			x.Add(x, new(big.Int).Lsh(big.NewInt(1), 64))
		case x.Cmp(hi) > 0:
			x.Sub(x, new(big.Int).Lsh(big.NewInt(1), 64))
		}
		out, _ := integerDatum(x, unsigned, "CAST")
		return out
	}
	var (
		x    decimal
		text string
		note = !isExact(d)
	)
	switch {
	case d.IsText:
		return wrap(castText(d.Str, unsigned, w))
	case d.Int:
		x := exactOf(d).unscaled
		if unsigned && x.Sign() < 0 {
			w.Casts = append(w.Casts, CastWarning{Note: true, Code: 1105, Message: "Cast to unsigned converted negative integer to it's positive complement"})
		}
		return wrap(x)
	case note:
		f := math.RoundToEven(number(d))
		x, text = floatDecimal(f), FormatDouble(number(d))
	default:
		x, text = exactOf(d).round(0, false), decimalText(d)
	}
	v := x.unscaled
	if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
		target := map[[2]bool]string{{false, false}: "INT", {true, false}: "UNSIGNED INT", {false, true}: "SIGNED BIGINT", {true, true}: "UNSIGNED BIGINT"}[[2]bool{unsigned, note}]
		w.Casts = append(w.Casts, CastWarning{Note: note, Code: 1916, Message: "Got overflow when converting '" + text + "' to " + target + ". Value truncated"})
		v = hi
		if x.sign() < 0 {
			v = lo
		}
	}
	return wrap(v)
}

// castText is the integer MariaDB reads from text s for CAST(s AS
// SIGNED) or AS UNSIGNED, before it wraps to the target's signedness: the
// prefix of leading spaces, a sign and digits (no point, no exponent: '1.5'
// and '1e5' are 1), 0 without digits, saturated at -2^63 and 2^64 - 1.
// Text that is not such an integer as a whole is truncation 1292 of type
// INTEGER (a Note when only spaces follow, a Warning otherwise or beyond
// the range); a negative one (even -0) read as UNSIGNED is note 1105, as
// is one above BIGINT's range read as SIGNED.
func castText(s string, unsigned bool, w *Warnings) *big.Int {
	isSpace := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	negative := i < len(s) && s[i] == '-'
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	v, ok := new(big.Int).SetString(s[start:i], 10)
	level := wholeNumber
	for _, c := range []byte(s[i:]) {
		if !isSpace(c) {
			level = truncated
			break
		}
		level = trailingSpaces
	}
	switch {
	case !ok: // no digits
		v, negative, level = new(big.Int), false, truncated
	case negative:
		v.Neg(v)
	}
	if v.Cmp(minBigint) < 0 || v.Cmp(maxUnsigned) > 0 {
		if negative {
			v.Set(minBigint)
		} else {
			v.Set(maxUnsigned)
		}
		negative, level = false, truncated
	}
	if level != wholeNumber {
		w.Truncations = append(w.Truncations, Truncation{Value: s, Type: "INTEGER", Note: level == trailingSpaces})
	}
	switch {
	case unsigned && negative:
		w.Casts = append(w.Casts, CastWarning{Note: true, Code: 1105, Message: "Cast to unsigned converted negative integer to it's positive complement"})
	case !unsigned && level != truncated && v.Cmp(maxBigintI) > 0:
		w.Casts = append(w.Casts, CastWarning{Note: true, Code: 1105, Message: "Cast to signed converted positive out-of-range integer to it's negative complement"})
	}
	return v
}

// castDecimal is CAST(d AS DECIMAL(p, s)): d (a DOUBLE, or text, as the
// shortest decimal that reads back as its double) rounded half away from
// zero to s decimals, clipped to DECIMAL(p, s)'s largest magnitude with
// warning 1264 when it has more than p - s digits before the point. Text
// that is not a number as a whole is truncation 1292 of type DECIMAL, as
// in MariaDB ('abc' is 0.00 with the warning, '1.5 ' 1.50 with the note).
func castDecimal(d Datum, p, s int, w *Warnings) Datum {
	w.readNumber(d, "DECIMAL")
	x := floatDecimal(number(d))
	if isExact(d) {
		x = exactOf(d)
	}
	x = x.withFrac(s)
	if limit := pow10(p); new(big.Int).Abs(x.unscaled).Cmp(limit) >= 0 {
		w.Casts = append(w.Casts, CastWarning{Code: 1264, Message: "Out of range value for DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ") in CAST of released values"})
		top := limit.Sub(limit, big.NewInt(1))
		if x.sign() < 0 {
			top.Neg(top)
		}
		x = decimal{top, s}
	}
	return decimalDatum(x, s)
}

// FormatDouble writes x as MariaDB writes a DOUBLE as text (a result
// cell of the text protocol, CONCAT, CAST AS CHAR, a message): the
// shortest digits that read back as x, in plain notation when its point
// falls within 14 zeros after it and 15 digits before it (0.000000000000001,
// 100000000000000), or digits lie after the point (1234567890123456.8);
// otherwise the digits, 'e' and the exponent, without a plus sign or
// leading zeros (1e-16, 1e15, 1.2345678901234568e17). Zero, of either
// sign, is "0". (MariaDB's my_gcvt with DBL_DIG as its
// MAX_DECPT_FOR_F_FORMAT; checked against MariaDB 10.11.)
func FormatDouble(x float64) string {
	if x == 0 {
		return "0"
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	sci := strconv.FormatFloat(x, 'e', -1, 64) // d.ddde±XX
	mantissa, exponent, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(exponent)
	digits, point := len(strings.Replace(mantissa, ".", "", 1)), exp+1
	if point >= -14 && (point <= 15 || digits > point) {
		return sign + strconv.FormatFloat(x, 'f', -1, 64)
	}
	return sign + mantissa + "e" + strconv.Itoa(exp)
}

// FormatFixedDouble writes x as MariaDB writes a DOUBLE whose type fixes
// decimals digits after its point (DoubleType: ROUND(x, 2), FLOOR(x)),
// as a result cell of the text protocol and as text: its shortest digits
// that read back as x when they have at most decimals after the point,
// else x rounded to decimals (ties, which only an exact binary half can
// be, to even), in plain notation however large or small and padded
// with zeros to decimals (1.00, 1000000000000000, 0.333333, -0.000000
// for -1e-7 to 6). Zero, of either sign, has no sign. (MariaDB's
// my_fcvt, dtoa's mode 5; checked against MariaDB 10.11.) decimals of
// NotFixedDecimals or more is FormatDouble's.
func FormatFixedDouble(x float64, decimals int) string {
	if decimals >= NotFixedDecimals || math.IsInf(x, 0) || math.IsNaN(x) {
		return FormatDouble(x)
	}
	return fcvt(x, decimals)
}

// fcvt writes the finite x with exactly decimals digits after its point,
// as MariaDB's my_fcvt (FormatFixedDouble's, for any decimals).
func fcvt(x float64, decimals int) string {
	if x == 0 {
		x = 0 // no negative zero
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	_, frac, _ := strings.Cut(s, ".")
	if len(frac) > decimals {
		return strconv.FormatFloat(x, 'f', decimals, 64)
	}
	if decimals > 0 && !strings.Contains(s, ".") {
		s += "."
	}
	return s + strings.Repeat("0", decimals-len(frac))
}

// Decimal is a result cell of MySQL type DECIMAL: its digits, with as many
// after the point as its column's scale ("1.6667"), sent as that text.
type Decimal string

// literalDatum is the datum of an integer or decimal literal as MySQL
// types it (sqlrewrite.Value.Decimal): a BIGINT, a BIGINT UNSIGNED beyond
// it, a DECIMAL beyond that or with a point, of as many decimals as it
// has. ok is false for text that is no such literal ("").
func literalDatum(text string) (d Datum, ok bool) {
	x, ok := parseDecimal(text)
	if !ok {
		return Datum{}, false
	}
	if x.frac == 0 {
		for _, unsigned := range []bool{false, true} {
			if d, err := integerDatum(x.unscaled, unsigned, text); err == nil {
				return d, true
			}
		}
	}
	return decimalDatum(x, x.frac), true
}
