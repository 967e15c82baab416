package sqlrewrite

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Exact constants of conditions.
//
// A numeric condition's constant is carried as a float64 (Range.Lower,
// Value.Num), which the planner reasons with. Where the statement wrote
// an integer or decimal constant (exactNumber) that the float64's literal
// would not spell digit for digit (9007199254740993 is 2^53 as a
// float64, 9007199254740993.5 is 2^53+2, 1e+21 and 1e-05 are DOUBLE
// literals to MySQL), the condition also carries the constant's exact
// digits (Range.LowerExact, Value.Decimal), and the backend is sent
// them (exactLiteral): MySQL, MariaDB and PostgreSQL compare an integer
// or DECIMAL column with an integer or decimal literal exactly (a DOUBLE
// column as doubles, as they would the statement's own text), SQLite
// compares its 64-bit integers and doubles with an equivalent bound
// (sqliteExact). The float64s are then those next to the digits
// outward (a range's lower end the greatest double at most the
// constant, its upper end the least at least it), so that every range
// the planner reasons with holds every row the backend's comparison
// keeps; a Value's Num stays the nearest double, and the planner decides
// nothing on a Value with Decimal set (disjoint parts).

// conditionDigits returns the exact digits of the numeric constant e of a
// condition (conditionNumber), whose float64 is num, when the literal
// numberLiteral writes for num does not spell them; "" when it does or
// when e's value is not known exactly (a float literal, a division).
func conditionDigits(e ast.ExprNode, num float64) string {
	r, ok := conditionNumber(e)
	if !ok {
		return ""
	}
	s := ratDigits(r)
	if s == strings.Trim(numberLiteral(num), "()") {
		return ""
	}
	return s
}

// conditionNumber is the exact value of a condition's constant e, compared
// with a numeric column: an exact number (exactNumber), or a string that
// is a number (decimalString), read exactly. MariaDB 10.11 compares an
// integer or DECIMAL column with such a string as the DECIMAL it spells
// ('9007199254740993' is not 9007199254740992, '3.0000000000000000001'
// not 3, '9.007199254740993e15' is 9007199254740993) and a DOUBLE column
// as a double, as it does with the decimal literal of the same digits,
// which the backend is therefore sent (conditionDigits). ok is false for
// a float literal, a division, and a string whose value no DECIMAL holds
// (stringNumber).
func conditionNumber(e ast.ExprNode) (*big.Rat, bool) {
	if v, ok := literal(e); ok && v.IsText {
		r, fits := stringNumber(v.Str)
		return r, fits
	}
	return exactNumber(e)
}

// maxStringExponent bounds the exponent of a numeric string read exactly:
// a DECIMAL's digits lie within 10^±65, and a greater exponent would
// make its big.Rat arbitrarily large.
const maxStringExponent = 1000

// stringNumber reads s, a string MySQL reads as a number (mysqlNumber),
// exactly: r is its value (nil when it is no such string, or its
// exponent is beyond ±maxStringExponent) and fits whether a DECIMAL
// holds it (decimalFits: 65 digits, 30 after the point).
func stringNumber(s string) (r *big.Rat, fits bool) {
	if !mysqlNumber.MatchString(s) {
		return nil, false
	}
	s = strings.Trim(s, " \t\n\r\f\v")
	mantissa, exponent, _ := strings.Cut(strings.ToLower(s), "e")
	if exponent != "" {
		if x, err := strconv.Atoi(exponent); err != nil || x < -maxStringExponent || x > maxStringExponent {
			return nil, false
		}
	}
	// big.Rat reads neither "3." nor "-.5".
	mantissa = strings.TrimSuffix(mantissa, ".")
	if i := strings.IndexByte(mantissa, '.'); i >= 0 && (i == 0 || mantissa[i-1] < '0' || mantissa[i-1] > '9') {
		mantissa = mantissa[:i] + "0" + mantissa[i:]
	}
	if exponent != "" {
		mantissa += "e" + exponent
	}
	r, ok := new(big.Rat).SetString(mantissa)
	if !ok {
		return nil, false
	}
	return r, decimalFits(r)
}

// ratDigits writes a decimal fraction (exactNumber's values) without an
// exponent, with the fewest digits after the point.
func ratDigits(r *big.Rat) string {
	scaled, scale := new(big.Rat).Set(r), 0
	ten := big.NewRat(10, 1)
	for !scaled.IsInt() && scale < 2*maxDecimalScale {
		scaled.Mul(scaled, ten)
		scale++
	}
	return r.FloatString(scale)
}

