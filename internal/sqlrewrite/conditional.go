package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// conditionalAggregate converts an aggregate of CASE WHEN condition THEN
// col [ELSE NULL] END, as BI tools write a measure restricted to some
// rows (AVG(CASE WHEN sex = 1 THEN income END)): the aggregate of col
// over the rows where the condition holds, Where set to the condition (an
// AND of range and equality conditions), or Boolean (one with OR or NOT). ok is false for other shapes
// (COUNT and SUM of CASE … THEN 1 are range counts, handled by aggregate;
// an ELSE value makes the CASE a row expression, rowExprAggregate).
// Only a Query answers it: each distinct condition is its own set of
// releases (planner.QueryPlan.Parts).
func (sc *scope) conditionalAggregate(e ast.ExprNode) (agg Aggregate, ok bool, err error) {
	a, isAgg := e.(*ast.AggregateFuncExpr)
	if !isAgg || a.Distinct || len(a.Args) != 1 || !isCase(a.Args[0]) {
		return Aggregate{}, false, nil
	}
	name := strings.ToLower(a.F)
	fn := columnAggs[name]
	if name == "count" {
		fn = CountColumn
	}
	c, _ := asCase(a.Args[0])
	if fn == 0 || len(c.WhenClauses) != 1 {
		return Aggregate{}, false, nil
	}
	col, isCol := unparen(c.WhenClauses[0].Result).(*ast.ColumnNameExpr)
	if !isCol {
		return Aggregate{}, false, nil
	}
	if c.ElseClause != nil {
		if v, isLit := literal(c.ElseClause); !isLit || !v.Null {
			return Aggregate{}, false, nil // a row expression (rowexpr.go)
		}
	}
	column, err := sc.column(col.Name, "field list")
	if err != nil {
		return Aggregate{}, true, err
	}
	if fn != CountColumn && !column.Numeric() {
		return Aggregate{}, true, refuseQuery("%s of the text column %s", strings.ToUpper(a.F), column.Name)
	}
	rc, err := sc.rangeCount(c.WhenClauses[0].Expr)
	if err != nil {
		return Aggregate{}, true, err
	}
	return Aggregate{Func: fn, Column: column.Name, Where: rc.Where, Boolean: rc.Boolean}, true, nil
}
