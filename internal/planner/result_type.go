package planner

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// ResultType is the MySQL type of a result column of a private answer. It
// is a function of the statement, its plan and the configuration only,
// never of the released values: a client sees the same column types for
// a statement however the noise falls, a NULL (No Reply) included, as
// drivers and BI tools expect.
//
// Every non-NULL cell of a column of type t is of t's Go type (Cell):
// ResultBigint int64, ResultDouble float64, ResultText string, ResultDate
// Date, ResultDateTime DateTime; a ResultNull column holds NULLs only.
type ResultType int

// The result types.
const (
	// ResultNull is the type of a column that is NULL whatever the data
	// (SELECT NULL): MySQL's NULL type.
	ResultNull ResultType = iota
	// ResultBigint is BIGINT: counts, integer keys, integer arithmetic.
	ResultBigint
	// ResultDouble is DOUBLE: every other number.
	ResultDouble
	// ResultText is VARCHAR: text, and a mix of text, numbers and dates.
	ResultText
	// ResultDate is DATE ('YYYY-MM-DD').
	ResultDate
	// ResultDateTime is DATETIME ('YYYY-MM-DD hh:mm:ss').
	ResultDateTime
)

var resultTypeNames = [...]string{
	ResultNull: "NULL", ResultBigint: "BIGINT", ResultDouble: "DOUBLE",
	ResultText: "VARCHAR", ResultDate: "DATE", ResultDateTime: "DATETIME",
}

// String returns the type's MySQL name.
func (t ResultType) String() string {
	if t < 0 || int(t) >= len(resultTypeNames) {
		return fmt.Sprintf("ResultType(%d)", int(t))
	}
	return resultTypeNames[t]
}

// Join is the type of a value that is one of a value of t and one of o
// (IF, CASE, COALESCE, IFNULL, NULLIF, GREATEST, LEAST, MIN and MAX), by
// MySQL's aggregation of types: NULL takes the other type, two integers
// are BIGINT, two numbers DOUBLE, two temporals DATETIME unless both are
// DATE, and any other mix (text, a number with a date) VARCHAR.
func (t ResultType) Join(o ResultType) ResultType {
	numeric := func(x ResultType) bool { return x == ResultBigint || x == ResultDouble }
	temporal := func(x ResultType) bool { return x == ResultDate || x == ResultDateTime }
	switch {
	case t == ResultNull:
		return o
	case o == ResultNull, t == o:
		return t
	case numeric(t) && numeric(o):
		return ResultDouble
	case temporal(t) && temporal(o):
		return ResultDateTime
	}
	return ResultText
}

// Cell converts a result cell (Datum.Value: nil, int64, float64, string,
// Date or DateTime) to t's Go type, as MySQL converts a value to its
// column's type: an integer to a double, a DATE to a DATETIME at
// midnight, anything to text (numbers as Datum text formats them). It
// fails on a value t cannot hold (a fraction or an integer beyond 2^63 in
// a BIGINT, text in a number or a date column, any value in a NULL
// column), which ColumnTypes never allows.
func (t ResultType) Cell(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case ResultBigint:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		}
	case ResultDouble:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case float64:
			return x, nil
		}
	case ResultText:
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case string:
			return x, nil
		case Date:
			return string(x), nil
		case DateTime:
			return string(x), nil
		}
	case ResultDate:
		if x, ok := v.(Date); ok {
			return x, nil
		}
	case ResultDateTime:
		switch x := v.(type) {
		case Date:
			return DateTime(string(x) + " 00:00:00"), nil
		case DateTime:
			return x, nil
		}
	}
	return nil, fmt.Errorf("planner: a %T value %v in a %v column", v, v, t)
}

// ResultType is the type of the output's released value (outputValue in
// package exec): BIGINT for a count, DATE or DATETIME for an order
// statistic of a date or timestamp, DOUBLE for every other aggregate
// (SUM included, as dpproxy has always sent it).
func (o *Output) ResultType() ResultType {
	if o.Integer {
		return ResultBigint
	}
	if typ, ok := o.Temporal(); ok {
		if typ == catalog.Date {
			return ResultDate
		}
		return ResultDateTime
	}
	return ResultDouble
}

