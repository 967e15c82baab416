package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// rangeCount converts the condition of a range count, SUM(condition): an
// AND of leaf conditions, read as in WHERE, gives CountRows restricted to
// them (MySQL sums the condition's 1s and 0s, skipping NULLs).
func (sc *scope) rangeCount(e ast.ExprNode) (Aggregate, error) {
	return sc.rangeCountAt(e, rangeCountSite)
}

// rangeCountAt is rangeCount with the conditions written at site: Where
// when the condition is an AND of leaves, else Boolean (OR and NOT, or
// Never); neither when the statement's text makes it true for every row
// (NULL IS NULL: the count of all rows).
func (sc *scope) rangeCountAt(e ast.ExprNode, site conditionSite) (Aggregate, error) {
	p, err := sc.predicate(e, site)
	if err != nil {
		return Aggregate{}, err
	}
	if conds, ok := conjunction(p); ok {
		return Aggregate{Func: CountRows, Where: conds}, nil
	}
	return Aggregate{Func: CountRows, Boolean: p}, nil
}

// conjunctionAt is rangeCountAt's conditions where only an AND of leaves
// is supported (a row CASE's, a tier's): OR and NOT are refused, naming
// where they are answered.
func (sc *scope) conjunctionAt(e ast.ExprNode, site conditionSite) ([]Condition, error) {
	rc, err := sc.rangeCountAt(e, site)
	if err != nil {
		return nil, err
	}
	if rc.Boolean != nil {
		return nil, site.refuse("OR and NOT (<>, NOT BETWEEN, NOT IN) in a CASE of a row expression or of GROUP BY tiers " +
			"(they are answered in WHERE, in a range count and in AGG(CASE WHEN condition THEN col END) without ELSE)")
	}
	return rc.Where, nil
}

// caseCount converts COUNT(CASE WHEN condition THEN 1 [ELSE NULL] END) and
// SUM(CASE WHEN condition THEN 1 [ELSE 0 | ELSE NULL] END), where fn is
// "count" or "sum", and c a searched CASE (asCase: also SUM(IF(condition,
// 1, 0)) and COUNT(IF(condition, 1, NULL))): the range count of the
// condition.
func (sc *scope) caseCount(fn string, c *ast.CaseExpr) (Aggregate, error) {
	if len(c.WhenClauses) != 1 {
		return Aggregate{}, rangeCountSite.refuse("CASE with %d WHEN clauses in a range count (write one WHEN, combining conditions with AND and OR)", len(c.WhenClauses))
	}
	if v, ok := literal(c.WhenClauses[0].Result); !ok || v.IsText || v.Null || v.Num != 1 {
		return Aggregate{}, rangeCountSite.refuse("CASE WHEN ... THEN a result other than 1 in a range count")
	}
	if c.ElseClause != nil {
		v, ok := literal(c.ElseClause)
		switch {
		case ok && v.Null:
		case ok && fn == "sum" && !v.IsText && v.Num == 0:
		case fn == "count":
			return Aggregate{}, rangeCountSite.refuse("COUNT(CASE ... ELSE a value END) (omit ELSE or write ELSE NULL)")
		default:
			return Aggregate{}, rangeCountSite.refuse("SUM(CASE ... ELSE a value other than 0 or NULL END)")
		}
	}
	return sc.rangeCount(c.WhenClauses[0].Expr)
}

// isCase reports whether e is a CASE expression or one asCase writes as
// one.
func isCase(e ast.ExprNode) bool {
	_, ok := asCase(e)
	return ok
}

// asCase returns e as a searched CASE (CASE WHEN condition THEN result …
// [ELSE result] END) when it is one, or one of the forms MySQL defines by
// it: a simple CASE (CASE v WHEN x THEN r … END is CASE WHEN v = x THEN r
// … END), IF(c, a, b) (CASE WHEN c THEN a ELSE b END) and NULLIF(a, b)
// (CASE WHEN a = b THEN NULL ELSE a END). The rewritten CASE is a new
// node; e is unchanged, so labels and messages keep the client's text.
func asCase(e ast.ExprNode) (*ast.CaseExpr, bool) {
	switch x := unparen(e).(type) {
	case *ast.CaseExpr:
		if x.Value == nil {
			return x, true
		}
		out := &ast.CaseExpr{ElseClause: x.ElseClause}
		for _, w := range x.WhenClauses {
			out.WhenClauses = append(out.WhenClauses, &ast.WhenClause{
				Expr: &ast.BinaryOperationExpr{Op: opcode.EQ, L: x.Value, R: w.Expr}, Result: w.Result})
		}
		return out, true
	case *ast.FuncCallExpr:
		switch {
		case x.Schema.L != "":
		case x.FnName.L == "if" && len(x.Args) == 3:
			return &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: x.Args[0], Result: x.Args[1]}}, ElseClause: x.Args[2]}, true
		case x.FnName.L == "nullif" && len(x.Args) == 2:
			return &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{
				Expr: &ast.BinaryOperationExpr{Op: opcode.EQ, L: x.Args[0], R: x.Args[1]}, Result: ast.NewValueExpr(nil, "", "")}},
				ElseClause: x.Args[0]}, true
		}
	}
	return nil, false
}

// isCondition reports whether e is a boolean condition (a comparison, a
// pattern, a test, or AND, OR, XOR, NOT of them) rather than a value, so that
// SUM(e) is read as a range count.
func isCondition(e ast.ExprNode) bool {
	switch e := unparen(e).(type) {
	case *ast.BetweenExpr, *ast.PatternInExpr, *ast.IsNullExpr, *ast.IsTruthExpr,
		*ast.PatternLikeOrIlikeExpr, *ast.PatternRegexpExpr, *ast.ExistsSubqueryExpr:
		return true
	case *ast.UnaryOperationExpr:
		return e.Op == opcode.Not || e.Op == opcode.Not2
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.EQ, opcode.NE, opcode.NullEQ,
			opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			return true
		}
	}
	return false
}

// rangeCountShaped reports whether a is COUNT or SUM of a CASE that
// caseCount reads as a range count (a count of rows, preferred over the
// same CASE as a row expression).
func (sc *scope) rangeCountShaped(a *ast.AggregateFuncExpr) bool {
	name := strings.ToLower(a.F)
	if (name != "count" && name != "sum") || len(a.Args) != 1 || !isCase(a.Args[0]) {
		return false
	}
	c, _ := asCase(a.Args[0])
	_, err := sc.caseCount(name, c)
	return err == nil
}
