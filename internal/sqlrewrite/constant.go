package sqlrewrite

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// sessionFuncs are the functions a FROM-less SELECT may call: functions of
// the session and of dpproxy's budget, never of data (FOUND_ROWS() is the
// number of rows the session last sent). None takes arguments.
var sessionFuncs = map[string]bool{
	"database": true, "schema": true,
	"user": true, "current_user": true, "session_user": true, "system_user": true,
	"version": true, "connection_id": true, "now": true, "current_timestamp": true,
	"last_insert_id": true, "dp_remaining_epsilon": true, "dp_remaining_delta": true,
	"found_rows": true,
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
		if sessionFuncs[e.FnName.L] && e.Schema.L == "" && len(e.Args) == 0 {
			it.Kind, it.Name = Function, e.FnName.L
			return it, nil
		}
	}
	v, ok := literal(f.Expr)
	if !ok {
		if containsNode(f.Expr, isSubquery) {
			return ConstItem{}, refuseQuery("subqueries in the select list")
		}
		if containsNode(f.Expr, isAggregate) {
			return ConstItem{}, refuseQuery("aggregates without FROM")
		}
		if assignsVariable(f.Expr) {
			return ConstItem{}, refuse("assigning a variable in SELECT", supportedConst)
		}
		return expressionItem(it, f.Expr)
	}
	it.Kind, it.Value = Literal, v
	if f.AsName.O == "" {
		it.Label = literalLabel(fieldText(f), v)
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

// dpSettings are the @dp_* variables whose values the session holds.
var dpSettings = map[string]bool{"dp_epsilon": true, "dp_delta": true, "dp_mechanism": true, "dp_trim": true}

// expressionItem makes it the Expression e: the SQL of e cut at its
// references to dpproxy's settings and budget functions, which are its
// Refs. It replaces those references in e (the statement is parsed for
// this item only).
func expressionItem(it ConstItem, e ast.ExprNode) (ConstItem, error) {
	marker := "dpproxy_ref"
	text := restore(e)
	for strings.Contains(text, marker) {
		marker += "_"
	}
	cut := &refCutter{marker: marker}
	node, _ := e.Accept(cut)
	text, err := catalogSQL(node)
	if err != nil {
		return ConstItem{}, refuse("this expression", supportedConst)
	}
	it.Kind, it.Refs = Expression, cut.refs
	it.template = strings.Split(text, "'"+marker+"'")
	if len(it.template) != len(it.Refs)+1 {
		return ConstItem{}, refuse("this expression", supportedConst)
	}
	return it, nil
}

// refCutter replaces each reference to a dpproxy setting or budget
// function with the string literal marker, recording it in refs.
type refCutter struct {
	marker string
	refs   []ConstItem
}

func (c *refCutter) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (c *refCutter) Leave(n ast.Node) (ast.Node, bool) {
	var ref ConstItem
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		if !dpFuncs[x.FnName.L] || x.Schema.L != "" || len(x.Args) > 0 {
			return n, true
		}
		ref = ConstItem{Label: x.FnName.O + "()", Kind: Function, Name: x.FnName.L}
	case *ast.VariableExpr:
		name := strings.ToLower(x.Name)
		if x.IsSystem || x.Value != nil || !dpSettings[name] {
			return n, true
		}
		ref = ConstItem{Label: "@" + x.Name, Kind: UserVariable, Name: name}
	default:
		return n, true
	}
	c.refs = append(c.refs, ref)
	return ast.NewValueExpr(c.marker, "", ""), true
}

// SQL returns the SQL of an Expression item for the catalog engine, with
// values[i], the session's value of Refs[i], in the place of each
// reference: nil as NULL, an int64 as an integer, a float64 as a DOUBLE
// literal (exponent form, so that MySQL reads a double, as the budget
// functions return), a string as a quoted string. It fails when values
// does not match Refs or holds another type.
func (it ConstItem) SQL(values []any) (string, error) {
	if it.Kind != Expression || len(values) != len(it.Refs) {
		return "", fmt.Errorf("sqlrewrite: %d values for an expression of %d references", len(values), len(it.Refs))
	}
	var b strings.Builder
	b.WriteString(it.template[0])
	for i, v := range values {
		b.WriteString(" ")
		switch v := v.(type) {
		case nil:
			b.WriteString("NULL")
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return "", fmt.Errorf("sqlrewrite: %s is %v, which SQL cannot hold", it.Refs[i].Label, v)
			}
			b.WriteString(strconv.FormatFloat(v, 'e', -1, 64))
		case string:
			b.WriteString("'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(v) + "'")
		default:
			return "", fmt.Errorf("sqlrewrite: %s is a %T", it.Refs[i].Label, v)
		}
		b.WriteString(" ")
		b.WriteString(it.template[i+1])
	}
	return b.String(), nil
}