// ColumnTypes returns the types of the plan's result columns: each
// output's (Output.ResultType), and for a histogram's bucket key column
// BIGINT when every bucket key of the plan is an integer, else DOUBLE.
func (p *Plan) ColumnTypes() []ResultType {
	types := make([]ResultType, len(p.Outputs))
	for i := range p.Outputs {
		types[i] = p.Outputs[i].ResultType()
		if sp := p.Synopsis; sp != nil && sp.Answers[i] != nil && sp.Answers[i].Key {
			types[i] = ResultNull
			for _, b := range sp.Buckets {
				types[i] = types[i].Join(numberType(b.Key))
			}
		}
	}
	return types
}

// numberType is the type of a number as a key or constant: BIGINT when it
// is an integer of magnitude below 2^53 (KeyDatum), else DOUBLE.
func numberType(x float64) ResultType {
	if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return ResultBigint
	}
	return ResultDouble
}

// valueType is the type of a key value or constant (KeyDatum).
func valueType(v sqlrewrite.Value) ResultType {
	switch {
	case v.Null:
		return ResultNull
	case v.IsText && v.Temporal == catalog.Date:
		return ResultDate
	case v.IsText && v.Temporal == catalog.Timestamp:
		return ResultDateTime
	case v.IsText:
		return ResultText
	}
	return numberType(v.Num)
}

// ColumnTypes returns the types of the columns the client receives
// (Query.Columns, or Outer.Columns), derived from the query's
// expressions over the types of its aggregates (the planned outputs'),
// its keys (their declared values; a partition-selected key its column's
// type) and its window functions, by the rules of Eval and MySQL's; an
// expression whose type they do not fix is VARCHAR, which holds any
// value. WITH ROLLUP changes no type: its totals of counts are counts,
// of other aggregates numbers, and its NULL keys are NULLs.
func (qp *QueryPlan) ColumnTypes() []ResultType {
	q := qp.Query
	env := &typeEnv{aggs: make([]ResultType, len(q.Base.Items))}
	switch {
	case len(qp.Parts) > 0:
		for _, part := range qp.Parts {
			for k, i := range part.Items {
				env.aggs[i] = part.Plan.Outputs[k].ResultType()
			}
		}
	case qp.Base != nil:
		for i := range qp.Base.Outputs {
			env.aggs[i] = qp.Base.Outputs[i].ResultType()
		}
	}
	for i, k := range q.Keys {
		t := ResultNull
		if k.Private && qp.Selection != nil && i == qp.SelectedKey {
			t = ResultText
			if qp.Selection.Column.Type == catalog.Integer {
				t = ResultBigint
			}
		}
		for _, v := range k.Values {
			t = t.Join(valueType(v))
		}
		env.keys = append(env.keys, t)
	}
	for _, w := range q.Windows {
		env.windows = append(env.windows, windowType(w, env))
	}
	cols := columnTypes(q.Columns, env)
	if q.Outer == nil {
		return cols
	}
	outer := &typeEnv{cols: cols}
	for _, k := range q.Outer.Keys {
		outer.outerKeys = append(outer.outerKeys, cols[k])
	}
	for _, a := range q.Outer.Aggs {
		arg := ResultNull
		if a.Arg != nil {
			arg = exprType(a.Arg, outer)
		}
		outer.outerAggs = append(outer.outerAggs, aggregateType(a.Func, arg))
	}
	return columnTypes(q.Outer.Columns, outer)
}

// typeEnv holds the types of what a query's expressions read: its
// aggregates, keys and windows, or an Outer query's inner columns, keys
// and aggregates.
type typeEnv struct {
	aggs, keys, windows        []ResultType
	cols, outerKeys, outerAggs []ResultType
}

func columnTypes(columns []sqlrewrite.OutputColumn, env *typeEnv) []ResultType {
	types := make([]ResultType, len(columns))
	for i, c := range columns {
		types[i] = exprType(c.Expr, env)
	}
	return types
}

// windowType is the type of a window function (computeWindows).
func windowType(w sqlrewrite.OutputWindow, env *typeEnv) ResultType {
	switch w.Func {
	case "row_number", "rank", "dense_rank":
		return ResultBigint
	}
	arg := ResultNull
	if w.Arg != nil {
		arg = exprType(w.Arg, env)
	}
	return aggregateType(w.Func, arg)
}

// aggregateType is the type of aggregateOf(fn) over values of type arg:
// COUNT BIGINT, SUM BIGINT of integers and DOUBLE otherwise, MIN and MAX
// arg's type, the others DOUBLE.
func aggregateType(fn string, arg ResultType) ResultType {
	switch fn {
	case "count":
		return ResultBigint
	case "sum":
		if arg == ResultBigint {
			return ResultBigint
		}
		return ResultDouble
	case "min", "max":
		return arg
	case "avg", "var_pop", "var_samp", "stddev_pop", "stddev_samp":
		return ResultDouble
	}
	return ResultText
}

