package sqlrewrite

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// flatten rewrites SELECT … FROM (SELECT cols FROM t [WHERE w]) AS s …
// into SELECT … FROM t WHERE w AND …, in place, innermost first: the form
// BI tools wrap around a table (Power BI's SELECT … FROM (SELECT * FROM t)
// t1, projections with aliases). The derived table may only project
// columns (SELECT *, or columns with or without aliases) and filter: it
// is a renaming of the rows of one table, so the flattened statement has
// exactly the meaning of the original. Anything else in it (aggregates,
// expressions, joins, GROUP BY, ORDER BY, LIMIT, DISTINCT) is refused.
func flatten(s *ast.SelectStmt) error {
	if s.From == nil || s.From.TableRefs == nil || s.From.TableRefs.Right != nil {
		return nil
	}
	ts, ok := s.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil
	}
	inner, ok := ts.Source.(*ast.SelectStmt)
	if !ok {
		return nil
	}
	if err := checkDerived(inner); err != nil {
		return err
	}
	if err := flatten(inner); err != nil {
		return err
	}
	r := &renamer{derived: ts.AsName.L, names: map[string]*ast.ColumnName{}}
	for _, f := range inner.Fields.Fields {
		if f.WildCard != nil {
			r.star = true
			continue
		}
		c := unparen(f.Expr).(*ast.ColumnNameExpr).Name
		name := c.Name.L
		if f.AsName.O != "" {
			name = f.AsName.L
		}
		r.names[name] = c
	}
	for _, f := range s.Fields.Fields {
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && f.AsName.O == "" {
			f.AsName = c.Name.Name // the output keeps the derived table's column name
		}
		if f.Expr != nil {
			f.Expr.Accept(r)
		}
		if f.WildCard != nil && f.WildCard.Table.L == r.derived {
			f.WildCard.Table = ast.CIStr{}
		}
	}
	for _, n := range []ast.Node{exprOrNil(s.Where), groupOrNil(s.GroupBy), havingOrNil(s.Having), orderOrNil(s.OrderBy)} {
		if n != nil {
			n.Accept(r)
		}
	}
	s.From = inner.From
	switch {
	case inner.Where != nil && s.Where != nil:
		s.Where = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: &ast.ParenthesesExpr{Expr: inner.Where}, R: &ast.ParenthesesExpr{Expr: s.Where}}
	case inner.Where != nil:
		s.Where = inner.Where
	}
	return nil
}

func exprOrNil(e ast.ExprNode) ast.Node {
	if e == nil {
		return nil
	}
	return e
}

func groupOrNil(g *ast.GroupByClause) ast.Node {
	if g == nil {
		return nil
	}
	return g
}

func havingOrNil(h *ast.HavingClause) ast.Node {
	if h == nil {
		return nil
	}
	return h
}

func orderOrNil(o *ast.OrderByClause) ast.Node {
	if o == nil {
		return nil
	}
	return o
}

// checkDerived refuses a derived table that does more than project
// columns of one table and filter its rows.
func checkDerived(inner *ast.SelectStmt) error {
	const what = "a derived table (subquery in FROM) other than SELECT columns FROM t [WHERE ...]"
	switch {
	case inner.From == nil:
		return refuseQuery("%s: it has no FROM", what)
	case inner.Kind != ast.SelectStmtKindSelect, inner.With != nil:
		return refuseQuery("%s", what)
	case inner.GroupBy != nil || inner.Having != nil:
		return refuseQuery("%s: aggregates inside the subquery", what)
	case inner.OrderBy != nil || inner.Limit != nil:
		return refuseRows("ORDER BY or LIMIT inside a derived table")
	case inner.Distinct:
		return refuseRows("DISTINCT inside a derived table")
	case len(inner.WindowSpecs) > 0:
		return refuseRows("WINDOW inside a derived table")
	}
	if inner.From.TableRefs.Right != nil {
		return refuseQuery("joins")
	}
	for _, f := range inner.Fields.Fields {
		if f.WildCard != nil {
			continue
		}
		if _, ok := unparen(f.Expr).(*ast.ColumnNameExpr); !ok {
			if containsNode(f.Expr, isAggregate) {
				return refuseQuery("%s: aggregates inside the subquery", what)
			}
			return refuseQuery("%s: the expression %s inside the subquery (aggregate expressions of columns are not supported)", what, restore(f.Expr))
		}
	}
	return nil
}

// renamer rewrites the outer statement's column references to the
// derived table's columns: a name the derived table defines becomes its
// column; with SELECT * other names pass through; the derived table's
// alias as a qualifier is dropped.
type renamer struct {
	derived string
	names   map[string]*ast.ColumnName
	star    bool
}

func (r *renamer) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	c, ok := n.(*ast.ColumnNameExpr)
	if !ok {
		return n, false
	}
	if c.Name.Table.L != "" && (c.Name.Table.L != r.derived || c.Name.Schema.L != "") {
		return n, true
	}
	if to, ok := r.names[c.Name.Name.L]; ok {
		c.Name = &ast.ColumnName{Table: to.Table, Name: to.Name}
		return n, true
	}
	if c.Name.Table.L != "" && r.star {
		c.Name = &ast.ColumnName{Name: c.Name.Name}
	}
	return n, true
}

func (r *renamer) Leave(n ast.Node) (ast.Node, bool) { return n, true }