// digitsRat reads exact digits (validExact).
func digitsRat(s string) (*big.Rat, bool) {
	if !validExact(s) {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// floorDouble is the greatest double at most r, ceilDouble the least at
// least r.
func floorDouble(r *big.Rat) float64 {
	f, _ := r.Float64()
	if !math.IsInf(f, 0) && new(big.Rat).SetFloat64(f).Cmp(r) > 0 {
		f = math.Nextafter(f, math.Inf(-1))
	}
	return f
}

func ceilDouble(r *big.Rat) float64 {
	f, _ := r.Float64()
	if !math.IsInf(f, 0) && new(big.Rat).SetFloat64(f).Cmp(r) < 0 {
		f = math.Nextafter(f, math.Inf(1))
	}
	return f
}

// setExactLower sets r's lower end to the constant digits (conditionDigits)
// when there are some, its float64 the double below them.
func (r *Range) setExactLower(digits string) {
	if x, ok := digitsRat(digits); ok {
		r.Lower, r.LowerExact = floorDouble(x), digits
	}
}

// setExactUpper is setExactLower for the upper end, the double above.
func (r *Range) setExactUpper(digits string) {
	if x, ok := digitsRat(digits); ok {
		r.Upper, r.UpperExact = ceilDouble(x), digits
	}
}

// endRat is a range end's exact value: its digits, else its float64.
func endRat(x float64, exact string) *big.Rat {
	if r, ok := digitsRat(exact); ok && exact != "" {
		return r
	}
	return new(big.Rat).SetFloat64(x)
}

// compareEnds compares two range ends exactly (endRat).
func compareEnds(x float64, xExact string, y float64, yExact string) int {
	if xExact == "" && yExact == "" {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return endRat(x, xExact).Cmp(endRat(y, yExact))
}

// ExactValue reports whether v's number is exactly its Num: no Decimal
// digits that Num only approximates (a condition's constant beyond
// double precision).
func ExactValue(v Value) bool {
	if v.Decimal == "" {
		return true
	}
	r, ok := digitsRat(v.Decimal)
	return ok && new(big.Rat).SetFloat64(v.Num).Cmp(r) == 0
}

// valueRat is a number's exact value: its Decimal digits, else its Num.
func valueRat(v Value) *big.Rat {
	return endRat(v.Num, v.Decimal)
}

// exactLiteral writes exact digits as a literal that MySQL and PostgreSQL
// read exactly (an integer or a decimal literal), negative ones
// parenthesised.
func exactLiteral(digits string) string {
	if strings.HasPrefix(digits, "-") {
		return "(" + digits + ")"
	}
	return digits
}

// sqliteInteger returns the digits as an int64 literal when they are an
// integer SQLite reads as an INTEGER (a whole number written with a
// fraction of zeros included).
func sqliteInteger(x *big.Rat) (string, bool) {
	if !x.IsInt() || !x.Num().IsInt64() {
		return "", false
	}
	return exactLiteral(x.Num().String()), true
}

// sqliteBelow is the literal L for which, over SQLite's 64-bit integers
// and doubles v, v <= L holds exactly when v <= x (and, x being neither
// such an integer nor a double, when v < x): the greater of the greatest
// integer and the greatest double at most x.
func sqliteBelow(x *big.Rat) string {
	d := floorDouble(x)
	fl := new(big.Int).Quo(x.Num(), x.Denom()) // truncated toward zero
	if x.Sign() < 0 && !x.IsInt() {
		fl.Sub(fl, big.NewInt(1))
	}
	if fl.IsInt64() && new(big.Rat).SetInt(fl).Cmp(new(big.Rat).SetFloat64(d)) >= 0 {
		return exactLiteral(fl.String())
	}
	return realLiteral(d)
}

// sqliteAbove is sqliteBelow's mirror: v >= U exactly when v >= x.
func sqliteAbove(x *big.Rat) string {
	d := ceilDouble(x)
	ce := new(big.Int).Quo(x.Num(), x.Denom())
	if x.Sign() > 0 && !x.IsInt() {
		ce.Add(ce, big.NewInt(1))
	}
	if ce.IsInt64() && new(big.Rat).SetInt(ce).Cmp(new(big.Rat).SetFloat64(d)) <= 0 {
		return exactLiteral(ce.String())
	}
	return realLiteral(d)
}

// sqliteEqual returns the literal that SQLite's integers and doubles
// equal exactly when they equal x, and ok false when none does (x is
// neither an int64 nor a double).
func sqliteEqual(x *big.Rat) (string, bool) {
	if s, ok := sqliteInteger(x); ok {
		return s, true
	}
	if f, _ := x.Float64(); !math.IsInf(f, 0) && new(big.Rat).SetFloat64(f).Cmp(x) == 0 {
		return realLiteral(f), true
	}
	return "", false
}

// ExactRange reports whether r's ends are exactly their float64s: no
// exact digits (Range.LowerExact) that they only bound.
func ExactRange(r Range) bool {
	for _, e := range []struct {
		x     float64
		exact string
	}{{r.Lower, r.LowerExact}, {r.Upper, r.UpperExact}} {
		if e.exact != "" && endRat(e.x, e.exact).Cmp(new(big.Rat).SetFloat64(e.x)) != 0 {
			return false
		}
	}
	return true
}
