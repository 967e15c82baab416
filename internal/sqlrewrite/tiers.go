package sqlrewrite

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Tiering is a GROUP BY key of tiers of a numeric column or row
// expression (its derived column: CASE WHEN income > 10 * age THEN ...),
//
//	CASE WHEN r₁ THEN l₁ WHEN r₂ THEN l₂ … ELSE lₖ₊₁ END
//
// each rᵢ a range of it written with <, <=, >, >=, BETWEEN or an
// AND of them (col >= 18 AND col < 35), with constant ends, and distinct
// literal labels (the GroupKey's Values, in this order); without an ELSE
// (or with ELSE NULL) the ELSE tier's label is NULL, SQL's NULL group.
// As SQL's CASE does, a readable value is in the tier of the first range
// that holds it, and in the ELSE tier when none does; so is an
// unreadable value (NULL; on SQLite text or a blob), on which every WHEN
// is UNKNOWN (UnreadableInElse): a partition of the rows fixed by the
// query, whatever the data, so the key's domain is public like a declared
// one (every tier is answered, empty ones included).
type Tiering struct {
	Column string
	// Ranges are the WHEN ranges, in CASE order.
	Ranges []Range
	// Unreadable says which tier holds the unreadable values.
	Unreadable Unreadable
	// Spelling identifies the tiering (column, ranges, labels), so that the
	// same CASE in the select list and in GROUP BY is one key.
	Spelling string
	// Mapped, for a key mapped from declared values (mappedKey), says
	// which values each group holds, for plans.
	Mapped string
}

// Unreadable says which tier of a Tiering, or cell of its CellDim, holds
// the values no range can hold: NULL, and on SQLite text or a blob in a
// numeric column (which dpproxy reads as NULL). Each choice is the
// query's, so the tiers stay a partition fixed whatever the data.
type Unreadable int

const (
	// UnreadableInNone leaves them in no tier: a mapped key (mappedKey),
	// whose derived column is unreadable only for a value its domain does
	// not declare, in no group as with a declared key.
	UnreadableInNone Unreadable = iota
	// UnreadableInElse puts them in the ELSE tier, as SQL's CASE (and IF)
	// does: every WHEN is UNKNOWN on them.
	UnreadableInElse
	// UnreadableInNull puts them in a tier of their own after the ELSE's,
	// labelled NULL: a range condition's (GROUP BY age > 30 is 1 where it
	// holds, 0 where it does not, and NULL, SQL's NULL group, where SQL
	// computes NULL > 30).
	UnreadableInNull
)

// tiering recognises a CASE of tiers, or a range condition (the CASE of
// 1 where it holds, else 0); ok is false when e is not a CASE whose WHENs
// all have the shape of ranges (tierShaped; the caller's other rules
// apply), and err says why a CASE of that shape cannot be a key.
func (sc *scope) tiering(e ast.ExprNode) (t *Tiering, labels []Value, ok bool, err error) {
	condition := isCondition(e) && tierShaped(e)
	if condition {
		// GROUP BY age > 30: MySQL's 1 where it holds and 0 where not, the
		// tiers of CASE WHEN age > 30 THEN 1 ELSE 0 END but for the
		// unreadable values: NULL there, a tier of their own.
		one, zero := ast.NewValueExpr(int64(1), "", ""), ast.NewValueExpr(int64(0), "", "")
		e = &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: e, Result: one}}, ElseClause: zero}
	}
	c, isCase := asCase(e)
	if !isCase || len(c.WhenClauses) == 0 {
		return nil, nil, false, nil
	}
	for _, w := range c.WhenClauses {
		if !tierShaped(w.Expr) {
			return nil, nil, false, nil
		}
	}
	why := func(format string, args ...any) error {
		return refuseQuery("GROUP BY the tiers %s: "+format+" (tiers are CASE WHEN r1 THEN label WHEN r2 THEN label ... [ELSE label] END, each r a range of one numeric column or row expression with <, <=, >, >=, BETWEEN or AND, constant ends, distinct literal labels, NULL only the ELSE's)", append([]any{restore(e)}, args...)...)
	}
	t = &Tiering{Unreadable: UnreadableInElse}
	if condition {
		t.Unreadable = UnreadableInNull
	}
	results := make([]ast.ExprNode, 0, len(c.WhenClauses)+1)
	for _, w := range c.WhenClauses {
		conds, err := sc.conjunctionAt(w.Expr, tierSite)
		if err != nil {
			return nil, nil, true, err
		}
		rg := Range{}
		for _, cond := range conds {
			switch {
			case t.Column == "":
				t.Column = cond.Column
			case t.Column != cond.Column:
				return nil, nil, true, why("ranges of %s and of %s (one column or expression)", t.Column, cond.Column)
			}
			if column, declared := sc.table.Column(cond.Column); declared && !column.Numeric() {
				return nil, nil, true, why("%s is a %s column", column.Name, column.Type)
			}
			if cond.Range == nil || cond.Complement || cond.Temporal != "" {
				return nil, nil, true, why("a condition that is not a range")
			}
			for _, end := range []float64{cond.Range.Lower, cond.Range.Upper} {
				if !(math.Abs(end) <= 1e300) {
					return nil, nil, true, why("an end that is not a number of magnitude at most 1e300")
				}
			}
			rg = intersect(rg, *cond.Range)
		}
		t.Ranges = append(t.Ranges, rg)
		results = append(results, w.Result)
	}
	results = append(results, c.ElseClause)
	seen := map[Value]bool{}
	for i, r := range results {
		v, isLit := Value{Null: true}, true // no ELSE: NULL
		if r != nil {
			v, isLit = literal(r)
		}
		switch {
		case !isLit:
			return nil, nil, true, why("a label that is not a literal")
		case v.Null && i < len(c.WhenClauses):
			return nil, nil, true, why("a WHEN labelled NULL (only the ELSE's label, or its absence, may be NULL)")
		case v.Null:
			v = Value{Null: true}
		case len(labels) > 0 && v.IsText != labels[0].IsText:
			return nil, nil, true, why("labels of two types")
		}
		if seen[v] {
			return nil, nil, true, why("two tiers labelled %s", formatLabel(v))
		}
		seen[v] = true
		labels = append(labels, v)
	}
	parts := []string{t.Column}
	for i, r := range t.Ranges {
		parts = append(parts, formatLabel(labels[i]), describeCondition(Condition{Column: t.Column, Range: &r}))
	}
	parts = append(parts, formatLabel(labels[len(labels)-1]))
	if condition {
		labels = append(labels, Value{Null: true})
		parts = append(parts, "NULL unreadable") // not the CASE's key
	}
	t.Spelling = strings.Join(parts, " ")
	return t, labels, true, nil
}

