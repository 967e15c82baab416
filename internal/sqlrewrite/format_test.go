package sqlrewrite_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// formatStatement prints a parsed statement deterministically, one fact per
// line, for the golden files.
func formatStatement(st sqlrewrite.Statement) string {
	var b strings.Builder
	switch s := st.(type) {
	case *sqlrewrite.Select:
		formatSelect(&b, s, "")
	case *sqlrewrite.Query:
		formatQuery(&b, s, "")
	case *sqlrewrite.Explain:
		b.WriteString("explain\n")
		if s.ZeroRow != "" {
			fmt.Fprintf(&b, "  zero-row probe of %s\n", s.ZeroRow)
		} else if s.Query != nil {
			formatQuery(&b, s.Query, "  ")
		} else {
			formatSelect(&b, s.Select, "  ")
		}
	case *sqlrewrite.SetVariables:
		for _, a := range s.Assignments {
			val := "DEFAULT"
			if !a.Default {
				val = formatValue(a.Value)
			}
			fmt.Fprintf(&b, "set @%s = %s\n", a.Name, val)
		}
		if s.Catalog != "" {
			b.WriteString("set: catalog engine\n")
		}
	case *sqlrewrite.ShowWarnings:
		what := "warnings"
		if s.Errors {
			what = "errors"
		}
		if s.Count {
			what = "count(*) " + what
		}
		fmt.Fprintf(&b, "show %s", what)
		if s.Limit != nil {
			fmt.Fprintf(&b, " offset=%d count=%d", s.Limit.Offset, s.Limit.Count)
		}
		b.WriteString("\n")
	case *sqlrewrite.Prepare:
		fmt.Fprintf(&b, "prepare %s sql=%q var=%q\n", s.Name, s.SQL, s.Var)
	case *sqlrewrite.ExecutePrepared:
		fmt.Fprintf(&b, "execute %s using %v\n", s.Name, s.Using)
	case *sqlrewrite.Deallocate:
		fmt.Fprintf(&b, "deallocate %s\n", s.Name)
	case *sqlrewrite.ShowGrants:
		b.WriteString("show grants")
		if s.For != "" {
			fmt.Fprintf(&b, " for %q", s.For)
		}
		b.WriteString("\n")
	case *sqlrewrite.Catalog:
		b.WriteString("catalog engine")
		if s.ZeroRow != "" {
			b.WriteString(" (zero-row probe)")
		}
		b.WriteString("\n")
	case *sqlrewrite.ConstantUnion:
		fmt.Fprintf(&b, "constant union (catalog engine may: %t)\n", s.CatalogMay)
		for _, c := range s.Columns {
			fmt.Fprintf(&b, "column %q: %s width=%d nullable=%t\n", c.Name, unionTypes[c.Type], c.Width, c.Nullable)
		}
		for _, r := range s.Rows {
			vals := make([]string, len(r))
			for j, v := range r {
				vals[j] = "NULL"
				if v != nil {
					vals[j] = strconv.Quote(v.(string))
				}
			}
			fmt.Fprintf(&b, "row %s\n", strings.Join(vals, ", "))
		}
	case *sqlrewrite.ConstantSelect:
		for _, it := range s.Items {
			fmt.Fprintf(&b, "constant %q: %s", it.Label, constKinds[it.Kind])
			switch it.Kind {
			case sqlrewrite.Literal:
				fmt.Fprintf(&b, " %s\n", formatValue(it.Value))
			case sqlrewrite.Expression:
				// Each reference as a value of its kind: 0.5 for a
				// number, 'it''s' for @dp_mechanism (quoting shown).
				values := make([]any, len(it.Refs))
				var refs []string
				for i, r := range it.Refs {
					values[i] = 0.5
					if r.Name == "dp_mechanism" {
						values[i] = "it's"
					}
					refs = append(refs, r.Label)
				}
				sql, err := it.SQL(values)
				if err != nil {
					sql = "error: " + err.Error()
				}
				fmt.Fprintf(&b, " %s (refs %s)\n", sql, strings.Join(refs, ", "))
			default:
				fmt.Fprintf(&b, " %s\n", it.Name)
			}
		}
	case *sqlrewrite.Use:
		fmt.Fprintf(&b, "use %s\n", s.Database)
	case *sqlrewrite.Kill:
		fmt.Fprintf(&b, "kill connection %d (query only: %t)\n", s.ConnectionID, s.Query)
	case *sqlrewrite.Empty:
		b.WriteString("empty\n")
	default:
		fmt.Fprintf(&b, "unknown statement %T\n", st)
	}
	return b.String()
}

var unionTypes = map[sqlrewrite.UnionType]string{
	sqlrewrite.UnionNull: "null", sqlrewrite.UnionInt: "bigint", sqlrewrite.UnionText: "varchar",
}

var constKinds = map[sqlrewrite.ConstKind]string{
	sqlrewrite.Literal: "literal", sqlrewrite.SystemVariable: "system-variable",
	sqlrewrite.UserVariable: "user-variable", sqlrewrite.Function: "function",
	sqlrewrite.Expression: "expression",
}

