package sqlrewrite

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// mirrored is the comparison with its sides swapped: 3 < age is age > 3.
var mirrored = map[opcode.Op]opcode.Op{
	opcode.LT: opcode.GT, opcode.LE: opcode.GE, opcode.GT: opcode.LT, opcode.GE: opcode.LE,
	opcode.EQ: opcode.EQ, opcode.NE: opcode.NE,
}

// comparison converts col op constant and constant op col. Both = and <>
// give the condition col = constant; the caller negates <>.
func (sc *scope) comparison(e *ast.BinaryOperationExpr, site conditionSite) (Condition, error) {
	colSide, valSide, op := unparen(e.L), unparen(e.R), e.Op
	if isRow(colSide) || isRow(valSide) {
		return Condition{}, site.refuse("row comparisons")
	}
	if c, handled, err := sc.scalarComparison(site, e); handled {
		return c, err
	}
	if c, handled, err := sc.periodComparison(site, e); handled {
		return c, err
	}
	if c, handled, err := sc.expressionComparison(site, e); handled {
		return c, err
	}
	if _, ok := colSide.(*ast.ColumnNameExpr); !ok {
		colSide, valSide, op = valSide, colSide, mirrored[op]
	}
	col, err := sc.conditionColumn(site, colSide, valSide)
	if err != nil {
		return Condition{}, err
	}
	if col.Temporal() {
		t, err := sc.timeConstant(site, col, valSide)
		if err != nil {
			return Condition{}, err
		}
		return timeComparison(site, col, op, t)
	}
	v, err := sc.constant(site, col, valSide)
	if err != nil {
		return Condition{}, err
	}
	exact := col.Numeric() && exactFloat(valSide, v.Num)
	digits := ""
	if col.Numeric() {
		digits = conditionDigits(valSide, v.Num)
	}
	if op == opcode.EQ || op == opcode.NE {
		v.Decimal = digits
		return Condition{Column: col.Name, In: []Value{v}, Text: !col.Numeric(), ExactNumbers: exact}, nil
	}
	if !col.Numeric() {
		return Condition{}, textRange(col)
	}
	r := &Range{}
	switch op {
	case opcode.GT, opcode.GE:
		r.Lower, r.HasLower, r.LowerOpen = v.Num, true, op == opcode.GT
		r.setExactLower(digits)
	case opcode.LT, opcode.LE:
		r.Upper, r.HasUpper, r.UpperOpen = v.Num, true, op == opcode.LT
		r.setExactUpper(digits)
	}
	return Condition{Column: col.Name, Range: r, ExactNumbers: exact}, nil
}

// between converts col [NOT] BETWEEN a AND b to the closed range [a, b];
// the caller negates NOT BETWEEN.
func (sc *scope) between(e *ast.BetweenExpr, site conditionSite) (Condition, error) {
	if c, handled, err := sc.scalarBetween(site, e); handled {
		return c, err
	}
	if c, handled, err := sc.periodBetween(site, e); handled {
		return c, err
	}
	if x, handled, err := sc.conditionExpr(site, e.Expr); handled {
		if err != nil {
			return Condition{}, err
		}
		lo, okLo := constantNumber(e.Left)
		hi, okHi := constantNumber(e.Right)
		if !okLo || !okHi {
			return Condition{}, site.refuse("%s BETWEEN anything but constant numbers", restore(e.Expr))
		}
		return Condition{Column: x.String(), Range: &Range{Lower: lo, Upper: hi, HasLower: true, HasUpper: true},
			ExactNumbers: exactFloat(e.Left, lo) && exactFloat(e.Right, hi)}, nil
	}
	col, err := sc.conditionColumn(site, e.Expr, e.Left, e.Right)
	if err != nil {
		return Condition{}, err
	}
	if col.Temporal() {
		lo, err := sc.timeConstant(site, col, e.Left)
		if err != nil {
			return Condition{}, err
		}
		hi, err := sc.timeConstant(site, col, e.Right)
		if err != nil {
			return Condition{}, err
		}
		r := &Range{}
		r.setLower(columnBound(col, opcode.GE, lo))
		r.setUpper(columnBound(col, opcode.LE, hi))
		return Condition{Column: col.Name, Temporal: col.Type, Range: r}, nil
	}
	if !col.Numeric() {
		return Condition{}, textRange(col)
	}
	lo, err := sc.constant(site, col, e.Left)
	if err != nil {
		return Condition{}, err
	}
	hi, err := sc.constant(site, col, e.Right)
	if err != nil {
		return Condition{}, err
	}
	r := &Range{Lower: lo.Num, Upper: hi.Num, HasLower: true, HasUpper: true}
	r.setExactLower(conditionDigits(e.Left, lo.Num))
	r.setExactUpper(conditionDigits(e.Right, hi.Num))
	return Condition{Column: col.Name, Range: r,
		ExactNumbers: exactFloat(e.Left, lo.Num) && exactFloat(e.Right, hi.Num)}, nil
}

