package planner

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
// ResultBigint and ResultInt int64, ResultUnsigned uint64, a DOUBLE
// float64, ResultFloat Float, a DECIMAL Decimal, a VARCHAR string,
// ResultDate Date, ResultDateTime DateTime; a ResultNull column holds
// NULLs only.
//
// A DECIMAL(p, s) (DecimalType) carries its precision and scale above its
// kind (Kind), ResultDecimal, a DOUBLE of fixed decimals (DoubleType) its
// decimals above ResultDouble, and a VARCHAR of a computed length
// (TextType) its characters above ResultText; every other type is its own
// kind.
type ResultType uint32

// The result types, and the kind of the DECIMALs.
const (
	// ResultNull is the type of a column that is NULL whatever the data
	// (SELECT NULL): MySQL's NULL type.
	ResultNull ResultType = iota
	// ResultBigint is BIGINT: counts, integer keys, integer arithmetic.
	ResultBigint
	// ResultDouble is DOUBLE whose decimals are not fixed
	// (NotFixedDecimals): the other released aggregates, and arithmetic
	// with them. DoubleType gives the DOUBLEs of fixed decimals.
	ResultDouble
	// ResultText is VARCHAR: text, and a mix of text, numbers and dates;
	// of 255 characters (a text key's, as dpproxy declares text columns),
	// TextType gives the others.
	ResultText
	// ResultDate is DATE ('YYYY-MM-DD').
	ResultDate
	// ResultDateTime is DATETIME ('YYYY-MM-DD hh:mm:ss').
	ResultDateTime
	// ResultUnsigned is BIGINT UNSIGNED: CAST(x AS UNSIGNED), and
	// arithmetic of it.
	ResultUnsigned
	// ResultInt is INT: the date parts YEAR(col), MONTH(col), ... as keys.
	ResultInt
	// ResultDecimal is the kind of DECIMAL(p, s) (DecimalType): decimal
	// literals, exact arithmetic that is no integer's (COUNT(*) / 3),
	// CAST(x AS DECIMAL(p, s)).
	ResultDecimal
	// ResultFloat is FLOAT, MariaDB's single precision: CAST(x AS FLOAT).
	ResultFloat
)

// TextType is VARCHAR of chars characters, at most maxTextChars: the
// length MariaDB gives text computed from a statement's values (CONCAT's
// the sum of its arguments', LPAD(x, 8, '0')'s 8; charLength), which the
// column's definition announces (proxy.answerColumn: a BLOB type beyond
// what a VARCHAR holds). VARCHAR of defaultTextChars is ResultText.
func TextType(chars int) ResultType {
	chars = min(max(chars, 0), maxTextChars)
	if chars == defaultTextChars {
		return ResultText
	}
	return ResultText | ResultType(chars+1)<<8
}

// defaultTextChars is the length of ResultText: a text key's, VARCHAR(255)
// as dpproxy declares text columns.
const defaultTextChars = 255

// maxTextChars is the most characters TextType holds; MariaDB's longest
// text types announce no more (a LONGBLOB of max_allowed_packet).
const maxTextChars = 1<<24 - 2

// Chars is a VARCHAR's length in characters (0 for other types).
func (t ResultType) Chars() int {
	switch {
	case t.Kind() != ResultText:
		return 0
	case t>>8 == 0:
		return defaultTextChars
	}
	return int(t>>8) - 1
}

// DecimalType is DECIMAL(p, s), p at most 65 and s at most 38 and p
// (MySQL's limits, which DecimalType clamps to).
func DecimalType(p, s int) ResultType {
	s = min(max(s, 0), maxDecimalScale)
	p = min(max(p, s, 1), maxDecimalDigits)
	return ResultDecimal | ResultType(p)<<8 | ResultType(s)<<16
}

// maxDecimalDigits is the largest precision of a DECIMAL.
const maxDecimalDigits = 65

// DoubleType is a DOUBLE of decimals fixed decimals, which MySQL writes
// with that many digits after the point (FormatFixedDouble): MariaDB's
// type of ROUND(x, 2) (1.00) and FLOOR(x) (1000000000000000) of a DOUBLE
// x. decimals of NotFixedDecimals or more is ResultDouble, and fewer
// than 0 is 0.
func DoubleType(decimals int) ResultType {
	return ResultDouble | ResultType(fixed(decimals))<<8
}

// NotFixedDecimals is the decimals MySQL announces for a DOUBLE whose
// type fixes none (NOT_FIXED_DEC), written with its shortest digits
// (FormatDouble); a DOUBLE's fixed decimals are fewer.
const NotFixedDecimals = 31

// fixedDecimals is the decimals a DOUBLE's type fixes, held as decimals
// + 1 so that its zero value, notFixed, is a DOUBLE whose type fixes none.
type fixedDecimals uint8

