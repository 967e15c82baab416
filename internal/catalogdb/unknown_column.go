package catalogdb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// columnError is err, an error of the engine on query, with a reference
// to a column that names none in scope as MariaDB 10.11 reports it:
// 1054 "Unknown column 'x' in 'WHERE'", the name as written in the
// statement (qualified when it is: 't.x') and the clause that holds it
// (clauseFinder). go-mysql-server names no clause ("column "x" could not
// be found in any table in scope"), reports a name qualified by a table
// of the statement with 1235 and by no table of it as 1146 ("table not
// found: x"), and a USING column's clause as 'from clause'. Any other
// error, or a reference the statement does not hold, is returned as it
// is.
func columnError(query string, err error) error {
	var (
		match   func(*sqlparser.ColName) bool
		ordinal string // ORDER BY 5 beyond the select list is Unknown column '5'
		table   string // a qualifier that must name no table of the statement
	)
	switch {
	case sql.ErrColumnNotFound.Is(err):
		name, uerr := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(err.Error(), "column "), " could not be found in any table in scope"))
		if uerr != nil {
			return err
		}
		match = func(c *sqlparser.ColName) bool { return c.Qualifier.IsEmpty() && c.Name.EqualString(name) }
		ordinal = name
	case sql.ErrTableColumnNotFound.Is(err):
		var qualifier, name string
		if _, serr := fmt.Sscanf(err.Error(), "table %q does not have column %q", &qualifier, &name); serr != nil {
			return err
		}
		match = func(c *sqlparser.ColName) bool {
			return strings.EqualFold(c.Qualifier.Name.String(), qualifier) && c.Name.EqualString(name)
		}
	case sql.ErrTableNotFound.Is(err):
		table = strings.TrimPrefix(err.Error(), "table not found: ")
		match = func(c *sqlparser.ColName) bool { return strings.EqualFold(c.Qualifier.Name.String(), table) }
	case sql.ErrUnknownColumn.Is(err) && strings.HasSuffix(err.Error(), " in 'from clause'"):
		return &Error{Code: 1054, State: "42S22", Msg: strings.TrimSuffix(err.Error(), "'from clause'") + "'FROM'"}
	default:
		return err
	}
	stmt, perr := sqlparser.Parse(sql.RemoveSpaceAndDelimiter(query, ';'))
	if perr != nil || (table != "" && namesTable(stmt, table)) {
		return err
	}
	f := &clauseFinder{match: match, ordinal: ordinal}
	f.statement(stmt)
	if f.clause == "" {
		return err
	}
	return &Error{Code: 1054, State: "42S22", Msg: fmt.Sprintf("Unknown column '%s' in '%s'", f.name, f.clause)}
}

// namesTable reports whether stmt names a table, an alias or a common
// table expression name (case-insensitively): then go-mysql-server's
// "table not found" is about that table (MariaDB's 1146), not about a
// column's qualifier.
func namesTable(stmt sqlparser.Statement, name string) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *sqlparser.ColName: // its qualifier is what is asked about
			return false, nil
		case sqlparser.TableName:
			found = found || strings.EqualFold(n.Name.String(), name)
		case *sqlparser.AliasedTableExpr:
			found = found || strings.EqualFold(n.As.String(), name)
		case *sqlparser.CommonTableExpr:
			found = found || strings.EqualFold(n.As.String(), name)
		case *sqlparser.Show:
			found = found || strings.EqualFold(n.Table.Name.String(), name)
		}
		return !found, nil
	}, stmt)
	return found
}

// clauseFinder finds the first column reference that match selects in
// the order MariaDB 10.11 resolves a statement's names, which decides
// the clause its 1054 names when several clauses hold unknown columns:
// in each SELECT, the derived tables and common table expressions, then
// the select list ('SELECT'), WHERE, the joins' ON conditions ('ON'),
// ORDER BY, GROUP BY, the windows (PARTITION BY as 'GROUP BY', their
// ORDER BY as 'ORDER BY') and HAVING; a subquery's references in its
// own clauses where the enclosing expression is resolved; the filter of
// SHOW ... WHERE as 'WHERE'.
type clauseFinder struct {
	match func(*sqlparser.ColName) bool
	// ordinal, when not empty, also matches an ORDER BY position written
	// as that number.
	ordinal string
	// name and clause are the first match, as written, and its clause;
	// clause is empty until one is found.
	name, clause string
	// windows are the window definitions of the SELECT being resolved,
	// resolved after its GROUP BY.
	windows []*sqlparser.WindowDef
}

