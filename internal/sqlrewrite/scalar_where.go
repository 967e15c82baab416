package sqlrewrite

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Scalar subqueries as comparison values in WHERE: SELECT COUNT(*) FROM
// pums WHERE income > (SELECT AVG(income) FROM pums), WHERE age BETWEEN
// (SELECT MEDIAN(age) FROM pums) AND 60, WHERE day >= (SELECT
// MEDIAN(day) FROM orders), and arithmetic of subqueries and constants:
// WHERE income > 1.5 * (SELECT AVG(income) FROM pums), WHERE day >=
// (SELECT MEDIAN(day) FROM orders) - INTERVAL 7 DAY.
//
// Each subquery is one of the statement's Scalars (scalar.go), released
// first with its share of ε. The comparison value is an Expr of their
// released values (ExprScalar) and constants, which the executor
// evaluates after the releases, as the select list's expressions are:
// post-processing of released values. The condition is a Condition with
// a ScalarBound and neither Range nor In: until the subqueries are
// released nothing is known of the rows it keeps, so the planner reads it
// as a condition it knows nothing of (it narrows no bound, key domain or
// range, and no plan-time choice depends on it). The executor then
// resolves it (ResolveScalars) into a Range whose ends are the computed
// values, which the backend receives as typed bind arguments (RangeArg)
// and compares as MySQL compares the column with a value of that type:
// an integer or DECIMAL value exactly (CAST(? AS DECIMAL(65,30)) on
// MySQL, NUMERIC on PostgreSQL), a DOUBLE as a double, a date or
// datetime as a date. A NULL value makes the comparison UNKNOWN, as in
// MySQL: the backend receives a typed NULL, and the outer query's
// releases run, charged and noised, over the rows the WHERE then keeps.

// ScalarBound is a comparison of a condition's column with released
// values of the statement's scalar subqueries.
type ScalarBound struct {
	// Range has the ends of the comparison: an end that is computed from
	// subqueries has Has* and *Open set (> an open lower end, = two
	// closed ends of the same value) and no number; a constant end (60
	// of BETWEEN (SELECT ...) AND 60) is as in any Range.
	Range Range
	// Lower and Upper are the values of the ends computed from
	// subqueries: a post-processing expression of the released values
	// of Query.Scalars (ExprScalar; a bare subquery is one) and numeric
	// constants, with the operators neg, +, -, *, /, div and %, and the
	// functions date_add and date_sub (x, n, unit: x ± INTERVAL n unit);
	// nil for a constant end, or none. For =, both are the same Expr.
	Lower, Upper *Expr
}

// ArgKind is the SQL type a RangeArg is bound as.
type ArgKind uint8

// The kinds of a RangeArg.
const (
	// ArgDecimal is an exact number (an integer or a DECIMAL): Text its
	// digits, compared exactly.
	ArgDecimal ArgKind = iota + 1
	// ArgDouble is a DOUBLE: Text its shortest round-trip digits.
	ArgDouble
	// ArgDate is a date, Text YYYY-MM-DD.
	ArgDate
	// ArgTimestamp is a datetime, Text YYYY-MM-DD hh:mm:ss[.ffffff].
	ArgTimestamp
)

// RangeArg is a range end bound to the backend as a typed argument: a
// scalar subquery's released value (ResolveScalars).
type RangeArg struct {
	Kind ArgKind
	// Null is a released NULL: the comparison is UNKNOWN for every row.
	Null bool
	// Text is the value's text (ArgKind); Num, for a number, its nearest
	// double.
	Text string
	Num  float64
}

// ScalarValue is the value of a ScalarBound's end, computed by the
// executor from the subqueries' released values (ScalarEval).
type ScalarValue struct {
	Null bool
	// Exact is an exact number's digits (an integer or a DECIMAL); else,
	// for a number, Num is a DOUBLE.
	Exact string
	Num   float64
	// Text is a text value; Temporal is catalog.Date or
	// catalog.Timestamp when it is a date or a datetime.
	Text     string
	IsText   bool
	Temporal catalog.ColumnType
}

