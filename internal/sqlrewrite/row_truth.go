package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// truth is the set of values an expression can take on some row, read as
// MySQL reads a condition: TRUE, FALSE or UNKNOWN (NULL). rowTruth computes
// it from the statement's text alone, so it holds for every row of every
// table: a WHERE whose set lacks TRUE keeps no row, and an expression whose
// set is UNKNOWN alone is NULL on every row.
type truth uint8

const (
	isTrue truth = 1 << iota
	isFalse
	isUnknown
	anyTruth = isTrue | isFalse | isUnknown
)

// not is SQL's NOT: TRUE and FALSE swap, UNKNOWN stays.
func (t truth) not() truth {
	return t&isUnknown | (t&isTrue)<<1 | (t&isFalse)>>1
}

// and is Kleene's AND of any value of t with any value of u: FALSE if
// either is, TRUE if both are, UNKNOWN otherwise.
func (t truth) and(u truth) truth {
	var r truth
	if t&isTrue != 0 && u&isTrue != 0 {
		r |= isTrue
	}
	if t&isFalse != 0 || u&isFalse != 0 {
		r |= isFalse
	}
	if t&isUnknown != 0 && u&(isTrue|isUnknown) != 0 || u&isUnknown != 0 && t&isTrue != 0 {
		r |= isUnknown
	}
	return r
}

// or is Kleene's OR, by De Morgan's law (which holds in three-valued logic).
func (t truth) or(u truth) truth { return t.not().and(u.not()).not() }

// rowTruth is the set of values e can take on a row (see truth), decided
// from its text: NULL (UNKNOWN) and the numeric constants known exactly
// (exactNumber: 0 and FALSE are FALSE, other numbers TRUE), comparisons,
// BETWEEN, IN and LIKE with a NULL operand (UNKNOWN) or of two such
// numbers, IS [NOT] NULL of a constant, a CASE none of whose branches
// can be taken and that has no ELSE (NULL), and NOT, AND and OR of these.
// It follows MySQL's three-valued logic, as the private path does for
// conditions (predicate.go): x BETWEEN NULL AND 5 is x >= NULL AND x <=
// 5, never TRUE; x NOT IN (1, NULL) is x <> 1 AND x <> NULL, never TRUE;
// NOT UNKNOWN is UNKNOWN. The operands of a
// comparison must be columns, constants or themselves NULL on every row:
// anything else (a function, a subquery) may take any value.
func rowTruth(e ast.ExprNode) truth {
	switch e := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.LogicAnd:
			return rowTruth(e.L).and(rowTruth(e.R))
		case opcode.LogicOr:
			return rowTruth(e.L).or(rowTruth(e.R))
		case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			return compareTruth(e.Op, e.L, e.R)
		}
	case *ast.UnaryOperationExpr:
		if e.Op == opcode.Not || e.Op == opcode.Not2 {
			return rowTruth(e.V).not()
		}
	case *ast.IsNullExpr:
		if v, ok := constantValue(e.Expr); ok {
			return truthOf(v.Null != e.Not)
		}
		return isTrue | isFalse
	case *ast.BetweenExpr:
		t := compareTruth(opcode.GE, e.Expr, e.Left).and(compareTruth(opcode.LE, e.Expr, e.Right))
		if e.Not {
			return t.not()
		}
		return t
	case *ast.PatternInExpr:
		if e.Sel != nil || len(e.List) == 0 {
			return anyTruth
		}
		t := isFalse
		for _, item := range e.List {
			t = t.or(compareTruth(opcode.EQ, e.Expr, item))
		}
		if e.Not {
			return t.not()
		}
		return t
	case *ast.PatternLikeOrIlikeExpr:
		if e.IsLike && operand(e.Expr) && operand(e.Pattern) && (nullOnEveryRow(e.Expr) || nullOnEveryRow(e.Pattern)) {
			return isUnknown
		}
	case *ast.CaseExpr:
		return caseTruth(e)
	}
	if v, ok := constantValue(e); ok && v.Null {
		return isUnknown
	}
	if r, ok := exactNumber(e); ok {
		return truthOf(r.Sign() != 0)
	}
	return anyTruth
}

