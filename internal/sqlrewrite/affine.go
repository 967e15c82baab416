package sqlrewrite

import (
	"errors"
	"math"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// affine is the row expression a·col + b of one declared numeric column
// (col nil: the constant b).
type affine struct {
	col  *catalog.Column
	a, b float64
}

// affineAggregate answers an aggregate of an affine row expression,
// SUM(a·col + b), AVG(col / 1000), VARIANCE(col * 2), MIN(100 - col), …,
// from the aggregates of the column itself, by post-processing:
//
//	AVG(a·x + b)        = a·AVG(x) + b
//	SUM(a·x + b)        = a·SUM(x) + b·COUNT(x)       (COUNT(x) only if b ≠ 0)
//	VAR(a·x + b)        = a²·VAR(x), STDDEV(a·x + b) = |a|·STDDEV(x)
//	MIN/MAX(a·x + b)    = a·MIN/MAX(x) + b, MIN and MAX swapped when a < 0
//
// Guarantee: the releases are those of the column's own aggregates, with
// their guarantees; everything after them is post-processing. The bounds
// of the expression follow from the column's declared [lo, hi] by interval
// arithmetic, [min(a·lo, a·hi) + b, max(a·lo, a·hi) + b], and since
// t ↦ a·t + b is monotone, clamping x to [lo, hi] and then mapping it is
// the same as clamping a·x + b to the derived bounds: each identity above
// holds exactly (up to float64 rounding of the post-processing) for the
// clamped values every mechanism reads. ok is false when e is not
// arithmetic on one column in the form a·col + b (the caller's other
// rules apply: rowExprAggregate reads two or more columns, products of
// columns and division by a column, or refuses them with the reason).
func (qb *queryBuilder) affineAggregate(a *ast.AggregateFuncExpr) (*Expr, bool, error) {
	name := strings.ToLower(a.F)
	if a.Distinct || len(a.Args) != 1 || !isArithmetic(a.Args[0]) || !containsNode(a.Args[0], isColumn) {
		return nil, false, nil
	}
	fn, ok := columnAggs[name]
	if !ok && name != "min" && name != "max" {
		return nil, false, nil
	}
	x, err := qb.sc.affineOf(a.Args[0])
	if errors.Is(err, errNotAffine) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	lo, hi := x.a**x.col.Lower+x.b, x.a**x.col.Upper+x.b
	if !finite(lo) || !finite(hi) || !finite(x.a) || !finite(x.b) {
		return nil, true, refuseQuery("%s: the bounds of %s derived from %s's [%g, %g] are not finite", strings.ToUpper(a.F), restore(a.Args[0]), x.col.Name, *x.col.Lower, *x.col.Upper)
	}
	// a·x + b is a DOUBLE in MySQL when it holds a float literal (SUM(age
	// + 1e300) is b·COUNT(x) in DOUBLE, not a DECIMAL beyond MySQL's digits).
	double := containsNode(a.Args[0], isFloatLiteral)
	num := func(v float64) *Expr {
		c := &Expr{Kind: ExprConst, Value: Value{Num: v}}
		if double {
			return castReal(c)
		}
		return c
	}
	op := func(o string, l, r *Expr) *Expr { return &Expr{Kind: ExprOp, Op: o, Args: []*Expr{l, r}} }
	of := func(f AggFunc, q float64) *Expr {
		label := strings.ToUpper(f.String()) + "(" + x.col.Name + ")"
		return qb.item(Aggregate{Func: f, Column: x.col.Name, Quantile: q}, label)
	}
	times := func(c float64, e *Expr) *Expr {
		if c == 1 {
			return e
		}
		return op("*", num(c), e)
	}
	scaled := func(e *Expr) *Expr {
		e = times(x.a, e)
		if x.b != 0 {
			e = op("+", e, num(x.b))
		}
		return e
	}
	switch {
	case name == "min" || name == "max":
		q := 0.0
		if (name == "max") == (x.a >= 0) {
			q = 1
		}
		return scaled(of(Percentile, q)), true, nil
	case fn == Avg:
		return scaled(of(Avg, 0)), true, nil
	case fn == Sum:
		e := times(x.a, of(Sum, 0))
		if x.b != 0 {
			e = op("+", e, times(x.b, of(CountColumn, 0)))
		}
		return e, true, nil
	case fn == VarPop || fn == VarSamp:
		return times(x.a*x.a, of(fn, 0)), true, nil
	}
	return times(math.Abs(x.a), of(fn, 0)), true, nil
}

// isArithmetic reports whether e is +, -, *, /, DIV, % or unary minus.
func isArithmetic(e ast.ExprNode) bool {
	switch e := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
			return true
		}
	case *ast.UnaryOperationExpr:
		return e.Op == opcode.Minus
	}
	return false
}

// errNotAffine says that an expression is not a·col + b.
var errNotAffine = errors.New("sqlrewrite: not an affine expression of one column")

// affineOf reads e as a·col + b; errNotAffine when it is not (two columns,
// a product or quotient of columns, division by zero, DIV, %, functions,
// text columns), other errors for unknown columns.
func (sc *scope) affineOf(e ast.ExprNode) (affine, error) {
	switch n := unparen(e).(type) {
	case *ast.ColumnNameExpr:
		col, err := sc.column(n.Name, "field list")
		if err != nil {
			return affine{}, err
		}
		if !col.Numeric() {
			return affine{}, errNotAffine
		}
		return affine{col: col, a: 1}, nil
	case *ast.UnaryOperationExpr:
		if n.Op != opcode.Minus {
			break
		}
		x, err := sc.affineOf(n.V)
		return affine{col: x.col, a: -x.a, b: -x.b}, err
	case *ast.BinaryOperationExpr:
		switch n.Op {
		case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div:
		default:
			return affine{}, errNotAffine
		}
		l, err := sc.affineOf(n.L)
		if err != nil {
			return affine{}, err
		}
		r, err := sc.affineOf(n.R)
		if err != nil {
			return affine{}, err
		}
		switch n.Op {
		case opcode.Plus, opcode.Minus:
			s := 1.0
			if n.Op == opcode.Minus {
				s = -1
			}
			if l.col != nil && r.col != nil {
				return affine{}, errNotAffine
			}
			col := l.col
			if col == nil {
				col = r.col
			}
			return affine{col: col, a: l.a + s*r.a, b: l.b + s*r.b}, nil
		case opcode.Mul:
			if l.col != nil && r.col != nil {
				return affine{}, errNotAffine
			}
			if l.col == nil {
				l, r = r, l
			}
			return affine{col: l.col, a: l.a * r.b, b: l.b * r.b}, nil
		}
		if r.col != nil || r.b == 0 {
			return affine{}, errNotAffine
		}
		return affine{col: l.col, a: l.a / r.b, b: l.b / r.b}, nil
	}
	if v, ok := literal(e); ok && !v.Null && !v.IsText {
		return affine{b: v.Num}, nil
	}
	return affine{}, errNotAffine
}
