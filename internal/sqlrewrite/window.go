package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// windowFuncs are the window functions over released rows.
var windowFuncs = map[string]bool{
	"row_number": true, "rank": true, "dense_rank": true,
	"sum": true, "avg": true, "count": true, "min": true, "max": true,
}

// window converts a window function over released rows: its argument,
// PARTITION BY and ORDER BY are post-processing expressions (aggregates,
// keys, constants), so SUM(COUNT(*)) OVER () or RANK() OVER (ORDER BY
// AVG(income) DESC) are answered, and a window over raw columns is
// refused as any bare column is.
func (qb *queryBuilder) window(x *ast.WindowFuncExpr, clause string) (*Expr, error) {
	name := strings.ToLower(x.Name)
	spec := x.Spec
	switch {
	case !windowFuncs[name] && containsNode(x, isColumn) && !containsNode(x, isRowAggregate):
		return nil, refuseRows("the window function %s over raw columns", strings.ToUpper(x.Name))
	case !windowFuncs[name]:
		return nil, refuseQuery("the window function %s (supported over released rows: ROW_NUMBER, RANK, DENSE_RANK, SUM, AVG, COUNT, MIN, MAX)", strings.ToUpper(x.Name))
	case x.Distinct || x.IgnoreNull || x.FromLast:
		return nil, refuseQuery("DISTINCT, IGNORE NULLS or FROM LAST in a window function")
	case spec.Name.L != "" || spec.Ref.L != "":
		return nil, refuseQuery("named windows")
	case qb.derived != nil:
		return nil, refuseQuery("window functions over an aggregate subquery's rows")
	}
	w := OutputWindow{Func: name}
	ranking := name == "row_number" || name == "rank" || name == "dense_rank"
	switch {
	case ranking && len(x.Args) != 0:
		return nil, refuseQuery("%s with arguments", strings.ToUpper(x.Name))
	case !ranking && len(x.Args) != 1:
		return nil, refuseQuery("%s with %d arguments", strings.ToUpper(x.Name), len(x.Args))
	case name == "count" && isStar(x.Args[0]):
	case !ranking:
		arg, err := qb.exprIn(x.Args[0], clause, false)
		if err != nil {
			return nil, err
		}
		w.Arg = arg
	}
	if spec.PartitionBy != nil {
		for _, it := range spec.PartitionBy.Items {
			e, err := qb.exprIn(it.Expr, clause, false)
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
		}
	}
	if spec.OrderBy != nil {
		for _, it := range spec.OrderBy.Items {
			e, err := qb.exprIn(it.Expr, clause, false)
			if err != nil {
				return nil, err
			}
			w.OrderBy = append(w.OrderBy, OrderKey{Expr: e, Desc: it.Desc})
		}
	}
	if f := spec.Frame; f != nil {
		start, end := f.Extent.Start, f.Extent.End
		running := start.Type == ast.Preceding && start.UnBounded && end.Type == ast.CurrentRow
		if !running || f.Type == ast.Groups || len(w.OrderBy) == 0 {
			return nil, refuseQuery("window frames other than ROWS or RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW with ORDER BY")
		}
		w.Rows = f.Type == ast.Rows
	}
	if ranking && len(w.OrderBy) == 0 && name != "row_number" {
		return nil, refuseQuery("%s without ORDER BY", strings.ToUpper(x.Name))
	}
	qb.q.Windows = append(qb.q.Windows, w)
	return &Expr{Kind: ExprWindow, Index: len(qb.q.Windows) - 1}, nil
}

// isStar reports whether a COUNT argument is * (the parser gives COUNT(*)
// in a window as a constant 1).
func isStar(e ast.ExprNode) bool {
	v, ok := literal(e)
	return ok && !v.IsText && !v.Null
}