const notFixed fixedDecimals = 0

// fixed is the fixedDecimals of decimals: notFixed from
// NotFixedDecimals on, as MySQL caps them, and 0 for fewer than 0.
func fixed(decimals int) fixedDecimals {
	if decimals >= NotFixedDecimals {
		return notFixed
	}
	return fixedDecimals(max(decimals, 0) + 1)
}

// decimals is f's digits after the point, NotFixedDecimals for notFixed.
func (f fixedDecimals) decimals() int {
	if f == notFixed {
		return NotFixedDecimals
	}
	return int(f) - 1
}

// Kind is the type without a DECIMAL's precision and scale or a DOUBLE's
// fixed decimals.
func (t ResultType) Kind() ResultType { return t & 0xff }

// Precision and Scale are a DECIMAL's p and s (0 for other types).
func (t ResultType) Precision() int {
	if t.Kind() != ResultDecimal {
		return 0
	}
	return int(t >> 8 & 0xff)
}

func (t ResultType) Scale() int {
	if t.Kind() != ResultDecimal {
		return 0
	}
	return int(t >> 16 & 0xff)
}

// Decimals is what MySQL announces as a column's decimals: a DECIMAL's
// scale, a DOUBLE's fixed decimals or NotFixedDecimals, and 0 for the
// other types.
func (t ResultType) Decimals() int {
	switch t.Kind() {
	case ResultDecimal:
		return t.Scale()
	case ResultDouble:
		return fixedDecimals(t >> 8 & 0xff).decimals()
	}
	return 0
}

// numberDecimals is the decimals of a value of type t as MariaDB counts
// them in the decimals of a DOUBLE computed from it: an integer's and
// NULL's 0, a DECIMAL's scale, a DOUBLE's (Decimals); text and anything
// else is not fixed.
func numberDecimals(t ResultType) int {
	if _, scale, ok := t.exact(); ok {
		return scale
	}
	switch t.Kind() {
	case ResultNull:
		return 0
	case ResultDouble:
		return t.Decimals()
	}
	return NotFixedDecimals
}

var resultTypeNames = [...]string{
	ResultNull: "NULL", ResultBigint: "BIGINT", ResultDouble: "DOUBLE",
	ResultText: "VARCHAR", ResultDate: "DATE", ResultDateTime: "DATETIME",
	ResultUnsigned: "BIGINT UNSIGNED", ResultInt: "INT", ResultDecimal: "DECIMAL", ResultFloat: "FLOAT",
}

// String returns the type's MySQL name: DECIMAL(p,s) for a DECIMAL,
// DOUBLE(decimals=d) for a DOUBLE of fixed decimals, VARCHAR(n) for a
// VARCHAR other than ResultText.
func (t ResultType) String() string {
	switch {
	case t.Kind() == ResultDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision(), t.Scale())
	case t.Kind() == ResultText && t != ResultText:
		return fmt.Sprintf("VARCHAR(%d)", t.Chars())
	case t.Kind() == ResultDouble && t != ResultDouble:
		return fmt.Sprintf("DOUBLE(decimals=%d)", t.Decimals())
	case int(t) >= len(resultTypeNames):
		return fmt.Sprintf("ResultType(%d)", int(t))
	}
	return resultTypeNames[t]
}

// integral reports whether t is an integer type, and the digits of its
// largest values (a DECIMAL holding them has as many before its point).
func (t ResultType) integral() (digits int, ok bool) {
	switch t {
	case ResultBigint:
		return 19, true
	case ResultUnsigned:
		return 20, true
	case ResultInt:
		return 10, true
	}
	return 0, false
}

// exact reports whether t is an integer or a DECIMAL, and the digits
// before and after its point.
func (t ResultType) exact() (whole, scale int, ok bool) {
	if t.Kind() == ResultDecimal {
		return t.Precision() - t.Scale(), t.Scale(), true
	}
	whole, ok = t.integral()
	return whole, 0, ok
}