// tierShaped reports whether e has the shape of a tier's range: a
// comparison (<, <=, >, >=) of expressions that read columns, or of one
// with a constant, BETWEEN constants, or an AND of them, without
// aggregates (tiering then checks that every range restricts one column
// or row expression).
func tierShaped(e ast.ExprNode) bool {
	if containsNode(e, isAggregate) {
		return false
	}
	switch n := unparen(e).(type) {
	case *ast.BinaryOperationExpr:
		switch n.Op {
		case opcode.LogicAnd:
			return tierShaped(n.L) && tierShaped(n.R)
		case opcode.LT, opcode.LE, opcode.GT, opcode.GE:
			return containsNode(n.L, isColumn) || containsNode(n.R, isColumn)
		}
	case *ast.BetweenExpr:
		_, lo := literal(n.Left)
		_, hi := literal(n.Right)
		return !n.Not && containsNode(n.Expr, isColumn) && lo && hi
	}
	return false
}

// intersect returns the intersection of two ranges (a missing end is
// unbounded).
func intersect(a, b Range) Range {
	return IntersectRanges(a, b)
}

// IntersectRanges returns the numbers in both a and b, comparing ends
// exactly (their exact digits, Range.LowerExact, where they have some).
func IntersectRanges(a, b Range) Range {
	if b.HasLower {
		c := compareEnds(b.Lower, b.LowerExact, a.Lower, a.LowerExact)
		if !a.HasLower || c > 0 || c == 0 && b.LowerOpen {
			a.Lower, a.LowerExact, a.HasLower, a.LowerOpen = b.Lower, b.LowerExact, true, b.LowerOpen
		}
	}
	if b.HasUpper {
		c := compareEnds(b.Upper, b.UpperExact, a.Upper, a.UpperExact)
		if !a.HasUpper || c < 0 || c == 0 && b.UpperOpen {
			a.Upper, a.UpperExact, a.HasUpper, a.UpperOpen = b.Upper, b.UpperExact, true, b.UpperOpen
		}
	}
	return a
}

func formatLabel(v Value) string {
	if v.Null {
		return "NULL"
	}
	if v.IsText {
		return strconv.Quote(v.Str)
	}
	return strconv.FormatFloat(v.Num, 'g', -1, 64)
}

// tierKey returns the key of a tiering, adding it if new.
func (qb *queryBuilder) tierKey(t *Tiering, labels []Value) (int, error) {
	for i, k := range qb.q.Keys {
		if k.Tiers != nil && k.Tiers.Spelling == t.Spelling {
			return i, nil
		}
	}
	qb.q.Keys = append(qb.q.Keys, GroupKey{Column: t.Column, Tiers: t, Values: labels})
	return len(qb.q.Keys) - 1, nil
}