// ScalarEval computes the value of a ScalarBound's end from the
// statement's released subquery values (ResolveScalars).
type ScalarEval func(e *Expr) (ScalarValue, error)

// supportedScalarWhere names the scalar subqueries WHERE takes.
const supportedScalarWhere = "a scalar subquery in WHERE is compared with a numeric, date or timestamp column: col <, <=, >, >=, = or <> v, " +
	"or col BETWEEN a AND b (either end such a v or a constant), v a subquery (SELECT agg FROM t [WHERE ...]) or arithmetic (+, -, *, /, DIV, %, ± INTERVAL n unit) of subqueries and numeric constants, " +
	"no column inside it; the subquery uncorrelated, of one column and one row"

// scalarOps are the operators of a comparison value computed from
// subqueries, by their names in Expr.
var scalarOps = map[opcode.Op]string{opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.IntDiv: "div", opcode.Mod: "%"}

// scalarValue converts e, a comparison value that reads subqueries, into
// the Expr the executor evaluates once they are released (ScalarBound):
// subqueries, numeric constants (NULL too), unary minus and plus, the
// arithmetic operators, and x ± INTERVAL n unit (DATE_ADD, DATE_SUB,
// ADDDATE and SUBDATE of a unit SECOND to YEAR and an integer n).
func (sc *scope) scalarValue(e ast.ExprNode) (*Expr, error) {
	e = unparen(e)
	if v, ok := literal(e); ok {
		if v.IsText {
			return nil, refuse(fmt.Sprintf("the text constant %s in a comparison value with a subquery", restore(e)), supportedScalarWhere)
		}
		v.Decimal = decimalLiteral(e)
		return floatConst(e, &Expr{Kind: ExprConst, Value: v}), nil
	}
	switch x := e.(type) {
	case *ast.SubqueryExpr:
		k, err := sc.scalars.scalar(x)
		if err != nil {
			return nil, err
		}
		return &Expr{Kind: ExprScalar, Index: k}, nil
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Plus:
			return sc.scalarValue(x.V)
		case opcode.Minus:
			v, err := sc.scalarValue(x.V)
			if err != nil {
				return nil, err
			}
			return &Expr{Kind: ExprOp, Op: "neg", Args: []*Expr{v}}, nil
		}
	case *ast.BinaryOperationExpr:
		op, ok := scalarOps[x.Op]
		if !ok {
			break
		}
		l, err := sc.scalarValue(x.L)
		if err != nil {
			return nil, err
		}
		r, err := sc.scalarValue(x.R)
		if err != nil {
			return nil, err
		}
		return &Expr{Kind: ExprOp, Op: op, Args: []*Expr{l, r}}, nil
	case *ast.FuncCallExpr:
		name := x.FnName.L
		if add, ok := map[string]string{"date_add": "date_add", "adddate": "date_add", "date_sub": "date_sub", "subdate": "date_sub"}[name]; ok && x.Schema.L == "" && len(x.Args) == 3 {
			return sc.scalarShift(add, x)
		}
	}
	if _, ok := e.(*ast.ColumnNameExpr); ok {
		return nil, refuse(fmt.Sprintf("the column %s inside an expression with a subquery", restore(e)), supportedScalarWhere)
	}
	return nil, refuse(fmt.Sprintf("%s in a comparison value with a subquery, which is arithmetic only", restore(e)), supportedScalarWhere)
}

// scalarShift converts x ± INTERVAL n unit (f, DATE_ADD or DATE_SUB
// named op) in a comparison value: Expr date_add or date_sub of x, n and
// the unit's name (ShiftTime).
func (sc *scope) scalarShift(op string, f *ast.FuncCallExpr) (*Expr, error) {
	x, err := sc.scalarValue(f.Args[0])
	if err != nil {
		return nil, err
	}
	u, isUnit := f.Args[2].(*ast.TimeUnitExpr)
	v, isConst := literal(f.Args[1])
	if !isUnit || timeUnitNames[u.Unit] == "" || !isConst || v.IsText || v.Null || v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > maxIntervalCount {
		return nil, refuse(fmt.Sprintf("INTERVAL %s %s in a comparison value with a subquery", restore(f.Args[1]), restore(f.Args[2])),
			"the interval is INTERVAL n unit, n an integer of magnitude at most 10^8, unit SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR; "+supportedScalarWhere)
	}
	n := &Expr{Kind: ExprConst, Value: Value{Num: v.Num, Decimal: strconv.FormatInt(int64(v.Num), 10)}}
	unit := &Expr{Kind: ExprConst, Value: Value{IsText: true, Str: timeUnitNames[u.Unit]}}
	return &Expr{Kind: ExprFunc, Op: op, Args: []*Expr{x, n, unit}}, nil
}

