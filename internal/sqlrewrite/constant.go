package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// sessionFuncs are the functions a FROM-less SELECT may call: functions of
// the session and of dpproxy's budget, never of data. None takes arguments.
var sessionFuncs = map[string]bool{
	"database": true, "schema": true,
	"user": true, "current_user": true, "session_user": true, "system_user": true,
	"version": true, "connection_id": true, "now": true, "current_timestamp": true,
	"last_insert_id": true, "dp_remaining_epsilon": true, "dp_remaining_delta": true,
}

// constantSelect converts a SELECT without FROM (FROM DUAL included).
func constantSelect(s *ast.SelectStmt) (*ConstantSelect, error) {
	if err := refuseClauses(s); err != nil {
		return nil, err
	}
	if s.Where != nil {
		return nil, refuse("WHERE without FROM", supportedConst)
	}
	cs := &ConstantSelect{}
	for _, f := range s.Fields.Fields {
		it, err := constItem(f)
		if err != nil {
			return nil, err
		}
		cs.Items = append(cs.Items, it)
	}
	return cs, nil
}

// constItem converts one output column of a FROM-less SELECT.
func constItem(f *ast.SelectField) (ConstItem, error) {
	if f.WildCard != nil {
		return ConstItem{}, refuse("SELECT * without FROM", supportedConst)
	}
	it := ConstItem{Label: label(f)}
	switch e := unparen(f.Expr).(type) {
	case *ast.VariableExpr:
		if e.Value != nil {
			return ConstItem{}, refuse("assigning a variable in SELECT", supportedConst)
		}
		it.Kind, it.Name = UserVariable, strings.ToLower(e.Name)
		if e.IsSystem {
			it.Kind = SystemVariable
		}
		return it, nil
	case *ast.FuncCallExpr:
		if !sessionFuncs[e.FnName.L] || e.Schema.L != "" {
			return ConstItem{}, refuse(funcName(e), supportedConst)
		}
		if len(e.Args) > 0 {
			return ConstItem{}, refuse(e.FnName.O+" with arguments", supportedConst)
		}
		it.Kind, it.Name = Function, e.FnName.L
		return it, nil
	}
	v, ok := literal(f.Expr)
	if !ok {
		if containsNode(f.Expr, isSubquery) {
			return ConstItem{}, refuseQuery("subqueries in the select list")
		}
		if containsNode(f.Expr, isAggregate) {
			return ConstItem{}, refuseQuery("aggregates without FROM")
		}
		return ConstItem{}, refuse("this expression", supportedConst)
	}
	it.Kind, it.Value = Literal, v
	if f.AsName.O == "" {
		it.Label = literalLabel(f.Text(), v)
	}
	return it, nil
}

// literalLabel is the column name MySQL gives a literal: the value of a
// string, NULL, TRUE and FALSE in capitals, anything else as written.
func literalLabel(text string, v Value) string {
	switch {
	case v.IsText:
		return v.Str
	case v.Null, strings.EqualFold(text, "true"), strings.EqualFold(text, "false"):
		return strings.ToUpper(text)
	}
	return text
}