// in converts col [NOT] IN (constants), and expr IN (numbers) of a row
// expression (DAYOFWEEK(day) IN (1, 7)); the caller negates NOT IN.
func (sc *scope) in(e *ast.PatternInExpr, site conditionSite) (Condition, error) {
	if e.Sel != nil {
		return Condition{}, site.refuse("IN (subquery)")
	}
	if x, handled, err := sc.conditionExpr(site, e.Expr); handled {
		if err != nil {
			return Condition{}, err
		}
		c := Condition{Column: x.String(), ExactNumbers: true}
		for _, item := range e.List {
			num, ok := constantNumber(item)
			if !ok {
				return Condition{}, site.refuse("%s", fmt.Sprintf("%s IN a list with %s, not a constant number", restore(e.Expr), restore(item)))
			}
			c.In = append(c.In, Value{Num: num})
			c.ExactNumbers = c.ExactNumbers && exactFloat(item, num)
		}
		return c, nil
	}
	col, err := sc.conditionColumn(site, e.Expr, e.List...)
	if err != nil {
		return Condition{}, err
	}
	c := Condition{Column: col.Name, Text: !col.Numeric(), ExactNumbers: col.Numeric()}
	for _, item := range e.List {
		v, err := sc.constant(site, col, item)
		if err != nil {
			return Condition{}, err
		}
		if err := listString(site, col, item, v.Num, len(e.List)); err != nil {
			return Condition{}, err
		}
		if col.Numeric() {
			v.Decimal = conditionDigits(item, v.Num)
		}
		c.In = append(c.In, v)
		c.ExactNumbers = c.ExactNumbers && exactFloat(item, v.Num)
	}
	return c, nil
}

// listString refuses a numeric string item of an IN list of n items on a
// real column when the string is not its double's shortest literal
// ('3.0000000000000001', which a double reads as 3). MariaDB 10.11
// compares a DECIMAL column with a string item of a list of two or more
// as doubles (d IN ('3.0000000000000001', 1.5) keeps d = 3), but with
// one item (d = '3.0000000000000001') as the DECIMAL it spells, and with
// an index on d may store the items into the column's type instead; an
// item a double holds digit for digit compares alike every way (over
// values of at most 15 significant digits) and is sent as those digits.
// An INT column takes the string exactly in every case.
func listString(site conditionSite, col *catalog.Column, item ast.ExprNode, num float64, n int) error {
	if v, ok := literal(item); !ok || !v.IsText || col.Type != catalog.Real || n < 2 || exactFloat(item, num) {
		return nil
	}
	return site.refuse("%s", fmt.Sprintf("the numeric string %s in a list of %s, which MariaDB compares as the double %s there but exactly in %s = %s; write the number %s without quotes, or %s = %s",
		restore(item), col.Name, strconv.FormatFloat(num, 'g', -1, 64), col.Name, restore(item), strings.Trim(restore(item), "'"), col.Name, restore(item)))
}

// conditionColumn resolves the column a condition restricts; others are the
// condition's other operands, used to explain a refusal.
func (sc *scope) conditionColumn(site conditionSite, e ast.ExprNode, others ...ast.ExprNode) (*catalog.Column, error) {
	if c, ok := unparen(e).(*ast.ColumnNameExpr); ok {
		return sc.column(c.Name, site.clause)
	}
	all := append([]ast.ExprNode{e}, others...)
	for _, o := range all {
		if containsNode(o, isSubquery) {
			return nil, site.refuse("a subquery")
		}
	}
	for _, o := range all {
		if containsNode(o, isAggregate) {
			return nil, site.refuse("an aggregate")
		}
	}
	for _, o := range all {
		if containsNode(o, isColumn) {
			return nil, site.refuse("a function or arithmetic of columns")
		}
	}
	return nil, site.refuse("a condition without a column")
}