// tierExpr is the key of a CASE of tiers in the select list, HAVING or
// ORDER BY; ok is false when e is no such CASE or no key has its tiers (a
// CASE over a declared key is post-processing).
func (qb *queryBuilder) tierExpr(e ast.ExprNode) (*Expr, bool) {
	t, _, ok, err := qb.sc.tiering(e)
	if !ok {
		t, _, _, ok, err = qb.sc.mappedKey(e)
	}
	if !ok || err != nil {
		return nil, false
	}
	for i, k := range qb.q.Keys {
		if k.Tiers != nil && k.Tiers.Spelling == t.Spelling {
			return &Expr{Kind: ExprKey, Index: i}, true
		}
	}
	return nil, false
}

// String names the tiering in plans and warnings.
func (t *Tiering) String() string {
	if t.Mapped != "" {
		return t.Mapped
	}
	parts := make([]string, len(t.Ranges))
	for i, r := range t.Ranges {
		parts[i] = describeCondition(Condition{Column: t.Column, Range: &r})
	}
	last := "else"
	switch t.Unreadable {
	case UnreadableInElse:
		last = "else or NULL"
	case UnreadableInNull:
		last = "else; NULL"
	}
	return fmt.Sprintf("tiers of %s: %s; %s", t.Column, strings.Join(parts, "; "), last)
}

// mappedKey reads GROUP BY a CASE whose conditions restrict one column
// with declared values (asCase: also IF and a simple CASE): Tableau's
// groups (CASE WHEN state IN ('CA', 'WA') THEN 'west' ELSE 'east' END),
// calculated fields (IF(sex = 1, 'M', 'F')); a text function of a
// declared text column (UPPER(state), LEFT(state, 1)); or a condition or
// row expression of a declared numeric column (race = 1, sex + 1). The proxy
// evaluates it on every declared value, as SQL would on a row holding it
// (caseLabeller: the first WHEN whose conditions all hold, else the
// ELSE's, NULL without one; textLabeller; numericLabeller). The groups are the labels some
// declared value takes, in the domain's order: a function of the
// configuration, whatever the data. It is a key of tiers of the derived column
//
//	CASE WHEN col IN (values of group 0) THEN 0 WHEN … THEN 1 … END
//
// (NULL for a value the domain does not declare: in no group, as with a
// declared key; NULL itself is in the group SQL computes for it when the
// domain declares null or the CASE tests for it), tier i the range [i, i] and the last group the ELSE tier;
// x is that CASE, which a GROUP BY derives. ok is false when e is no such
// CASE (the caller's other rules apply).
func (sc *scope) mappedKey(e ast.ExprNode) (t *Tiering, labels []Value, x *RowExpr, ok bool, err error) {
	if containsNode(e, isAggregate) {
		return nil, nil, nil, false, nil
	}
	col, labelOf, nullTested, ok, err := sc.caseLabeller(e)
	if !ok {
		col, labelOf, ok = sc.textLabeller(e)
	}
	if !ok {
		col, labelOf, nullTested, ok = sc.numericLabeller(e)
	}
	if !ok || err != nil {
		return nil, nil, nil, ok, err
	}
	// Each declared value's group, as MySQL groups the rows holding it: a
	// declared NULL (its label computed as SQL computes it on NULL) too, and
	// the values whose label is NULL form the NULL group. Rows holding no
	// declared value are in no group, as for GROUP BY the column itself,
	// but a key that tests the column for NULL (IFNULL(col, 'Unknown'))
	// groups its NULL rows as it asks, null declared or not.
	index := map[Value]int{}
	var preimages [][]Value
	values := sc.declaredValues(col)
	if nullTested && !slices.ContainsFunc(values, func(v Value) bool { return v.Null }) {
		values = append(values, Value{Null: true, IsText: !col.Numeric()})
	}
	for _, v := range values {
		label := labelOf(v)
		if label.Null {
			label = Value{Null: true}
		}
		g, seen := index[label]
		if !seen {
			g = len(labels)
			index[label] = g
			labels = append(labels, label)
			preimages = append(preimages, nil)
		}
		preimages[g] = append(preimages[g], v)
	}
	switch len(labels) {
	case 0:
		return nil, nil, nil, true, refuseQuery("GROUP BY %s, which gives no declared value of %s a label", restore(e), col.Name)
	case 1:
		return nil, nil, nil, true, refuseQuery("GROUP BY %s, which gives every declared value of %s the label %s: one group "+
			"(select the label as a constant, without GROUP BY, and WHERE %s IN (the declared values))", restore(e), col.Name, formatLabel(labels[0]), col.Name)
	}
	var text []bool
	for _, l := range labels {
		if !l.Null {
			text = append(text, l.IsText)
		}
	}
	if slices.Contains(text, true) && slices.Contains(text, false) {
		return nil, nil, nil, true, refuseQuery("GROUP BY %s, whose labels are of two types", restore(e))
	}
	x = &RowExpr{Kind: RowCase}
	parts := []string{"mapped", col.Name}
	t = &Tiering{}
	var groups []string
	for g, values := range preimages {
		values = slices.DeleteFunc(slices.Clone(values), func(v Value) bool { return v.Null })
		if len(values) > 0 {
			x.When = append(x.When, []Condition{{Column: col.Name, In: values}})
			x.Args = append(x.Args, &RowExpr{Kind: RowConst, Num: float64(g)})
		}
		if len(values) < len(preimages[g]) {
			x.When = append(x.When, []Condition{{Column: col.Name, IsNull: true, Text: !col.Numeric()}})
			x.Args = append(x.Args, &RowExpr{Kind: RowConst, Num: float64(g)})
			values = append(values, Value{Null: true})
		}
		if g < len(preimages)-1 {
			t.Ranges = append(t.Ranges, Range{Lower: float64(g), Upper: float64(g), HasLower: true, HasUpper: true})
		}
		parts = append(parts, formatLabel(labels[g]), describeCondition(Condition{Column: col.Name, In: values}))
		groups = append(groups, formatLabel(labels[g])+" for "+describeCondition(Condition{Column: col.Name, In: values}))
	}
	x.Args = append(x.Args, nil)
	t.Column, t.Spelling = x.String(), strings.Join(parts, " ")
	t.Mapped = fmt.Sprintf("%s over the declared values of %s: %s", restore(e), col.Name, strings.Join(groups, "; "))
	return t, labels, x, true, nil
}