// timeUnitNames name the units of timeUnits.
var timeUnitNames = map[ast.TimeUnitType]string{
	ast.TimeUnitSecond: "SECOND", ast.TimeUnitMinute: "MINUTE", ast.TimeUnitHour: "HOUR", ast.TimeUnitDay: "DAY",
	ast.TimeUnitWeek: "WEEK", ast.TimeUnitMonth: "MONTH", ast.TimeUnitQuarter: "QUARTER", ast.TimeUnitYear: "YEAR",
}

// ShiftTime is t (a date when isDate) shifted by n units (a name of
// timeUnitNames) as MySQL's DATE_ADD computes it: months by the calendar,
// the day clamped to the month's last; a date shifted by a unit shorter
// than a day becomes a datetime. ok is false for an unknown unit, |n|
// beyond 10^8, or a result outside the years 1 to 9999 (MySQL's NULL).
func ShiftTime(t time.Time, isDate bool, n int64, unit string) (_ time.Time, date, ok bool) {
	var length struct{ seconds, months int64 }
	for u, name := range timeUnitNames {
		if name == unit {
			length, ok = timeUnits[u], true
		}
	}
	if !ok || n > maxIntervalCount || n < -maxIntervalCount {
		return time.Time{}, false, false
	}
	if length.months != 0 {
		t = addMonths(t, n*length.months)
	} else {
		t = shiftSeconds(t, n*length.seconds)
		isDate = isDate && length.seconds%catalog.SecondsPerDay == 0
	}
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, false, false
	}
	return t, isDate, true
}

// scalarColumn resolves the column a comparison with a subquery
// restricts: a numeric, date or timestamp column.
func (sc *scope) scalarColumn(site conditionSite, e ast.ExprNode) (*catalog.Column, error) {
	c, ok := unparen(e).(*ast.ColumnNameExpr)
	if !ok {
		return nil, refuse(fmt.Sprintf("a comparison of %s with a subquery", restore(e)), supportedScalarWhere)
	}
	col, err := sc.column(c.Name, site.clause)
	if err != nil {
		return nil, err
	}
	if !col.Numeric() && !col.Temporal() {
		return nil, refuse(fmt.Sprintf("a comparison of the %s column %s with a subquery", col.Type, col.Name), supportedScalarWhere)
	}
	return col, nil
}

// scalarCondition is the condition on col of the bound b.
func scalarCondition(col *catalog.Column, b *ScalarBound) Condition {
	c := Condition{Column: col.Name, Scalar: b}
	if col.Temporal() {
		c.Temporal = col.Type
	}
	return c
}

// scalarComparison converts col op (subquery) and (subquery) op col in
// WHERE; handled is false when neither side is a subquery, or the site
// takes none (the caller refuses it).
func (sc *scope) scalarComparison(site conditionSite, e *ast.BinaryOperationExpr) (Condition, bool, error) {
	if sc.scalars == nil || !containsNode(e, isSubquery) {
		return Condition{}, false, nil
	}
	colSide, sub, op := e.L, e.R, e.Op
	if containsNode(e.L, isSubquery) {
		colSide, sub, op = e.R, e.L, mirrored[e.Op]
	}
	if containsNode(colSide, isSubquery) {
		return Condition{}, true, refuse("a comparison of two subqueries", supportedScalarWhere)
	}
	col, err := sc.scalarColumn(site, colSide)
	if err != nil {
		return Condition{}, true, err
	}
	v, err := sc.scalarValue(sub)
	if err != nil {
		return Condition{}, true, err
	}
	b := &ScalarBound{}
	switch op {
	case opcode.GT, opcode.GE:
		b.Range.HasLower, b.Range.LowerOpen, b.Lower = true, op == opcode.GT, v
	case opcode.LT, opcode.LE:
		b.Range.HasUpper, b.Range.UpperOpen, b.Upper = true, op == opcode.LT, v
	default: // = (and <>, which the caller negates)
		b.Range.HasLower, b.Range.HasUpper, b.Lower, b.Upper = true, true, v, v
	}
	return scalarCondition(col, b), true, nil
}

