package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// columnAggs are the built-in aggregates of one numeric column, by the
// lower-case name the TiDB parser gives them (it normalises VARIANCE to
// var_pop and STD, STDDEV to stddev_pop; the synonyms are listed anyway).
var columnAggs = map[string]AggFunc{
	"sum": Sum, "avg": Avg,
	"var_pop": VarPop, "variance": VarPop, "var_samp": VarSamp,
	"stddev_pop": StddevPop, "stddev": StddevPop, "std": StddevPop, "stddev_samp": StddevSamp,
}

// functionAgg is an aggregate the TiDB parser does not know, which arrives
// as a plain function call.
type functionAgg struct {
	fn    AggFunc
	args  int
	usage string
}

// functionAggs are the function-call aggregates, by lower-case name.
var functionAggs = map[string]functionAgg{
	"median":          {Median, 1, "MEDIAN(col)"},
	"percentile_cont": {Percentile, 2, "PERCENTILE_CONT(col, p)"},
	"iqr":             {IQR, 1, "IQR(col)"},
	"regr_slope":      {RegrSlope, 2, "REGR_SLOPE(y, x)"},
	"regr_intercept":  {RegrIntercept, 2, "REGR_INTERCEPT(y, x)"},
}

// ownAggregate matches the aggregates dpproxy answers that MySQL, and so
// the catalog engine, does not know: the function-call aggregates
// (functionAggs) and APPROX_PERCENTILE.
func ownAggregate(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.FuncCallExpr:
		_, ok := functionAggs[n.FnName.L]
		return ok && n.Schema.L == ""
	case *ast.AggregateFuncExpr:
		return strings.EqualFold(n.F, ast.AggFuncApproxPercentile)
	}
	return false
}

// item converts one output column.
func (sc *scope) item(f *ast.SelectField) (Item, error) {
	if f.WildCard != nil {
		return Item{}, refuseQuery("SELECT *")
	}
	agg, err := sc.aggregate(unparen(f.Expr))
	if err != nil {
		return Item{}, err
	}
	return Item{Label: label(f), Agg: agg}, nil
}

// label is the column name MySQL shows: the alias, or the expression as the
// client wrote it (fieldText).
func label(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	return fieldText(f)
}

// aggregate converts a select-list expression that must be one aggregate.
func (sc *scope) aggregate(e ast.ExprNode) (Aggregate, error) {
	if isBucketShaped(e) {
		return Aggregate{}, refuseHistogram("a bucket FLOOR(col / w) without GROUP BY")
	}
	switch e := e.(type) {
	case *ast.AggregateFuncExpr:
		return sc.builtinAggregate(e)
	case *ast.FuncCallExpr:
		if _, ok := functionAggs[e.FnName.L]; ok && e.Schema.L == "" {
			return sc.functionAggregate(e)
		}
		if e.Schema.L != "" {
			return Aggregate{}, refuseQuery("%s", funcName(e))
		}
		if containsNode(e, isAggregate) {
			return Aggregate{}, refuseQuery("%s of an aggregate", funcName(e))
		}
		return Aggregate{}, refuseQuery("%s outside an aggregate", funcName(e))
	case *ast.WindowFuncExpr:
		return Aggregate{}, refuseQuery("window functions (OVER)")
	case *ast.ColumnNameExpr:
		return Aggregate{}, refuseQuery("the bare column %s (private data must be aggregated)", e.Name.Name.O)
	case *ast.SubqueryExpr:
		return Aggregate{}, refuseQuery("subqueries in the select list")
	case *ast.VariableExpr:
		return Aggregate{}, refuseQuery("variables in a SELECT with FROM")
	}
	switch {
	case containsNode(e, isSubquery):
		return Aggregate{}, refuseQuery("subqueries in the select list")
	case containsNode(e, isAggregate):
		return Aggregate{}, refuseQuery("arithmetic on aggregates")
	case containsNode(e, isColumn):
		return Aggregate{}, refuseQuery("expressions of columns outside an aggregate")
	}
	return Aggregate{}, refuseQuery("constants in a SELECT with FROM")
}