// caseLabeller reads a CASE (asCase) whose conditions restrict one column
// with declared values: the column and each declared value's label, that
// of the first WHEN whose conditions all hold for it, else the ELSE's
// (NULL without one). A result is a literal or the column itself, whose
// label is the value (CASE WHEN state IS NULL THEN 'Unknown' ELSE state
// END); IFNULL(col, literal) and COALESCE(col, literal), BI tools' NULL
// handling, are that CASE (nullDefault). A numeric column's own values
// beside a string literal are labelled as MySQL converts them, in
// decimal (an integer column's; a real one's are refused as labels of
// two types). A literal label that a case-insensitive collation may read
// as a declared value spelled otherwise is refused, as MySQL would merge
// them into one group under either spelling. nullTested is set when a
// condition tests the column for NULL (IS [NOT] NULL, IS [NOT] TRUE, the
// IFNULL), so that its NULL rows belong in a group whether or not the
// domain declares null. ok is false for any other expression.
func (sc *scope) caseLabeller(e ast.ExprNode) (col *catalog.Column, labelOf func(Value) Value, nullTested, ok bool, err error) {
	c, isCase := asCase(e)
	if !isCase {
		c, isCase = nullDefault(e)
	}
	if !isCase || len(c.WhenClauses) == 0 {
		return nil, nil, false, false, nil
	}
	whens := make([]*Predicate, len(c.WhenClauses))
	for i, w := range c.WhenClauses {
		p, err := sc.predicate(w.Expr, rowCaseSite)
		if err != nil {
			return nil, nil, false, false, nil
		}
		for _, cond := range predicateLeaves(p, nil) {
			column, declared := sc.table.Column(cond.Column)
			if !declared || !column.HasDomain() || col != nil && col.Name != column.Name || cond.Like != nil || cond.Temporal != "" || cond.Cell != nil {
				return nil, nil, false, false, nil
			}
			col = column
			nullTested = nullTested || cond.IsNull || cond.Complement // a Complement holds for NULL (col IS NOT FALSE)
			if s, ok := collatedSpelling(cond.In, sc.declaredValues(column)); ok {
				return nil, nil, false, true, refuseQuery("GROUP BY %s: %s compares %q, which the backend's collation may match with the declared value %q "+
					"(write the declared spelling)", restore(e), column.Name, s[0], s[1])
			}
		}
		whens[i] = p
	}
	if col == nil {
		return nil, nil, false, false, nil // no condition on a column
	}
	results := make([]ast.ExprNode, 0, len(c.WhenClauses)+1)
	for _, w := range c.WhenClauses {
		results = append(results, w.Result)
	}
	results = append(results, c.ElseClause)
	var caseLabels []Value
	own := make([]bool, len(results)) // the result is the column itself
	text := false
	for i, r := range results {
		v := Value{Null: true}
		if name, isColumn := unparen(r).(*ast.ColumnNameExpr); isColumn {
			if resolved, err := sc.column(name.Name, "group statement"); err == nil && resolved.Name == col.Name {
				own[i] = true
				caseLabels = append(caseLabels, v)
				continue
			}
		}
		if r != nil {
			var isLit bool
			if v, isLit = literal(r); !isLit {
				return nil, nil, false, true, refuseQuery("GROUP BY %s: a label that is not a literal or %s itself (a CASE over the declared values of %s groups them under literal labels)", restore(e), col.Name, col.Name)
			}
		}
		text = text || v.IsText && !v.Null
		caseLabels = append(caseLabels, v)
	}
	value := func(v Value) Value { return v }
	if slices.Contains(own, true) {
		if text && col.Type == catalog.Integer {
			value = func(v Value) Value {
				if v.Null {
					return v
				}
				return Value{Str: strconv.FormatFloat(v.Num, 'f', -1, 64), IsText: true}
			}
		}
		var mine []Value
		for _, v := range sc.declaredValues(col) {
			mine = append(mine, value(v))
		}
		if s, ok := collatedSpelling(caseLabels, mine); ok {
			return nil, nil, false, true, refuseQuery("GROUP BY %s: the label %q, which the backend's collation may read as the declared value %q of %s "+
				"(write the declared spelling)", restore(e), s[0], s[1], col.Name)
		}
	}
	return col, func(v Value) Value {
		i := len(whens)
		for j, p := range whens {
			if truthOn(p, v) == sqlTrue {
				i = j
				break
			}
		}
		if own[i] {
			return value(v)
		}
		return caseLabels[i]
	}, nullTested, true, nil
}

