package sqlrewrite

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// literal returns the value of a constant: a number, a string, NULL or TRUE/
// FALSE (numbers 1 and 0), possibly in parentheses, and numbers with any
// number of unary minus or plus signs (the parser gives -2 as minus applied
// to 2). ok is false for anything else, including hexadecimal and bit
// literals, typed literals such as DATE '2020-01-01', and strings that are
// not valid UTF-8 (a backend would reject their bytes only after the
// statement had been charged).
func literal(e ast.ExprNode) (v Value, ok bool) {
	switch e := unparen(e).(type) {
	case *ast.UnaryOperationExpr:
		if e.Op != opcode.Minus && e.Op != opcode.Plus {
			return Value{}, false
		}
		v, ok := literal(e.V)
		if !ok || v.IsText || v.Null {
			return Value{}, false
		}
		if e.Op == opcode.Minus {
			v.Num = -v.Num
		}
		return v, true
	case ast.ValueExpr:
		return valueOf(e.GetValue())
	}
	return Value{}, false
}

// valueOf converts a test_driver literal.
func valueOf(raw any) (Value, bool) {
	switch x := raw.(type) {
	case nil:
		return Value{Null: true}, true
	case string:
		return Value{Str: x, IsText: true}, utf8.ValidString(x)
	case int64:
		return Value{Num: float64(x)}, true
	case uint64:
		return Value{Num: float64(x)}, true
	case float64:
		return Value{Num: x}, finite(x)
	case *test_driver.MyDecimal:
		f, err := strconv.ParseFloat(x.String(), 64)
		return Value{Num: f}, err == nil && finite(f)
	}
	return Value{}, false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// unparen strips parentheses around an expression.
func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// constantNumber evaluates a constant numeric expression of a condition's
// value: a number, or + - * / of constant numbers (WHERE DATEDIFF(b, a) >
// 7 * 24); ok is false for anything else, for a division by zero and for
// a result that is not finite.
func constantNumber(e ast.ExprNode) (float64, bool) {
	if v, ok := literal(e); ok {
		return v.Num, !v.IsText && !v.Null
	}
	b, ok := unparen(e).(*ast.BinaryOperationExpr)
	if !ok {
		return 0, false
	}
	l, okL := constantNumber(b.L)
	r, okR := constantNumber(b.R)
	if !okL || !okR {
		return 0, false
	}
	var x float64
	switch b.Op {
	case opcode.Plus:
		x = l + r
	case opcode.Minus:
		x = l - r
	case opcode.Mul:
		x = l * r
	case opcode.Div:
		if r == 0 {
			return 0, false
		}
		x = l / r
	default:
		return 0, false
	}
	return x, finite(x)
}
