package sqlrewrite

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// literal returns the value of a constant: a number, a string, NULL or TRUE/
// FALSE (numbers 1 and 0), possibly in parentheses, and numbers with any
// number of unary minus or plus signs (the parser gives -2 as minus applied
// to 2). ok is false for anything else, including hexadecimal and bit
// literals, typed literals such as DATE '2020-01-01', and strings that are
// not valid UTF-8 (a backend would reject their bytes only after the
// statement had been charged). A string with a NUL byte is a literal here
// (in SET @dp_mechanism = 'laplace\0' it is an invalid value, 1231); a
// statement on configured tables that holds one, or any string that is
// not valid UTF-8, is refused before this by checkTextLiterals.
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

// decimalLiteral is the text of the constant e (literal) when it is an
// integer or decimal literal, with its unary signs applied ("-0.50" for
// -(+0.50)), as Value.Decimal holds it; "" for anything else (a float
// literal, a string, NULL).
func decimalLiteral(e ast.ExprNode) string {
	switch e := unparen(e).(type) {
	case *ast.UnaryOperationExpr:
		s := decimalLiteral(e.V)
		switch {
		case s == "" || e.Op == opcode.Plus:
			return s
		case e.Op != opcode.Minus:
			return ""
		case strings.HasPrefix(s, "-"):
			return s[1:]
		}
		return "-" + s
	case ast.ValueExpr:
		switch x := e.GetValue().(type) {
		case int64:
			return strconv.FormatInt(x, 10)
		case uint64:
			return strconv.FormatUint(x, 10)
		case *test_driver.MyDecimal:
			return x.String()
		}
	}
	return ""
}

// floatLiteral reports whether the constant e (literal) is a number
// written with an exponent (2.5e0, -1e308), which MySQL types DOUBLE
// where a decimal literal (2.5) is a DECIMAL.
func floatLiteral(e ast.ExprNode) bool {
	switch e := unparen(e).(type) {
	case *ast.UnaryOperationExpr:
		return floatLiteral(e.V)
	case ast.ValueExpr:
		return isFloatLiteral(e)
	}
	return false
}

// floatConst is c, the constant e or an aggregate of it (ExprConstAgg),
// as MySQL types it: CAST(c AS DOUBLE) when e is a float literal
// (ROUND(2.5e0) is 2; SUM(1e300) over 1000 rows is the DOUBLE 1e303),
// c itself otherwise.
func floatConst(e ast.ExprNode, c *Expr) *Expr {
	if floatLiteral(e) {
		return castReal(c)
	}
	return c
}

// castReal is CAST(c AS DOUBLE).
func castReal(c *Expr) *Expr { return &Expr{Kind: ExprFunc, Op: "cast-real", Args: []*Expr{c}} }

// isFloatLiteral matches a number written with an exponent (floatLiteral).
func isFloatLiteral(n ast.Node) bool {
	v, ok := n.(ast.ValueExpr)
	if !ok {
		return false
	}
	_, ok = v.GetValue().(float64)
	return ok
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

// supportedText is what a text literal may hold.
const supportedText = "text literals must be valid UTF-8 without NUL bytes"

// checkTextLiterals refuses (Unsupported, 1235) a statement on configured
// tables that holds a string constant anywhere, in any clause, that is
// not valid UTF-8 or holds a NUL byte: PostgreSQL rejects such a bind
// argument only when the fetch runs, after the reservation, and MySQL and
// MariaDB may reject or mangle it. Parameters of prepared statements are
// bound into the text as literals before it is parsed, so they are
// checked here too.
func checkTextLiterals(n ast.Node) error {
	var c textLiteralChecker
	n.Accept(&c)
	if c.bad != "" {
		return refuse(c.bad, supportedText)
	}
	return nil
}

// textLiteralChecker walks a statement; bad describes the first string
// constant that is not catalog.ValidText.
type textLiteralChecker struct{ bad string }

func (c *textLiteralChecker) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(ast.ValueExpr); ok && c.bad == "" {
		if s, isText := v.GetValue().(string); isText && !catalog.ValidText(s) {
			c.bad = "a text literal that is not valid UTF-8"
			if strings.IndexByte(s, 0) >= 0 {
				c.bad = "a text literal that contains a NUL byte"
			}
		}
	}
	return n, c.bad != ""
}

func (c *textLiteralChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

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