// constant reads a condition's constant, which must match the column's type.
func (sc *scope) constant(site conditionSite, col *catalog.Column, e ast.ExprNode) (Value, error) {
	v, ok := literal(e)
	if num, isNum := constantNumber(e); !ok && isNum && col.Numeric() {
		v, ok = Value{Num: num}, true // age > 365 / 7
	}
	switch {
	case !ok && containsNode(e, isSubquery):
		return Value{}, site.refuse("a subquery")
	case !ok && containsNode(e, isColumn):
		return Value{}, site.refuse("comparing two columns")
	case !ok:
		return Value{}, site.refuse("a value that is not a literal number or string")
	case v.Null:
		return Value{}, site.refuse("comparison with NULL")
	case v.IsText && col.Numeric():
		// MySQL compares a numeric column with a string as numbers; drivers
		// bind parameters as strings (sex = ? with '1'). A string that is
		// exactly a number is that number, compared exactly where MariaDB
		// compares it exactly (conditionNumber); anything else stays an
		// error rather than MySQL's silent 0.
		f, ok := decimalString(v.Str)
		if !ok {
			return Value{}, dperr.New(dperr.Unsupported, "type mismatch: %s is a numeric column (%s) and takes numbers, not the string '%s', which is not a number", col.Name, col.Type, v.Str)
		}
		if r, fits := stringNumber(v.Str); !fits && (r == nil || r.Cmp(new(big.Rat).SetFloat64(f)) != 0) {
			return Value{}, site.refuse("%s", fmt.Sprintf("the numeric string '%s', of more than %d digits or %d after the point, which dpproxy cannot compare exactly as MariaDB does; round it to %d decimals",
				v.Str, maxDecimalDigits, maxDecimalScale, maxDecimalScale))
		}
		return Value{Num: f}, nil
	case !v.IsText && !col.Numeric():
		return Value{}, dperr.New(dperr.Unsupported, "type mismatch: %s is a text column and takes strings in quotes, not the number %g", col.Name, v.Num)
	case col.Numeric() && longDecimal(e):
		// Its digits cannot be carried exactly (conditionDigits), and its
		// double would compare differently from the backend's DECIMAL.
		return Value{}, site.refuse("%s", fmt.Sprintf("the decimal constant %s, of more than %d digits or %d after the point, which dpproxy cannot compare exactly; round it to %d decimals",
			restore(e), maxDecimalDigits, maxDecimalScale, maxDecimalScale))
	}
	return v, nil
}

// longDecimal reports whether e holds a decimal literal of more digits
// than a DECIMAL holds (decimalFits: 65, 30 after the point).
func longDecimal(e ast.ExprNode) bool {
	return containsNode(e, func(n ast.Node) bool {
		v, ok := n.(ast.ValueExpr)
		if !ok {
			return false
		}
		d, ok := v.GetValue().(*test_driver.MyDecimal)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(d.String())
		return ok && !decimalFits(r)
	})
}

func isRow(e ast.ExprNode) bool {
	_, ok := e.(*ast.RowExpr)
	return ok
}

func textRange(col *catalog.Column) error {
	return dperr.New(dperr.Unsupported, "range conditions on the text column %s are not supported: use = or IN", col.Name)
}

// conditionExpr reads the row expression a condition restricts (a
// DATEDIFF, a TIMESTAMPDIFF, arithmetic of columns), registering it as a
// column the statement derives (scope.derive). handled is false when e is
// no row expression.
func (sc *scope) conditionExpr(site conditionSite, e ast.ExprNode) (x *RowExpr, handled bool, err error) {
	if !isRowExpr(e) || containsNode(e, isAggregate) {
		return nil, false, nil
	}
	if !site.expressions {
		return nil, true, site.refuse("%s", fmt.Sprintf("a condition on the expression %s inside a CASE of an aggregate (write it in WHERE, or as its own SUM(condition))", restore(e)))
	}
	if x, err = sc.rowExpr(e); err != nil {
		return nil, true, err
	}
	if _, _, err := x.Bounds(); err != nil {
		return nil, true, site.refuse("%s", fmt.Sprintf("a condition on %s, whose bounds cannot be derived: %v", restore(e), err))
	}
	sc.derive(x)
	return x, true, nil
}

