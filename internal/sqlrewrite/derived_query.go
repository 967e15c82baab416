package sqlrewrite

import (
	"reflect"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// derivedQuery answers an outer SELECT that only post-processes the
// released rows of an aggregate query written as a derived table or a
// common table expression:
//
//	SELECT race, n FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) AS t ORDER BY n DESC
//	WITH t AS (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) SELECT race, n FROM t ORDER BY n DESC
//
// The inner query becomes a Query; the outer select list, WHERE (which
// filters released rows, as HAVING does), ORDER BY, LIMIT and DISTINCT
// are converted over the inner output columns and replace or join the
// inner ones: post-processing of released values, so the statement costs
// what the inner query costs. A CTE that only projects and filters a
// table is turned into a derived table (then flattened). handled is false
// when the statement has neither form.
func (p *Parser) derivedQuery(s *ast.SelectStmt) (st Statement, handled bool, err error) {
	inner, alias, names, err := p.derivedSource(s)
	if inner == nil || err != nil {
		return nil, err != nil, err
	}
	if !containsNode(inner.Fields, isAggregate) && inner.GroupBy == nil {
		// A projection: let flatten handle it as a derived table.
		s.From.TableRefs.Left.(*ast.TableSource).Source = inner
		s.With = nil
		return nil, false, nil
	}
	if len(s.WindowSpecs) > 0 {
		return nil, true, refuseQuery("WINDOW")
	}
	if err := flatten(inner); err != nil {
		return nil, true, err
	}
	in, err := p.query(inner)
	if err != nil {
		return nil, true, err
	}
	if s.GroupBy != nil || s.Having != nil || containsNode(s.Fields, isAggregate) || s.OrderBy != nil && containsNode(s.OrderBy, isAggregate) {
		if in.Listing {
			return nil, true, refuseQuery("aggregates over a listing of declared values")
		}
		if err := outerQuery(s, in, alias, names); err != nil {
			return nil, true, err
		}
		return in, true, nil
	}
	columns := map[string]*Expr{}
	for i, c := range in.Columns {
		name := c.Label
		if i < len(names) {
			name = names[i]
		}
		columns[strings.ToLower(name)] = c.Expr
	}
	// The inner query's rows, WITH ROLLUP's super-aggregates and its window
	// functions' values included, are the derived table's rows.
	out := &Query{Base: in.Base, Keys: in.Keys, Listing: in.Listing, Having: in.Having, OrderBy: in.OrderBy, Limit: in.Limit, Distinct: s.Distinct,
		Rollup: in.Rollup, Windows: in.Windows, Scalars: in.Scalars}
	if in.Distinct && !s.Distinct {
		return nil, true, refuseQuery("DISTINCT inside an aggregate subquery with an outer query that is not DISTINCT")
	}
	if in.Limit != nil && (s.Where != nil || s.OrderBy != nil || s.Limit != nil || s.Distinct) {
		// The one query applies them before its LIMIT, which is the inner one.
		return nil, true, refuseQuery("WHERE, ORDER BY, LIMIT or DISTINCT outside an aggregate subquery with LIMIT (put them inside)")
	}
	qb := &queryBuilder{q: out, fields: s.Fields.Fields, derived: columns, derivedName: alias}
	for _, f := range qb.fields {
		if f.WildCard != nil {
			if f.WildCard.Table.L != "" && f.WildCard.Table.L != alias {
				return nil, true, dperr.New(dperr.UnknownTable, "Unknown table '%s'", f.WildCard.Table.O)
			}
			for i, c := range in.Columns {
				label := c.Label
				if i < len(names) {
					label = names[i]
				}
				out.Columns = append(out.Columns, OutputColumn{Label: label, Expr: c.Expr})
			}
			continue
		}
		e, err := qb.expr(f.Expr, "field list")
		if err != nil {
			return nil, true, err
		}
		name := label(f)
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && f.AsName.O == "" {
			name = c.Name.Name.O
		}
		out.Columns = append(out.Columns, OutputColumn{Label: name, Expr: e})
	}
	if s.Where != nil && len(in.Windows) > 0 {
		// The WHERE would run as a HAVING, before the window functions.
		return nil, true, refuseQuery("WHERE outside an aggregate subquery with window functions (filter with HAVING inside, or order and limit outside)")
	}
	if s.Where != nil {
		w, err := qb.exprIn(s.Where, "where clause", false)
		if err != nil {
			return nil, true, err
		}
		if out.Having != nil {
			w = &Expr{Kind: ExprOp, Op: "and", Args: []*Expr{out.Having, w}}
		}
		out.Having = w
	}
	if s.OrderBy != nil {
		out.OrderBy = nil
		for _, it := range s.OrderBy.Items {
			e, err := qb.named(it.Expr, "order clause")
			if err != nil {
				return nil, true, err
			}
			out.OrderBy = append(out.OrderBy, OrderKey{Expr: e, Desc: it.Desc})
		}
	}
	if s.Limit != nil {
		if out.Limit, err = limitOf(s.Limit); err != nil {
			return nil, true, err
		}
	}
	return out, true, nil
}

// outerQuery converts an outer query that aggregates the rows of the
// aggregate query in (Outer): its GROUP BY names output columns of in (by
// name, select alias or position), its aggregates take expressions of
// them, and outside aggregates only the GROUP BY columns may appear, as
// MySQL's ONLY_FULL_GROUP_BY requires. The outer WHERE filters in's rows
// (as in's HAVING), before they are aggregated.
func outerQuery(s *ast.SelectStmt, in *Query, alias string, names []string) error {
	o := &Outer{Distinct: s.Distinct}
	columns := map[string]*Expr{}
	labels := make([]string, len(in.Columns))
	for i, c := range in.Columns {
		labels[i] = c.Label
		if i < len(names) {
			labels[i] = names[i]
		}
		columns[strings.ToLower(labels[i])] = &Expr{Kind: ExprColumn, Index: i}
	}
	scratch := &Query{Base: &Select{}}
	qb := &queryBuilder{q: scratch, fields: s.Fields.Fields, derived: columns, derivedName: alias, outer: o}
	if s.Where != nil {
		w, err := qb.exprIn(s.Where, "where clause", false)
		if err != nil {
			return err
		}
		if containsKind(w, ExprOuterAgg) {
			return refuseQuery("an aggregate in WHERE (use HAVING)")
		}
		if w, err = innerRow(w, in); err != nil {
			return err
		}
		if in.Limit != nil {
			return refuseQuery("WHERE outside an aggregate subquery with LIMIT (put it inside)")
		}
		if in.Having != nil {
			w = &Expr{Kind: ExprOp, Op: "and", Args: []*Expr{in.Having, w}}
		}
		in.Having = w
	}
	if g := s.GroupBy; g != nil {
		if g.Rollup {
			return refuseQuery("WITH ROLLUP")
		}
		for _, it := range g.Items {
			e := unparen(it.Expr)
			switch x := e.(type) {
			case *ast.PositionExpr:
				if x.P != nil || x.N < 1 || x.N > len(s.Fields.Fields) {
					return dperr.New(dperr.UnknownColumn, "Unknown column '%d' in 'group statement'", x.N)
				}
				e = unparen(s.Fields.Fields[x.N-1].Expr)
			case *ast.ColumnNameExpr:
				if _, inner := columns[x.Name.Name.L]; !inner && x.Name.Table.L == "" {
					for _, f := range s.Fields.Fields {
						if f.AsName.L == x.Name.Name.L {
							e = unparen(f.Expr)
						}
					}
				}
			}
			k, err := qb.exprIn(e, "group statement", false)
			if err != nil {
				return err
			}
			if k.Kind != ExprColumn {
				return refuseQuery("GROUP BY %s over the rows of an aggregate subquery (group by its columns)", restore(it.Expr))
			}
			if !slices.Contains(o.Keys, k.Index) {
				o.Keys = append(o.Keys, k.Index)
			}
		}
	}
	grouped := func(e *Expr, err error) (*Expr, error) {
		if err != nil {
			return nil, err
		}
		return outerKeys(e, o, labels)
	}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			return refuseQuery("SELECT * with aggregates over the rows of an aggregate subquery")
		}
		e, err := grouped(qb.expr(f.Expr, "field list"))
		if err != nil {
			return err
		}
		name := label(f)
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && f.AsName.O == "" {
			name = c.Name.Name.O
		}
		scratch.Columns = append(scratch.Columns, OutputColumn{Label: name, Expr: e})
	}
	o.Columns = scratch.Columns
	var err error
	if s.Having != nil {
		if o.Having, err = grouped(qb.named(s.Having.Expr, "having clause")); err != nil {
			return err
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			e, err := grouped(qb.named(it.Expr, "order clause"))
			if err != nil {
				return err
			}
			o.OrderBy = append(o.OrderBy, OrderKey{Expr: e, Desc: it.Desc})
		}
	}
	if s.Limit != nil {
		if o.Limit, err = limitOf(s.Limit); err != nil {
			return err
		}
	}
	in.Outer = o
	return nil
}

