package sqlrewrite

import (
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// histogram converts a SELECT with GROUP BY, which must be a histogram:
//
//	SELECT FLOOR(col / w) * w AS bucket, COUNT(*) FROM t [WHERE ...] GROUP BY bucket [ORDER BY bucket]
//
// The key item (also w * FLOOR(col / w), or FLOOR(col / w) for bucket
// numbers) becomes a BucketKey item and sets sel.GroupBy; the other items,
// before or after it, are COUNT(*) or range counts, at least one. GROUP BY
// names the key by its alias, its position or the same expression; ORDER
// BY, if present, names it the same way, ascending, which is the result's
// order anyway. Everything else is refused with the histogram form.
func (sc *scope) histogram(s *ast.SelectStmt, sel *Select) error {
	g := s.GroupBy
	switch {
	case len(g.Items) != 1:
		return refuseHistogram("GROUP BY %d keys", len(g.Items))
	case g.Rollup:
		return refuseHistogram("WITH ROLLUP")
	case g.Items[0].Desc:
		return refuseHistogram("GROUP BY ... DESC")
	case s.Having != nil:
		return refuseHistogram("HAVING")
	case s.Limit != nil:
		return refuseHistogram("LIMIT on a histogram")
	}
	fields := s.Fields.Fields
	by := unparen(g.Items[0].Expr)
	if err := sc.checkGroupBy(by, fields); err != nil {
		return err
	}
	key, err := sc.histogramItems(fields, sel)
	if err != nil {
		return err
	}
	named, err := sc.namesKey(by, fields[key], key, sel.GroupBy, "group statement")
	if err != nil {
		return err
	}
	if !named {
		return refuseHistogram("GROUP BY other than the bucket key %s", label(fields[key]))
	}
	if s.OrderBy == nil {
		return nil
	}
	if len(s.OrderBy.Items) == 1 && !s.OrderBy.Items[0].Desc {
		named, err = sc.namesKey(unparen(s.OrderBy.Items[0].Expr), fields[key], key, sel.GroupBy, "order clause")
		if err != nil || named {
			return err
		}
	}
	return refuseHistogram("ORDER BY other than the bucket key %s ascending", label(fields[key]))
}

// checkGroupBy refuses a GROUP BY key that cannot name a bucket, before the
// select list is read, so that the message is about GROUP BY: a column of
// the table (MySQL resolves a GROUP BY name to a column before an alias),
// an expression other than a bucket, an alias or position that does not
// exist (UnknownColumn, as MySQL).
func (sc *scope) checkGroupBy(by ast.ExprNode, fields []*ast.SelectField) error {
	switch e := by.(type) {
	case *ast.ColumnNameExpr:
		if _, declared := sc.table.Column(e.Name.Name.O); declared || e.Name.Table.O != "" {
			col, err := sc.column(e.Name, "group statement")
			if err != nil {
				return err
			}
			return refuseHistogram("GROUP BY the column %s (group by FLOOR(%s / w) * w)", col.Name, col.Name)
		}
		for _, f := range fields {
			if strings.EqualFold(f.AsName.O, e.Name.Name.O) {
				return nil
			}
		}
		return unknownColumn(e.Name, "group statement")
	case *ast.PositionExpr:
		if e.P != nil {
			return refuseHistogram("GROUP BY a parameter")
		}
		if e.N < 1 || e.N > len(fields) {
			return dperr.New(dperr.UnknownColumn, "Unknown column '%d' in 'group statement'", e.N)
		}
		return nil
	}
	if isBucketShaped(by) {
		return nil
	}
	if containsNode(by, isAggregate) {
		return refuseHistogram("GROUP BY an aggregate")
	}
	return refuseHistogram("GROUP BY an expression other than FLOOR(col / w) * w")
}

// histogramItems converts the select list of a histogram and returns the
// index of its key item.
func (sc *scope) histogramItems(fields []*ast.SelectField, sel *Select) (key int, err error) {
	key = -1
	for i, f := range fields {
		switch {
		case f.WildCard != nil:
			return -1, refuseHistogram("SELECT *")
		case !isBucketShaped(unparen(f.Expr)):
		case key >= 0:
			return -1, refuseHistogram("a second bucket key %s", label(f))
		default:
			key = i
		}
	}
	if key < 0 {
		return -1, refuseHistogram("GROUP BY without the bucket key FLOOR(col / w) * w in the select list")
	}
	if len(fields) < 2 {
		return -1, refuseHistogram("a histogram without COUNT(*)")
	}
	for i, f := range fields {
		e := unparen(f.Expr)
		if i == key {
			if sel.GroupBy, err = sc.bucket(e, "field list"); err != nil {
				return -1, err
			}
			sel.Items = append(sel.Items, Item{Label: label(f), Agg: Aggregate{Func: BucketKey, Column: sel.GroupBy.Column}})
			continue
		}
		if !isAggregate(e) {
			return -1, refuseHistogram("%s beside the bucket key", label(f))
		}
		agg, err := sc.aggregate(e)
		if err != nil {
			return -1, err
		}
		if agg.Func != CountRows {
			return -1, refuseHistogram("%s beside the bucket key", label(f))
		}
		sel.Items = append(sel.Items, Item{Label: label(f), Agg: agg})
	}
	return key, nil
}

// namesKey reports whether a GROUP BY or ORDER BY expression names the key
// item keyField, at index key, whose bucketing is b: by its alias (compared
// as MySQL does, ignoring case), its 1-based position, or an expression
// with the same bucketing.
func (sc *scope) namesKey(e ast.ExprNode, keyField *ast.SelectField, key int, b *Bucketing, clause string) (bool, error) {
	switch e := e.(type) {
	case *ast.PositionExpr:
		return e.P == nil && e.N == key+1, nil
	case *ast.ColumnNameExpr:
		return e.Name.Table.O == "" && keyField.AsName.O != "" && strings.EqualFold(e.Name.Name.O, keyField.AsName.O), nil
	}
	if !isBucketShaped(e) {
		return false, nil
	}
	other, err := sc.bucket(e, clause)
	if err != nil {
		return false, err
	}
	return *other == *b, nil
}

// bucket converts a bucket expression (isBucketShaped): the column must be
// declared and numeric, the width a positive number, and the multiplier,
// if any, the same number.
func (sc *scope) bucket(e ast.ExprNode, clause string) (*Bucketing, error) {
	x, w, mult, isDiv, _ := columnBucketParts(e)
	col, err := sc.column(unparen(x).(*ast.ColumnNameExpr).Name, clause)
	if err != nil {
		return nil, err
	}
	if !col.Numeric() {
		return nil, refuseHistogram("a bucket of the text column %s", col.Name)
	}
	if lo, _, _ := col.Bounds(); isDiv && lo < 0 {
		return nil, refuseHistogram("%s: DIV truncates toward zero and %s can be negative (its lower bound is %g); write FLOOR(%s / w) * w", restore(e), col.Name, lo, col.Name)
	}
	width, ok := literal(w)
	if !ok || width.IsText || width.Null || !(width.Num > 0) {
		return nil, refuseHistogram("a bucket width w that is not a positive number")
	}
	if mult != nil {
		if m, ok := literal(mult); !ok || m.IsText || m.Null || m.Num != width.Num {
			return nil, refuseHistogram("FLOOR(col / w) multiplied by something other than w")
		}
	}
	b := &Bucketing{Column: col.Name, Width: width.Num, Index: mult == nil}
	b.setExact(col.Type == catalog.Integer, isDiv, w, mult)
	b.Type = bucketLabelType(col.Type == catalog.Integer, isDiv, w, mult, nil, nil)
	if isDiv {
		lo, hi, _ := col.Bounds()
		if err := checkDecimalDiv(e, b, lo, hi); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// setExact sets b's Exact, WidthDecimal, OriginDecimal (Origin 0),
// ExactValues and KeyDecimal for a bucket by the width literal w of
// values that MySQL holds exactly (exactValues), x DIV w when div, else
// FLOOR(x / w), times mult (nil for none).
func (b *Bucketing) setExact(exactValues, div bool, w, mult ast.ExprNode) {
	b.ExactValues = exactValues
	text := decimalLiteral(w)
	if div && text == "" {
		text = strconv.FormatFloat(b.Width, 'g', -1, 64)
	}
	b.Exact = text != "" && (div || exactValues)
	if b.Exact {
		b.WidthDecimal = text
	}
	b.KeyDecimal = b.Exact && (mult == nil || decimalLiteral(mult) != "")
}

// maxDecimalDiv is the magnitude x DIV w of a DOUBLE x is answered
// below, for x and w: MySQL converts a DOUBLE operand of DIV to DECIMAL,
// by its shortest digits, and MariaDB's DECIMAL holds 65 digits before
// the point (10^65 DIV 1 is its largest; beyond, and from 10^81 on in
// the conversion, it overflows with warning 1916 and a truncated value).
const maxDecimalDiv = 1e65

// maxDivScale is the most digits after the point of a width w of x DIV w
// that is answered: DECIMAL's scale, 38 (a width's digits further down
// are rounded away in MariaDB's conversion, down to a zero width whose
// DIV is NULL).
const maxDivScale = 38

// checkDecimalDiv refuses x DIV w, the bucketing b of the expression e
// over the bounds [lo, hi], where MariaDB's DECIMAL cannot hold x or w
// exactly: a bound or w of magnitude maxDecimalDiv or more, or w with more
// than maxDivScale digits after the point.
func checkDecimalDiv(e ast.ExprNode, b *Bucketing, lo, hi float64) error {
	w, _ := new(big.Rat).SetString(b.WidthDecimal)
	if math.Max(math.Abs(lo), math.Abs(hi)) < maxDecimalDiv && b.Width < maxDecimalDiv && decimalScale(w) <= maxDivScale {
		return nil
	}
	return refuseHistogram("GROUP BY %s over [%g, %g]: DIV computes in DECIMAL, which holds numbers below 1e65 with at most %d digits after the point; "+
		"bound x and choose w within that range, or write FLOOR(x / w) * w", restore(e), lo, hi, maxDivScale)
}

// decimalScale returns the digits after the point of the exact decimal r
// (at most 1100, beyond any double's).
func decimalScale(r *big.Rat) int {
	scale := 0
	for p := big.NewInt(1); scale < 1100 && new(big.Int).Mod(p, r.Denom()).Sign() != 0; p.Mul(p, big.NewInt(10)) {
		scale++
	}
	return scale
}

// checkBucketNumbers refuses the buckets first … last of b over [lo, hi]
// when a bucket number passes ±2^53, beyond which consecutive numbers
// are no distinct doubles.
func checkBucketNumbers(b *Bucketing, first, last, lo, hi float64) error {
	if math.Abs(first) < 1<<53 && math.Abs(last) < 1<<53 {
		return nil
	}
	return refuseHistogram("GROUP BY buckets of %s of width %g over [%g, %g], whose bucket numbers pass ±2^53 (9007199254740992); use a wider bucket", b.Column, b.Width, lo, hi)
}

// isBucketShaped reports whether e has the shape of a bucket expression,
// FLOOR(col / w) * m, m * FLOOR(col / w) or FLOOR(col / w), or the same
// with col DIV w, whatever w and m.
func isBucketShaped(e ast.ExprNode) bool {
	_, _, _, _, ok := columnBucketParts(e)
	return ok
}

// columnBucketParts splits a bucket of a column: bucketParts, or col DIV w
// [* mult] (divParts; isDiv set), which is FLOOR(col / w) [* mult] on a
// column whose lower bound is not negative (Bucket checks it).
func columnBucketParts(e ast.ExprNode) (col, w, mult ast.ExprNode, isDiv, ok bool) {
	if x, w, mult, ok := bucketParts(e); ok && isColumn(unparen(x)) {
		return x, w, mult, false, true
	}
	if x, w, mult, ok := divParts(e); ok && isColumn(unparen(x)) {
		return x, w, mult, true, true
	}
	return nil, nil, nil, false, false
}

// bucketParts splits FLOOR(x / w) * mult, mult * FLOOR(x / w) and
// FLOOR(x / w) (mult nil); ok is false for any other shape.
func bucketParts(e ast.ExprNode) (x, w, mult ast.ExprNode, ok bool) {
	e = unparen(e)
	if m, isMul := e.(*ast.BinaryOperationExpr); isMul && m.Op == opcode.Mul {
		if x, w, ok := floorDiv(m.L); ok {
			return x, w, m.R, true
		}
		if x, w, ok := floorDiv(m.R); ok {
			return x, w, m.L, true
		}
		return nil, nil, nil, false
	}
	x, w, ok = floorDiv(e)
	return x, w, nil, ok
}

// floorDiv splits FLOOR(x / w).
func floorDiv(e ast.ExprNode) (x, w ast.ExprNode, ok bool) {
	f, isCall := unparen(e).(*ast.FuncCallExpr)
	if !isCall || f.FnName.L != "floor" || f.Schema.L != "" || len(f.Args) != 1 {
		return nil, nil, false
	}
	d, isDiv := unparen(f.Args[0]).(*ast.BinaryOperationExpr)
	if !isDiv || d.Op != opcode.Div {
		return nil, nil, false
	}
	return d.L, d.R, true
}

// expressionBucket converts FLOOR(x / w) * w (or FLOOR(x / w)) of a row
// expression x (a DATEDIFF, a TIMESTAMPDIFF, arithmetic of columns: age
// groups from a birth date, FLOOR(TIMESTAMPDIFF(YEAR, born, CURDATE()) /
// 10) * 10), and x DIV w * w (x DIV w) where x is never negative
// (Grafana's UNIX_TIMESTAMP(col) DIV 86400 * 86400): a bucketing of the
// derived column the expression names (Bucketing.Column is its text),
// with the expression and its derived bounds. ok is false when e is no
// bucket of a row expression.
func (sc *scope) expressionBucket(e ast.ExprNode) (b *Bucketing, x *RowExpr, ok bool, err error) {
	inner, w, mult, isBucket := bucketParts(e)
	isDiv := false
	if !isBucket {
		inner, w, mult, isBucket = divParts(e)
		isDiv = true
	}
	if !isBucket {
		return sc.roundedKey(e)
	}
	if !isRowExpr(inner) || containsNode(inner, isAggregate) {
		return nil, nil, false, nil
	}
	if x, err = sc.rowExpr(inner); err != nil {
		return nil, nil, true, err
	}
	lo, hi, err := x.Bounds()
	if err != nil {
		return nil, nil, true, refuseQuery("GROUP BY buckets of %s, whose bounds cannot be derived: %v", restore(inner), err)
	}
	if isDiv && lo < 0 {
		return nil, nil, true, refuseQuery("GROUP BY %s: DIV truncates toward zero and %s can be negative (its bounds start at %g); write FLOOR(x / w) * w", restore(e), restore(inner), lo)
	}
	width, isNum := literal(w)
	if !isNum || width.IsText || width.Null || !(width.Num > 0) {
		return nil, nil, true, refuseHistogram("a bucket width w that is not a positive number")
	}
	if mult != nil {
		if m, isNum := literal(mult); !isNum || m.IsText || m.Null || m.Num != width.Num {
			return nil, nil, true, refuseHistogram("FLOOR(x / w) multiplied by something other than w")
		}
	}
	b = &Bucketing{Column: x.String(), Width: width.Num, Index: mult == nil}
	b.setExact(x.exact(), isDiv, w, mult)
	if isDiv {
		if err := checkDecimalDiv(e, b, lo, hi); err != nil {
			return nil, nil, true, err
		}
	}
	return b, x, true, nil
}

// roundedKey reads GROUP BY ROUND(x, d) and TRUNCATE(x, d) with d ≤ 0,
// FLOOR(x), CEIL(x) and SIGN(x) of a row expression x (GROUP BY
// ROUND(age, -1), Tableau's bins of FLOOR(income)): every value the
// database computes for it is a multiple of w = 10^−d (1 for FLOOR, CEIL
// and SIGN), exactly, below 2^53, so its groups are the buckets of width
// w of the derived column, one value each, labelled by that value, over
// its derived bounds. ok is false for any other expression.
func (sc *scope) roundedKey(e ast.ExprNode) (b *Bucketing, x *RowExpr, ok bool, err error) {
	if !isRowFunc(e) || !isRowExpr(e) || containsNode(e, isAggregate) {
		return nil, nil, false, nil
	}
	f := unparen(e).(ast.ExprNode)
	if call, isCall := f.(*ast.FuncCallExpr); !isCall || !slices.Contains([]string{"round", "truncate", "floor", "ceil", "ceiling", "sign"}, call.FnName.L) {
		return nil, nil, false, nil
	}
	if x, err = sc.rowExpr(e); err != nil {
		return nil, nil, true, err
	}
	if x.Kind != RowFunc || x.Num > 0 && (x.Func == FuncRound || x.Func == FuncTruncate) {
		return nil, nil, true, refuseHistogram("GROUP BY %s, which rounds to decimals (GROUP BY FLOOR(x / w) * w buckets it)", restore(e))
	}
	if _, _, err := x.Bounds(); err != nil {
		return nil, nil, true, refuseQuery("GROUP BY %s, whose bounds cannot be derived: %v", restore(e), err)
	}
	width := 1.0
	if x.Func == FuncRound || x.Func == FuncTruncate {
		width = math.Pow(10, -x.Num)
	}
	return &Bucketing{Column: x.String(), Width: width, Type: roundedLabelType(x)}, x, true, nil
}

// divParts splits x DIV w * mult, mult * (x DIV w) and x DIV w (mult
// nil); ok is false for any other shape.
func divParts(e ast.ExprNode) (x, w, mult ast.ExprNode, ok bool) {
	div := func(e ast.ExprNode) (x, w ast.ExprNode, ok bool) {
		d, isDiv := unparen(e).(*ast.BinaryOperationExpr)
		if !isDiv || d.Op != opcode.IntDiv {
			return nil, nil, false
		}
		return d.L, d.R, true
	}
	e = unparen(e)
	if m, isMul := e.(*ast.BinaryOperationExpr); isMul && m.Op == opcode.Mul {
		if x, w, ok := div(m.L); ok {
			return x, w, m.R, true
		}
		if x, w, ok := div(m.R); ok {
			return x, w, m.L, true
		}
		return nil, nil, nil, false
	}
	x, w, ok = div(e)
	return x, w, nil, ok
}
