package sqlrewrite

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// flatten rewrites SELECT … FROM (SELECT cols FROM t [WHERE w]) AS s …
// into SELECT … FROM t WHERE w AND …, in place, innermost first: the form
// BI tools wrap around a table (Power BI's SELECT … FROM (SELECT * FROM t)
// t1, projections with aliases, Superset's virtual datasets and
// Metabase's nested questions with computed columns). The derived table
// may only project (SELECT *, columns, and row expressions of columns,
// with or without aliases) and filter: it maps each row of one table to
// one row, so the flattened statement, in which every reference to a
// derived column is replaced by that column's expression, has exactly the
// meaning of the original, and the planner vets it as if the client had
// written it flat. Anything else in it (aggregates, window functions,
// subqueries and variable assignments in a column, joins, GROUP BY, ORDER
// BY, LIMIT, DISTINCT, two columns of one name) is refused.
//
// The inlined expressions are shared, not copied, between the places
// that reference them: nothing after flatten changes the AST in place.
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
	r := &renamer{derived: ts.AsName.L, names: map[string]ast.ExprNode{}, from: innerTableName(inner)}
	computed := false
	var aliases []string
	for _, f := range inner.Fields.Fields {
		if f.WildCard != nil {
			r.star = true
			continue
		}
		var name string
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok {
			name = c.Name.Name.L
		} else {
			computed = true
			name = strings.ToLower(fieldText(f)) // MySQL names an unaliased expression by its text
		}
		if f.AsName.O != "" {
			name = f.AsName.L
		}
		if name == "" {
			continue
		}
		if _, dup := r.names[name]; dup {
			return refuseQuery("a derived table with two columns named %s (MySQL error 1060, duplicate column name)", name)
		}
		r.names[name] = f.Expr
	}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil && computed {
			return refuseQuery("SELECT * over a derived table with computed columns (name the columns in the select list)")
		}
		if f.AsName.O != "" {
			aliases = append(aliases, f.AsName.L)
		}
	}
	r.selectAliases = aliases
	for _, f := range s.Fields.Fields {
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && f.AsName.O == "" {
			f.AsName = c.Name.Name // the output keeps the derived table's column name
		}
		if f.Expr != nil {
			f.Expr = r.rename(f.Expr)
		}
		if f.WildCard != nil && f.WildCard.Table.L == r.derived {
			f.WildCard.Table = ast.CIStr{}
		}
	}
	if s.Where != nil {
		s.Where = r.rename(s.Where)
	}
	// MySQL resolves an unqualified name in GROUP BY to a FROM column
	// first; in HAVING to a GROUP BY column, then a select-list alias; in
	// ORDER BY to a select-list alias first.
	var grouped []string
	if s.GroupBy != nil {
		for _, it := range s.GroupBy.Items {
			if c, ok := unparen(it.Expr).(*ast.ColumnNameExpr); ok && c.Name.Table.L == "" {
				grouped = append(grouped, c.Name.Name.L)
			}
		}
		r.aliasesVisible = true
		s.GroupBy.Accept(r)
	}
	if s.Having != nil {
		r.aliases = slices.DeleteFunc(slices.Clone(aliases), func(a string) bool { return slices.Contains(grouped, a) })
		s.Having.Accept(r)
	}
	if s.OrderBy != nil {
		r.aliases = aliases
		s.OrderBy.Accept(r)
	}
	if r.err != nil {
		return r.err
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

// checkDerived refuses a derived table that does more than project
// columns of one table and filter its rows.
func checkDerived(inner *ast.SelectStmt) error {
	const what = "a derived table (subquery in FROM) other than SELECT columns and row expressions FROM t [WHERE ...]"
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
		switch {
		case f.WildCard != nil:
		case containsNode(f.Expr, isWindowFunction):
			return refuseRows("a window function inside a derived table")
		case containsNode(f.Expr, isAggregate):
			return refuseQuery("%s: aggregates inside the subquery", what)
		case containsNode(f.Expr, isSubqueryOrAssignment):
			return refuseQuery("%s: the column %s of the subquery (its columns may be columns and row expressions of them, without subqueries or variable assignments)", what, restore(f.Expr))
		}
	}
	return nil
}

func isWindowFunction(n ast.Node) bool {
	_, ok := n.(*ast.WindowFuncExpr)
	return ok
}

// isSubqueryOrAssignment matches what a derived column's expression
// cannot carry into the places that reference it: a subquery (its
// references would change scope) and @v := x (it would run once per
// reference).
func isSubqueryOrAssignment(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return true
	case *ast.VariableExpr:
		return n.Value != nil
	}
	return false
}

// renamer rewrites the outer statement's column references to the
// derived table's columns: a name the derived table defines becomes its
// column, or its expression in parentheses; with SELECT * other names
// pass through; the derived table's alias as a qualifier is dropped. In
// HAVING and ORDER BY, an unqualified name that is one of the outer select
// list's aliases is left to name that select item.
type renamer struct {
	derived string
	names   map[string]ast.ExprNode
	star    bool
	// aliases are the names left to the select list's items: set for
	// HAVING and ORDER BY, empty elsewhere.
	aliases []string
	// from names the derived table's own table (its alias, or its name):
	// a renamed column is qualified with it, so that no outer select
	// alias of the same name captures it in HAVING or ORDER BY.
	from ast.CIStr
	// selectAliases are the outer select list's aliases, which GROUP BY,
	// HAVING and ORDER BY (aliasesVisible) may name.
	selectAliases  []string
	aliasesVisible bool
	// err is MySQL's 1054 for a name the derived table does not define.
	err error
}

// innerTableName is how the derived table inner names its one table: its
// alias, or its name.
func innerTableName(inner *ast.SelectStmt) ast.CIStr {
	if ts, ok := inner.From.TableRefs.Left.(*ast.TableSource); ok {
		if ts.AsName.O != "" {
			return ts.AsName
		}
		if tn, ok := ts.Source.(*ast.TableName); ok {
			return tn.Name
		}
	}
	return ast.CIStr{}
}

// rename returns e with its references renamed (e itself may be one).
func (r *renamer) rename(e ast.ExprNode) ast.ExprNode {
	out, _ := e.Accept(r)
	return out.(ast.ExprNode)
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
		// Outside the derived table only its alias qualifies a name.
		r.unknown(c)
		return n, true
	}
	if c.Name.Table.L == "" && slices.Contains(r.aliases, c.Name.Name.L) {
		return n, true
	}
	if e, ok := r.names[c.Name.Name.L]; ok {
		to, ok := unparen(e).(*ast.ColumnNameExpr)
		if !ok {
			return &ast.ParenthesesExpr{Expr: e}, true
		}
		table := to.Name.Table
		if table.L == "" {
			table = r.from
		}
		c.Name = &ast.ColumnName{Table: table, Name: to.Name.Name}
		return n, true
	}
	switch {
	case r.star:
		c.Name = &ast.ColumnName{Name: c.Name.Name}
	case c.Name.Table.L != "" || !r.aliasesVisible || !slices.Contains(r.selectAliases, c.Name.Name.L):
		r.unknown(c)
	}
	return n, true
}

// unknown records MySQL's 1054 for c, a name the derived table does not
// define (without SELECT * it hides its table's other columns).
func (r *renamer) unknown(c *ast.ColumnNameExpr) {
	if r.err == nil {
		r.err = dperr.New(dperr.UnknownColumn, "Unknown column '%s' (the derived table %s does not select it)", c.Name.String(), r.derived)
	}
}

func (r *renamer) Leave(n ast.Node) (ast.Node, bool) { return n, true }
