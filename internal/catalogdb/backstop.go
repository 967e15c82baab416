package catalogdb

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The checks of package sqlrewrite run on TiDB's parse of a statement;
// lexicallySafe makes the engine read the same tokens. backstop checks
// the engine's own parse as well, so that a difference between the two
// readings that lexicallySafe misses still cannot run what the checks
// refuse: a function that waits, locks or reads a file, a SET of a
// global or persisted variable, or a string builder whose count is not
// an integer literal of at most maxBuiltString (the size guard's rule:
// an independent review ran SLEEP, GET_LOCK, SET GLOBAL and REPEAT of
// 300 million characters through two such differences).

// refusedFunctions are the functions no catalog statement may call, as
// sqlrewrite's routing refuses them (and the lock functions' siblings).
var refusedFunctions = map[string]bool{
	"sleep": true, "benchmark": true, "load_file": true, "get_lock": true, "release_lock": true,
	"release_all_locks": true, "is_free_lock": true, "is_used_lock": true,
}

// countArgument is the position of the count of the string builders the
// size guard bounds.
var countArgument = map[string]int{"repeat": 1, "lpad": 1, "rpad": 1, "space": 0}

// maxBuiltString is the largest count such a builder may take (the size
// guard's 1 MiB).
const maxBuiltString = 1 << 20

// backstop returns an error when the engine's parse of text holds what
// the checks refuse; a text the engine cannot parse passes (the engine
// then refuses it itself).
func backstop(text string) error {
	stmt, err := sqlparser.Parse(text)
	if err != nil {
		return nil
	}
	return sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *sqlparser.FuncExpr:
			name := n.Name.Lowered()
			if refusedFunctions[name] {
				return false, fmt.Errorf("the function %s", name)
			}
			if i, bounded := countArgument[name]; bounded && !smallCount(n.Exprs, i) {
				return false, fmt.Errorf("%s without an integer literal count of at most %d", name, maxBuiltString)
			}
		case *sqlparser.SetVarExpr:
			if n.Scope != sqlparser.SetScope_None && n.Scope != sqlparser.SetScope_Session && n.Scope != sqlparser.SetScope_User {
				return false, errors.New("SET of a global or persisted variable")
			}
		}
		return true, nil
	}, stmt)
}

// smallCount reports whether argument i of exprs is an integer literal
// in [0, maxBuiltString].
func smallCount(exprs sqlparser.SelectExprs, i int) bool {
	if i >= len(exprs) {
		return true // the engine refuses the call itself
	}
	aliased, ok := exprs[i].(*sqlparser.AliasedExpr)
	if !ok {
		return false
	}
	v, ok := aliased.Expr.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.IntVal {
		return false
	}
	n, err := strconv.ParseInt(string(v.Val), 10, 64)
	return err == nil && n >= 0 && n <= maxBuiltString
}
