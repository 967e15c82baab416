package catalogdb

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The checks of package sqlrewrite run on TiDB's parse of a statement;
// lexicallySafe makes the engine read the same tokens. backstop checks
// the engine's own parse as well, so that a difference between the two
// readings that lexicallySafe misses still cannot run what the checks
// refuse: a function that waits, locks or reads a file, a regular
// expression (REGEXP, RLIKE, NOT REGEXP, the REGEXP_ functions), a SET of
// a global or persisted variable, a string builder whose count is not an
// integer literal of at most maxBuiltString, a CAST to more characters
// than that, a call that may build more than maxStatementStrings, or a
// GROUP_CONCAT that may hold more than maxGroupConcatHeld (the size
// guard's rules:
// an independent review ran SLEEP, GET_LOCK, SET GLOBAL and REPEAT of
// 300 million characters through two such differences).

// refusedFunctions are the functions no catalog statement may call, as
// sqlrewrite's routing refuses them (and the lock functions' siblings).
var refusedFunctions = map[string]bool{
	"sleep": true, "benchmark": true, "load_file": true, "get_lock": true, "release_lock": true,
	"release_all_locks": true, "is_free_lock": true, "is_used_lock": true,
}

// regexpFunctions are go-mysql-server's functions that evaluate a regular
// expression; REGEXP, RLIKE and NOT REGEXP are REGEXP_LIKE to it. They run
// go-icu-regex, ICU compiled to WebAssembly: a backtracking matcher that
// never reads the statement's context and that the Go runtime cannot
// preempt. An independent review's REPEAT('a', 26) REGEXP '(a+)+b' ran
// for 29 s despite the statement's 10 s limit (the time doubles with
// each character), and four such statements at once froze the proxy:
// no login, no SIGTERM, for minutes. No limit can stop one once it
// runs, so none may run. LIKE (Go's regexp, linear in the text) matches
// instead.
var regexpFunctions = map[string]bool{
	"regexp_like": true, "regexp_instr": true, "regexp_substr": true, "regexp_replace": true,
}

// errRegexp is the refusal of a regular expression (regexpFunctions).
var errRegexp = errors.New("REGEXP, RLIKE and the REGEXP_ functions (the catalog engine cannot stop a regular expression's match once it starts); LIKE matches text with the wildcards % and _")

// countArgument is the position of the count of the string builders the
// size guard bounds.
var countArgument = map[string]int{"repeat": 1, "lpad": 1, "rpad": 1, "space": 0}

// maxBuiltString is the largest count such a builder may take (the size
// guard's 1 MiB).
const maxBuiltString = 1 << 20

// backstop returns the engine's parse of text, trimmed as the engine
// trims it, or an error when that parse holds what the checks refuse,
// nests so deeply that the engine could not plan it in time
// (checkPlanningCost), or when text does not parse (the engine, which
// parses it alike, would refuse it anyway); the error is MariaDB's own
// (an *Error) for a CAST to a type past its precision
// (castPrecisionError), or 1235 for one to text of another character set
// (castCharsetError).
func backstop(text string) (sqlparser.Statement, error) {
	stmt, err := sqlparser.Parse(sql.RemoveSpaceAndDelimiter(text, ';'))
	if err != nil {
		return nil, errors.New("a statement the catalog engine cannot read")
	}
	if err := checkPlanningCost(stmt, len(text)); err != nil {
		return nil, err
	}
	return stmt, inspect(reflect.ValueOf(stmt), func(node sqlparser.SQLNode) error {
		switch n := node.(type) {
		case *sqlparser.Prepare, *sqlparser.Execute:
			// The engine would parse the prepared text when it runs it,
			// after every check (sqlrewrite answers PREPARE itself).
			return errors.New("PREPARE and EXECUTE inside the catalog engine")
		case *sqlparser.FuncExpr:
			name := n.Name.Lowered()
			if refusedFunctions[name] {
				return fmt.Errorf("the function %s", name)
			}
			if regexpFunctions[name] {
				return errRegexp
			}
			if i, bounded := countArgument[name]; bounded && !smallCount(n.Exprs, i) {
				return fmt.Errorf("%s without an integer literal count of at most %d", name, maxBuiltString)
			}
			if size := builtSize(n); size > maxStatementStrings {
				return fmt.Errorf("%s building up to %.0f bytes (at most %d)", name, size, maxStatementStrings)
			}
		case *sqlparser.ComparisonExpr:
			if n.Operator == sqlparser.RegexpStr || n.Operator == sqlparser.NotRegexpStr {
				return errRegexp
			}
		case *sqlparser.ConvertExpr:
			if e := castPrecisionError(n); e != nil {
				return e
			}
			if e := castCharsetError(n); e != nil {
				return e
			}
			if n.Type != nil && n.Type.Length != nil {
				l, err := strconv.ParseInt(string(n.Type.Length.Val), 10, 64)
				if err != nil || l > maxBuiltString {
					return fmt.Errorf("CAST to %s characters (at most %d)", n.Type.Length.Val, maxBuiltString)
				}
			}
		case *sqlparser.GroupConcatExpr:
			// It holds its values for every row before joining them
			// (its ORDER BY items sort the rows and are none of them),
			// and cuts the result at group_concat_max_len, which is
			// at most maxGroupConcatLen.
			size := 0.0
			for _, e := range n.Exprs {
				size += builtSize(e)
			}
			if size*catalogRows > maxGroupConcatHeld {
				return fmt.Errorf("GROUP_CONCAT holding up to %.0f bytes of values (at most %d)", size*catalogRows, maxGroupConcatHeld)
			}
		case *sqlparser.SetVarExpr:
			if n.Scope != sqlparser.SetScope_None && n.Scope != sqlparser.SetScope_Session && n.Scope != sqlparser.SetScope_User {
				return errors.New("SET of a global or persisted variable")
			}
		}
		return nil
	})
}

