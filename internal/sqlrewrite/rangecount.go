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

// rangeCountAt is rangeCount with the conditions written at site.
func (sc *scope) rangeCountAt(e ast.ExprNode, site conditionSite) (Aggregate, error) {
	p, err := sc.predicate(e, site)
	if err != nil {
		return Aggregate{}, err
	}
	conds, ok := conjunction(p)
	if !ok {
		return Aggregate{}, rangeCountSite.refuse("OR and NOT (<>, NOT BETWEEN, NOT IN) in a range count")
	}
	return Aggregate{Func: CountRows, Where: conds}, nil
}

// caseCount converts COUNT(CASE WHEN condition THEN 1 [ELSE NULL] END) and
// SUM(CASE WHEN condition THEN 1 [ELSE 0 | ELSE NULL] END), where fn is
// "count" or "sum": the range count of the condition.
func (sc *scope) caseCount(fn string, c *ast.CaseExpr) (Aggregate, error) {
	switch {
	case c.Value != nil:
		return Aggregate{}, rangeCountSite.refuse("CASE value WHEN (write CASE WHEN condition THEN 1 END)")
	case len(c.WhenClauses) != 1:
		return Aggregate{}, rangeCountSite.refuse("CASE with %d WHEN clauses in a range count (write one WHEN, combining conditions with AND)", len(c.WhenClauses))
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

// isCase reports whether e is a CASE expression.
func isCase(e ast.ExprNode) bool {
	_, ok := unparen(e).(*ast.CaseExpr)
	return ok
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
	_, err := sc.caseCount(name, unparen(a.Args[0]).(*ast.CaseExpr))
	return err == nil
}