// outerAggregate converts an aggregate of an outer query over the derived
// rows, adding it to the Outer once.
func (qb *queryBuilder) outerAggregate(a *ast.AggregateFuncExpr, clause string) (*Expr, error) {
	name := strings.ToLower(a.F)
	switch name {
	case "std", "stddev":
		name = "stddev_pop"
	case "variance":
		name = "var_pop"
	}
	switch {
	case !slices.Contains([]string{"count", "sum", "avg", "min", "max", "stddev_pop", "stddev_samp", "var_pop", "var_samp"}, name):
		return nil, refuseQuery("%s over the rows of an aggregate subquery (they take COUNT, SUM, AVG, MIN, MAX, STDDEV and VARIANCE)", strings.ToUpper(a.F))
	case len(a.Args) != 1:
		return nil, refuseQuery("%s with %d arguments", strings.ToUpper(a.F), len(a.Args))
	}
	agg := OuterAgg{Func: name, Distinct: a.Distinct}
	if !(name == "count" && isStar(a.Args[0])) {
		arg, err := qb.exprIn(a.Args[0], clause, false)
		if err != nil {
			return nil, err
		}
		if containsKind(arg, ExprOuterAgg) {
			return nil, refuseQuery("an aggregate of an aggregate over the rows of an aggregate subquery")
		}
		agg.Arg = arg
	}
	for i, have := range qb.outer.Aggs {
		if reflect.DeepEqual(have, agg) {
			return &Expr{Kind: ExprOuterAgg, Index: i}, nil
		}
	}
	qb.outer.Aggs = append(qb.outer.Aggs, agg)
	return &Expr{Kind: ExprOuterAgg, Index: len(qb.outer.Aggs) - 1}, nil
}