// differenceComparison converts a comparison of two expressions that both
// read columns (income > 10 * age, spend <= budget) into a - b op 0 of
// the row expression a - b (conditionExpr), computed per row in double
// precision from the clamped operands: a per-row condition like any other.
func (sc *scope) differenceComparison(site conditionSite, e *ast.BinaryOperationExpr) (Condition, bool, error) {
	var kind error
	containsNode(e, func(n ast.Node) bool {
		c, ok := n.(*ast.ColumnNameExpr)
		if !ok || kind != nil {
			return false
		}
		col, err := sc.column(c.Name, site.clause)
		switch {
		case err != nil:
			kind = err
		case col.Temporal():
			kind = site.refuse("%s", fmt.Sprintf("a comparison of %s with %s, which read a %s column (compare DATEDIFF(a, b) or TIMESTAMPDIFF(SECOND, b, a) with 0)", restore(e.L), restore(e.R), col.Type))
		case !col.Numeric():
			kind = site.refuse("%s", fmt.Sprintf("a comparison of %s with %s, which read the text column %s (text columns compare with constants)", restore(e.L), restore(e.R), col.Name))
		}
		return false
	})
	if kind != nil {
		return Condition{}, true, kind
	}
	diff := &ast.BinaryOperationExpr{Op: opcode.Minus, L: e.L, R: e.R}
	x, handled, err := sc.conditionExpr(site, diff)
	switch {
	case !handled:
		return Condition{}, true, site.refuse("%s", fmt.Sprintf("a comparison of %s with %s", restore(e.L), restore(e.R)))
	case err != nil:
		return Condition{}, true, err
	}
	if e.Op == opcode.EQ || e.Op == opcode.NE {
		return Condition{Column: x.String(), In: []Value{{Num: 0}}, ExactNumbers: true}, true, nil
	}
	r := &Range{}
	switch e.Op {
	case opcode.GT, opcode.GE:
		r.Lower, r.HasLower, r.LowerOpen = 0, true, e.Op == opcode.GT
	case opcode.LT, opcode.LE:
		r.Upper, r.HasUpper, r.UpperOpen = 0, true, e.Op == opcode.LT
	}
	return Condition{Column: x.String(), Range: r, ExactNumbers: true}, true, nil
}

// expressionComparison converts expr op number and number op expr, expr a
// row expression (conditionExpr): a condition on the derived column the
// expression names, read like a numeric column's (= and <> are IN and its
// negation). handled is false when neither side is a row expression.
func (sc *scope) expressionComparison(site conditionSite, e *ast.BinaryOperationExpr) (Condition, bool, error) {
	if containsNode(e.L, isColumn) && containsNode(e.R, isColumn) {
		return sc.differenceComparison(site, e)
	}
	side, other, op := e.L, e.R, e.Op
	x, handled, err := sc.conditionExpr(site, side)
	if !handled {
		side, other, op = e.R, e.L, mirrored[e.Op]
		if x, handled, err = sc.conditionExpr(site, side); !handled {
			return Condition{}, false, nil
		}
	}
	if err != nil {
		return Condition{}, true, err
	}
	num, ok := constantNumber(other)
	if !ok {
		return Condition{}, true, site.refuse("%s", fmt.Sprintf("a comparison of %s with %s, not a constant number", restore(side), restore(other)))
	}
	v, exact := Value{Num: num}, exactFloat(other, num)
	if op == opcode.EQ || op == opcode.NE {
		return Condition{Column: x.String(), In: []Value{v}, ExactNumbers: exact}, true, nil
	}
	r := &Range{}
	switch op {
	case opcode.GT, opcode.GE:
		r.Lower, r.HasLower, r.LowerOpen = v.Num, true, op == opcode.GT
	case opcode.LT, opcode.LE:
		r.Upper, r.HasUpper, r.UpperOpen = v.Num, true, op == opcode.LT
	}
	return Condition{Column: x.String(), Range: r, ExactNumbers: exact}, true, nil
}

// mysqlNumber is MySQL's decimal number syntax, as it reads a string
// compared with a number, with white space around it.
var mysqlNumber = regexp.MustCompile(`^[ \t\n\r\f\v]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r\f\v]*$`)

// decimalString returns the number a string is exactly, as MySQL reads it
// (digits, a point, an exponent), if it is one and finite. Go's own
// syntax, which ParseFloat also accepts (0x1p3, 1_0, Unicode spaces), is
// not a number to MySQL: MySQL reads '0x1p3' as 0 and '1_0' as 1, so
// such strings are refused rather than read otherwise than the backend
// would.
func decimalString(s string) (float64, bool) {
	if !mysqlNumber.MatchString(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.Trim(s, " \t\n\r\f\v"), 64)
	return f, err == nil && finite(f)
}