var nodeType = reflect.TypeFor[sqlparser.SQLNode]()

// inspect calls visit on every node of the parse v, reading every field
// by reflection, as planningCost does: sqlparser.Walk goes only where
// each node's walkSubtree leads, and some nodes have none (EXPLAIN's,
// whose statement Walk never reaches, though the engine's analyzer
// evaluates a constant WHERE of it). A node whose methods are its
// pointer's is visited as that pointer, as Walk gives it. backstop calls
// it after checkPlanningCost, whose walk of the same values bounded their
// number, so it is linear in the text.
func inspect(v reflect.Value, visit func(sqlparser.SQLNode) error) error {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return inspect(v.Elem(), visit)
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if !v.CanInterface() {
			return nil // an unexported field: vitess keeps no node in one
		}
		if n, ok := v.Interface().(sqlparser.SQLNode); ok && !v.Elem().Type().Implements(nodeType) {
			if err := visit(n); err != nil {
				return err
			}
		}
		return inspect(v.Elem(), visit)
	case reflect.Struct, reflect.Slice, reflect.Array:
		if !v.CanInterface() {
			return nil
		}
		if v.Type().Implements(nodeType) {
			if err := visit(v.Interface().(sqlparser.SQLNode)); err != nil {
				return err
			}
		}
		if v.Kind() == reflect.Struct {
			for i := range v.NumField() {
				if err := inspect(v.Field(i), visit); err != nil {
					return err
				}
			}
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes: a literal's text, an identifier
		}
		for i := range v.Len() {
			if err := inspect(v.Index(i), visit); err != nil {
				return err
			}
		}
	}
	return nil
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

// measures are functions whose value is a number or a fixed-size digest
// of their arguments, however long those are.
var measures = map[string]bool{
	"length": true, "char_length": true, "character_length": true, "octet_length": true, "bit_length": true,
	"crc32": true, "md5": true, "sha": true, "sha1": true, "sha2": true, "ascii": true, "ord": true, "instr": true,
	"locate": true, "position": true, "strcmp": true, "field": true, "find_in_set": true, "count": true, "sum": true,
	"avg": true, "json_length": true, "json_valid": true,
}

// maxStatementStrings bounds the string a call may build (the size
// guard's 16 MiB per statement).
const maxStatementStrings = 16 << 20

// maxGroupConcatHeld bounds the values one GROUP_CONCAT holds, one per
// row (the size guard's 64 MiB: maxResultBytes).
const maxGroupConcatHeld = maxResultBytes

// catalogRows is the size guard's bound on the rows an aggregate over the
// catalog repeats its argument for (GROUP_CONCAT, JSON_ARRAYAGG).
const catalogRows = 10000

// builtSize bounds the bytes the expression e evaluates to, as the size
// guard does on TiDB's parse: a string literal its length, REPEAT its
// argument times its count, SPACE, LPAD and RPAD four bytes per character
// of their count, REPLACE and REGEXP_REPLACE the subject times the
// replacement (every byte of the subject replaced), INSERT and CONCAT the
// sum of their arguments, JSON_ARRAYAGG and JSON_OBJECTAGG catalogRows
// times it, a measure (LENGTH, MD5, ...) 64 bytes, any other call twice
// its arguments (HEX doubles); a column of the catalog 1 KiB; any other expression 64 KiB
// (a call inside one is bounded where the walk meets it).
func builtSize(e sqlparser.SQLNode) float64 {
	switch x := e.(type) {
	case *sqlparser.SQLVal:
		return float64(len(x.Val))
	case *sqlparser.ParenExpr:
		return builtSize(x.Expr)
	case *sqlparser.AliasedExpr:
		return builtSize(x.Expr)
	case *sqlparser.ColName:
		return 1 << 10 // catalog metadata is short (the size guard's columnSize)
	case *sqlparser.FuncExpr:
		arg := func(i int) float64 {
			if i >= len(x.Exprs) {
				return 0
			}
			return builtSize(x.Exprs[i])
		}
		count := func(i int) float64 {
			if !smallCount(x.Exprs, i) {
				return math.Inf(1)
			}
			v, _ := x.Exprs[i].(*sqlparser.AliasedExpr).Expr.(*sqlparser.SQLVal)
			n, _ := strconv.ParseFloat(string(v.Val), 64)
			return n
		}
		sum := 0.0
		for i := range x.Exprs {
			sum += arg(i)
		}
		if measures[x.Name.Lowered()] {
			return 64 // a number or a digest, whatever its arguments
		}
		switch x.Name.Lowered() {
		case "repeat":
			return arg(0) * count(1)
		case "space":
			return count(0)
		case "lpad", "rpad":
			return 4 * count(1)
		case "replace", "regexp_replace":
			return arg(0) * math.Max(1, arg(2))
		case "insert", "concat", "concat_ws":
			return sum
		case "json_arrayagg", "json_objectagg":
			return sum * catalogRows
		}
		return 2 * sum
	}
	return 64 << 10
}