// Join is the type of a value that is one of a value of t and one of o
// (IF, CASE, COALESCE, IFNULL, NULLIF, GREATEST, LEAST, MIN and MAX), by
// MySQL's aggregation of types: NULL takes the other type; two integers
// are an integer (INT only of INTs, UNSIGNED only of UNSIGNEDs; a signed
// and an UNSIGNED a DECIMAL(20, 0), which holds both); integers and
// DECIMALs a DECIMAL with the most digits of either side of the point;
// other numbers DOUBLE, with the most decimals of either (numberDecimals:
// IF(c, ROUND(x, 2), 1.5) shows 2, IF(c, ROUND(x, 2), SQRT(x)) none
// fixed; two FLOATs FLOAT, a FLOAT with another number DOUBLE); two
// temporals DATETIME unless both are DATE; and any other mix (text, a
// number with a date) VARCHAR, of the longer of their texts (charLength).
func (t ResultType) Join(o ResultType) ResultType {
	numeric := func(x ResultType) bool {
		_, _, ok := x.exact()
		return ok || x.Kind() == ResultDouble || x == ResultFloat
	}
	temporal := func(x ResultType) bool { return x == ResultDate || x == ResultDateTime }
	wt, st, exactT := t.exact()
	wo, so, exactO := o.exact()
	_, intT := t.integral()
	_, intO := o.integral()
	switch {
	case t == ResultNull:
		return o
	case o == ResultNull, t == o:
		return t
	case intT && intO && (t == ResultUnsigned) == (o == ResultUnsigned):
		return ResultBigint
	case exactT && exactO:
		return DecimalType(max(wt, wo)+max(st, so), max(st, so))
	case numeric(t) && numeric(o):
		return DoubleType(max(numberDecimals(t), numberDecimals(o)))
	case temporal(t) && temporal(o):
		return ResultDateTime
	}
	return TextType(max(charLength(t), charLength(o)))
}

// charLength is the most characters MariaDB gives the text of a value of
// type t (its max_char_length, as CONCAT adds them up): a VARCHAR's
// length; BIGINT's 21 (a count's), BIGINT UNSIGNED's 20, INT's 11, a
// DECIMAL(p, s)'s digits, point and sign; a DOUBLE's 23, or 17 and its
// fixed decimals; FLOAT's 12; DATE's 10, DATETIME's 19; NULL's 0.
func charLength(t ResultType) int {
	switch t.Kind() {
	case ResultText:
		return t.Chars()
	case ResultBigint:
		return 21
	case ResultUnsigned:
		return 20
	case ResultInt:
		return 11
	case ResultDecimal:
		return t.Precision() + min(t.Scale(), 1) + 1
	case ResultDouble:
		if d := t.Decimals(); d < NotFixedDecimals {
			return 17 + d
		}
		return 23
	case ResultFloat:
		return 12
	case ResultDate:
		return 10
	case ResultDateTime:
		return 19
	}
	return 0
}

