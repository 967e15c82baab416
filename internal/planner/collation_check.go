package planner

import (
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// connectionCollation is the collation of the text of q's literals: the
// session's collation_connection. One that post-processing does not
// implement is refused by checkCollation wherever it would decide a
// comparison, so under it such texts are never compared.
func connectionCollation(q *sqlrewrite.Query) collation {
	c, _ := collationNamed(q.Collation)
	return c
}

// columnCollation is the collation of q's released text keys: the one
// dpproxy declares for text columns (information_schema, SHOW CREATE
// TABLE), the backend's (Query.ColumnCollation; both collations
// catalog.Config.TextCollation names are in collationNames).
func columnCollation(q *sqlrewrite.Query) collation {
	c, _ := collationNamed(q.ColumnCollation)
	return c
}

// checkCollation refuses, before anything is charged, a query whose
// post-processing would compare, order, de-duplicate or match two texts
// in a collation_connection post-processing does not implement
// (collationNames): two literals' texts compared (=, IN, BETWEEN, NULLIF,
// GREATEST, LEAST), LIKE without a text key on either side, ORDER BY,
// DISTINCT, PARTITION BY, an outer GROUP BY or an outer MIN, MAX or
// DISTINCT of text that may be a literal's. A comparison with a released
// text key is in the column's collation whatever the connection's, and is
// answered. It is conservative: text that may be a literal's (literalText)
// counts as one.
func checkCollation(q *sqlrewrite.Query, t *catalog.Table) error {
	if _, ok := collationNamed(q.Collation); ok {
		return nil
	}
	c := collationCheck{q: q, t: t}
	inner := func(e *sqlrewrite.Expr) bool { return c.literalText(e) }
	for _, col := range q.Columns {
		c.walk(col.Expr)
		if q.Distinct && inner(col.Expr) {
			c.found = "DISTINCT"
		}
	}
	c.walk(q.Having)
	for _, k := range q.OrderBy {
		c.walk(k.Expr)
		if inner(k.Expr) {
			c.found = "ORDER BY"
		}
	}
	for _, w := range q.Windows {
		c.walk(w.Arg)
		if (w.Func == "min" || w.Func == "max") && w.Arg != nil && inner(w.Arg) {
			c.found = "a window MIN or MAX"
		}
		for _, e := range w.PartitionBy {
			c.walk(e)
			if inner(e) {
				c.found = "PARTITION BY"
			}
		}
		for _, k := range w.OrderBy {
			c.walk(k.Expr)
			if inner(k.Expr) {
				c.found = "a window's ORDER BY"
			}
		}
	}
	if o := q.Outer; o != nil {
		for _, k := range o.Keys {
			if k < len(q.Columns) && inner(q.Columns[k].Expr) {
				c.found = "GROUP BY"
			}
		}
		for _, a := range o.Aggs {
			c.walk(a.Arg)
			if a.Arg != nil && (a.Distinct || a.Func == "min" || a.Func == "max") && c.literalText(a.Arg) {
				c.found = "an aggregate of text"
			}
		}
		for _, col := range o.Columns {
			c.walk(col.Expr)
			if o.Distinct && c.literalText(col.Expr) {
				c.found = "DISTINCT"
			}
		}
		c.walk(o.Having)
		for _, k := range o.OrderBy {
			c.walk(k.Expr)
			if c.literalText(k.Expr) {
				c.found = "ORDER BY"
			}
		}
	}
	if c.found == "" {
		return nil
	}
	return dperr.New(dperr.Unsupported, "not supported: %s of text under collation_connection '%s', which post-processing of released values does not compare in "+
		"(it compares in utf8mb4_0900_bin, the default, utf8mb4_bin, utf8mb4_general_ci and utf8mb4_0900_ai_ci); "+
		"SET collation_connection = 'utf8mb4_0900_bin' or 'utf8mb4_general_ci' first", c.found, q.Collation)
}

// collationCheck walks the expressions of a query for checkCollation;
// found names the first comparison of literals' texts.
type collationCheck struct {
	q     *sqlrewrite.Query
	t     *catalog.Table
	found string
}

// walk looks for comparisons of literals' texts in e and its arguments.
func (c *collationCheck) walk(e *sqlrewrite.Expr) {
	if e == nil || c.found != "" {
		return
	}
	for _, a := range e.Args {
		c.walk(a)
	}
	if e.Kind != sqlrewrite.ExprOp && e.Kind != sqlrewrite.ExprFunc {
		return
	}
	literals, key := 0, false
	for _, a := range e.Args {
		if c.literalText(a) {
			literals++
		}
		key = key || c.keyText(a)
	}
	switch {
	case e.Op == "like":
		if len(e.Args) >= 2 && !c.keyText(e.Args[0]) && !c.keyText(e.Args[1]) {
			c.found = "LIKE"
		}
	case e.Op == "in":
		// IN compares the subject with each value as = does.
		if len(e.Args) > 0 && !c.keyText(e.Args[0]) && c.literalText(e.Args[0]) && literals >= 2 {
			c.found = "a comparison"
		}
	case comparisons[e.Op] || e.Op == "between" || e.Op == "greatest" || e.Op == "least":
		if !key && literals >= 2 {
			c.found = "a comparison"
		}
	}
}

// keyText reports whether e is a text key of a column's values, which
// compares in the column's collation.
func (c *collationCheck) keyText(e *sqlrewrite.Expr) bool {
	if e.Kind != sqlrewrite.ExprKey || e.Index >= len(c.q.Keys) {
		return false
	}
	k := c.q.Keys[e.Index]
	if k.Tiers != nil || k.Date != nil || k.Bucket != nil {
		return false
	}
	col, ok := c.t.Column(k.Column)
	return ok && col.Type == catalog.Text
}

// literalText reports whether e may be text in the connection's
// collation: a literal's, a tier's label, text made by CONCAT, CAST AS
// CHAR or another string function (textFuncs), a choice of one (IF,
// CASE, COALESCE, IFNULL, NULLIF, GREATEST, LEAST) and, in an outer
// query, an inner column or aggregate of one.
func (c *collationCheck) literalText(e *sqlrewrite.Expr) bool {
	if e == nil {
		return false
	}
	q := c.q
	anyOf := func(args []*sqlrewrite.Expr) bool {
		for _, a := range args {
			if c.literalText(a) {
				return true
			}
		}
		return false
	}
	switch e.Kind {
	case sqlrewrite.ExprConst:
		return e.Value.IsText && e.Value.Temporal == ""
	case sqlrewrite.ExprKey:
		return e.Index < len(q.Keys) && q.Keys[e.Index].Tiers != nil
	case sqlrewrite.ExprScalar:
		// The subquery's value: text of a literal, or of a key, which is
		// conservatively counted as a literal's here.
		if e.Index >= len(q.Scalars) {
			return false
		}
		sub := q.Scalars[e.Index].Query
		inner := collationCheck{q: sub}
		return len(sub.Columns) > 0 && (inner.literalText(sub.Columns[0].Expr) || containsKind(sub.Columns[0].Expr, sqlrewrite.ExprKey))
	case sqlrewrite.ExprWindow:
		if e.Index >= len(q.Windows) {
			return false
		}
		w := q.Windows[e.Index]
		return (w.Func == "min" || w.Func == "max") && c.literalText(w.Arg)
	case sqlrewrite.ExprColumn:
		return e.Index < len(q.Columns) && c.literalText(q.Columns[e.Index].Expr)
	case sqlrewrite.ExprOuterKey:
		if q.Outer == nil || e.Index >= len(q.Outer.Keys) || q.Outer.Keys[e.Index] >= len(q.Columns) {
			return false
		}
		return c.literalText(q.Columns[q.Outer.Keys[e.Index]].Expr)
	case sqlrewrite.ExprOuterAgg:
		if q.Outer == nil || e.Index >= len(q.Outer.Aggs) {
			return false
		}
		a := q.Outer.Aggs[e.Index]
		return (a.Func == "min" || a.Func == "max") && c.literalText(a.Arg)
	case sqlrewrite.ExprCase:
		for i, a := range e.Args {
			if (i%2 == 1 || e.HasElse && i == len(e.Args)-1) && c.literalText(a) {
				return true
			}
		}
		return false
	case sqlrewrite.ExprFunc:
		if textFuncs[e.Op] {
			return true
		}
		switch e.Op {
		case "coalesce", "ifnull", "greatest", "least":
			return anyOf(e.Args)
		case "if":
			return len(e.Args) == 3 && anyOf(e.Args[1:])
		case "nullif":
			return len(e.Args) > 0 && c.literalText(e.Args[0])
		}
	}
	return false
}

// containsKind reports whether e or one of its arguments is of kind k.
func containsKind(e *sqlrewrite.Expr, k sqlrewrite.ExprKind) bool {
	if e == nil {
		return false
	}
	if e.Kind == k {
		return true
	}
	for _, a := range e.Args {
		if containsKind(a, k) {
			return true
		}
	}
	return false
}
