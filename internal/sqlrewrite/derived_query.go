package sqlrewrite

import (
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
	switch {
	case s.GroupBy != nil || s.Having != nil || containsNode(s.Fields, isAggregate) || s.OrderBy != nil && containsNode(s.OrderBy, isAggregate):
		return nil, true, refuseQuery("aggregates over the rows of an aggregate subquery (the outer query may only compute expressions of its columns, filter them with WHERE, ORDER BY, LIMIT and DISTINCT)")
	case len(s.WindowSpecs) > 0:
		return nil, true, refuseQuery("WINDOW")
	}
	if err := flatten(inner); err != nil {
		return nil, true, err
	}
	in, err := p.query(inner)
	if err != nil {
		return nil, true, err
	}
	columns := map[string]*Expr{}
	for i, c := range in.Columns {
		name := c.Label
		if i < len(names) {
			name = names[i]
		}
		columns[strings.ToLower(name)] = c.Expr
	}
	out := &Query{Base: in.Base, Keys: in.Keys, Listing: in.Listing, Having: in.Having, OrderBy: in.OrderBy, Limit: in.Limit, Distinct: s.Distinct}
	if in.Distinct && !s.Distinct {
		return nil, true, refuseQuery("DISTINCT inside an aggregate subquery with an outer query that is not DISTINCT")
	}
	if in.Limit != nil && (s.Where != nil || s.OrderBy != nil) {
		return nil, true, refuseQuery("WHERE or ORDER BY outside an aggregate subquery with LIMIT (put them inside)")
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
