package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Prepare is SQL-level PREPARE name FROM 'text' (or FROM @var): the session
// keeps the text; EXECUTE parses it with its parameters bound, as any
// statement.
type Prepare struct {
	Name string
	// SQL is the statement text, or empty when Var names the user variable holding it.
	SQL string
	Var string
}

// ExecutePrepared is EXECUTE name [USING @a, @b, ...].
type ExecutePrepared struct {
	Name string
	// Using are the user variables bound to the ? markers, in order (lower case, no @).
	Using []string
}

// Deallocate is DEALLOCATE PREPARE name (or DROP PREPARE name).
type Deallocate struct{ Name string }

func (*Prepare) statement()         {}
func (*ExecutePrepared) statement() {}
func (*Deallocate) statement()      {}

const supportedPrepare = "PREPARE name FROM 'text' or FROM @var, EXECUTE name [USING @var, ...], DEALLOCATE PREPARE name"

func prepare(s *ast.PrepareStmt) (Statement, error) {
	p := &Prepare{Name: strings.ToLower(s.Name), SQL: s.SQLText}
	if s.SQLVar != nil {
		p.Var = strings.ToLower(s.SQLVar.Name)
	}
	return p, nil
}

func execute(s *ast.ExecuteStmt) (Statement, error) {
	e := &ExecutePrepared{Name: strings.ToLower(s.Name)}
	for _, u := range s.UsingVars {
		v, ok := u.(*ast.VariableExpr)
		if !ok || v.IsSystem {
			return nil, refuse("EXECUTE ... USING an expression", supportedPrepare)
		}
		e.Using = append(e.Using, strings.ToLower(v.Name))
	}
	return e, nil
}

// errExecuteArguments is MariaDB's answer to EXECUTE with more or fewer
// USING variables than the statement has markers.
func errExecuteArguments() error {
	return dperr.New(dperr.WrongArguments, "Incorrect arguments to EXECUTE")
}

// BindParameters replaces the ? markers of sql, outside string literals,
// quoted identifiers and comments, with the given SQL literals in order. It
// fails unless there are exactly as many markers as literals, with
// MariaDB's 1210 "Incorrect arguments to EXECUTE".
func BindParameters(sql string, literals []string) (string, error) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case c == '?':
			if n == len(literals) {
				return "", errExecuteArguments()
			}
			b.WriteString(literals[n])
			n++
			continue
		case c == '\'' || c == '"' || c == '`':
			end := i + 1
			for end < len(sql) && sql[end] != c {
				if sql[end] == '\\' && c != '`' {
					end++
				}
				end++
			}
			end = min(end, len(sql)-1)
			b.WriteString(sql[i : end+1])
			i = end
			continue
		case c == '#' || (c == '-' && strings.HasPrefix(sql[i:], "-- ")):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i - 1
			}
			b.WriteString(sql[i : i+end+1])
			i += end
			continue
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				end = len(sql) - i - 4
			}
			b.WriteString(sql[i : i+end+4])
			i += end + 3
			continue
		}
		b.WriteByte(c)
	}
	if n != len(literals) {
		return "", errExecuteArguments()
	}
	return b.String(), nil
}
