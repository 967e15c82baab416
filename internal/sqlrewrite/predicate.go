package sqlrewrite

import (
	"math"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// maxPredicateDepth bounds the nesting of AND, OR and NOT nodes in a
// condition, after parentheses are dropped, nested ANDs (ORs) flattened
// and double negations removed, so that every backend evaluates the
// rendered predicate: SQLite refuses an expression deeper than 1000, and a
// leaf renders a few levels of its own. It is checked when the statement
// is parsed, before anything is reserved.
const maxPredicateDepth = 100

// predicate converts a boolean expression: AND, OR and NOT (or !) of leaf
// conditions, with parentheses anywhere. The tree keeps the client's order;
// parentheses are dropped, nested ANDs (and ORs) are flattened into one
// node and NOT NOT p is p. col <> v, col NOT BETWEEN a AND b and col NOT
// IN (...) are NOT of the leaf. NOT keeps SQL's meaning: a row whose
// column is NULL satisfies neither a leaf on that column nor its negation.
// A predicate nested deeper than maxPredicateDepth is refused.
//
// At a site that allows constants (conditionSite.constants), conditions
// the statement's text alone decides follow MySQL's three-valued logic,
// whatever the data: a comparison of NULL (a NULL bound to a parameter)
// with a column or a constant is UNKNOWN, col IN (a, NULL) is col IN (a)
// OR UNKNOWN, col BETWEEN NULL AND b is UNKNOWN AND col <= b, col LIKE
// NULL is UNKNOWN, NULL IS NULL is TRUE and 'x' IS NULL FALSE. They are
// folded into the rows where the whole predicate is TRUE, which is all a
// site that selects rows reads: an UNKNOWN is read as FALSE, or as TRUE
// under an odd number of NOTs (boolean), and then TRUE AND p is p, FALSE
// AND p is FALSE, and dually for OR. The result is nil when the predicate
// is TRUE for every row, Never alone when it is TRUE for none, and a tree
// without constants otherwise. A whole predicate without functions or
// subqueries that rowTruth shows TRUE for no row is Never, as routing
// reads a WHERE (zeroRowProbe): 1 = 0, FALSE, 1 = 0 AND col > 3, CASE
// WHEN col = NULL THEN 1 END.
func (sc *scope) predicate(e ast.ExprNode, site conditionSite) (*Predicate, error) {
	if site.constants && rowTruth(e)&isTrue == 0 && !containsNode(e, isCall) {
		return &Predicate{Op: Never}, sc.columns(e, site.clause)
	}
	p, err := sc.boolean(e, site, false)
	if err != nil {
		return nil, err
	}
	if p.Op == always {
		return nil, nil
	}
	if d := p.depth(); d > maxPredicateDepth {
		return nil, site.refuse("AND, OR and NOT nested %d deep (at most %d)", d, maxPredicateDepth)
	}
	return p, nil
}

// depth is the nesting of p's nodes: 1 for a leaf.
func (p *Predicate) depth() int {
	d := 0
	for _, a := range p.Args {
		d = max(d, a.depth())
	}
	return d + 1
}

// boolean is predicate without the depth bound, with the constant TRUE
// given as an always node. negated is whether e stands under an odd
// number of NOTs of the whole predicate: an UNKNOWN constant is read there
// as TRUE, elsewhere as FALSE. That leaves the rows where the whole
// predicate is TRUE as they are: Kleene's AND and OR are monotone in the
// order FALSE < UNKNOWN < TRUE and NOT reverses it, so such a row stays
// one when the UNKNOWN is made FALSE (TRUE under NOT), and a predicate
// TRUE with an UNKNOWN operand is TRUE whatever that operand's value.
// (NOT UNKNOWN is UNKNOWN, so col <> NULL is UNKNOWN where it stands.)
func (sc *scope) boolean(e ast.ExprNode, site conditionSite, negated bool) (*Predicate, error) {
	switch e := e.(type) {
	case *ast.ParenthesesExpr:
		return sc.boolean(e.Expr, site, negated)
	case *ast.BinaryOperationExpr:
		switch e.Op {
		case opcode.LogicAnd, opcode.LogicOr:
			l, err := sc.boolean(e.L, site, negated)
			if err != nil {
				return nil, err
			}
			r, err := sc.boolean(e.R, site, negated)
			if err != nil {
				return nil, err
			}
			op := And
			if e.Op == opcode.LogicOr {
				op = Or
			}
			return orNull(combine(op, l, r)), nil
		case opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.EQ, opcode.NE:
			if p, ok, err := sc.nullOperand(site, negated, e.L, e.R); ok {
				return p, err
			}
			if c, contains, ok, err := sc.locate(e, site); ok {
				if err != nil {
					return nil, err
				}
				return negateIf(!contains, leaf(c)), nil
			}
			if c, equal, ok, err := sc.textFunctionEquality(e, site); ok {
				if err != nil {
					return nil, err
				}
				return negateIf(!equal, leaf(c)), nil
			}
			c, err := sc.comparison(e, site)
			if err != nil {
				return nil, err
			}
			return negateIf(e.Op == opcode.NE, leaf(c)), nil
		}
		return nil, site.refuse("%s", operatorName(e.Op))
	case *ast.BetweenExpr:
		if x, ok := nullBetween(site, e); ok {
			return sc.boolean(x, site, negated)
		}
		if p, ok, err := sc.nullOperand(site, negated, e.Expr, e.Left, e.Right); ok {
			return p, err
		}
		c, err := sc.between(e, site)
		if err != nil {
			return nil, err
		}
		return negateIf(e.Not, leaf(c)), nil
	case *ast.PatternInExpr:
		if x, ok := nullIn(site, e); ok {
			return sc.boolean(x, site, negated)
		}
		if e.Sel == nil {
			if p, ok, err := sc.nullOperand(site, negated, append([]ast.ExprNode{e.Expr}, e.List...)...); ok {
				return p, err
			}
		}
		if p, ok, err := sc.temporalIn(e, site); ok {
			if err != nil {
				return nil, err
			}
			return negateIf(e.Not, p), nil
		}
		c, err := sc.in(e, site)
		if err != nil {
			return nil, err
		}
		return negateIf(e.Not, leaf(c)), nil
	case *ast.UnaryOperationExpr:
		if e.Op == opcode.Not || e.Op == opcode.Not2 {
			p, err := sc.boolean(e.V, site, !negated)
			if err != nil {
				return nil, err
			}
			return negateIf(true, p), nil
		}
	case *ast.IsNullExpr:
		if v, ok := constantValue(e.Expr); ok && site.constants {
			return constant(v.Null != e.Not), nil
		}
		col, err := sc.conditionColumn(site, e.Expr)
		if err != nil {
			return nil, err
		}
		return negateIf(e.Not, leaf(nullTest(col))), nil
	case *ast.IsTruthExpr:
		return sc.truth(site, negated, e.Expr, e)
	case *ast.PatternLikeOrIlikeExpr:
		if e.IsLike {
			if p, ok, err := sc.nullOperand(site, negated, e.Expr, e.Pattern); ok {
				return p, err
			}
		}
		c, err := sc.like(e, site)
		if err != nil {
			return nil, err
		}
		return negateIf(e.Not, leaf(c)), nil
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return nil, site.refuse("a subquery")
	case *ast.CompareSubqueryExpr:
		return nil, refuseScalar("a comparison with ANY, SOME or ALL of a subquery")
	case *ast.FuncCallExpr:
		return nil, site.refuse("the function %s", e.FnName.O)
	case *ast.ColumnNameExpr:
		return sc.truth(site, negated, e, nil)
	case ast.ValueExpr:
		return nil, site.refuse("a constant as a condition")
	}
	return nil, site.refuse("this condition")
}

// truth converts a numeric column read as a truth value, as MySQL reads
// it (col <> 0, UNKNOWN where col is NULL): the column alone as a
// condition (WHERE is_paid, NOT is_paid, CASE WHEN flag THEN ...) when
// test is nil, else col IS [NOT] TRUE or IS [NOT] FALSE, which are never
// UNKNOWN. With z the leaf col = 0:
//
//	col               NOT z
//	col IS TRUE       NOT z AND col IS NOT NULL
//	col IS NOT TRUE   z OR col IS NULL
//	col IS FALSE      NOT (z's Complement)  (col = 0 AND col IS NOT NULL)
//	col IS NOT FALSE  z's Complement        (col <> 0 OR col IS NULL)
//
// Where only the rows a condition keeps are read (site.constants) and e
// stands under no NOT, IS TRUE is written NOT z and IS FALSE z, which
// keep the same rows (a NULL row is in neither), as col <> 0 and col = 0
// are. A text, date or timestamp column, or an expression, is refused.
func (sc *scope) truth(site conditionSite, negated bool, e ast.ExprNode, test *ast.IsTruthExpr) (*Predicate, error) {
	c, isColumn := unparen(e).(*ast.ColumnNameExpr)
	if !isColumn {
		return nil, site.refuse("IS TRUE or IS FALSE of %s (they take a numeric column: col IS TRUE is col <> 0 AND col IS NOT NULL)", restore(e))
	}
	col, err := sc.column(c.Name, site.clause)
	if err != nil {
		return nil, err
	}
	if !col.Numeric() {
		return nil, site.refuse("the %s column %s as a truth value (compare it with a constant: %s = ...)", col.Type, col.Name, col.Name)
	}
	zero := Condition{Column: col.Name, In: []Value{{Num: 0}}, ExactNumbers: true}
	complement := zero
	complement.Complement = true
	notNull := Condition{Column: col.Name, IsNull: true, Complement: true}
	rows := site.constants && !negated
	switch {
	case test == nil:
		return negateIf(true, leaf(zero)), nil
	case test.True == 1 && !test.Not && rows:
		return negateIf(true, leaf(zero)), nil
	case test.True == 1 && !test.Not:
		return &Predicate{Op: And, Args: []*Predicate{negateIf(true, leaf(zero)), leaf(notNull)}}, nil
	case test.True == 1:
		return &Predicate{Op: Or, Args: []*Predicate{leaf(zero), negateIf(true, leaf(notNull))}}, nil
	case !test.Not && rows:
		return leaf(zero), nil
	case !test.Not:
		return negateIf(true, leaf(complement)), nil
	}
	return leaf(complement), nil
}

// constant is the predicate TRUE (an always node) or FALSE (Never).
func constant(v bool) *Predicate {
	if v {
		return &Predicate{Op: always}
	}
	return &Predicate{Op: Never}
}

// combine is the AND (OR) of l and r, with nested ANDs (ORs) flattened
// and constants folded: FALSE AND p is FALSE and TRUE AND p is p, TRUE
// OR p is TRUE and FALSE OR p is p, in three-valued logic too.
func combine(op PredicateOp, l, r *Predicate) *Predicate {
	absorbing, neutral := Never, always
	if op == Or {
		absorbing, neutral = always, Never
	}
	switch {
	case l.Op == absorbing || r.Op == absorbing:
		return &Predicate{Op: absorbing}
	case l.Op == neutral:
		return r
	case r.Op == neutral:
		return l
	}
	return &Predicate{Op: op, Args: append(operands(op, l), operands(op, r)...)}
}

// constantValue reads e as a constant: a literal (NULL included) or
// constant arithmetic of numbers, never an unbound ? marker.
func constantValue(e ast.ExprNode) (Value, bool) {
	if unbound(e) {
		return Value{}, false
	}
	if v, ok := literal(e); ok {
		return v, true
	}
	if num, ok := constantNumber(e); ok {
		return Value{Num: num}, true
	}
	return Value{}, false
}

// nullOperand reads a condition (a comparison, BETWEEN, IN, LIKE) one of
// whose operands is NULL and whose others are declared columns or
// constants, at a site that allows constants: UNKNOWN for every row
// whatever its operator (NOT included), read as the site reads an UNKNOWN
// (boolean's negated). ok is false for any other condition. Its columns
// are resolved, so an unknown one is an error as elsewhere.
func (sc *scope) nullOperand(site conditionSite, negated bool, operands ...ast.ExprNode) (p *Predicate, ok bool, err error) {
	if !site.constants || !slices.ContainsFunc(operands, isNull) {
		return nil, false, nil
	}
	for _, o := range operands {
		if _, isConstant := constantValue(o); isConstant {
			continue
		}
		c, isColumn := unparen(o).(*ast.ColumnNameExpr)
		if !isColumn {
			return nil, false, nil
		}
		if _, err := sc.column(c.Name, site.clause); err != nil {
			return nil, true, err
		}
	}
	return constant(negated), true, nil
}

// isNull reports whether e is the literal NULL.
func isNull(e ast.ExprNode) bool {
	v, ok := literal(e)
	return ok && v.Null && !unbound(e)
}

// unbound reports whether e is a ? marker left in the text of a statement
// (not a prepared statement's, whose markers are bound before it is
// parsed): the parser reads it as a value without one, which is no NULL
// but a statement MySQL refuses.
func unbound(e ast.ExprNode) bool {
	_, ok := unparen(e).(ast.ParamMarkerExpr)
	return ok
}

// nullBetween rewrites x [NOT] BETWEEN a AND b with one bound NULL (and x
// not NULL), at a site that allows constants, as MySQL evaluates it: [NOT]
// (x >= a AND x <= b), the comparison with NULL UNKNOWN and the other
// one kept (5 NOT BETWEEN NULL AND 3 is TRUE). ok is false otherwise.
func nullBetween(site conditionSite, e *ast.BetweenExpr) (ast.ExprNode, bool) {
	if !site.constants || isNull(e.Expr) || isNull(e.Left) == isNull(e.Right) {
		return nil, false
	}
	var x ast.ExprNode = &ast.BinaryOperationExpr{Op: opcode.LogicAnd,
		L: &ast.BinaryOperationExpr{Op: opcode.GE, L: e.Expr, R: e.Left},
		R: &ast.BinaryOperationExpr{Op: opcode.LE, L: e.Expr, R: e.Right}}
	if e.Not {
		x = &ast.UnaryOperationExpr{Op: opcode.Not, V: x}
	}
	return x, true
}

// nullIn rewrites x [NOT] IN (a, ..., NULL, ...) with a NULL and another
// item (and x not NULL), at a site that allows constants, as MySQL
// evaluates it: [NOT] (x IN (a, ...) OR x = NULL), TRUE where x is one of
// the items and UNKNOWN elsewhere (so NOT IN keeps no row). ok is false
// otherwise.
func nullIn(site conditionSite, e *ast.PatternInExpr) (ast.ExprNode, bool) {
	if !site.constants || e.Sel != nil || isNull(e.Expr) || !slices.ContainsFunc(e.List, isNull) {
		return nil, false
	}
	var rest []ast.ExprNode
	for _, item := range e.List {
		if !isNull(item) {
			rest = append(rest, item)
		}
	}
	if len(rest) == 0 {
		return nil, false
	}
	var x ast.ExprNode = &ast.BinaryOperationExpr{Op: opcode.LogicOr,
		L: &ast.PatternInExpr{Expr: e.Expr, List: rest},
		R: &ast.BinaryOperationExpr{Op: opcode.EQ, L: e.Expr, R: ast.NewValueExpr(nil, "", "")}}
	if e.Not {
		x = &ast.UnaryOperationExpr{Op: opcode.Not, V: x}
	}
	return x, true
}

// temporalIn converts col IN (a, b, ...) on a date or timestamp column:
// the OR of col = a, col = b, ... (each a comparison, with its constant
// read as for =). ok is false when e is not IN on such a column.
func (sc *scope) temporalIn(e *ast.PatternInExpr, site conditionSite) (p *Predicate, ok bool, err error) {
	c, isColumn := unparen(e.Expr).(*ast.ColumnNameExpr)
	if e.Sel != nil || !isColumn {
		return nil, false, nil
	}
	col, err := sc.column(c.Name, site.clause)
	if err != nil || !col.Temporal() {
		return nil, false, nil
	}
	var leaves []*Predicate
	for _, item := range e.List {
		eq, err := sc.comparison(&ast.BinaryOperationExpr{Op: opcode.EQ, L: e.Expr, R: item}, site)
		if err != nil {
			return nil, true, err
		}
		leaves = append(leaves, leaf(eq))
	}
	if len(leaves) == 1 {
		return leaves[0], true, nil
	}
	return &Predicate{Op: Or, Args: leaves}, true, nil
}

// like converts col [NOT] LIKE 'pattern' [ESCAPE 'c'] on a declared text
// column, or on LOWER(col) or UPPER(col) (NOT is the caller's): the pattern, a string constant, is
// rewritten with LikeEscape as its escape character (MySQL's rule: the
// escape character, a backslash unless ESCAPE names another, makes the
// next character literal, and a trailing one is itself).
func (sc *scope) like(e *ast.PatternLikeOrIlikeExpr, site conditionSite) (Condition, error) {
	if !e.IsLike {
		return Condition{}, site.refuse("ILIKE")
	}
	operand, fold := e.Expr, ""
	if f, ok := unparen(e.Expr).(*ast.FuncCallExpr); ok && len(f.Args) == 1 && f.Schema.L == "" {
		switch f.FnName.L {
		case "lower", "lcase":
			operand, fold = f.Args[0], "lower"
		case "upper", "ucase":
			operand, fold = f.Args[0], "upper"
		}
	}
	col, err := sc.conditionColumn(site, operand, e.Pattern)
	if err != nil {
		return Condition{}, err
	}
	if col.Type != catalog.Text {
		return Condition{}, site.refuse("LIKE on the %s column %s (it takes a text column)", col.Type, col.Name)
	}
	v, ok := literal(e.Pattern)
	if !ok || !v.IsText || v.Null {
		return Condition{}, site.refuse("LIKE with a pattern other than a string constant")
	}
	escape := rune('\\')
	if e.EscapeExplicit {
		escape = rune(e.Escape)
	}
	var sb strings.Builder
	runes := []rune(v.Str)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == escape && i+1 < len(runes):
			i++
			r = runes[i]
			if r == '%' || r == '_' || r == LikeEscape {
				sb.WriteRune(LikeEscape)
			}
			sb.WriteRune(r)
		case r == '%' || r == '_':
			sb.WriteRune(r)
		case r == LikeEscape:
			sb.WriteRune(LikeEscape)
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	return likeCondition(site, col, sb.String(), fold)
}

// MaxLikePattern is the longest LIKE pattern a statement may give, in
// bytes as sent (escapes included), far below SQLite's default limit of
// 50,000 bytes (SQLITE_MAX_LIKE_PATTERN_LENGTH), past which SQLite fails
// the statement, but only when some row reaches the LIKE: whether such a
// statement answered would depend on the data.
const MaxLikePattern = 10000

// likeCondition returns the LIKE condition of pattern on col (folded by
// fold: "", "lower" or "upper"), refusing a pattern longer than
// MaxLikePattern.
func likeCondition(site conditionSite, col *catalog.Column, pattern, fold string) (Condition, error) {
	if len(pattern) > MaxLikePattern {
		return Condition{}, site.refuse("a LIKE pattern of %d bytes on %s (at most %d)", len(pattern), col.Name, MaxLikePattern)
	}
	return Condition{Column: col.Name, Like: &pattern, LikeCase: fold, Text: true}, nil
}

// locate converts the "contains" test BI tools write with a function:
// LOCATE('s', col) or INSTR(col, 's') compared with 0 or 1 (> 0, >= 1,
// <> 0: contains; = 0, < 1: does not), the constant on the right, into
// the condition LOCATE('s', col) > 0, which PostgreSQL matches as col LIKE
// '%s%' (s's %, _ and ! escaped; TextFunction); contains is false for
// "does not" (its NOT: NULL where col is NULL, as LOCATE's comparison
// is). ok is false for any other comparison.
func (sc *scope) locate(e *ast.BinaryOperationExpr, site conditionSite) (c Condition, contains, ok bool, err error) {
	f, isCall := unparen(e.L).(*ast.FuncCallExpr)
	bound, isLit := literal(unparen(e.R))
	if !isCall || !isLit || bound.IsText || bound.Null || f.Schema.L != "" || len(f.Args) != 2 {
		return Condition{}, false, false, nil
	}
	var sub, operand ast.ExprNode
	switch f.FnName.L {
	case "locate":
		sub, operand = f.Args[0], f.Args[1]
	case "instr":
		operand, sub = f.Args[0], f.Args[1]
	default:
		return Condition{}, false, false, nil
	}
	switch {
	case bound.Num == 0 && (e.Op == opcode.GT || e.Op == opcode.NE), bound.Num == 1 && e.Op == opcode.GE:
		contains = true
	case bound.Num == 0 && e.Op == opcode.EQ, bound.Num == 1 && e.Op == opcode.LT:
	default:
		return Condition{}, false, true, site.refuse("%s compared with %s (a contains test is %s > 0, or = 0 for does not contain)", strings.ToUpper(f.FnName.O), restore(e.R), strings.ToUpper(f.FnName.O))
	}
	v, isText := literal(unparen(sub))
	if !isText || !v.IsText || v.Null {
		return Condition{}, false, true, site.refuse("%s with a searched string other than a string constant", strings.ToUpper(f.FnName.O))
	}
	col, err := sc.conditionColumn(site, operand, sub)
	if err != nil {
		return Condition{}, false, true, err
	}
	if col.Type != catalog.Text {
		return Condition{}, false, true, site.refuse("%s on the %s column %s (it takes a text column)", strings.ToUpper(f.FnName.O), col.Type, col.Name)
	}
	c, err = likeCondition(site, col, "%"+likeLiteral(v.Str)+"%", "")
	c.Function = &TextFunction{Func: "locate", Value: v.Str}
	return c, contains, true, err
}

// likeLiteral writes s as a LIKE pattern that matches s itself: its %, _
// and LikeEscape escaped with LikeEscape.
func likeLiteral(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r == '%' || r == '_' || r == LikeEscape {
			sb.WriteRune(LikeEscape)
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// textFunctionEquality converts the text tests BI tools write with a
// function of a text column compared with a string constant, f(col) = 's'
// or <> 's', into a condition (equal false for <>: its NOT, NULL where col
// is NULL as the comparison is) that MySQL/MariaDB and SQLite compute as
// written and PostgreSQL as LIKE (TextFunction): LOWER(col) and
// UPPER(col) (LCASE, UCASE) = 's' as LOWER(col) LIKE 's' (s's %, _ and !
// escaped); a prefix, LEFT(col, n) or SUBSTRING(col, 1, n) (SUBSTR, MID) =
// 's', as col LIKE 's%' when s has n characters and col LIKE 's' when
// fewer (the whole value); a suffix, RIGHT(col, n) = 's', as col LIKE '%s'
// likewise. An s longer than n characters is refused (never equal on
// PostgreSQL and SQLite). ok is false for any other comparison.
func (sc *scope) textFunctionEquality(e *ast.BinaryOperationExpr, site conditionSite) (c Condition, equal, ok bool, err error) {
	if e.Op != opcode.EQ && e.Op != opcode.NE {
		return Condition{}, false, false, nil
	}
	side, other := unparen(e.L), unparen(e.R)
	if _, isCall := side.(*ast.FuncCallExpr); !isCall {
		side, other = other, side
	}
	f, isCall := side.(*ast.FuncCallExpr)
	v, isLit := literal(other)
	if !isCall || !isLit || !v.IsText || v.Null || f.Schema.L != "" || len(f.Args) == 0 {
		return Condition{}, false, false, nil
	}
	fold, prefix, suffix := "", false, false
	switch name := f.FnName.L; {
	case (name == "lower" || name == "lcase") && len(f.Args) == 1:
		fold = "lower"
	case (name == "upper" || name == "ucase") && len(f.Args) == 1:
		fold = "upper"
	case name == "left" && len(f.Args) == 2:
		prefix = true
	case (name == "substring" || name == "substr" || name == "mid") && len(f.Args) == 3:
		if start, isNum := literal(f.Args[1]); !isNum || start.IsText || start.Num != 1 {
			return Condition{}, false, true, site.refuse("%s from a position other than 1 (a prefix is SUBSTRING(col, 1, n) or LEFT(col, n))", restore(f))
		}
		prefix = true
	case name == "right" && len(f.Args) == 2:
		suffix = true
	default:
		return Condition{}, false, false, nil
	}
	col, err := sc.conditionColumn(site, f.Args[0], other)
	if err != nil {
		return Condition{}, false, true, err
	}
	if col.Type != catalog.Text {
		return Condition{}, false, true, site.refuse("%s of the %s column %s (it takes a text column)", strings.ToUpper(f.FnName.O), col.Type, col.Name)
	}
	pattern := likeLiteral(v.Str)
	fn := &TextFunction{Func: fold, Value: v.Str}
	if prefix || suffix {
		n, isNum := literal(f.Args[len(f.Args)-1])
		length := float64(len([]rune(v.Str)))
		if !isNum || n.IsText || n.Num != math.Trunc(n.Num) || n.Num < 1 {
			return Condition{}, false, true, site.refuse("%s with a length other than a positive integer", restore(f))
		}
		if length > n.Num {
			return Condition{}, false, true, site.refuse("%s compared with '%s', longer than %g characters (never equal)", restore(f), v.Str, n.Num)
		}
		fn.Func, fn.Length = "left", int64(min(n.Num, MaxTextFunctionLength))
		switch {
		case length < n.Num:
		case prefix:
			pattern += "%"
		default:
			pattern = "%" + pattern
		}
		if suffix {
			fn.Func = "right"
		}
	}
	c, err = likeCondition(site, col, pattern, fold)
	c.Function = fn
	return c, e.Op == opcode.EQ, true, err
}

// leaf is the predicate of one condition.
func leaf(c Condition) *Predicate { return &Predicate{Op: Leaf, Leaf: &c} }

// negateIf wraps p in NOT when not is set; the negation of IS [NOT] NULL
// is IS [NOT] NULL with the other sense (a two-valued leaf), the negation
// of NOT q is q (SQL's NOT maps true, false and unknown to false, true and
// unknown, so two of them are the identity), and that of a constant the
// other constant.
func negateIf(not bool, p *Predicate) *Predicate {
	if !not {
		return p
	}
	switch p.Op {
	case Not:
		return p.Args[0]
	case Never, always:
		return constant(p.Op == Never)
	}
	if p.Op == Leaf && p.Leaf.IsNull {
		c := *p.Leaf
		c.Complement = !c.Complement
		return leaf(c)
	}
	return &Predicate{Op: Not, Args: []*Predicate{p}}
}

// nullTest is col IS NULL on the declared column col: it holds for NULL
// and the values col's reading rule cannot read (Condition.IsNull), only
// NULL on a text column, also a value that is no date on a date or
// timestamp column, as every date comparison and date key reads it.
func nullTest(col *catalog.Column) Condition {
	c := Condition{Column: col.Name, IsNull: true, Text: !col.Numeric()}
	if col.Temporal() {
		c.Temporal = col.Type
	}
	return c
}

// orNull folds an OR of two operands, the negation of a leaf on a column
// and that column's IS NULL (in either order), into one leaf: the leaf's
// Complement. It is BI tools' "is not" filter, col <> v OR col IS NULL,
// which SQL's three-valued NOT alone cannot express, and a conjunction of
// such leaves stays a WHERE list that every aggregate path accepts. Any
// other predicate is returned as it is.
func orNull(p *Predicate) *Predicate {
	if p.Op != Or || len(p.Args) != 2 {
		return p
	}
	for i, n := range p.Args {
		isNull, other := n, p.Args[1-i]
		if isNull.Op != Leaf || !isNull.Leaf.IsNull || isNull.Leaf.Complement || other.Op != Not {
			continue
		}
		inner := other.Args[0]
		if inner.Op != Leaf || inner.Leaf.IsNull || inner.Leaf.Complement || inner.Leaf.Column != isNull.Leaf.Column {
			continue
		}
		c := *inner.Leaf
		c.Complement, c.Text = true, isNull.Leaf.Text
		return leaf(c)
	}
	return p
}

// operands are the arguments p contributes to an op node: its own
// arguments if it is an op node too, else p itself.
func operands(op PredicateOp, p *Predicate) []*Predicate {
	if p.Op == op {
		return p.Args
	}
	return []*Predicate{p}
}

// conjunction returns the conditions of a predicate that is a single leaf or
// an AND of leaves, in order, and none of nil (a condition true for every
// row); ok is false when it has OR or NOT, or is Never.
func conjunction(p *Predicate) (conds []Condition, ok bool) {
	if p == nil {
		return nil, true
	}
	switch p.Op {
	case Leaf:
		return []Condition{*p.Leaf}, true
	case And:
		for _, a := range p.Args {
			if a.Op != Leaf {
				return nil, false
			}
			conds = append(conds, *a.Leaf)
		}
		return conds, true
	}
	return nil, false
}

// operatorName names a refused operator of a condition.
func operatorName(op opcode.Op) string {
	switch op {
	case opcode.LogicXor:
		return "XOR"
	case opcode.NullEQ:
		return "<=>"
	}
	return "the operator " + op.String()
}