// truthOf is the set of the one value b.
func truthOf(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// compareTruth is rowTruth of l op r: UNKNOWN when one operand is NULL on
// every row and the other is an operand, the comparison's value when both
// are numbers MySQL compares exactly (exactNumber: 0.1 + 0.2 = 0.3 is
// TRUE), any value otherwise (2/3 = 0.6667, which MySQL finds TRUE, a
// float literal, a string).
func compareTruth(op opcode.Op, l, r ast.ExprNode) truth {
	if !operand(l) || !operand(r) {
		return anyTruth
	}
	if nullOnEveryRow(l) || nullOnEveryRow(r) {
		return isUnknown
	}
	a, okL := exactNumber(l)
	b, okR := exactNumber(r)
	if !okL || !okR {
		return anyTruth
	}
	c := a.Cmp(b)
	return truthOf(map[opcode.Op]bool{
		opcode.EQ: c == 0, opcode.NE: c != 0, opcode.LT: c < 0, opcode.LE: c <= 0, opcode.GT: c > 0, opcode.GE: c >= 0,
	}[op])
}

// caseTruth is rowTruth of a CASE: NULL on every row when no WHEN can be
// taken (its condition, or the simple CASE's value = it, is never TRUE)
// and the ELSE is absent or NULL on every row; any value otherwise.
func caseTruth(e *ast.CaseExpr) truth {
	if e.ElseClause != nil && !nullOnEveryRow(e.ElseClause) {
		return anyTruth
	}
	for _, w := range e.WhenClauses {
		t := rowTruth(w.Expr)
		if e.Value != nil {
			t = compareTruth(opcode.EQ, e.Value, w.Expr)
		}
		if t&isTrue != 0 {
			return anyTruth
		}
	}
	return isUnknown
}

// operand reports whether e may be compared without evaluating anything
// that could fail on a row: a column, a constant (an unbound ? marker is
// none), or an expression NULL on every row.
func operand(e ast.ExprNode) bool {
	if _, isColumn := unparen(e).(*ast.ColumnNameExpr); isColumn {
		return true
	}
	_, isConstant := constantValue(e)
	return isConstant || nullOnEveryRow(e)
}

// nullOnEveryRow reports whether e is NULL whatever the row.
func nullOnEveryRow(e ast.ExprNode) bool { return !unbound(e) && rowTruth(e) == isUnknown }

// nullAggregates are the aggregates whose value over rows where their
// argument is NULL is the same as over no row: 0 for COUNT, NULL for the
// others.
var nullAggregates = map[string]bool{
	ast.AggFuncCount: true, ast.AggFuncSum: true, ast.AggFuncAvg: true, ast.AggFuncMin: true, ast.AggFuncMax: true,
	ast.AggFuncVarPop: true, ast.AggFuncVarSamp: true, "variance": true,
	ast.AggFuncStddevPop: true, ast.AggFuncStddevSamp: true, "std": true, "stddev": true,
}

// overNoRow is the value of the aggregate call e when it aggregates only
// values NULL on every row (SUM(col = NULL), AVG(CASE WHEN col = NULL
// THEN x END), COUNT(NULL)): one of nullAggregates, whose arguments are
// all such values. An aggregate skips NULLs, so it then sees no value
// over any set of rows, none included, and is what it is over no row: 0
// for COUNT, NULL for the others, as MySQL answers. ok is false for any
// other expression.
func overNoRow(e ast.ExprNode) (v Value, ok bool) {
	a, isAggregate := unparen(e).(*ast.AggregateFuncExpr)
	if !isAggregate || !nullAggregates[strings.ToLower(a.F)] || len(a.Args) == 0 {
		return Value{}, false
	}
	for _, arg := range a.Args {
		if !nullOnEveryRow(arg) {
			return Value{}, false
		}
	}
	if strings.EqualFold(a.F, ast.AggFuncCount) {
		return Value{}, true
	}
	return Value{Null: true}, true
}

// aggregatesOfNull reports whether sel is a SELECT without GROUP BY that
// reads its table only through aggregates (nullAggregates) of expressions
// NULL on every row (SUM(col = NULL), COUNT(CASE WHEN col = ? THEN 1
// END) with NULL bound), at least one: its one row is the same over every
// set of rows, none included, whatever its WHERE keeps.
func aggregatesOfNull(sel *ast.SelectStmt) bool {
	if sel.GroupBy != nil || len(sel.WindowSpecs) > 0 || sel.Fields == nil {
		return false
	}
	v := &nullAggregateVisitor{ok: true}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return false
		}
		f.Expr.Accept(v)
	}
	if sel.Having != nil {
		sel.Having.Expr.Accept(v)
	}
	if sel.OrderBy != nil {
		sel.OrderBy.Accept(v)
	}
	return v.ok && v.aggregates > 0
}

// nullAggregateVisitor counts the aggregates of expressions NULL on every
// row, and clears ok at a column read outside them, another aggregate or
// a window function.
type nullAggregateVisitor struct {
	ok         bool
	aggregates int
}

func (v *nullAggregateVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.AggregateFuncExpr:
		if _, ok := overNoRow(n); ok {
			v.aggregates++
		} else {
			v.ok = false
		}
		return n, true
	case *ast.ColumnNameExpr, *ast.WindowFuncExpr:
		v.ok = false
		return n, true
	case *ast.FuncCallExpr:
		if _, isAggregate := functionAggs[n.FnName.L]; isAggregate {
			v.ok = false // dpproxy's own aggregates (MEDIAN, ...)
			return n, true
		}
	}
	return n, false
}

func (v *nullAggregateVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
