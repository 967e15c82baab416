package sqlrewrite

import (
	"fmt"
	"math"
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
// MEDIAN(day) FROM orders).
//
// The subquery is one of the statement's Scalars (scalar.go), released
// first with its share of ε. The condition is a Condition with a
// ScalarBound and neither Range nor In: until the subquery is released
// nothing is known of the rows it keeps, so the planner reads it as a
// condition it knows nothing of (it narrows no bound, key domain or
// range, and no plan-time choice depends on it). The executor then
// resolves it (ResolveScalars) into a Range whose ends are the released
// value, which the backend receives as a typed bind argument (RangeArg)
// and compares as MySQL compares the column with a value of that type:
// an integer or DECIMAL value exactly (CAST(? AS DECIMAL(65,30)) on
// MySQL, NUMERIC on PostgreSQL), a DOUBLE as a double, a date or
// datetime as a date. A released NULL makes the comparison UNKNOWN, as
// in MySQL: the backend receives a typed NULL, and the outer query's
// releases run, charged and noised, over the rows the WHERE then keeps.

// ScalarBound is a comparison of a condition's column with released
// values of the statement's scalar subqueries.
type ScalarBound struct {
	// Range has the ends of the comparison: an end that is a subquery's
	// value has Has* and *Open set (> an open lower end, = two closed
	// ends of the same subquery) and no number; a constant end (60 of
	// BETWEEN (SELECT ...) AND 60) is as in any Range.
	Range Range
	// Lower and Upper are 1 + the index in Query.Scalars of the subquery
	// whose released value is that end; 0 for a constant end, or none.
	Lower, Upper int
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

// ScalarValue is a scalar subquery's released value, as the executor
// passes it to ResolveScalars.
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

// supportedScalarWhere names the scalar subqueries WHERE takes.
const supportedScalarWhere = "a scalar subquery in WHERE is compared with a numeric, date or timestamp column: col <, <=, >, >=, = or <> (SELECT agg FROM t [WHERE ...]), " +
	"or col BETWEEN (SELECT ...) AND b (either end a subquery or a constant), the subquery uncorrelated, of one column and one row"

// isScalarOperand reports whether e is a subquery as a value.
func isScalarOperand(e ast.ExprNode) bool {
	_, ok := unparen(e).(*ast.SubqueryExpr)
	return ok
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
	if !isScalarOperand(e.L) && !isScalarOperand(e.R) {
		return Condition{}, true, refuse(fmt.Sprintf("%s, a subquery inside an expression", restore(e)), supportedScalarWhere)
	}
	colSide, sub, op := e.L, e.R, e.Op
	if isScalarOperand(e.L) {
		colSide, sub, op = e.R, e.L, mirrored[e.Op]
	}
	if isScalarOperand(colSide) {
		return Condition{}, true, refuse("a comparison of two subqueries", supportedScalarWhere)
	}
	col, err := sc.scalarColumn(site, colSide)
	if err != nil {
		return Condition{}, true, err
	}
	k, err := sc.scalars.scalar(unparen(sub).(*ast.SubqueryExpr))
	if err != nil {
		return Condition{}, true, err
	}
	b := &ScalarBound{}
	switch op {
	case opcode.GT, opcode.GE:
		b.Range.HasLower, b.Range.LowerOpen, b.Lower = true, op == opcode.GT, k+1
	case opcode.LT, opcode.LE:
		b.Range.HasUpper, b.Range.UpperOpen, b.Upper = true, op == opcode.LT, k+1
	default: // = (and <>, which the caller negates)
		b.Range.HasLower, b.Range.HasUpper, b.Lower, b.Upper = true, true, k+1, k+1
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
	if !isScalarOperand(e.Left) && !isScalarOperand(e.Right) || containsNode(e.Expr, isSubquery) && !isScalarOperand(e.Expr) {
		return Condition{}, true, refuse(fmt.Sprintf("%s, a subquery inside an expression", restore(e)), supportedScalarWhere)
	}
	if isScalarOperand(e.Expr) {
		return Condition{}, true, refuse("a subquery BETWEEN values", supportedScalarWhere)
	}
	col, err := sc.scalarColumn(site, e.Expr)
	if err != nil {
		return Condition{}, true, err
	}
	b := &ScalarBound{Range: Range{HasLower: true, HasUpper: true}}
	for i, end := range []ast.ExprNode{e.Left, e.Right} {
		lower := i == 0
		if isScalarOperand(end) {
			k, err := sc.scalars.scalar(unparen(end).(*ast.SubqueryExpr))
			if err != nil {
				return Condition{}, true, err
			}
			if lower {
				b.Lower = k + 1
			} else {
				b.Upper = k + 1
			}
			continue
		}
		if containsNode(end, isSubquery) {
			return Condition{}, true, refuse(fmt.Sprintf("%s, a subquery inside an expression", restore(end)), supportedScalarWhere)
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
// Plan's Filter and Boolean) with every condition that compares with a
// scalar subquery (Condition.Scalar) resolved with the subqueries'
// released values, values[k] the value of Query.Scalars[k]: a Range
// whose ends are those values, bound to the backend as typed arguments
// (RangeArg). conds and b are not modified. A value of the wrong type
// for its column (the planner refuses such a statement) is an error.
func ResolveScalars(conds []Condition, b *Predicate, values []ScalarValue) ([]Condition, *Predicate, error) {
	var out []Condition
	if conds != nil {
		out = make([]Condition, len(conds))
	}
	for i, c := range conds {
		r, err := resolveScalar(c, values)
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
			c, err := resolveScalar(*p.Leaf, values)
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
func resolveScalar(c Condition, values []ScalarValue) (Condition, error) {
	if c.Scalar == nil {
		return c, nil
	}
	s := c.Scalar
	r := s.Range
	for _, lower := range []bool{true, false} {
		k := s.Upper
		if lower {
			k = s.Lower
		}
		if k == 0 {
			continue
		}
		if k < 0 || k > len(values) {
			return Condition{}, fmt.Errorf("sqlrewrite: condition on %s reads subquery %d of %d", c.Column, k, len(values))
		}
		v := values[k-1]
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
// messages: income > subquery #1, age >= subquery #1 AND age <= 60.
func DescribeScalarBound(col string, temporal catalog.ColumnType, b *ScalarBound) string {
	end := func(k int, x float64, micros int32) string {
		if k > 0 {
			return fmt.Sprintf("subquery #%d", k)
		}
		if temporal != "" {
			c := catalog.Column{Type: temporal}
			return "'" + c.FormatTemporalMicros(x, micros) + "'"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	r := b.Range
	if b.Lower > 0 && b.Lower == b.Upper && !r.LowerOpen && !r.UpperOpen {
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

// ScalarUse is a comparison of a column with a scalar subquery's value
// (ScalarUses).
type ScalarUse struct {
	// Index is the subquery's, in Query.Scalars.
	Index int
	// Column is the column compared; Temporal its type when it is a date
	// or timestamp column.
	Column   string
	Temporal catalog.ColumnType
}

// ScalarUses lists the comparisons with subqueries of conds and b (a
// Select's Where and Boolean), one per subquery end.
func ScalarUses(conds []Condition, b *Predicate) []ScalarUse {
	var out []ScalarUse
	add := func(c Condition) {
		if c.Scalar == nil {
			return
		}
		for _, k := range []int{c.Scalar.Lower, c.Scalar.Upper} {
			if k > 0 {
				out = append(out, ScalarUse{Index: k - 1, Column: c.Column, Temporal: c.Temporal})
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
