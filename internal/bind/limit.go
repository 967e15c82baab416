package bind

import (
	"math"
	"math/bits"
	"strings"
)

// Integer is the integer MariaDB 10.11 reads a string or DECIMAL
// argument of LIMIT or OFFSET as, before its range rules apply: a sign
// and a magnitude, or Over when the magnitude passes 2^64-1. Zero is
// never negative.
type Integer struct {
	Neg  bool
	Mag  uint64
	Over bool
}

// LeadingInteger is the integer a string argument of LIMIT or OFFSET
// reads as: the decimal digits after leading white space and an
// optional sign, up to the first other byte, 0 when there are none
// (abc and the empty string are 0, 2.9 is 2, 1e1 is 1, " -3x" is -3).
func LeadingInteger(s string) Integer {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	var n Integer
	if s != "" && (s[0] == '-' || s[0] == '+') {
		n.Neg, s = s[0] == '-', s[1:]
	}
	for i := 0; i < len(s) && '0' <= s[i] && s[i] <= '9' && !n.Over; i++ {
		n.push(s[i])
	}
	return n.normal()
}

// RoundDecimal is the integer a DECIMAL argument of LIMIT or OFFSET
// reads as: rounded half away from zero (2.5 is 3, 2.4 is 2, -0.5 is -1,
// 25e-1 is 3). text must be a decimal number, [+-]?(d+(.d*)?|.d+)
// optionally followed by [eE][+-]?d+.
func RoundDecimal(text string) Integer {
	var n Integer
	if text != "" && (text[0] == '-' || text[0] == '+') {
		n.Neg, text = text[0] == '-', text[1:]
	}
	mantissa, exp := text, 0
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		mantissa, exp = text[:i], exponent(text[i+1:])
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	if digits == "" {
		return Integer{}
	}
	// point is the number of digits before the decimal point.
	point := len(whole) - (len(whole) + len(frac) - len(digits)) + exp
	for i := 0; i < point && !n.Over; i++ {
		d := byte('0')
		if i < len(digits) {
			d = digits[i]
		}
		n.push(d)
	}
	if point >= 0 && point < len(digits) && digits[point] >= '5' && !n.Over {
		n.Mag++
		n.Over = n.Mag == 0
	}
	return n.normal()
}

// maxExponent bounds the exponent RoundDecimal reads: past it, any
// nonzero mantissa is Over or rounds to 0.
const maxExponent = 1 << 20

// exponent reads [+-]?d+, saturated at ±maxExponent.
func exponent(s string) int {
	sign := 1
	if s != "" && (s[0] == '-' || s[0] == '+') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	e := 0
	for i := 0; i < len(s) && e < maxExponent; i++ {
		e = e*10 + int(s[i]-'0')
	}
	return sign * min(e, maxExponent)
}

// push appends the decimal digit d to n's magnitude.
func (n *Integer) push(d byte) {
	hi, lo := bits.Mul64(n.Mag, 10)
	sum, carry := bits.Add64(lo, uint64(d-'0'), 0)
	if hi != 0 || carry != 0 {
		n.Over = true
		return
	}
	n.Mag = sum
}

func (n Integer) normal() Integer {
	if n.Mag == 0 && !n.Over {
		n.Neg = false
	}
	return n
}

// Unsigned is n as the binary protocol's LIMIT and OFFSET read it: a
// BIGINT saturated at its bounds (a negative value below -2^63 is -2^63,
// a positive one past 2^64-1 is 2^64-1) read unsigned, so that -1 is
// 18446744073709551615, every row, as MariaDB 10.11 keeps them.
func (n Integer) Unsigned() uint64 {
	switch {
	case !n.Neg && n.Over:
		return math.MaxUint64
	case !n.Neg:
		return n.Mag
	case n.Over || n.Mag > 1<<63:
		return 1 << 63
	}
	return -n.Mag
}