// exprType is the type of e's values under Eval: BIGINT only where Eval
// makes every value an integer, DATE or DATETIME only where it passes
// dates or timestamps through, VARCHAR where it makes text or where the
// type is not fixed by these rules.
func exprType(e *sqlrewrite.Expr, env *typeEnv) ResultType {
	at := func(types []ResultType, i int) ResultType {
		if i < 0 || i >= len(types) {
			return ResultText
		}
		return types[i]
	}
	args := func(from int) ResultType {
		t := ResultNull
		for _, a := range e.Args[min(from, len(e.Args)):] {
			t = t.Join(exprType(a, env))
		}
		return t
	}
	switch e.Kind {
	case sqlrewrite.ExprConst, sqlrewrite.ExprConstAgg:
		return valueType(e.Value)
	case sqlrewrite.ExprNoRow:
		// As a released aggregate is typed (Output.ResultType).
		if e.Value.Null {
			return ResultDouble
		}
		return ResultBigint
	case sqlrewrite.ExprAgg:
		return at(env.aggs, e.Index)
	case sqlrewrite.ExprKey:
		return at(env.keys, e.Index)
	case sqlrewrite.ExprWindow:
		return at(env.windows, e.Index)
	case sqlrewrite.ExprColumn:
		return at(env.cols, e.Index)
	case sqlrewrite.ExprOuterKey:
		return at(env.outerKeys, e.Index)
	case sqlrewrite.ExprOuterAgg:
		return at(env.outerAggs, e.Index)
	case sqlrewrite.ExprCase:
		n := len(e.Args)
		t := ResultNull
		if e.HasElse {
			n--
			t = exprType(e.Args[n], env)
		}
		for i := 1; i < n; i += 2 {
			t = t.Join(exprType(e.Args[i], env))
		}
		return t
	case sqlrewrite.ExprOp:
		return opType(e.Op, args(0))
	case sqlrewrite.ExprFunc:
		return funcType(e, env, args)
	}
	return ResultText
}

// opType is the type of evalOp(op) over arguments whose joined type is args.
func opType(op string, args ResultType) ResultType {
	switch op {
	case "isnull", "isnotnull", "and", "or", "<=>", "not", "xor", "=", "<>", "<", "<=", ">", ">=", "div",
		"between", "in", "istrue", "isfalse", "like":
		return ResultBigint
	case "neg", "+", "-", "*", "%":
		if args == ResultBigint {
			return ResultBigint
		}
		return ResultDouble
	case "/":
		return ResultDouble
	}
	return ResultText
}

// funcType is the type of the function e (evalFunc, intervalEnd); args(i)
// joins the types of its arguments from the i-th on.
func funcType(e *sqlrewrite.Expr, env *typeEnv, args func(from int) ResultType) ResultType {
	switch e.Op {
	case "coalesce", "ifnull", "greatest", "least":
		return args(0)
	case "if":
		return args(1)
	case "nullif":
		if len(e.Args) == 0 {
			return ResultText
		}
		return exprType(e.Args[0], env)
	case "concat", "cast-char":
		return ResultText
	case "datediff", "timestampdiff", "sign", "cast-int":
		return ResultBigint
	case "floor", "ceil", "abs", "dp_interval_low", "dp_interval_high":
		// Of an integer an integer; of any other number a DOUBLE, as in
		// MySQL (FLOOR(AVG(x)) may be beyond BIGINT's range).
		if args(0) == ResultBigint {
			return ResultBigint
		}
		return ResultDouble
	case "round", "truncate":
		// Of an integer, to a constant number of digits at most 0 (or
		// none), an integer; a DOUBLE otherwise, as in MySQL.
		if len(e.Args) == 0 || exprType(e.Args[0], env) != ResultBigint {
			return ResultDouble
		}
		if len(e.Args) < 2 {
			return ResultBigint
		}
		if d := e.Args[1]; d.Kind == sqlrewrite.ExprConst && !d.Value.Null && !d.Value.IsText && math.Trunc(d.Value.Num) <= 0 {
			return ResultBigint
		}
		return ResultDouble
	case "power", "sqrt", "exp", "ln", "log", "log10", "log2", "cast-real":
		return ResultDouble
	}
	return ResultText
}