// scalarBetween converts col BETWEEN a AND b in WHERE where a or b (or
// both) is a subquery, the other a constant; the caller negates NOT
// BETWEEN. handled is false when neither end is a subquery.
func (sc *scope) scalarBetween(site conditionSite, e *ast.BetweenExpr) (Condition, bool, error) {
	if sc.scalars == nil || !containsNode(e, isSubquery) {
		return Condition{}, false, nil
	}
	if containsNode(e.Expr, isSubquery) {
		return Condition{}, true, refuse("a subquery BETWEEN values", supportedScalarWhere)
	}
	col, err := sc.scalarColumn(site, e.Expr)
	if err != nil {
		return Condition{}, true, err
	}
	b := &ScalarBound{Range: Range{HasLower: true, HasUpper: true}}
	for i, end := range []ast.ExprNode{e.Left, e.Right} {
		lower := i == 0
		if containsNode(end, isSubquery) {
			v, err := sc.scalarValue(end)
			if err != nil {
				return Condition{}, true, err
			}
			if lower {
				b.Lower = v
			} else {
				b.Upper = v
			}
			continue
		}
		if col.Temporal() {
			t, err := sc.timeConstant(site, col, end)
			if err != nil {
				return Condition{}, true, err
			}
			if lower {
				b.Range.setLower(columnBound(col, opcode.GE, t))
			} else {
				b.Range.setUpper(columnBound(col, opcode.LE, t))
			}
			continue
		}
		v, err := sc.constant(site, col, end)
		if err != nil {
			return Condition{}, true, err
		}
		if lower {
			b.Range.Lower = v.Num
			b.Range.setExactLower(conditionDigits(end, v.Num))
		} else {
			b.Range.Upper = v.Num
			b.Range.setExactUpper(conditionDigits(end, v.Num))
		}
	}
	return scalarCondition(col, b), true, nil
}

// ResolveScalars returns conds and b (a Select's Where and Boolean, or a
// Plan's Filter and Boolean) with every condition that compares with
// scalar subqueries (Condition.Scalar) resolved with the values value
// computes of its ends from the subqueries' released values: a Range
// whose ends are those values, bound to the backend as typed arguments
// (RangeArg). conds and b are not modified. A value of the wrong type
// for its column (the planner refuses such a statement) is an error, as
// is any error of value, returned as it is.
func ResolveScalars(conds []Condition, b *Predicate, value ScalarEval) ([]Condition, *Predicate, error) {
	var out []Condition
	if conds != nil {
		out = make([]Condition, len(conds))
	}
	for i, c := range conds {
		r, err := resolveScalar(c, value)
		if err != nil {
			return nil, nil, err
		}
		out[i] = r
	}
	var walk func(p *Predicate) (*Predicate, error)
	walk = func(p *Predicate) (*Predicate, error) {
		if p == nil {
			return nil, nil
		}
		q := &Predicate{Op: p.Op}
		if p.Leaf != nil {
			c, err := resolveScalar(*p.Leaf, value)
			if err != nil {
				return nil, err
			}
			q.Leaf = &c
		}
		for _, a := range p.Args {
			x, err := walk(a)
			if err != nil {
				return nil, err
			}
			q.Args = append(q.Args, x)
		}
		return q, nil
	}
	nb, err := walk(b)
	if err != nil {
		return nil, nil, err
	}
	return out, nb, nil
}

