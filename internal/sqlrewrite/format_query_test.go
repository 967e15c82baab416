package sqlrewrite_test

import (
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// formatQuery prints a Query for the golden files: the base aggregates,
// the keys with their domains, each output column's expression, and the
// row clauses.
func formatQuery(b *strings.Builder, q *sqlrewrite.Query, indent string) {
	if q.FromLess != "" {
		fmt.Fprintf(b, "%sconstants without FROM (post-processing; catalog engine text %q)", indent, q.FromLess)
	} else if q.Base.Table == "" {
		fmt.Fprintf(b, "%squery without FROM", indent)
	} else {
		fmt.Fprintf(b, "%squery on %s", indent, q.Base.Table)
	}
	if q.Listing {
		b.WriteString(" (listing of declared values)")
	}
	b.WriteString("\n")
	for i, sc := range q.Scalars {
		fmt.Fprintf(b, "%s  scalar#%d %s =\n", indent, i+1, sc.Text)
		formatQuery(b, sc.Query, indent+"    ")
	}
	for i, it := range q.Base.Items {
		fmt.Fprintf(b, "%s  agg#%d %s = %s\n", indent, i+1, it.Label, formatAggregate(it.Agg))
	}
	for _, c := range q.Base.Where {
		fmt.Fprintf(b, "%s  where %s\n", indent, formatCondition(c))
	}
	if q.Base.Boolean != nil {
		fmt.Fprintf(b, "%s  where %s\n", indent, formatPredicate(q.Base.Boolean))
	}
	for i, k := range q.Keys {
		vals := make([]string, len(k.Values))
		for j, v := range k.Values {
			vals[j] = formatValue(v)
		}
		if len(vals) > 12 {
			vals = append(vals[:5], fmt.Sprintf("… (%d values) …", len(k.Values)), vals[len(vals)-1])
		}
		name := k.Column
		if k.Tiers != nil {
			name = fmt.Sprintf("tiers(%s)", k.Tiers.Spelling)
		}
		if k.Date != nil {
			name = fmt.Sprintf("date(%s)", k.Date.Spelling)
		}
		if k.Bucket != nil {
			name = fmt.Sprintf("bucket(%s, %s, index=%t, origin=%s)", k.Column, formatNumber(k.Bucket.Width), k.Bucket.Index, formatNumber(k.Bucket.Origin))
		}
		if k.Private {
			fmt.Fprintf(b, "%s  key#%d %s chosen by partition selection\n", indent, i+1, name)
			continue
		}
		fmt.Fprintf(b, "%s  key#%d %s in {%s}\n", indent, i+1, name, strings.Join(vals, ", "))
	}
	for i, w := range q.Windows {
		arg := "*"
		if w.Arg != nil {
			arg = formatExpr(w.Arg)
		}
		var parts, order []string
		for _, p := range w.PartitionBy {
			parts = append(parts, formatExpr(p))
		}
		for _, o := range w.OrderBy {
			dir := " asc"
			if o.Desc {
				dir = " desc"
			}
			order = append(order, formatExpr(o.Expr)+dir)
		}
		fmt.Fprintf(b, "%s  window#%d %s(%s) partition by [%s] order by [%s] rows=%t\n", indent, i+1, w.Func, arg,
			strings.Join(parts, ", "), strings.Join(order, ", "), w.Rows)
	}
	for _, c := range q.Columns {
		fmt.Fprintf(b, "%s  column %q = %s\n", indent, c.Label, formatExpr(c.Expr))
	}
	if q.Having != nil {
		fmt.Fprintf(b, "%s  having %s\n", indent, formatExpr(q.Having))
	}
	for _, o := range q.OrderBy {
		dir := "asc"
		if o.Desc {
			dir = "desc"
		}
		fmt.Fprintf(b, "%s  order by %s %s\n", indent, formatExpr(o.Expr), dir)
	}
	if q.Limit != nil {
		fmt.Fprintf(b, "%s  limit %d offset %d\n", indent, q.Limit.Count, q.Limit.Offset)
	}
	if q.Distinct {
		fmt.Fprintf(b, "%s  distinct\n", indent)
	}
	if q.Rollup {
		fmt.Fprintf(b, "%s  with rollup\n", indent)
	}
	if o := q.Outer; o != nil {
		fmt.Fprintf(b, "%s  outer query over the columns:\n", indent)
		for _, k := range o.Keys {
			fmt.Fprintf(b, "%s    group by col#%d\n", indent, k+1)
		}
		for i, a := range o.Aggs {
			arg := "*"
			if a.Arg != nil {
				arg = formatExpr(a.Arg)
			}
			if a.Distinct {
				arg = "distinct " + arg
			}
			fmt.Fprintf(b, "%s    outer#%d %s(%s)\n", indent, i+1, a.Func, arg)
		}
		for _, c := range o.Columns {
			fmt.Fprintf(b, "%s    column %q = %s\n", indent, c.Label, formatExpr(c.Expr))
		}
		if o.Having != nil {
			fmt.Fprintf(b, "%s    having %s\n", indent, formatExpr(o.Having))
		}
		for _, ok := range o.OrderBy {
			dir := "asc"
			if ok.Desc {
				dir = "desc"
			}
			fmt.Fprintf(b, "%s    order by %s %s\n", indent, formatExpr(ok.Expr), dir)
		}
		if o.Limit != nil {
			fmt.Fprintf(b, "%s    limit %d offset %d\n", indent, o.Limit.Count, o.Limit.Offset)
		}
		if o.Distinct {
			fmt.Fprintf(b, "%s    distinct\n", indent)
		}
	}
}

func formatExpr(e *sqlrewrite.Expr) string {
	switch e.Kind {
	case sqlrewrite.ExprConst:
		return formatValue(e.Value)
	case sqlrewrite.ExprAgg:
		return fmt.Sprintf("agg#%d", e.Index+1)
	case sqlrewrite.ExprScalar:
		return fmt.Sprintf("scalar#%d", e.Index+1)
	case sqlrewrite.ExprKey:
		return fmt.Sprintf("key#%d", e.Index+1)
	case sqlrewrite.ExprWindow:
		return fmt.Sprintf("window#%d", e.Index+1)
	case sqlrewrite.ExprColumn:
		return fmt.Sprintf("col#%d", e.Index+1)
	case sqlrewrite.ExprOuterKey:
		return fmt.Sprintf("outerkey#%d", e.Index+1)
	case sqlrewrite.ExprOuterAgg:
		return fmt.Sprintf("outer#%d", e.Index+1)
	case sqlrewrite.ExprNoRow:
		return fmt.Sprintf("%s over no row (%s)", formatValue(e.Value), e.Op)
	case sqlrewrite.ExprConstAgg:
		return fmt.Sprintf("%s over rows (%s)", formatValue(e.Value), e.Op)
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = formatExpr(a)
	}
	switch {
	case e.Kind == sqlrewrite.ExprCase:
		return fmt.Sprintf("case(%s; else=%t)", strings.Join(args, ", "), e.HasElse)
	case e.Kind == sqlrewrite.ExprFunc || len(args) != 2:
		return e.Op + "(" + strings.Join(args, ", ") + ")"
	}
	return "(" + strings.Join(args, " "+e.Op+" ") + ")"
}