// nullDefault returns IFNULL(col, literal) and COALESCE(col, literal) as
// the CASE MySQL defines them by, CASE WHEN col IS NULL THEN literal ELSE
// col END (a new node; e is unchanged). ok is false for any other
// expression.
func nullDefault(e ast.ExprNode) (*ast.CaseExpr, bool) {
	if !isCoalesce(e) {
		return nil, false
	}
	f := unparen(e).(*ast.FuncCallExpr)
	_, isColumn := unparen(f.Args[0]).(*ast.ColumnNameExpr)
	if v, isLit := literal(f.Args[1]); !isColumn || !isLit || v.Null {
		return nil, false
	}
	return &ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: &ast.IsNullExpr{Expr: f.Args[0]}, Result: f.Args[1]}}, ElseClause: f.Args[0]}, true
}

// predicateLeaves appends the leaves of p to leaves.
func predicateLeaves(p *Predicate, leaves []Condition) []Condition {
	if p.Leaf != nil {
		return append(leaves, *p.Leaf)
	}
	for _, a := range p.Args {
		leaves = predicateLeaves(a, leaves)
	}
	return leaves
}

// collatedSpelling returns a string of in and a declared value that differ
// but that a case-insensitive, trailing-space-insensitive collation
// (MySQL's and SQLite's defaults) may read as equal: the proxy labels the
// declared values by exact comparison, which would then disagree with the
// backend's.
func collatedSpelling(in, declared []Value) (pair [2]string, ok bool) {
	fold := func(s string) string { return strings.ToLower(strings.TrimRight(s, " ")) }
	for _, x := range in {
		for _, d := range declared {
			if x.IsText && d.IsText && !d.Null && x.Str != d.Str && fold(x.Str) == fold(d.Str) {
				return [2]string{x.Str, d.Str}, true
			}
		}
	}
	return pair, false
}

// SQL's truth values.
const (
	sqlFalse = iota
	sqlTrue
	sqlUnknown
)

// truthOn is SQL's three-valued truth of p, whose leaves are conditions on
// the column of the declared value v, on a row holding v: on NULL a leaf
// is unknown but IS NULL and a Complement (col <> v OR col IS NULL ...),
// which are true; NOT of unknown is unknown, AND is false with a false
// operand, OR true with a true one.
func truthOn(p *Predicate, v Value) int {
	switch p.Op {
	case Leaf:
		c := *p.Leaf
		switch {
		case v.Null && (c.IsNull != c.Complement):
			return sqlTrue
		case v.Null && c.IsNull:
			return sqlFalse // IS NOT NULL
		case v.Null:
			return sqlUnknown
		case conditionsHold([]Condition{c}, v):
			return sqlTrue
		}
		return sqlFalse
	case Not:
		switch t := truthOn(p.Args[0], v); t {
		case sqlTrue:
			return sqlFalse
		case sqlFalse:
			return sqlTrue
		}
		return sqlUnknown
	}
	// And: false wins, then unknown; Or: true wins, then unknown.
	wins, out := sqlFalse, sqlTrue
	if p.Op == Or {
		wins, out = sqlTrue, sqlFalse
	}
	for _, a := range p.Args {
		switch t := truthOn(a, v); t {
		case wins:
			return wins
		case sqlUnknown:
			out = sqlUnknown
		}
	}
	return out
}

