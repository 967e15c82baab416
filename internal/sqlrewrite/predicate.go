package sqlrewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// where appends the conditions of a WHERE clause to conds, in the order they
// are written: one Condition per comparison, BETWEEN or IN.
func (sc *scope) where(e ast.ExprNode, conds []Condition) ([]Condition, error) {
	switch e := e.(type) {
	case *ast.ParenthesesExpr:
		return sc.where(e.Expr, conds)
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.LogicAnd:
			conds, err := sc.where(e.L, conds)
			if err != nil {
				return nil, err
			}
			return sc.where(e.R, conds)
		case opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.EQ:
			c, err := sc.comparison(e)
			if err != nil {
				return nil, err
			}
			return append(conds, c), nil
		}
		return nil, refuseWhere("%s", operatorName(e.Op))
	case *ast.BetweenExpr:
		c, err := sc.between(e)
		if err != nil {
			return nil, err
		}
		return append(conds, c), nil
	case *ast.PatternInExpr:
		c, err := sc.in(e)
		if err != nil {
			return nil, err
		}
		return append(conds, c), nil
	case *ast.UnaryOperationExpr:
		if e.Op == opcode.Not {
			return nil, refuseWhere("NOT")
		}
	case *ast.IsNullExpr:
		return nil, refuseWhere("IS NULL")
	case *ast.IsTruthExpr:
		return nil, refuseWhere("IS TRUE, IS FALSE")
	case *ast.PatternLikeOrIlikeExpr:
		return nil, refuseWhere("LIKE")
	case *ast.PatternRegexpExpr:
		return nil, refuseWhere("REGEXP")
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return nil, refuseWhere("a subquery")
	case *ast.FuncCallExpr:
		return nil, refuseWhere("the function %s", e.FnName.O)
	case *ast.ColumnNameExpr:
		return nil, refuseWhere("a bare column as a condition")
	case ast.ValueExpr:
		return nil, refuseWhere("a constant as a condition")
	}
	return nil, refuseWhere("this condition")
}

// operatorName names a refused operator of a WHERE clause.
func operatorName(op opcode.Op) string {
	switch op {
	case opcode.LogicOr:
		return "OR"
	case opcode.LogicXor:
		return "XOR"
	case opcode.NE:
		return "<> (!=)"
	case opcode.NullEQ:
		return "<=>"
	}
	return "the operator " + op.String()
}

// mirrored is the comparison with its sides swapped: 3 < age is age > 3.
var mirrored = map[opcode.Op]opcode.Op{
	opcode.LT: opcode.GT, opcode.LE: opcode.GE, opcode.GT: opcode.LT, opcode.GE: opcode.LE, opcode.EQ: opcode.EQ,
}

// comparison converts col op constant and constant op col.
func (sc *scope) comparison(e *ast.BinaryOperationExpr) (Condition, error) {
	colSide, valSide, op := unparen(e.L), unparen(e.R), e.Op
	if isRow(colSide) || isRow(valSide) {
		return Condition{}, refuseWhere("row comparisons")
	}
	if _, ok := colSide.(*ast.ColumnNameExpr); !ok {
		colSide, valSide, op = valSide, colSide, mirrored[op]
	}
	col, err := sc.conditionColumn(colSide, valSide)
	if err != nil {
		return Condition{}, err
	}
	v, err := sc.constant(col, valSide)
	if err != nil {
		return Condition{}, err
	}
	if op == opcode.EQ {
		return Condition{Column: col.Name, In: []Value{v}}, nil
	}
	if !col.Numeric() {
		return Condition{}, textRange(col)
	}
	r := &Range{}
	switch op {
	case opcode.GT, opcode.GE:
		r.Lower, r.HasLower, r.LowerOpen = v.Num, true, op == opcode.GT
	case opcode.LT, opcode.LE:
		r.Upper, r.HasUpper, r.UpperOpen = v.Num, true, op == opcode.LT
	}
	return Condition{Column: col.Name, Range: r}, nil
}

// between converts col BETWEEN a AND b, a closed range.
func (sc *scope) between(e *ast.BetweenExpr) (Condition, error) {
	if e.Not {
		return Condition{}, refuseWhere("NOT BETWEEN")
	}
	col, err := sc.conditionColumn(e.Expr, e.Left, e.Right)
	if err != nil {
		return Condition{}, err
	}
	if !col.Numeric() {
		return Condition{}, textRange(col)
	}
	lo, err := sc.constant(col, e.Left)
	if err != nil {
		return Condition{}, err
	}
	hi, err := sc.constant(col, e.Right)
	if err != nil {
		return Condition{}, err
	}
	return Condition{Column: col.Name, Range: &Range{Lower: lo.Num, Upper: hi.Num, HasLower: true, HasUpper: true}}, nil
}

// in converts col IN (constants).
func (sc *scope) in(e *ast.PatternInExpr) (Condition, error) {
	switch {
	case e.Not:
		return Condition{}, refuseWhere("NOT IN")
	case e.Sel != nil:
		return Condition{}, refuseWhere("IN (subquery)")
	}
	col, err := sc.conditionColumn(e.Expr, e.List...)
	if err != nil {
		return Condition{}, err
	}
	c := Condition{Column: col.Name}
	for _, item := range e.List {
		v, err := sc.constant(col, item)
		if err != nil {
			return Condition{}, err
		}
		c.In = append(c.In, v)
	}
	return c, nil
}

// conditionColumn resolves the column a condition restricts; others are the
// condition's other operands, used to explain a refusal.
func (sc *scope) conditionColumn(e ast.ExprNode, others ...ast.ExprNode) (*catalog.Column, error) {
	if c, ok := unparen(e).(*ast.ColumnNameExpr); ok {
		return sc.column(c.Name, "where clause")
	}
	all := append([]ast.ExprNode{e}, others...)
	for _, o := range all {
		if containsNode(o, isSubquery) {
			return nil, refuseWhere("a subquery")
		}
	}
	for _, o := range all {
		if containsNode(o, isAggregate) {
			return nil, refuseWhere("an aggregate")
		}
	}
	for _, o := range all {
		if containsNode(o, isColumn) {
			return nil, refuseWhere("a function or arithmetic of columns")
		}
	}
	return nil, refuseWhere("a condition without a column")
}

// constant reads a condition's constant, which must match the column's type.
func (sc *scope) constant(col *catalog.Column, e ast.ExprNode) (Value, error) {
	v, ok := literal(e)
	switch {
	case !ok && containsNode(e, isSubquery):
		return Value{}, refuseWhere("a subquery")
	case !ok && containsNode(e, isColumn):
		return Value{}, refuseWhere("comparing two columns")
	case !ok:
		return Value{}, refuseWhere("a value that is not a literal number or string")
	case v.Null:
		return Value{}, refuseWhere("comparison with NULL")
	case v.IsText && col.Numeric():
		return Value{}, dperr.New(dperr.Unsupported, "type mismatch: %s is a numeric column (%s) and takes numbers, not the string '%s'", col.Name, col.Type, v.Str)
	case !v.IsText && !col.Numeric():
		return Value{}, dperr.New(dperr.Unsupported, "type mismatch: %s is a text column and takes strings in quotes, not the number %g", col.Name, v.Num)
	}
	return v, nil
}

func isRow(e ast.ExprNode) bool {
	_, ok := e.(*ast.RowExpr)
	return ok
}

func textRange(col *catalog.Column) error {
	return dperr.New(dperr.Unsupported, "range conditions on the text column %s are not supported: use = or IN", col.Name)
}