// resolveScalar resolves one condition (ResolveScalars).
func resolveScalar(c Condition, value ScalarEval) (Condition, error) {
	if c.Scalar == nil {
		return c, nil
	}
	s := c.Scalar
	r := s.Range
	for _, lower := range []bool{true, false} {
		e := s.Upper
		if lower {
			e = s.Lower
		}
		if e == nil {
			continue
		}
		v, err := value(e)
		if err != nil {
			return Condition{}, err
		}
		var x float64
		var micros int32
		var open bool
		arg := &RangeArg{}
		if lower {
			open = r.LowerOpen
		} else {
			open = r.UpperOpen
		}
		switch {
		case c.Temporal != "":
			arg.Kind = ArgTimestamp
			if c.Temporal == catalog.Date {
				arg.Kind = ArgDate
			}
			if v.Null {
				arg.Null = true
				break
			}
			t, err := releasedTime(v)
			if err != nil {
				return Condition{}, fmt.Errorf("sqlrewrite: condition on the %s column %s: %v", c.Temporal, c.Column, err)
			}
			op := map[[2]bool]opcode.Op{{true, false}: opcode.GE, {true, true}: opcode.GT, {false, false}: opcode.LE, {false, true}: opcode.LT}[[2]bool{lower, open}]
			tb := columnBound(&catalog.Column{Type: c.Temporal}, op, t)
			x, micros, open = tb.x, tb.micros, tb.open
			arg.Text = (&catalog.Column{Type: c.Temporal}).FormatTemporalMicros(x, micros)
		case v.Null:
			arg.Kind, arg.Null = ArgDecimal, true
		case v.IsText:
			return Condition{}, fmt.Errorf("sqlrewrite: condition on the numeric column %s: a released text value", c.Column)
		case v.Exact != "":
			if !validExact(v.Exact) {
				return Condition{}, fmt.Errorf("sqlrewrite: released value %q is no number", v.Exact)
			}
			f, err := strconv.ParseFloat(v.Exact, 64)
			if err != nil && !strings.Contains(err.Error(), "range") {
				return Condition{}, fmt.Errorf("sqlrewrite: released value %q: %v", v.Exact, err)
			}
			arg.Kind, arg.Text, arg.Num, x = ArgDecimal, v.Exact, f, f
		default:
			if math.IsNaN(v.Num) || math.IsInf(v.Num, 0) {
				return Condition{}, fmt.Errorf("sqlrewrite: non-finite released value %g", v.Num)
			}
			arg.Kind, arg.Text, arg.Num, x = ArgDouble, strconv.FormatFloat(v.Num, 'g', -1, 64), v.Num, v.Num
		}
		if lower {
			r.Lower, r.LowerMicros, r.LowerOpen, r.LowerArg = x, micros, open, arg
		} else {
			r.Upper, r.UpperMicros, r.UpperOpen, r.UpperArg = x, micros, open, arg
		}
	}
	c.Scalar, c.Range = nil, &r
	return c, nil
}