// textLabeller reads a text function of one declared text column and
// constants (UPPER(state), LEFT(state, 1), CONCAT('US-', state),
// nested): the column and each declared value's image, computed as MySQL
// computes the functions on characters (textFunction). ok is false for any
// other expression.
func (sc *scope) textLabeller(e ast.ExprNode) (col *catalog.Column, labelOf func(Value) Value, ok bool) {
	if _, isCall := unparen(e).(*ast.FuncCallExpr); !isCall {
		return nil, nil, false
	}
	name, ok := soleColumn(e)
	if !ok {
		return nil, nil, false
	}
	column, err := sc.column(name, "group statement")
	if err != nil || column.Type != catalog.Text || !column.HasDomain() {
		return nil, nil, false
	}
	for _, v := range sc.declaredValues(column) {
		if _, defined := textFunction(e, v); !v.Null && !defined {
			return nil, nil, false
		}
	}
	return column, func(v Value) Value {
		if v.Null {
			return Value{Null: true} // each function of NULL is NULL, CONCAT's too
		}
		out, _ := textFunction(e, v)
		return out
	}, true
}

// soleColumn returns the column e reads when it reads exactly one (by its
// name, however often).
func soleColumn(e ast.ExprNode) (name *ast.ColumnName, ok bool) {
	ok = true
	containsNode(e, func(n ast.Node) bool {
		if c, isCol := n.(*ast.ColumnNameExpr); isCol {
			if name != nil && name.Name.L != c.Name.Name.L {
				ok = false
			}
			name = c.Name
		}
		return false
	})
	return name, ok && name != nil
}

// textFunction computes e on a row whose one column holds v: the column,
// string constants, and UPPER/UCASE, LOWER/LCASE, LEFT(x, n), RIGHT(x, n),
// SUBSTRING/SUBSTR/MID(x, p[, n]) (p from the end when negative),
// CONCAT, TRIM, LTRIM, RTRIM and CHAR_LENGTH of them, on characters as
// MySQL counts them. defined is false for anything else.
func textFunction(e ast.ExprNode, v Value) (out Value, defined bool) {
	e = unparen(e)
	if _, isCol := e.(*ast.ColumnNameExpr); isCol {
		return v, true
	}
	if lit, isLit := literal(e); isLit {
		return lit, !lit.Null
	}
	f, isCall := e.(*ast.FuncCallExpr)
	if !isCall || f.Schema.L != "" || len(f.Args) == 0 {
		return Value{}, false
	}
	args := make([]Value, len(f.Args))
	for i, a := range f.Args {
		if args[i], defined = textFunction(a, v); !defined {
			return Value{}, false
		}
	}
	text := func(i int) ([]rune, bool) { return []rune(args[i].Str), args[i].IsText }
	count := func(i int) (int, bool) {
		n := args[i].Num
		return int(n), !args[i].IsText && n == math.Trunc(n) && math.Abs(n) < 1<<20
	}
	str := func(r []rune) (Value, bool) { return Value{Str: string(r), IsText: true}, true }
	x, isText := text(0)
	if !isText && f.FnName.L != "concat" {
		return Value{}, false
	}
	switch name := f.FnName.L; {
	case (name == "upper" || name == "ucase") && len(args) == 1:
		return Value{Str: strings.ToUpper(args[0].Str), IsText: true}, true
	case (name == "lower" || name == "lcase") && len(args) == 1:
		return Value{Str: strings.ToLower(args[0].Str), IsText: true}, true
	case (name == "trim" || name == "ltrim" || name == "rtrim") && len(args) == 1:
		trim := map[string]func(string, string) string{"trim": strings.Trim, "ltrim": strings.TrimLeft, "rtrim": strings.TrimRight}[name]
		return Value{Str: trim(args[0].Str, " "), IsText: true}, true
	case name == "char_length" && len(args) == 1:
		return Value{Num: float64(len(x))}, true
	case (name == "left" || name == "right") && len(args) == 2:
		n, ok := count(1)
		if !ok {
			return Value{}, false
		}
		n = max(0, min(n, len(x)))
		if name == "left" {
			return str(x[:n])
		}
		return str(x[len(x)-n:])
	case (name == "substring" || name == "substr" || name == "mid") && (len(args) == 2 || len(args) == 3):
		p, ok := count(1)
		if !ok {
			return Value{}, false
		}
		n := len(x)
		if len(args) == 3 {
			if n, ok = count(2); !ok {
				return Value{}, false
			}
		}
		start := p - 1
		if p < 0 {
			start = len(x) + p
		}
		if p == 0 || start < 0 || start >= len(x) || n < 1 {
			return str(nil)
		}
		return str(x[start:min(len(x), start+n)])
	case name == "concat":
		var sb strings.Builder
		for _, a := range args {
			if !a.IsText {
				return Value{}, false
			}
			sb.WriteString(a.Str)
		}
		return Value{Str: sb.String(), IsText: true}, true
	}
	return Value{}, false
}

