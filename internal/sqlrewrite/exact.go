package sqlrewrite

import (
	"math"
	"math/big"
	"strconv"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// MySQL's DECIMAL holds at most maxDecimalDigits digits, at most
// maxDecimalScale of them after the point.
const (
	maxDecimalDigits = 65
	maxDecimalScale  = 30
)

// exactNumber is the value MySQL gives the constant numeric expression e,
// when it is known exactly from the text: an integer literal (BIGINT),
// a decimal literal (DECIMAL, 0.1 is one tenth), either with unary signs,
// and + - * of these. MySQL computes those exactly: an integer result
// must fit a signed BIGINT (else MySQL fails with 1690, or computes
// unsigned), so integer operands and results outside it are not known
// here; a DECIMAL result is exact while it has at most 65 digits, 30
// after the point. ok is false for anything else: a float literal
// (2.5e0, a DOUBLE), a string, NULL, a ? marker, a division (MySQL
// rounds its quotient to div_precision_increment more decimals: 2/3 is
// 0.6667), a function. A float64 cannot stand in for it: 0.1 + 0.2 = 0.3
// is TRUE to MySQL and 2/3 = 0.6667 too.
func exactNumber(e ast.ExprNode) (r *big.Rat, ok bool) {
	r, _, ok = exactOperand(e)
	return r, ok
}

// exactOperand is exactNumber, and whether MySQL types the value an
// integer (BIGINT) rather than a DECIMAL.
func exactOperand(e ast.ExprNode) (r *big.Rat, integer, ok bool) {
	switch e := unparen(e).(type) {
	case ast.ValueExpr:
		if unbound(e) {
			return nil, false, false
		}
		switch x := e.GetValue().(type) {
		case int64:
			return new(big.Rat).SetInt64(x), true, true
		case uint64:
			return new(big.Rat).SetInt(new(big.Int).SetUint64(x)), true, true
		case *test_driver.MyDecimal:
			r, ok := new(big.Rat).SetString(x.String())
			return r, false, ok && decimalFits(r)
		}
	case *ast.UnaryOperationExpr:
		if e.Op != opcode.Minus && e.Op != opcode.Plus {
			return nil, false, false
		}
		r, integer, ok := exactOperand(e.V)
		if !ok {
			return nil, false, false
		}
		if e.Op == opcode.Minus {
			r = new(big.Rat).Neg(r)
		}
		return r, integer, !integer || fitsBigint(r)
	case *ast.BinaryOperationExpr:
		l, intL, okL := exactOperand(e.L)
		rr, intR, okR := exactOperand(e.R)
		if !okL || !okR {
			return nil, false, false
		}
		var x *big.Rat
		switch e.Op {
		case opcode.Plus:
			x = new(big.Rat).Add(l, rr)
		case opcode.Minus:
			x = new(big.Rat).Sub(l, rr)
		case opcode.Mul:
			x = new(big.Rat).Mul(l, rr)
		default:
			return nil, false, false
		}
		if intL && intR {
			return x, true, fitsBigint(l) && fitsBigint(rr) && fitsBigint(x)
		}
		return x, false, decimalFits(x)
	}
	return nil, false, false
}

// fitsBigint reports whether the integer r fits a signed BIGINT.
func fitsBigint(r *big.Rat) bool {
	return r.IsInt() && r.Num().IsInt64()
}

// decimalFits reports whether r is a decimal of at most maxDecimalDigits
// digits, at most maxDecimalScale after the point.
func decimalFits(r *big.Rat) bool {
	scaled := new(big.Rat).Set(r)
	ten := big.NewRat(10, 1)
	for range maxDecimalScale {
		if scaled.IsInt() {
			break
		}
		scaled.Mul(scaled, ten)
	}
	if !scaled.IsInt() {
		return false
	}
	return len(new(big.Int).Abs(scaled.Num()).String()) <= maxDecimalDigits
}

// exactFloat reports whether the number num that a condition carries for
// the constant e (literal, constantNumber) is exactly e's value to MySQL
// (conditionNumber) once written as the backend is sent it (the shortest
// decimal that reads back as num): 0.1 and 7 * 24 are, 5.0000000000000001
// (5 as a float64), 9007199254740993 and 365 / 7 (52.1429 to MySQL) are
// not. Distinct such numbers are distinct float64s in the same order, so
// the float64s of exact constants compare as their values do.
func exactFloat(e ast.ExprNode, num float64) bool {
	r, ok := conditionNumber(e)
	if !ok || math.IsInf(num, 0) || math.IsNaN(num) {
		return false
	}
	written, ok := new(big.Rat).SetString(strconv.FormatFloat(num, 'g', -1, 64))
	return ok && written.Cmp(r) == 0
}
