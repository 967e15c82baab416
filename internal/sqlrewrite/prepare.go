package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/bind"
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

// Argument is a user variable that EXECUTE ... USING binds to a marker.
type Argument struct {
	// Literal is the SQL literal of its value, which a marker binds.
	Literal string
	// Limit is the unsigned integer literal a LIMIT or OFFSET marker
	// binds instead, or "" where MariaDB refuses the value there with
	// 1210 (a negative one).
	Limit string
	// Minimum reports the BIGINT -9223372036854775808, which a marker
	// under a unary minus (k = -?) refuses with 1690, as MariaDB does:
	// bound as text it would read as the DECIMAL 9223372036854775808.
	Minimum bool
}

// BindParameters replaces the ? markers of sql, outside string literals,
// quoted identifiers and comments (bind.Markers), with the literals of
// args in order (bind.Replace, which keeps a literal apart from text it
// would join): a LIMIT or OFFSET marker (bind.LimitMarker) with the
// argument's Limit, any other with its Literal. It fails unless
// there are exactly as many markers as arguments, and where a LIMIT
// argument has no Limit, with MariaDB's 1210 "Incorrect arguments to
// EXECUTE"; and with 1690 where the operand of a unary minus
// (bind.Negations) is a Minimum.
func BindParameters(sql string, args []Argument) (string, error) {
	markers := bind.Markers(sql)
	if len(markers) != len(args) {
		return "", errExecuteArguments()
	}
	literals := make([]string, len(args))
	var negated []bool // bind.Negations, read once when a minimum is bound
	for i, m := range markers {
		at := int(m)
		lit := args[i].Literal
		if bind.LimitMarker(sql, at) {
			if lit = args[i].Limit; lit == "" {
				return "", errExecuteArguments()
			}
		}
		if args[i].Minimum && negated == nil {
			negated = bind.Negations(sql)
		}
		if args[i].Minimum && i < len(negated) && negated[i] {
			return "", dperr.New(dperr.OutOfRange, "BIGINT value is out of range in '--9223372036854775808'")
		}
		literals[i] = lit
	}
	return bind.Replace(sql, markers, literals), nil
}