// numericLabeller reads a condition or a row expression of one declared
// numeric column (Tableau's boolean dimension race = 1, GROUP BY sex + 1,
// MOD(race, 2)): the column and each declared value's image, 1 or 0 for a
// condition, the expression's value computed in Go (valueAt) otherwise.
// nullTested is set when the condition tests the column for NULL (IS
// [NOT] NULL, IS [NOT] TRUE, IS [NOT] FALSE), as caseLabeller's.
// The image only labels a group: which rows a group holds is the CASE of
// its declared values, so a rounding the database would do differently
// changes no count. ok is false for any other expression.
func (sc *scope) numericLabeller(e ast.ExprNode) (col *catalog.Column, labelOf func(Value) Value, nullTested, ok bool) {
	name, ok := soleColumn(e)
	if !ok {
		return nil, nil, false, false
	}
	column, err := sc.column(name, "group statement")
	if err != nil || !column.Numeric() || !column.HasDomain() {
		return nil, nil, false, false
	}
	if isCondition(e) {
		p, err := sc.predicate(e, rowCaseSite)
		if err != nil {
			return nil, nil, false, false
		}
		for _, c := range predicateLeaves(p, nil) {
			if c.Column != column.Name || c.Like != nil || c.Temporal != "" || c.Cell != nil {
				return nil, nil, false, false
			}
			nullTested = nullTested || c.IsNull || c.Complement // a Complement holds for NULL (col IS NOT FALSE)
		}
		return column, func(v Value) Value {
			switch truthOn(p, v) {
			case sqlTrue:
				return Value{Num: 1}
			case sqlFalse:
				return Value{Num: 0}
			}
			return Value{Null: true}
		}, nullTested, true
	}
	if !isRowExpr(e) || isDatePart(e) {
		return nil, nil, false, false
	}
	x, err := sc.rowExpr(e)
	if err != nil {
		return nil, nil, false, false
	}
	onNull, nullLabel, nullKnown := x.valueOnNull()
	for _, v := range sc.declaredValues(column) {
		if v.Null && !nullKnown {
			return nil, nil, false, false
		}
		if _, defined := x.valueAt(column.Name, v.Num); !v.Null && !defined {
			return nil, nil, false, false
		}
	}
	return column, func(v Value) Value {
		y, _ := x.valueAt(column.Name, v.Num)
		if v.Null {
			y = onNull
			if nullLabel {
				y = math.NaN()
			}
		}
		if math.IsNaN(y) {
			return Value{Null: true}
		}
		return Value{Num: y}
	}, false, true
}

// valueOnNull computes e, a row expression of one column, on a row where
// that column is NULL, as SQL does: a constant is itself, the column and
// arithmetic or LEAST/GREATEST of NULL are NULL, a CASE takes its first
// branch whose conditions are all true on NULL (COALESCE(col, c)'s ELSE,
// CASE WHEN col IS NULL THEN ...). known is false for what it does not
// compute (a function of a constant).
func (e *RowExpr) valueOnNull() (y float64, null, known bool) {
	switch e.Kind {
	case RowColumn, RowTemporal:
		return 0, true, true
	case RowConst:
		return e.Num, false, true
	case RowCase:
		for i, w := range e.When {
			all := true
			for _, c := range w {
				all = all && truthOn(&Predicate{Op: Leaf, Leaf: &c}, Value{Null: true}) == sqlTrue
			}
			if all {
				if e.Args[i] == nil {
					return 0, true, true
				}
				return e.Args[i].valueOnNull()
			}
		}
		if last := e.Args[len(e.When)]; last != nil {
			return last.valueOnNull()
		}
		return 0, true, true
	case RowOp:
		a, nullA, knownA := e.Args[0].valueOnNull()
		b, nullB, knownB := e.Args[1].valueOnNull()
		switch {
		case !knownA || !knownB:
			return 0, false, false
		case nullA || nullB:
			return 0, true, true
		}
		switch e.Op {
		case '+':
			return a + b, false, true
		case '-':
			return a - b, false, true
		case '*':
			return a * b, false, true
		case '/':
			if b == 0 || e.nullableDivisor() && math.Abs(b) < 1 {
				return 0, true, true
			}
			return a / b, false, true
		case 'L':
			return math.Min(a, b), false, true
		case 'G':
			return math.Max(a, b), false, true
		}
	case RowFunc, RowIntDiv:
		if _, null, known := e.Args[0].valueOnNull(); known && null {
			return 0, true, true
		}
	}
	return 0, false, false
}

