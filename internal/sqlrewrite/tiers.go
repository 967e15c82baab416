package sqlrewrite

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// Tiering is a GROUP BY key of tiers of a numeric column,
//
//	CASE WHEN col < e₁ THEN l₁ WHEN col < e₂ THEN l₂ … ELSE lₖ₊₁ END
//
// with constant edges e₁ < e₂ < … < eₖ and distinct literal labels (the
// GroupKey's Values, in this order). Tier 0 holds the readable values
// below e₁, tier i those in [eᵢ, eᵢ₊₁), the ELSE tier those from eₖ on: a
// partition of the readable values fixed by the query, whatever the data,
// so the key's domain is public like a declared one (every tier is
// answered, empty ones included). As for every GROUP BY key, an unreadable
// value (NULL; on SQLite text or a blob) is in no tier, where SQL's CASE
// would put it in the ELSE tier.
type Tiering struct {
	Column string
	Edges  []float64
	// Spelling identifies the tiering (column, edges, labels), so that the
	// same CASE in the select list and in GROUP BY is one key.
	Spelling string
}

// tiering recognises a CASE of tiers; ok is false when e is not a CASE of
// col < constant conditions on one column (the caller's other rules
// apply), and err says why a CASE of that shape cannot be a key.
func (sc *scope) tiering(e ast.ExprNode) (t *Tiering, labels []Value, ok bool, err error) {
	c, isCase := unparen(e).(*ast.CaseExpr)
	if !isCase || c.Value != nil || len(c.WhenClauses) == 0 {
		return nil, nil, false, nil
	}
	var colName string
	for _, w := range c.WhenClauses {
		b, isCmp := unparen(w.Expr).(*ast.BinaryOperationExpr)
		if !isCmp || b.Op != opcode.LT {
			return nil, nil, false, nil
		}
		x, isCol := unparen(b.L).(*ast.ColumnNameExpr)
		if !isCol || (colName != "" && !strings.EqualFold(colName, x.Name.Name.O)) {
			return nil, nil, false, nil
		}
		colName = x.Name.Name.O
	}
	first := unparen(c.WhenClauses[0].Expr).(*ast.BinaryOperationExpr)
	col, err := sc.column(first.L.(*ast.ColumnNameExpr).Name, "group statement")
	if err != nil {
		return nil, nil, true, err
	}
	why := func(format string, args ...any) error {
		return refuseQuery("GROUP BY the tiers %s: "+format+" (tiers are CASE WHEN col < a THEN label WHEN col < b THEN label ... ELSE label END, increasing constants a < b < ..., distinct literal labels)", append([]any{restore(e)}, args...)...)
	}
	if !col.Numeric() {
		return nil, nil, true, why("%s is a text column", col.Name)
	}
	if c.ElseClause == nil {
		return nil, nil, true, why("no ELSE")
	}
	t = &Tiering{Column: col.Name}
	results := make([]ast.ExprNode, 0, len(c.WhenClauses)+1)
	for _, w := range c.WhenClauses {
		v, isLit := literal(unparen(w.Expr).(*ast.BinaryOperationExpr).R)
		if !isLit || v.Null || v.IsText || !(math.Abs(v.Num) <= 1e300) {
			return nil, nil, true, why("an edge that is not a number of magnitude at most 1e300")
		}
		if n := len(t.Edges); n > 0 && !(v.Num > t.Edges[n-1]) {
			return nil, nil, true, why("edges not increasing")
		}
		t.Edges = append(t.Edges, v.Num)
		results = append(results, w.Result)
	}
	results = append(results, c.ElseClause)
	seen := map[Value]bool{}
	for _, r := range results {
		v, isLit := literal(r)
		if !isLit || v.Null {
			return nil, nil, true, why("a label that is not a literal")
		}
		if len(labels) > 0 && v.IsText != labels[0].IsText {
			return nil, nil, true, why("labels of two types")
		}
		if seen[v] {
			return nil, nil, true, why("two tiers labelled %s", formatLabel(v))
		}
		seen[v] = true
		labels = append(labels, v)
	}
	parts := []string{col.Name}
	for i, e := range t.Edges {
		parts = append(parts, formatLabel(labels[i]), strconv.FormatFloat(e, 'g', -1, 64))
	}
	t.Spelling = strings.Join(append(parts, formatLabel(labels[len(labels)-1])), " ")
	return t, labels, true, nil
}

func formatLabel(v Value) string {
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
	return fmt.Sprintf("tiers of %s at %s", t.Column, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(t.Edges)), ", "), "[]"))
}
