package planner

import (
	"math"
	"strconv"
	"strings"
)

// Float is a result cell of MySQL type FLOAT (CAST(x AS FLOAT)): a
// single-precision value, which the text protocol writes as MariaDB does
// (MySQLText) and the binary protocol sends as its four bytes (its
// MySQLDouble is exactly the float).
type Float float32

// MySQLText is x as MariaDB writes a FLOAT (FormatFloat).
func (x Float) MySQLText() string { return FormatFloat(float32(x)) }

// MySQLDouble is x's value.
func (x Float) MySQLDouble() float64 { return float64(x) }

// FormatFloat writes x as MariaDB writes a FLOAT as text (a result cell,
// CONCAT, CAST AS CHAR): its value rounded to six significant digits
// (FLT_DIG), trailing zeros dropped, in plain notation when its point
// falls within 14 zeros after it and 15 digits before it, otherwise
// with an exponent as FormatDouble writes one (123456792 is 123457000,
// 1e15 is 1e15, 1.4e-45 is 1.4013e-45). Zero, of either sign, is "0".
// (MariaDB's my_gcvt of a float; checked against MariaDB 10.11.)
func FormatFloat(x float32) string {
	f := float64(x)
	if f == 0 {
		return "0"
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 32)
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	sci := strconv.FormatFloat(f, 'e', 5, 64) // d.ddddde±XX, six digits
	mantissa, exponent, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(exponent)
	mantissa = strings.TrimRight(strings.TrimRight(mantissa, "0"), ".")
	digits, point := strings.Replace(mantissa, ".", "", 1), exp+1
	switch {
	case point < -14 || point > 15 && len(digits) <= point:
		return sign + mantissa + "e" + strconv.Itoa(exp)
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits))
	}
	return sign + digits[:point] + "." + digits[point:]
}

// castFloat is CAST(d AS FLOAT): d (text read as a DOUBLE) rounded to
// single precision, a magnitude beyond FLOAT's largest saturated to it
// with note 1264, as MariaDB casts.
func castFloat(d Datum, w *Warnings) Datum {
	x := number(d)
	if math.Abs(x) > math.MaxFloat32 {
		w.warn(true, 1264, "Out of range value for FLOAT in CAST of released values")
		x = math.Copysign(math.MaxFloat32, x)
	}
	out := numberOf(float64(float32(x)), false, true)
	out.single = true
	return out
}