// valueAt computes e, a row expression of the one column named column, on
// a row where it holds v, as the database computes it in double precision
// (NaN for NULL): the column clamped to its bounds, numbers, + − × / (NULL
// dividing by 0, or by a whole-number divisor below 1 in magnitude),
// LEAST, GREATEST, CASE on conditions of the column, and the numeric
// functions (ROUND's ties away from zero). defined is false where e holds
// anything else (another column, dates).
func (e *RowExpr) valueAt(column string, v float64) (y float64, defined bool) {
	null := math.NaN()
	switch e.Kind {
	case RowColumn:
		return math.Max(e.Lower, math.Min(e.Upper, v)), e.Column == column
	case RowConst:
		return e.Num, true
	case RowCase:
		for i, w := range e.When {
			for _, c := range w {
				if c.Column != column {
					return 0, false
				}
			}
			if conditionsHold(w, Value{Num: v}) {
				if e.Args[i] == nil {
					return null, true
				}
				return e.Args[i].valueAt(column, v)
			}
		}
		if last := e.Args[len(e.When)]; last != nil {
			return last.valueAt(column, v)
		}
		return null, true
	case RowIntDiv:
		a, ok := e.Args[0].valueAt(column, v)
		if e.Op == 'f' {
			return math.Floor(a / e.Num), ok
		}
		return math.Trunc(a / e.Num), ok
	case RowOp:
		a, okA := e.Args[0].valueAt(column, v)
		b, okB := e.Args[1].valueAt(column, v)
		if !okA || !okB {
			return 0, false
		}
		switch e.Op {
		case '+':
			return a + b, true
		case '-':
			return a - b, true
		case '*':
			return a * b, true
		case '/':
			if b == 0 || e.nullableDivisor() && math.Abs(b) < 1 {
				return null, true
			}
			return a / b, true
		case 'L':
			return math.Min(a, b), true
		case 'G':
			return math.Max(a, b), true
		}
	case RowFunc:
		if isDatePartFunc(e.Func) {
			return 0, false
		}
		a, ok := e.Args[0].valueAt(column, v)
		if !ok {
			return 0, false
		}
		scale := math.Pow(10, e.Num)
		switch e.Func {
		case FuncAbs:
			return math.Abs(a), true
		case FuncSign:
			return sign(a), true
		case FuncFloor:
			return math.Floor(a), true
		case FuncCeil:
			return math.Ceil(a), true
		case FuncRound:
			round := math.RoundToEven
			if e.Op == tiesAway {
				round = math.Round
			}
			if e.Num < 0 { // as the rendering scales, dividing by 10^−d
				return round(a/math.Pow(10, -e.Num)) * math.Pow(10, -e.Num), true
			}
			return round(a*scale) / scale, true
		case FuncTruncate:
			return math.Trunc(a*scale) / scale, true
		case FuncMod:
			return math.Mod(a, e.Num), true
		case FuncPow:
			return math.Pow(a, e.Num), true
		case FuncSqrt:
			return math.Sqrt(a), true
		case FuncLn:
			return math.Log(a), true
		case FuncLog:
			return math.Log(a) / math.Log(e.Num), true
		case FuncExp:
			return math.Exp(a), true
		}
	}
	return 0, false
}

// conditionsHold reports whether every condition holds for the declared
// value v of their column: membership (exact, as the declared values are
// written), a numeric range, and their complements.
// rangeHolds reports whether the number x is in r, exactly.
func rangeHolds(r Range, x *big.Rat) bool {
	if r.HasLower {
		c := x.Cmp(endRat(r.Lower, r.LowerExact))
		if c < 0 || c == 0 && r.LowerOpen {
			return false
		}
	}
	if r.HasUpper {
		c := x.Cmp(endRat(r.Upper, r.UpperExact))
		if c > 0 || c == 0 && r.UpperOpen {
			return false
		}
	}
	return true
}

func conditionsHold(conds []Condition, v Value) bool {
	for _, c := range conds {
		holds := false
		switch {
		case c.IsNull:
			holds = false // v is not NULL
		case c.Range != nil:
			r := c.Range
			holds = !v.IsText && !v.Null && rangeHolds(*r, valueRat(v))
		default:
			for _, x := range c.In {
				if x.IsText == v.IsText && x.Str == v.Str && !x.Null && (x.IsText || valueRat(x).Cmp(valueRat(v)) == 0) {
					holds = true
				}
			}
		}
		if holds == c.Complement {
			return false
		}
	}
	return true
}

// declaredValues returns the declared domain of col as Values (a NULL
// entry for a declared null).
func (sc *scope) declaredValues(col *catalog.Column) []Value {
	var out []Value
	for _, v := range col.Values {
		switch {
		case v == catalog.NullValue:
			out = append(out, Value{Null: true, IsText: !col.Numeric()})
		case col.Numeric():
			x, _ := strconv.ParseFloat(v, 64) // validated by the catalog
			out = append(out, Value{Num: x})
		default:
			out = append(out, Value{Str: v, IsText: true})
		}
	}
	return out
}
