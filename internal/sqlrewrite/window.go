package sqlrewrite

import (
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"

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
// AVG(income) DESC) are answered. A window that reads columns and no
// aggregate and is not answered (a column that is no GROUP BY key, or a
// function not over released rows) is refused as a window over the
// table's raw rows, naming the supported form.
func (qb *queryBuilder) window(x *ast.WindowFuncExpr, clause string) (*Expr, error) {
	name := strings.ToLower(x.Name)
	spec := x.Spec
	overRaw := containsNode(x, isColumn) && !containsNode(x, isRowAggregate)
	exprIn := func(e ast.ExprNode) (*Expr, error) {
		out, err := qb.exprIn(e, clause, false)
		if err != nil && overRaw && dperr.KindOf(err) == dperr.Unsupported {
			return nil, refuseRawWindow(x)
		}
		return out, err
	}
	switch {
	case !windowFuncs[name] && overRaw:
		return nil, refuseRawWindow(x)
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
		arg, err := exprIn(x.Args[0])
		if err != nil {
			return nil, err
		}
		w.Arg = arg
	}
	if spec.PartitionBy != nil {
		for _, it := range spec.PartitionBy.Items {
			e, err := exprIn(it.Expr)
			if err != nil {
				return nil, err
			}
			w.PartitionBy = append(w.PartitionBy, e)
		}
	}
	if spec.OrderBy != nil {
		for _, it := range spec.OrderBy.Items {
			e, err := exprIn(it.Expr)
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

// refuseRawWindow refuses the window function x over the table's own rows:
// window functions are answered over released rows only.
func refuseRawWindow(x *ast.WindowFuncExpr) error {
	return dperr.New(dperr.Unsupported, "not supported: the window function %s over the table's raw rows would read rows; window functions (ROW_NUMBER, RANK, DENSE_RANK, SUM, AVG, COUNT, MIN, MAX ... OVER) are answered over released rows, after GROUP BY: SELECT key, COUNT(*), RANK() OVER (ORDER BY COUNT(*) DESC) FROM t GROUP BY key, or SUM(COUNT(*)) OVER () for a total", strings.ToUpper(x.Name))
}