// builtinAggregate converts an aggregate the TiDB parser recognises. SUM of
// a condition, and COUNT or SUM of a CASE, are range counts (rangeCount),
// Summed when spelled SUM.
func (sc *scope) builtinAggregate(e *ast.AggregateFuncExpr) (Aggregate, error) {
	name := strings.ToLower(e.F)
	if e.Distinct && name == "count" && len(e.Args) == 1 {
		col, err := sc.argument(e.Args[0])
		if err != nil {
			return Aggregate{}, err
		}
		return Aggregate{Func: CountDistinct, Column: col.Name}, nil
	}
	if e.Distinct {
		return Aggregate{}, refuseQuery("DISTINCT in an aggregate other than COUNT(DISTINCT col)")
	}
	switch {
	case (name == "count" || name == "sum") && len(e.Args) == 1 && isCase(e.Args[0]):
		c, _ := asCase(e.Args[0])
		agg, err := sc.caseCount(name, c)
		agg.Summed = name == "sum"
		return agg, err
	case name == "sum" && len(e.Args) == 1 && isCondition(e.Args[0]):
		agg, err := sc.rangeCount(e.Args[0])
		agg.Summed = true
		return agg, err
	case name == "count" && len(e.Args) == 1 && isCondition(e.Args[0]):
		return Aggregate{}, refuse("COUNT(condition), which counts the rows where the condition is not NULL", supportedRangeCount)
	case name == "count" && len(e.Args) == 1:
		if v, ok := literal(e.Args[0]); ok {
			if v.Null {
				return Aggregate{}, refuseQuery("COUNT(NULL)")
			}
			return Aggregate{Func: CountRows}, nil
		}
		col, err := sc.argument(e.Args[0])
		if err != nil {
			return Aggregate{}, err
		}
		return Aggregate{Func: CountColumn, Column: col.Name}, nil
	case columnAggs[name] != 0 && len(e.Args) == 1:
		col, err := sc.numericArgument(e.F, e.Args[0])
		if err != nil {
			return Aggregate{}, err
		}
		return Aggregate{Func: columnAggs[name], Column: col.Name}, nil
	case name == "approx_percentile" && len(e.Args) == 2:
		col, err := sc.numericArgument(e.F, e.Args[0])
		if err != nil {
			return Aggregate{}, err
		}
		pct, err := quantileArgument(e.F, e.Args[1], 100)
		if err != nil {
			return Aggregate{}, err
		}
		return Aggregate{Func: Percentile, Column: col.Name, Quantile: pct / 100}, nil
	}
	if name == "count" || name == "approx_percentile" || columnAggs[name] != 0 {
		return Aggregate{}, refuseQuery("%s with %d arguments", strings.ToUpper(e.F), len(e.Args))
	}
	return Aggregate{}, refuseQuery("the aggregate %s", strings.ToUpper(e.F))
}

// funcName names a refused function call for messages.
func funcName(e *ast.FuncCallExpr) string {
	switch {
	case strings.HasPrefix(e.FnName.L, "'tidb`."): // how the parser spells DATE '...' and friends
		return "typed literals (DATE '...', TIMESTAMP '...')"
	case e.Schema.L != "":
		return "the user-defined function " + e.Schema.O + "." + e.FnName.O
	}
	return "the function " + e.FnName.O
}

// functionAggregate converts the function-call aggregates: MEDIAN(col),
// PERCENTILE_CONT(col, p), IQR(col), REGR_SLOPE(y, x) and
// REGR_INTERCEPT(y, x), all of numeric columns.
func (sc *scope) functionAggregate(e *ast.FuncCallExpr) (Aggregate, error) {
	f := functionAggs[e.FnName.L]
	if len(e.Args) != f.args {
		return Aggregate{}, refuseQuery("%s with %d arguments (write %s)", e.FnName.O, len(e.Args), f.usage)
	}
	col, err := sc.numericArgument(e.FnName.O, e.Args[0])
	if err != nil {
		return Aggregate{}, err
	}
	agg := Aggregate{Func: f.fn, Column: col.Name}
	switch f.fn {
	case Median:
		agg.Quantile = 0.5
	case Percentile:
		if agg.Quantile, err = quantileArgument(e.FnName.O, e.Args[1], 1); err != nil {
			return Aggregate{}, err
		}
	case RegrSlope, RegrIntercept:
		x, err := sc.numericArgument(e.FnName.O, e.Args[1])
		if err != nil {
			return Aggregate{}, err
		}
		agg.Column2 = x.Name
	}
	return agg, nil
}

// quantileArgument reads the literal quantile of a percentile in [0, upper].
func quantileArgument(fn string, e ast.ExprNode, upper float64) (float64, error) {
	v, ok := literal(e)
	if !ok || v.IsText || v.Null || v.Num < 0 || v.Num > upper {
		return 0, dperr.New(dperr.Unsupported, "the second argument of %s must be a number between 0 and %g", fn, upper)
	}
	return v.Num, nil
}

// argument resolves the one declared column an aggregate is applied to.
func (sc *scope) argument(e ast.ExprNode) (*catalog.Column, error) {
	switch c := unparen(e).(type) {
	case *ast.ColumnNameExpr:
		return sc.column(c.Name, "field list")
	}
	if containsNode(e, isAggregate) {
		return nil, refuseQuery("nested aggregates")
	}
	if containsNode(e, isSubquery) {
		return nil, refuseQuery("subqueries in the select list")
	}
	return nil, refuseQuery("an aggregate of %s (%s)", restore(e), rowExprHint)
}

// numericArgument is argument for the aggregates that need numbers.
func (sc *scope) numericArgument(fn string, e ast.ExprNode) (*catalog.Column, error) {
	col, err := sc.argument(e)
	if err != nil {
		return nil, err
	}
	if col.Temporal() {
		return nil, refuseQuery("%s of the %s column %s (a date column is counted, filtered, grouped and ordered: COUNT(*) per YEAR(%s), DATE_FORMAT(%s, '%%Y-%%m') or DATE(%s), and MIN, MAX, MEDIAN or PERCENTILE_CONT(%s, p) of it)", strings.ToUpper(fn), col.Type, col.Name, col.Name, col.Name, col.Name, col.Name)
	}
	if !col.Numeric() {
		return nil, refuseQuery("%s of the text column %s (only COUNT applies to text columns)", strings.ToUpper(fn), col.Name)
	}
	return col, nil
}
