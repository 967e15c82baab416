package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// setVariables converts SET. Session scope only: SET GLOBAL is refused. The
// values must be constants; a system variable may also be set to a bare word
// (SET autocommit = OFF, SET sql_mode = ANSI), which MySQL reads as a string.
func setVariables(s *ast.SetStmt) (*SetVariables, error) {
	set := &SetVariables{}
	for _, v := range s.Variables {
		if v.IsGlobal || v.IsInstance {
			return nil, refuse("SET GLOBAL", "dpproxy sets session variables only")
		}
		a := Assignment{Name: strings.ToLower(v.Name), System: v.IsSystem}
		switch v.Name {
		case ast.SetNames:
			a.Name, a.System = "names", true
		case ast.SetCharset:
			a.Name, a.System = "character_set", true
		}
		switch e := unparen(v.Value).(type) {
		case *ast.DefaultExpr:
			a.Default = true
		case *ast.ColumnNameExpr:
			if !a.System || e.Name.Table.O != "" {
				return nil, refuse("SET "+variableName(a)+" to a column", supportedSet)
			}
			a.Value = Value{Str: e.Name.Name.O, IsText: true}
		default:
			val, ok := literal(e)
			if !ok {
				return nil, refuse("SET "+variableName(a)+" to an expression", supportedSet)
			}
			a.Value = val
		}
		set.Assignments = append(set.Assignments, a)
	}
	return set, nil
}

// variableName is an assigned variable as the client wrote it, for messages.
func variableName(a Assignment) string {
	if a.System {
		return a.Name
	}
	return "@" + a.Name
}