// releasedTime reads a released date or datetime.
func releasedTime(v ScalarValue) (time.Time, error) {
	if !v.IsText || v.Temporal == "" {
		return time.Time{}, fmt.Errorf("the released value is no date")
	}
	for _, layout := range []string{time.DateOnly, "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, v.Text); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("the released value %q is no date", v.Text)
}

// typedArg renders a RangeArg as a typed bind argument of the dialect:
// on MySQL and MariaDB CAST(? AS DECIMAL(65,30)) (exact, as MySQL
// compares an integer or DECIMAL column with a DECIMAL), CAST(? AS
// DOUBLE), CAST(? AS DATE) and CAST(? AS DATETIME(6)) of its text; on
// PostgreSQL CAST($n AS NUMERIC), DOUBLE PRECISION, DATE or TIMESTAMP
// of its text; on SQLite, which stores 64-bit integers and doubles and
// compares them exactly with each other, an int64 for an integer that
// is one (also written with a fraction of zeros), else a float64, and a date's text (SQLite compares dates as
// text, as its date bounds are written). A NULL is a NULL of the type,
// written in the text (no argument).
func (r *renderer) typedArg(a *RangeArg) (string, error) {
	if a.Kind < ArgDecimal || a.Kind > ArgTimestamp {
		return "", fmt.Errorf("sqlrewrite: bad range argument kind %d", a.Kind)
	}
	if r.dialect == SQLite {
		switch {
		case a.Null:
			return "NULL", nil
		case a.Kind == ArgDate || a.Kind == ArgTimestamp:
			return r.arg(a.Text), nil
		case a.Kind == ArgDecimal:
			// A whole number written with a fraction of zeros (AVG of
			// integers, x * 1.0: 9007199254740993.0000) is an integer.
			whole := a.Text
			if i := strings.IndexByte(whole, '.'); i > 0 && strings.Trim(whole[i+1:], "0") == "" {
				whole = whole[:i]
			}
			if n, err := strconv.ParseInt(whole, 10, 64); err == nil {
				return r.arg(n), nil
			}
		}
		if math.IsNaN(a.Num) || math.IsInf(a.Num, 0) {
			return "", fmt.Errorf("sqlrewrite: non-finite range argument %g", a.Num)
		}
		return r.arg(a.Num), nil
	}
	var typ string
	if r.dialect == PostgreSQL {
		typ = map[ArgKind]string{ArgDecimal: "NUMERIC", ArgDouble: "DOUBLE PRECISION", ArgDate: "DATE", ArgTimestamp: "TIMESTAMP"}[a.Kind]
	} else {
		typ = map[ArgKind]string{ArgDecimal: "DECIMAL(65,30)", ArgDouble: "DOUBLE", ArgDate: "DATE", ArgTimestamp: "DATETIME(6)"}[a.Kind]
		if a.Kind == ArgDecimal && !fitsDecimal65(a.Text) {
			// Beyond DECIMAL(65,30) (no released DECIMAL is): its double.
			typ = "DOUBLE"
		}
	}
	if a.Null {
		return "CAST(NULL AS " + typ + ")", nil
	}
	switch a.Kind {
	case ArgDecimal, ArgDouble:
		if _, err := strconv.ParseFloat(a.Text, 64); err != nil && !strings.Contains(err.Error(), "range") {
			return "", fmt.Errorf("sqlrewrite: range argument %q is no number", a.Text)
		}
	}
	return "CAST(" + r.arg(a.Text) + " AS " + typ + ")", nil
}

// fitsDecimal65 reports whether exact digits fit MySQL's DECIMAL(65,30):
// at most 35 digits before the point and 30 after.
func fitsDecimal65(s string) bool {
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return validExact(s) && len(strings.TrimLeft(whole, "0")) <= 35 && len(frac) <= 30
}

// DescribeScalarBound renders a comparison with subqueries for plans and
// messages: income > subquery #1, income > 2 * subquery #1, age >=
// subquery #1 AND age <= 60.
func DescribeScalarBound(col string, temporal catalog.ColumnType, b *ScalarBound) string {
	end := func(e *Expr, x float64, micros int32) string {
		if e != nil {
			return DescribeScalarValue(e)
		}
		if temporal != "" {
			c := catalog.Column{Type: temporal}
			return "'" + c.FormatTemporalMicros(x, micros) + "'"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	r := b.Range
	if b.Lower != nil && b.Lower == b.Upper && !r.LowerOpen && !r.UpperOpen {
		return col + " = " + end(b.Lower, 0, 0)
	}
	var parts []string
	if r.HasLower {
		op := map[bool]string{false: ">=", true: ">"}[r.LowerOpen]
		parts = append(parts, col+" "+op+" "+end(b.Lower, r.Lower, r.LowerMicros))
	}
	if r.HasUpper {
		op := map[bool]string{false: "<=", true: "<"}[r.UpperOpen]
		parts = append(parts, col+" "+op+" "+end(b.Upper, r.Upper, r.UpperMicros))
	}
	return strings.Join(parts, " AND ")
}

// DescribeScalarValue renders a ScalarBound's end: subquery #1, 2 *
// subquery #1, subquery #1 - INTERVAL 7 DAY (parenthesized as the
// operators' precedence needs).
func DescribeScalarValue(e *Expr) string {
	s, _ := describeScalarValue(e)
	return s
}

// describeScalarValue is DescribeScalarValue, with the precedence of e's
// operator: 3 for an operand, 2 for *, /, DIV and %, 1 for + and -.
func describeScalarValue(e *Expr) (string, int) {
	switch {
	case e.Kind == ExprScalar:
		return fmt.Sprintf("subquery #%d", e.Index+1), 3
	case e.Kind == ExprConst && e.Value.Null:
		return "NULL", 3
	case e.Kind == ExprConst && e.Value.Decimal != "":
		return e.Value.Decimal, 3
	case e.Kind == ExprConst:
		return strconv.FormatFloat(e.Value.Num, 'g', -1, 64), 3
	case e.Kind == ExprFunc && e.Op == "cast-real" && len(e.Args) == 1:
		return describeScalarValue(e.Args[0])
	case e.Kind == ExprOp && e.Op == "neg" && len(e.Args) == 1:
		s, p := describeScalarValue(e.Args[0])
		if p < 3 {
			s = "(" + s + ")"
		}
		return "-" + s, 3
	case e.Kind == ExprFunc && (e.Op == "date_add" || e.Op == "date_sub") && len(e.Args) == 3:
		op := map[string]string{"date_add": "+", "date_sub": "-"}[e.Op]
		n, _ := describeScalarValue(e.Args[1])
		return binaryText(e.Args[0], op, "INTERVAL "+n+" "+e.Args[2].Value.Str, 1), 1
	case e.Kind == ExprOp && len(e.Args) == 2:
		p := 2
		if e.Op == "+" || e.Op == "-" {
			p = 1
		}
		r, rp := describeScalarValue(e.Args[1])
		if rp <= p {
			r = "(" + r + ")"
		}
		return binaryText(e.Args[0], strings.ToUpper(e.Op), r, p), p
	}
	return "?", 3
}

// binaryText is l op r, l parenthesized when its operator binds less
// than precedence p; r is rendered.
func binaryText(l *Expr, op, r string, p int) string {
	s, lp := describeScalarValue(l)
	if lp < p {
		s = "(" + s + ")"
	}
	return s + " " + op + " " + r
}

// ScalarIndexes are the indexes in Query.Scalars of the subqueries e
// reads, each once, in the order it reads them.
func ScalarIndexes(e *Expr) []int {
	var out []int
	var walk func(e *Expr)
	walk = func(e *Expr) {
		if e == nil {
			return
		}
		if e.Kind == ExprScalar && !slices.Contains(out, e.Index) {
			out = append(out, e.Index)
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// ScalarUse is a comparison of a column with a value computed from
// scalar subqueries (ScalarUses).
type ScalarUse struct {
	// Value is the end's value (ScalarBound.Lower or Upper) and Bound
	// the comparison.
	Value *Expr
	Bound *ScalarBound
	// Column is the column compared; Temporal its type when it is a date
	// or timestamp column.
	Column   string
	Temporal catalog.ColumnType
}

// ScalarUses lists the comparisons with subqueries of conds and b (a
// Select's Where and Boolean), one per end computed from subqueries.
func ScalarUses(conds []Condition, b *Predicate) []ScalarUse {
	var out []ScalarUse
	add := func(c Condition) {
		if c.Scalar == nil {
			return
		}
		for _, e := range []*Expr{c.Scalar.Lower, c.Scalar.Upper} {
			if e != nil {
				out = append(out, ScalarUse{Value: e, Bound: c.Scalar, Column: c.Column, Temporal: c.Temporal})
			}
		}
	}
	for _, c := range conds {
		add(c)
	}
	var walk func(p *Predicate)
	walk = func(p *Predicate) {
		if p == nil {
			return
		}
		if p.Leaf != nil {
			add(*p.Leaf)
		}
		for _, a := range p.Args {
			walk(a)
		}
	}
	walk(b)
	return out
}