// Cell converts a result cell (Datum.Value: nil, int64, uint64, float64,
// FixedDouble, Float, Decimal, string, Date or DateTime) to t's Go type, as
// MySQL converts a value to its column's type: an integer to a double, a
// number to a DECIMAL with the column's decimals (rounded half away from
// zero, a double as the shortest decimal that reads back as it), a DATE
// to a DATETIME at midnight, a FLOAT to the DOUBLE of its single
// precision (1.100000023841858), anything to text (numbers as Datum text
// formats them, a FixedDouble with its decimals, a FLOAT with its six
// digits). It fails on a value t cannot hold (a fraction or an integer
// beyond its range in an integer column, text in a number or a date
// column, any value in a NULL column), which ColumnTypes never allows.
func (t ResultType) Cell(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind() {
	case ResultBigint:
		switch x := v.(type) {
		case int64:
			return x, nil
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), nil
			}
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		}
	case ResultInt:
		if x, err := ResultBigint.Cell(v); err == nil && x.(int64) >= math.MinInt32 && x.(int64) <= math.MaxInt32 {
			return x, nil
		}
	case ResultUnsigned:
		switch x := v.(type) {
		case int64:
			if x >= 0 {
				return uint64(x), nil
			}
		case uint64:
			return x, nil
		case float64:
			if x == math.Trunc(x) && x >= 0 && x < 1<<64 {
				return uint64(x), nil
			}
		}
	case ResultDecimal:
		var d decimal
		switch x := v.(type) {
		case int64:
			d = intDecimal(big.NewInt(x))
		case uint64:
			d = intDecimal(new(big.Int).SetUint64(x))
		case float64:
			d = floatDecimal(x)
		case FixedDouble:
			d = floatDecimal(x.Num)
		case Float:
			d = floatDecimal(float64(x))
		case Decimal:
			var ok bool
			if d, ok = parseDecimal(string(x)); !ok {
				return nil, fmt.Errorf("planner: malformed decimal %q", x)
			}
		default:
			return nil, fmt.Errorf("planner: a %T value %v in a %v column", v, v, t)
		}
		return Decimal(d.withFrac(t.Scale()).String()), nil
	case ResultDouble:
		switch x := v.(type) {
		case int64:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		case float64:
			return x, nil
		case FixedDouble:
			return x.Num, nil
		case Float:
			return float64(x), nil
		case Decimal:
			return strconv.ParseFloat(string(x), 64)
		}
	case ResultFloat:
		switch x := v.(type) {
		case Float:
			return x, nil
		case float64:
			return Float(float32(x)), nil
		}
	case ResultText:
		switch x := v.(type) {
		case int64:
			return strconv.FormatInt(x, 10), nil
		case uint64:
			return strconv.FormatUint(x, 10), nil
		case float64:
			return FormatDouble(x), nil
		case FixedDouble:
			return FormatFixedDouble(x.Num, x.Decimals), nil
		case Float:
			return x.MySQLText(), nil
		case Decimal:
			return string(x), nil
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
// package exec): BIGINT for a count and for MIN and MAX of an integer
// column (Output.Integer), DATE or DATETIME for an order statistic of a
// date or timestamp, DOUBLE for every other aggregate (SUM included, as
// dpproxy has always sent it).
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
// MariaDB's type of the bucket expression (sqlrewrite.LabelType), else
// BIGINT when every bucket key of the plan is an integer, else DOUBLE.
func (p *Plan) ColumnTypes() []ResultType {
	types := make([]ResultType, len(p.Outputs))
	for i := range p.Outputs {
		types[i] = p.Outputs[i].ResultType()
		if sp := p.Synopsis; sp != nil && sp.Answers[i] != nil && sp.Answers[i].Key {
			if t, ok := labelType(sp.Answers[i].KeyType); ok {
				types[i] = t
				continue
			}
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
	if d, ok := literalDatum(v.Decimal); ok {
		return exactType(d)
	}
	return numberType(v.Num)
}

// exactType is the type of the exact number d as a literal: BIGINT,
// BIGINT UNSIGNED, or DECIMAL(p, s) with its digits.
func exactType(d Datum) ResultType {
	switch {
	case d.Int && d.unsigned:
		return ResultUnsigned
	case d.Int:
		return ResultBigint
	}
	x := exactOf(d)
	return DecimalType(max(x.digits()-x.frac, 1)+x.frac, x.frac)
}

// ColumnTypes returns the types of the columns the client receives
// (Query.Columns, or Outer.Columns), derived from the query's
// expressions over the types of its aggregates (the planned outputs', or
// aggregateTypes' where a LIMIT leaves no row and none is planned),
// its keys (their declared values, a date part's numbers INT; a
// partition-selected key its column's type) and its window functions, by the rules of Eval and MySQL's; an
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
	case qp.aggTypes != nil:
		env.aggs = qp.aggTypes
	}
	for _, k := range q.Keys {
		t := ResultNull
		if k.Private {
			t = selectedKeyType(qp.Table, k.Column)
		}
		for _, v := range k.Values {
			t = t.Join(valueType(v))
		}
		if k.Date != nil && t == ResultBigint {
			t = ResultInt // YEAR(col), MONTH(col), EXTRACT(…), …: MySQL's INT
		}
		if bt, ok := bucketType(k); ok {
			t = bt
		}
		env.keys = append(env.keys, t)
	}
	for _, sub := range qp.Scalars {
		env.scalars = append(env.scalars, sub.ColumnTypes()[0])
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

// aggregateTypes returns the types of the aggregates of sel, a query on
// table t (catalog.Config's, without row expressions), as any plan of
// them gives them (Output.ResultType): from the statement and the catalog
// alone, whatever mechanism would release them and whatever ε, δ and
// @dp_mechanism are set, so that typing refuses nothing. When sel's row
// expressions cannot be derived (withRowExprs), which its plan refuses,
// every aggregate is MySQL's type NULL.
func aggregateTypes(t *catalog.Table, sel *sqlrewrite.Select) []ResultType {
	types := make([]ResultType, len(sel.Items))
	t, _, err := withRowExprs(t, sel.Items, sel.Derive)
	if err != nil {
		return types
	}
	for i, item := range sel.Items {
		var col *catalog.Column
		if item.Agg.Func != sqlrewrite.CountRows {
			c, ok := t.Column(item.Agg.Column)
			if !ok {
				continue // refused by its plan, as withRowExprs above
			}
			col = c
		}
		out := Output{Agg: item.Agg, Column: col, Integer: integerOutput(item.Agg, col)}
		types[i] = out.ResultType()
	}
	return types
}

// bucketType is the type of a bucket key whose bucketing fixes it
// (sqlrewrite.LabelType, MariaDB's type of the expression): BIGINT, a
// DECIMAL(p, s) or a DOUBLE of fixed decimals; ok is false for other
// keys, typed by their values.
func bucketType(k sqlrewrite.GroupKey) (t ResultType, ok bool) {
	if k.Bucket == nil {
		return 0, false
	}
	return labelType(k.Bucket.Type)
}

// labelType is the ResultType of a bucket label's type, ok false when
// the bucketing leaves it to the labels.
func labelType(lt sqlrewrite.LabelType) (t ResultType, ok bool) {
	switch lt.Kind {
	case sqlrewrite.LabelBigint:
		return ResultBigint, true
	case sqlrewrite.LabelDecimal:
		return DecimalType(lt.Precision, lt.Scale), true
	case sqlrewrite.LabelDouble:
		return DoubleType(lt.Scale), true
	}
	return 0, false
}

// selectedKeyType is the type of a key chosen by partition selection on
// column name of t: its values as exec reads them, BIGINT for an integer
// column and VARCHAR for a text one (catalog allows partition selection
// on no other). It depends on the column only, so a plan that selects no
// partition (a WHERE true for no row, QueryPlan.Empty) types the key as
// the plan that selects them does.
func selectedKeyType(t *catalog.Table, name string) ResultType {
	if col, ok := t.Column(name); ok && col.Type == catalog.Integer {
		return ResultBigint
	}
	return ResultText
}

// typeEnv holds the types of what a query's expressions read: its
// aggregates, keys and windows, or an Outer query's inner columns, keys
// and aggregates.
type typeEnv struct {
	// scalars are the types of the query's scalar subqueries' values.
	aggs, keys, windows, scalars []ResultType
	cols, outerKeys, outerAggs   []ResultType
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
// COUNT BIGINT; SUM BIGINT of integers, a DECIMAL of DECIMALs and
// otherwise a DOUBLE of arg's decimals (numberDecimals); AVG of exact
// numbers a DECIMAL with divIncrement more decimals, otherwise a DOUBLE
// with divIncrement more decimals than arg; MIN and MAX arg's type; the
// variances a DOUBLE with divIncrement more decimals than arg, as in
// MariaDB (VAR_POP of counts shows 0.2500, of ROUND(x, 2) 6 decimals).
func aggregateType(fn string, arg ResultType) ResultType {
	whole, scale, exact := arg.exact()
	_, integral := arg.integral()
	switch fn {
	case "count":
		return ResultBigint
	case "sum":
		switch {
		case integral:
			return ResultBigint
		case exact:
			return DecimalType(maxDecimalDigits, scale)
		}
		return DoubleType(numberDecimals(arg))
	case "avg":
		if exact {
			return DecimalType(whole+scale+divIncrement, scale+divIncrement)
		}
		return DoubleType(numberDecimals(arg) + divIncrement)
	case "min", "max":
		return arg
	case "var_pop", "var_samp", "stddev_pop", "stddev_samp":
		return DoubleType(numberDecimals(arg) + divIncrement)
	}
	return ResultText
}

// extremeType is the type of GREATEST or LEAST e: DOUBLE when one
// argument is text (not a date) and another a number, as MariaDB compares
// and returns them, else the join of the arguments' types.
func extremeType(e *sqlrewrite.Expr, env *typeEnv) ResultType {
	joined, text, number := ResultNull, false, false
	for _, a := range e.Args {
		t := exprType(a, env)
		joined = joined.Join(t)
		_, _, exact := t.exact()
		text = text || t.Kind() == ResultText
		number = number || exact || t.Kind() == ResultDouble || t == ResultFloat
	}
	if text && number {
		return ResultDouble
	}
	return joined
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
		if v := e.Value; e.Kind == sqlrewrite.ExprConst && v.IsText && v.Temporal == "" && !v.Null {
			return TextType(utf8.RuneCountInString(v.Str)) // a literal's own length, as MariaDB's
		}
		return valueType(e.Value)
	case sqlrewrite.ExprNoRow:
		// As a released aggregate is typed (Output.ResultType).
		if e.Value.Null {
			return ResultDouble
		}
		return ResultBigint
	case sqlrewrite.ExprAgg:
		return at(env.aggs, e.Index)
	case sqlrewrite.ExprScalar:
		return at(env.scalars, e.Index)
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
		types := make([]ResultType, len(e.Args))
		for i, a := range e.Args {
			types[i] = exprType(a, env)
		}
		return opType(e.Op, types)
	case sqlrewrite.ExprFunc:
		return funcType(e, env, args)
	}
	return ResultText
}

// opType is the type of evalOp(op) over arguments of the given types (a
// NULL one aside, whose result is NULL): arithmetic of exact numbers is
// exact (exactArithmetic: integers BIGINT, or BIGINT UNSIGNED with an
// UNSIGNED operand; / and anything with a DECIMAL a DECIMAL), of any
// other number a DOUBLE with the most decimals of its operands
// (numberDecimals), divIncrement more for /, as in MariaDB:
// ROUND(x, 2) + 1 shows 2, FLOOR(x) / 2 shows 4, ROUND(x, 2) + SQRT(x)
// none fixed.
func opType(op string, types []ResultType) ResultType {
	switch op {
	case "isnull", "isnotnull", "and", "or", "<=>", "not", "xor", "=", "<>", "<", "<=", ">", ">=",
		"between", "in", "istrue", "isfalse", "like":
		return ResultBigint
	case "neg", "+", "-", "*", "/", "div", "%":
	default:
		return ResultText
	}
	var (
		whole, scale    []int
		ints, unsigned  = true, false
		exact, operands = true, false
		decimals        int
	)
	for _, t := range types {
		if t == ResultNull {
			continue
		}
		w, s, ok := t.exact()
		_, integral := t.integral()
		operands, exact = true, exact && ok
		ints, unsigned = ints && integral, unsigned || t == ResultUnsigned
		whole, scale = append(whole, w), append(scale, s)
		decimals = max(decimals, numberDecimals(t))
	}
	switch {
	case op == "div" && exact && unsigned:
		return ResultUnsigned
	case op == "div":
		return ResultBigint
	case !operands:
		return ResultDouble
	case !exact && op == "/":
		return DoubleType(decimals + divIncrement)
	case !exact:
		return DoubleType(decimals)
	case op == "neg" && ints:
		return ResultBigint
	case op == "neg":
		return types[0]
	case op == "/":
		divisor := 0
		if len(scale) > 1 {
			divisor = scale[1]
		}
		return DecimalType(whole[0]+divisor+scale[0]+divIncrement, scale[0]+divIncrement)
	case ints && (unsigned && op != "%" || op == "%" && types[0] == ResultUnsigned):
		return ResultUnsigned
	case ints:
		return ResultBigint
	case op == "*":
		p, s := 0, 0
		for i := range whole {
			p, s = p+whole[i]+scale[i], s+scale[i]
		}
		return DecimalType(p, s)
	}
	w, s := slices.Max(whole), slices.Max(scale)
	if op != "%" {
		w++ // a carry
	}
	return DecimalType(w+s, s)
}

// funcType is the type of the function e (evalFunc, intervalEnd); args(i)
// joins the types of its arguments from the i-th on.
func funcType(e *sqlrewrite.Expr, env *typeEnv, args func(from int) ResultType) ResultType {
	if textFuncs[e.Op] {
		return TextType(textChars(e, env))
	}
	switch e.Op {
	case "coalesce", "ifnull":
		return args(0)
	case "greatest", "least":
		return extremeType(e, env)
	case "if":
		return args(1)
	case "nullif":
		if len(e.Args) == 0 {
			return ResultText
		}
		return exprType(e.Args[0], env)
	case "length", "char_length":
		return ResultInt
	case "cast-float":
		return ResultFloat
	case "datediff", "timestampdiff", "sign", "cast-int":
		return ResultBigint
	case "date_add", "date_sub": // dateAdd
		if len(e.Args) != 3 {
			return ResultText
		}
		switch x := exprType(e.Args[0], env); {
		case x == ResultDate && slices.Contains([]string{"DAY", "WEEK", "MONTH", "QUARTER", "YEAR"}, e.Args[2].Value.Str):
			return ResultDate
		case x == ResultDate, x == ResultDateTime:
			return ResultDateTime
		case x == ResultNull:
			return ResultNull
		}
		return ResultText
	case "cast-unsigned":
		return ResultUnsigned
	case "cast-decimal":
		if len(e.Args) != 3 {
			return ResultText
		}
		return DecimalType(int(e.Args[1].Value.Num), int(e.Args[2].Value.Num))
	case "dp_interval_low", "dp_interval_high":
		// Of a count an integer; of any other aggregate a DOUBLE.
		if args(0) == ResultBigint {
			return ResultBigint
		}
		return ResultDouble
	}
	if len(e.Args) == 0 {
		return ResultText
	}
	x := exprType(e.Args[0], env)
	whole, _, exact := x.exact()
	_, integral := x.integral()
	switch e.Op {
	case "floor", "ceil", "abs":
		// Of an integer its type; of a DECIMAL a DECIMAL, without
		// decimals for FLOOR and CEIL (floorExact); of any other number a
		// DOUBLE, as in MySQL (FLOOR(AVG(x)) may be beyond BIGINT's
		// range), FLOOR's and CEIL's of no decimals (written without an
		// exponent however large: 1000000000000000), ABS's of its
		// argument's.
		switch {
		case integral:
			return x
		case exact && e.Op != "abs":
			return DecimalType(whole+1, 0)
		case exact:
			return x
		case e.Op == "abs":
			return DoubleType(numberDecimals(x))
		}
		return DoubleType(0)
	case "round", "truncate":
		// roundExact: an integer rounded to digits ≥ 0 (or truncated) is
		// itself, to digits < 0 a DECIMAL; a DECIMAL shows the constant
		// digits' decimals (its own for digits computed from released
		// values); a DOUBLE stays one, of roundedDecimals. To NULL digits
		// (NULL whatever x), an integer keeps its type and anything else
		// is a DOUBLE, as in MariaDB.
		digits, null, constant := constantDigits(e)
		switch {
		case null && integral:
			return x
		case null:
			return ResultDouble
		case integral && (e.Op == "truncate" || constant && digits >= 0):
			return x
		case integral:
			return DecimalType(whole+1, 0)
		case exact && !constant:
			return x
		case exact:
			n := int(max(min(digits, maxDecimalScale), 0))
			return DecimalType(whole+1+n, n)
		}
		return DoubleType(roundedDecimals(e, numberDecimals(x)))
	case "power", "sqrt", "exp", "ln", "log", "log10", "log2", "cast-real":
		return ResultDouble
	}
	return ResultText
}

// textChars is the length, in characters, MariaDB gives the text the
// string function e makes (its fix_length_and_dec) over arguments of
// their types (charLength; a number literal's its text's, as MariaDB's:
// -1.50 is 5 long): CONCAT's their lengths added up, CAST AS CHAR's
// its argument's, CAST AS CHAR(n)'s n, CONCAT_WS's with its separator's between them; LPAD's and
// RPAD's their constant count; REPEAT's the string's times its constant
// count; REPLACE's the string's, each character replaceable by the
// replacement; UPPER's, LOWER's and the trims' the string's; LEFT's and
// RIGHT's the smaller of the string's and their constant count;
// SUBSTRING's as MariaDB computes it from the string's bytes (a quirk: 4
// bytes a character of text, so SUBSTRING of 20 characters from 2 is 79
// long); FORMAT's formatChars. A count that is not constant gives the
// longest text (maxTextChars), as MariaDB's longest blob.
func textChars(e *sqlrewrite.Expr, env *typeEnv) int {
	arg := func(i int) int64 {
		switch {
		case i >= len(e.Args):
			return 0
		case e.Args[i].Kind == sqlrewrite.ExprConst && e.Args[i].Value.Decimal != "":
			return int64(len(e.Args[i].Value.Decimal))
		}
		return int64(charLength(exprType(e.Args[i], env)))
	}
	count := func(i int) (int64, bool) {
		if i >= len(e.Args) {
			return 0, false
		}
		n, null, ok := constantInt(e.Args[i])
		if null {
			n = 0
		}
		return min(max(n, 0), math.MaxInt32), ok
	}
	var n int64
	switch e.Op {
	case "cast-char":
		n = arg(0)
		if len(e.Args) > 1 { // CHAR(n): n, whatever the text's
			n = int64(e.Args[1].Value.Num)
		}
	case "concat":
		for i := range e.Args {
			n += arg(i)
		}
	case "concat_ws":
		n = arg(0) * int64(max(len(e.Args)-2, 0))
		for i := 1; i < len(e.Args); i++ {
			n += arg(i)
		}
	case "format":
		n = formatChars(e, env)
	case "lpad", "rpad":
		c, ok := count(1)
		n = c
		if !ok {
			n = maxTextChars
		}
	case "repeat":
		c, ok := count(1)
		n = min(arg(0)*c, maxTextChars)
		if !ok {
			n = maxTextChars
		}
	case "replace":
		n = arg(0)
		if grow := arg(2) - 1; grow > 0 {
			n += min(n*grow, maxTextChars)
		}
	case "left", "right":
		n = arg(0)
		if c, ok := count(1); ok {
			n = min(n, c)
		}
	case "substring":
		n = substringChars(e, env)
	default: // UPPER, LOWER, TRIM, LTRIM, RTRIM
		n = arg(0)
	}
	return int(min(n, maxTextChars))
}

// substringChars is the length MariaDB gives SUBSTRING e: the bytes of
// its string (4 a character of text, 1 a character of a number's) less
// those before a constant start (the last -start for a negative one,
// none for 0), at most a constant length, read as characters.
func substringChars(e *sqlrewrite.Expr, env *typeEnv) int64 {
	t := exprType(e.Args[0], env)
	n := int64(charLength(t))
	if t.Kind() == ResultText {
		n *= utf8.UTFMax
	}
	if start, null, ok := constantInt(e.Args[1]); ok {
		start = int64(int32(start))
		switch {
		case null:
			n = 0
		case start < 0:
			if -start > n {
				n = 0
			} else {
				n = -start
			}
		default:
			n -= min(int64(uint32(start-1)), n)
		}
	}
	if len(e.Args) == 3 {
		if length, null, ok := constantInt(e.Args[2]); ok {
			length = int64(int32(length))
			if null || length <= 0 {
				n = 0
			} else {
				n = min(n, length)
			}
		}
	}
	return n
}

// formatChars is the length MariaDB gives FORMAT(x, d) e: x's integer
// digits (formatDigits; an integer literal of fewer than 10 digits is an
// INT to MariaDB, of 10), one more where rounding to d decimals may carry
// (d fewer than x's decimals) or x has none, a separator for every
// three, a sign and a point, and d decimals (38 where d is not constant).
func formatChars(e *sqlrewrite.Expr, env *typeEnv) int64 {
	t := exprType(e.Args[0], env)
	digits, decimals := formatDigits(t)
	if x := e.Args[0]; x.Kind == sqlrewrite.ExprConst && t == ResultBigint && len(strings.TrimPrefix(x.Value.Decimal, "-")) < 10 {
		digits = 10
	}
	dec := int64(maxFormatDecimals)
	carry := decimals > 0
	if d, null, ok := constantInt(e.Args[1]); ok && !null {
		dec = min(max(d, 0), maxFormatDecimals)
		carry = dec < int64(decimals)
	}
	if carry || digits == 0 {
		digits++
	}
	point := int64(0)
	if dec > 0 {
		point = 1
	}
	return digits + digits/3 + point + 1 + dec
}

// formatDigits are the integer digits and the decimals of a value of
// type t as MariaDB's FORMAT counts them: BIGINT's 19, BIGINT UNSIGNED's
// 20, INT's 10, a DECIMAL(p, s)'s p - s and s; a DOUBLE's 309 (its
// largest value's) and its fixed decimals, else 31; FLOAT's 39 and 31;
// text's 309 and 39 (MariaDB's NOT_FIXED_DEC); NULL's 309 and 0.
func formatDigits(t ResultType) (digits int64, decimals int) {
	switch t.Kind() {
	case ResultBigint:
		return 19, 0
	case ResultUnsigned:
		return 20, 0
	case ResultInt:
		return 10, 0
	case ResultDecimal:
		return int64(t.Precision() - t.Scale()), t.Scale()
	case ResultDouble:
		return 309, t.Decimals()
	case ResultFloat:
		return 39, NotFixedDecimals
	case ResultNull:
		return 309, 0
	}
	return 309, notFixedTextDecimals
}

// notFixedTextDecimals is MariaDB's NOT_FIXED_DEC (39): the decimals
// FORMAT reads of text.
const notFixedTextDecimals = 39

// constantInt is the constant integer argument e (a count, a length, a
// position, FORMAT's decimals) as the function reads it (intArg), or
// null for NULL; ok is false where e is computed from released values.
func constantInt(e *sqlrewrite.Expr) (n int64, null, ok bool) {
	if !constantExpr(e) {
		return 0, false, false
	}
	d, err := Eval(e, Row{}, &Warnings{})
	switch {
	case err != nil:
		return 0, false, false
	case d.Null:
		return 0, true, true
	}
	return intArg(d, &Warnings{}), false, true
}

// constantDigits is the digits of ROUND or TRUNCATE e (0 without them)
// when they are constant, computed from constants alone (2, '2', 1 + 1),
// as evalFunc reads them (roundingDigits); null reports a
// constant NULL. constant is false for digits computed from released
// values.
func constantDigits(e *sqlrewrite.Expr) (digits float64, null, constant bool) {
	if len(e.Args) < 2 {
		return 0, false, true
	}
	if !constantExpr(e.Args[1]) {
		return 0, false, false
	}
	d, err := Eval(e.Args[1], Row{}, &Warnings{})
	switch {
	case err != nil:
		return 0, false, false
	case d.Null:
		return 0, true, true
	}
	return roundingDigits(d), false, true
}

// constantExpr reports whether e is computed from constants alone: no
// aggregate, key, window or column.
func constantExpr(e *sqlrewrite.Expr) bool {
	switch e.Kind {
	case sqlrewrite.ExprConst, sqlrewrite.ExprNoRow:
		return true
	case sqlrewrite.ExprOp, sqlrewrite.ExprFunc, sqlrewrite.ExprCase:
		for _, a := range e.Args {
			if !constantExpr(a) {
				return false
			}
		}
		return true
	}
	return false
}

// roundedDecimals is the fixed decimals of ROUND or TRUNCATE e of a
// DOUBLE whose own decimals are of (numberDecimals), MariaDB's: constant
// digits' (constantDigits; 0 for digits below 0, none fixed from
// NotFixedDecimals on or for NULL), else of.
func roundedDecimals(e *sqlrewrite.Expr, of int) int {
	digits, null, constant := constantDigits(e)
	switch {
	case !constant:
		return of
	case null:
		return NotFixedDecimals
	}
	return int(max(min(digits, NotFixedDecimals), 0))
}