func formatSelect(b *strings.Builder, s *sqlrewrite.Select, indent string) {
	fmt.Fprintf(b, "%sselect %s\n", indent, s.Table)
	for _, it := range s.Items {
		fmt.Fprintf(b, "%sitem %q: %s\n", indent, it.Label, formatAggregate(it.Agg))
	}
	for _, c := range s.Where {
		fmt.Fprintf(b, "%swhere %s\n", indent, formatCondition(c))
	}
	if s.Boolean != nil {
		fmt.Fprintf(b, "%sboolean %s\n", indent, formatPredicate(s.Boolean))
	}
	if g := s.GroupBy; g != nil {
		fmt.Fprintf(b, "%sgroup by %s width=%s", indent, g.Column, formatNumber(g.Width))
		if g.Index {
			b.WriteString(" index")
		}
		b.WriteString("\n")
	}
}

// formatAggregate prints an aggregate: "count(*)", "avg(age)",
// "median(age) q=0.5", "regr_slope(income, age)", "bucket(age)", and a
// range count as "count(*) where age [18, 65) and sex in (1)".
func formatAggregate(a sqlrewrite.Aggregate) string {
	var s string
	switch a.Func {
	case sqlrewrite.CountRows:
		s = "count(*)"
	case sqlrewrite.Median, sqlrewrite.Percentile:
		s = fmt.Sprintf("%s(%s) q=%s", a.Func, a.Column, formatNumber(a.Quantile))
	case sqlrewrite.RegrSlope, sqlrewrite.RegrIntercept:
		s = fmt.Sprintf("%s(%s, %s)", a.Func, a.Column, a.Column2)
	default:
		s = fmt.Sprintf("%s(%s)", a.Func, a.Column)
	}
	for i, c := range a.Where {
		sep := " and "
		if i == 0 {
			sep = " where "
		}
		s += sep + formatCondition(c)
	}
	if a.Boolean != nil {
		s += " where " + formatPredicate(a.Boolean)
	}
	return s
}

// formatPredicate prints a predicate in the syntax fetch-sql reads:
// and(...), or(...) and not(...) around conditions printed by
// formatCondition, arguments separated by ", ".
func formatPredicate(p *sqlrewrite.Predicate) string {
	switch p.Op {
	case sqlrewrite.Leaf:
		return formatCondition(*p.Leaf)
	case sqlrewrite.Never:
		return "never"
	}
	args := make([]string, len(p.Args))
	for i, a := range p.Args {
		args[i] = formatPredicate(a)
	}
	return predicateOps[p.Op] + "(" + strings.Join(args, ", ") + ")"
}

var predicateOps = map[sqlrewrite.PredicateOp]string{sqlrewrite.And: "and", sqlrewrite.Or: "or", sqlrewrite.Not: "not"}

// formatCondition prints a condition in the syntax fetch-sql reads:
// "age [18, 65)" (-inf and inf for a missing end) or "state in ("CA", "NY")".
func formatCondition(c sqlrewrite.Condition) string {
	text := ""
	if c.Text {
		text = " [text]"
	}
	switch {
	case c.IsNull && c.Complement:
		return c.Column + " is not null" + text
	case c.IsNull:
		return c.Column + " is null" + text
	case c.Complement:
		plain := c
		plain.Complement, plain.Text = false, false
		return "not " + formatCondition(plain) + " or null" + text
	}
	if c.Cell != nil {
		return fmt.Sprintf("%s in date cell %d", c.Column, c.Cell.Index)
	}
	if c.Scalar != nil {
		return sqlrewrite.DescribeScalarBound(c.Column, c.Temporal, c.Scalar)
	}
	if c.Function != nil {
		plain := c
		plain.Function, plain.Text = nil, false
		return fmt.Sprintf("%s (on PostgreSQL %s)%s", sqlrewrite.DescribeTextFunction(c.Column, *c.Function), formatCondition(plain), text)
	}
	if c.Like != nil && c.LikeCase != "" {
		return fmt.Sprintf("%s(%s) like %q%s", c.LikeCase, c.Column, *c.Like, text)
	}
	if c.Like != nil {
		return fmt.Sprintf("%s like %q%s", c.Column, *c.Like, text)
	}
	if r := c.Range; r != nil {
		lo, hi, open, closeB := "-inf", "inf", "(", ")"
		num := func(x float64, _ int32) string { return formatNumber(x) }
		if c.Temporal != "" {
			col := catalog.Column{Type: c.Temporal}
			num = col.FormatTemporalMicros
		}
		if r.HasLower {
			lo = num(r.Lower, r.LowerMicros)
			if !r.LowerOpen {
				open = "["
			}
		}
		if r.HasUpper {
			hi = num(r.Upper, r.UpperMicros)
			if !r.UpperOpen {
				closeB = "]"
			}
		}
		return fmt.Sprintf("%s %s%s, %s%s", c.Column, open, lo, hi, closeB)
	}
	vals := make([]string, len(c.In))
	for i, v := range c.In {
		vals[i] = formatValue(v)
	}
	return fmt.Sprintf("%s in (%s)", c.Column, strings.Join(vals, ", "))
}

func formatValue(v sqlrewrite.Value) string {
	switch {
	case v.Null:
		return "NULL"
	case v.IsText:
		return strconv.Quote(v.Str)
	}
	return formatNumber(v.Num)
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// formatError prints a client-visible error as its MySQL code, SQLSTATE and
// kind, then the message on a second line.
func formatError(err error) string {
	var e *dperr.Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("error (not a dperr error): %v\n", err)
	}
	code, state := e.SQLCode()
	return fmt.Sprintf("error %d (%s): %s\n%s\n", code, state, e.Kind, e.Msg)
}