// outerKeys returns e with each inner column outside an aggregate, which
// must be a GROUP BY column of o, read as that key (ExprOuterKey).
func outerKeys(e *Expr, o *Outer, labels []string) (*Expr, error) {
	if e.Kind == ExprColumn {
		k := slices.Index(o.Keys, e.Index)
		if k < 0 {
			return nil, refuseQuery("the column %s of the aggregate subquery outside an aggregate and not in the outer GROUP BY", labels[e.Index])
		}
		return &Expr{Kind: ExprOuterKey, Index: k}, nil
	}
	out := *e
	out.Args = make([]*Expr, len(e.Args))
	for i, a := range e.Args {
		x, err := outerKeys(a, o, labels)
		if err != nil {
			return nil, err
		}
		out.Args[i] = x
	}
	return &out, nil
}

// innerRow returns e, an expression of the inner output columns
// (ExprColumn), as an expression of in's released row (its columns'
// expressions), for the outer WHERE that filters them.
func innerRow(e *Expr, in *Query) (*Expr, error) {
	if e.Kind == ExprColumn {
		x := in.Columns[e.Index].Expr
		if containsKind(x, ExprWindow) {
			return nil, refuseQuery("WHERE on a window function's column of an aggregate subquery")
		}
		return x, nil
	}
	out := *e
	out.Args = make([]*Expr, len(e.Args))
	for i, a := range e.Args {
		x, err := innerRow(a, in)
		if err != nil {
			return nil, err
		}
		out.Args[i] = x
	}
	return &out, nil
}

// containsKind reports whether e has a node of kind k.
func containsKind(e *Expr, k ExprKind) bool {
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

// derivedSource returns the inner SELECT of FROM (SELECT …) AS alias or
// of WITH alias AS (SELECT …) SELECT … FROM alias, with the column names
// the CTE declares, if any; inner is nil for any other FROM.
func (p *Parser) derivedSource(s *ast.SelectStmt) (inner *ast.SelectStmt, alias string, names []string, err error) {
	if s.From == nil || s.From.TableRefs == nil || s.From.TableRefs.Right != nil {
		return nil, "", nil, nil
	}
	ts, ok := s.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, "", nil, nil
	}
	if s.With == nil {
		inner, ok := ts.Source.(*ast.SelectStmt)
		if !ok || !containsNode(inner.Fields, isAggregate) && inner.GroupBy == nil {
			return nil, "", nil, nil
		}
		return inner, ts.AsName.L, nil, nil
	}
	w := s.With
	tn, isName := ts.Source.(*ast.TableName)
	switch {
	case w.IsRecursive:
		return nil, "", nil, refuseQuery("WITH RECURSIVE")
	case len(w.CTEs) != 1:
		return nil, "", nil, refuseQuery("WITH with more than one common table expression")
	case !isName || tn.Schema.L != "" || tn.Name.L != w.CTEs[0].Name.L:
		return nil, "", nil, refuseQuery("WITH whose query does not read its common table expression alone")
	}
	cte := w.CTEs[0]
	inner, ok = cte.Query.Query.(*ast.SelectStmt)
	if !ok {
		return nil, "", nil, refuseQuery("WITH of a UNION")
	}
	for _, n := range cte.ColNameList {
		names = append(names, n.O)
	}
	alias = cte.Name.L
	if ts.AsName.L != "" {
		alias = ts.AsName.L
	}
	return inner, alias, names, nil
}

// derivedColumn resolves a column reference of an outer query to the
// inner query's output column.
func (qb *queryBuilder) derivedColumn(c *ast.ColumnNameExpr, clause string) (*Expr, error) {
	if (c.Name.Table.L == "" || c.Name.Table.L == qb.derivedName) && c.Name.Schema.L == "" {
		if e, ok := qb.derived[c.Name.Name.L]; ok {
			return e, nil
		}
	}
	return nil, unknownColumn(c.Name, clause)
}
