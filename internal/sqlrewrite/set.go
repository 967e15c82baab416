package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// setVariables converts SET. Session scope only: SET GLOBAL is refused.
// Assignments to @dp_* are dpproxy's settings and take constants; every other
// assignment (system variables, SET NAMES, SET TRANSACTION, other user
// variables, with any expression, as Connector/J's
// sql_mode = concat(@@sql_mode, ',STRICT_TRANS_TABLES')) is evaluated by the
// catalog engine, which keeps the session's values, each no larger than
// its bound allows (size_guard.go; bounds are guardSizes').
func setVariables(s *ast.SetStmt, sql string, bounds map[ast.Node]int64) (*SetVariables, error) {
	set := &SetVariables{}
	// namesCollation is the COLLATE of the last SET NAMES, which the
	// catalog engine's parser drops (it sets collation_connection to the
	// character set's default): it is set after the statement's other
	// assignments, as MySQL's SET NAMES cs COLLATE c sets it.
	namesCollation := ""
	for _, v := range s.Variables {
		if v.IsGlobal || v.IsInstance {
			return nil, refuse("SET GLOBAL", "dpproxy sets session variables only")
		}
		if v.Value != nil {
			if err := checkAssignedSize(bounds, v); err != nil {
				return nil, err
			}
		}
		name := strings.ToLower(v.Name)
		if v.Name == ast.SetNames {
			namesCollation = ""
			if v.ExtendValue != nil {
				if c, ok := literal(v.ExtendValue); ok && c.IsText {
					namesCollation = c.Str
				}
			}
		}
		if v.IsSystem || !strings.HasPrefix(name, "dp_") {
			set.Catalog = sql
			continue
		}
		a := Assignment{Name: name}
		if _, ok := unparen(v.Value).(*ast.DefaultExpr); ok {
			a.Default = true
		} else {
			val, ok := literal(v.Value)
			if !ok {
				return nil, refuse("SET @"+name+" to an expression", supportedSet)
			}
			// NULL unsets a user variable, as in MySQL: the setting goes
			// back to its default (the parser takes no DEFAULT for a user
			// variable).
			a.Value, a.Default = val, val.Null
		}
		set.Assignments = append(set.Assignments, a)
	}
	if namesCollation != "" {
		set.Catalog += ", collation_connection = '" + strings.ReplaceAll(namesCollation, "'", "''") + "'"
	}
	return set, nil
}