func (f *clauseFinder) statement(stmt sqlparser.Statement) {
	switch s := stmt.(type) {
	case sqlparser.SelectStatement:
		f.selectStatement(s)
	case *sqlparser.Show:
		f.expr(s, "WHERE")
	}
}

func (f *clauseFinder) selectStatement(s sqlparser.SelectStatement) {
	switch s := s.(type) {
	case *sqlparser.Select:
		f.selectBlock(s)
	case *sqlparser.SetOp:
		f.with(s.With)
		f.selectStatement(s.Left)
		f.selectStatement(s.Right)
		f.orderBy(s.OrderBy)
	case *sqlparser.ParenSelect:
		f.selectStatement(s.Select)
	}
}

func (f *clauseFinder) with(w *sqlparser.With) {
	if w == nil {
		return
	}
	for _, cte := range w.Ctes {
		if sub, ok := cte.Expr.(*sqlparser.Subquery); ok {
			f.selectStatement(sub.Select)
		}
	}
}

func (f *clauseFinder) selectBlock(s *sqlparser.Select) {
	outer := f.windows
	f.windows = append([]*sqlparser.WindowDef(nil), s.Window...)
	defer func() { f.windows = outer }()
	f.with(s.With)
	f.derived(s.From)
	for _, e := range s.SelectExprs {
		f.expr(e, "SELECT")
	}
	if s.Where != nil {
		f.expr(s.Where.Expr, "WHERE")
	}
	f.on(s.From)
	f.orderBy(s.OrderBy)
	for _, e := range s.GroupBy {
		f.expr(e, "GROUP BY")
	}
	for _, w := range f.windows {
		for _, e := range w.PartitionBy {
			f.expr(e, "GROUP BY")
		}
		f.orderBy(w.OrderBy)
	}
	if s.Having != nil {
		f.expr(s.Having.Expr, "HAVING")
	}
}

// derived resolves the derived tables of a FROM list.
func (f *clauseFinder) derived(from sqlparser.TableExprs) {
	for _, t := range from {
		switch t := t.(type) {
		case *sqlparser.AliasedTableExpr:
			if sub, ok := t.Expr.(*sqlparser.Subquery); ok {
				f.selectStatement(sub.Select)
			}
		case *sqlparser.JoinTableExpr:
			f.derived(sqlparser.TableExprs{t.LeftExpr, t.RightExpr})
		case *sqlparser.ParenTableExpr:
			f.derived(t.Exprs)
		}
	}
}

// on resolves the ON conditions of a FROM list's joins.
func (f *clauseFinder) on(from sqlparser.TableExprs) {
	for _, t := range from {
		switch t := t.(type) {
		case *sqlparser.JoinTableExpr:
			f.on(sqlparser.TableExprs{t.LeftExpr, t.RightExpr})
			if t.Condition.On != nil {
				f.expr(t.Condition.On, "ON")
			}
		case *sqlparser.ParenTableExpr:
			f.on(t.Exprs)
		}
	}
}

func (f *clauseFinder) orderBy(orders sqlparser.OrderBy) {
	for _, o := range orders {
		if v, ok := o.Expr.(*sqlparser.SQLVal); ok && f.clause == "" && f.ordinal != "" && v.Type == sqlparser.IntVal && string(v.Val) == f.ordinal {
			f.name, f.clause = f.ordinal, "ORDER BY"
		}
		f.expr(o.Expr, "ORDER BY")
	}
}

// expr resolves the references of node in clause, a subquery's in its
// own clauses, and keeps a window function's OVER for the windows.
func (f *clauseFinder) expr(node sqlparser.SQLNode, clause string) {
	if f.clause != "" || node == nil {
		return
	}
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if f.clause != "" {
			return false, nil
		}
		switch n := n.(type) {
		case *sqlparser.ColName:
			if f.match(n) {
				f.name, f.clause = n.Name.String(), clause
				if !n.Qualifier.IsEmpty() {
					f.name = n.Qualifier.Name.String() + "." + f.name
				}
			}
			return false, nil
		case *sqlparser.Subquery:
			f.selectStatement(n.Select)
			return false, nil
		case *sqlparser.FuncExpr:
			if n.Over != nil {
				f.windows = append(f.windows, (*sqlparser.WindowDef)(n.Over))
				f.expr(n.Exprs, clause)
				return false, nil
			}
		}
		return true, nil
	}, node)
}
