package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// inlineAssignments rewrites a catalog SELECT whose select list assigns user
// variables (`@x := e`) and reads them in later columns, as MariaDB
// Connector/ODBC's SQLColumns does, into one without assignments, which the
// catalog engine can parse: each assignment becomes its value, and each later
// read of the variable in the select list becomes the value the variable
// holds after the earlier columns, as MySQL evaluates them left to right.
// That value is the largest expression around the assignment whose result is
// always the assigned value: a CASE or IF whose every branch assigns the
// variable (`CASE t WHEN 'a' THEN @x := 1 ... END`), else the assigned
// expression itself. The session's variables are not changed (the catalog
// engine keeps its own, and these are scratch values). ok is false when the
// statement assigns no variable, and sql is then unused.
func inlineAssignments(sel *ast.SelectStmt) (sql string, ok bool, err error) {
	if sel.Fields == nil || !assignsVariable(sel) {
		return "", false, nil
	}
	values := map[string]ast.ExprNode{}
	for _, field := range sel.Fields.Fields {
		if field.Expr == nil {
			continue
		}
		carriers := map[string]ast.ExprNode{}
		field.Expr.Accept(&carrierFinder{found: carriers})
		node, _ := field.Expr.Accept(&assignmentInliner{values: values})
		field.Expr = node.(ast.ExprNode)
		for name, c := range carriers {
			if v, isVar := c.(*ast.VariableExpr); isVar {
				c = v.Value // the assignment itself was replaced by its value
			}
			values[name] = c
		}
	}
	sel.Accept(charRestorer{})
	text, err := catalogSQL(sel)
	if err != nil {
		return "", false, refuse("this catalog query's variable assignments", "a SELECT over information_schema without := assignments")
	}
	return text, true, nil
}

// assignsVariable reports whether n holds a user-variable assignment.
func assignsVariable(n ast.Node) bool {
	v := &assignmentSeeker{}
	n.Accept(v)
	return v.found
}

type assignmentSeeker struct{ found bool }

func (s *assignmentSeeker) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*ast.VariableExpr); ok && !v.IsSystem && v.Value != nil {
		s.found = true
	}
	return n, s.found
}

func (s *assignmentSeeker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// carrierFinder records, per variable assigned in an expression, the
// outermost sub-expression whose value is always the assigned value.
type carrierFinder struct{ found map[string]ast.ExprNode }

func (f *carrierFinder) Enter(n ast.Node) (ast.Node, bool) {
	e, ok := n.(ast.ExprNode)
	if !ok {
		return n, false
	}
	if name, carries := carriedVariable(e); carries {
		if _, seen := f.found[name]; !seen {
			f.found[name] = e
		}
		return n, true
	}
	if v, isVar := e.(*ast.VariableExpr); isVar && !v.IsSystem && v.Value != nil {
		f.found[strings.ToLower(v.Name)] = v
	}
	return n, false
}

func (f *carrierFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// carriedVariable returns the variable whose assigned value e always equals:
// an assignment, or a parenthesis, CASE or IF all of whose results carry the
// same variable.
func carriedVariable(e ast.ExprNode) (string, bool) {
	switch e := e.(type) {
	case *ast.VariableExpr:
		if !e.IsSystem && e.Value != nil {
			return strings.ToLower(e.Name), true
		}
	case *ast.ParenthesesExpr:
		return carriedVariable(e.Expr)
	case *ast.CaseExpr:
		results := make([]ast.ExprNode, 0, len(e.WhenClauses)+1)
		for _, w := range e.WhenClauses {
			results = append(results, w.Result)
		}
		if e.ElseClause != nil {
			results = append(results, e.ElseClause)
		}
		return sameCarried(results)
	case *ast.FuncCallExpr:
		if e.FnName.L == "if" && len(e.Args) == 3 {
			return sameCarried(e.Args[1:])
		}
	}
	return "", false
}

// sameCarried reports the variable every expression of es carries.
func sameCarried(es []ast.ExprNode) (string, bool) {
	name := ""
	for i, e := range es {
		n, ok := carriedVariable(e)
		if !ok || (i > 0 && n != name) {
			return "", false
		}
		name = n
	}
	return name, len(es) > 0
}

// assignmentInliner replaces each assignment by its value and each read of a
// variable assigned in an earlier column by that variable's value there.
type assignmentInliner struct{ values map[string]ast.ExprNode }

func (a *assignmentInliner) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (a *assignmentInliner) Leave(n ast.Node) (ast.Node, bool) {
	v, ok := n.(*ast.VariableExpr)
	if !ok || v.IsSystem {
		return n, true
	}
	if v.Value != nil {
		return &ast.ParenthesesExpr{Expr: v.Value}, true
	}
	if value, known := a.values[strings.ToLower(v.Name)]; known {
		return &ast.ParenthesesExpr{Expr: value}, true
	}
	return n, true
}

// charRestorer turns the TiDB parser's char_func(x, charset) back into
// CHAR(x), which it would otherwise print as CHAR_FUNC(x, NULL); the charset
// of CHAR(x USING cs) is dropped (catalog answers are text in one charset).
type charRestorer struct{}

func (charRestorer) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (charRestorer) Leave(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == ast.CharFunc && len(f.Args) > 1 {
		f.FnName = ast.NewCIStr("CHAR")
		f.Args = f.Args[:len(f.Args)-1]
	}
	return n, true
}
