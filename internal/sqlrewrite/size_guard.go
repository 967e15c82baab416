package sqlrewrite

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Bounds on the strings a statement can make the proxy build.
//
// Statements without a configured table, SET's values and the
// post-processing of released values are evaluated in the proxy's own
// memory (the catalog engine). There one short statement can ask for any
// amount of it: SET @v = REPEAT(REPEAT('x', 100000), 2000000000) asked for
// 200 TB and killed the process, for every analyst at once (an independent
// review). So every statement is checked before anything runs, by an
// upper bound on the size of each expression's value, computed from the
// syntax alone:
//
//   - a string literal is its length, any other literal 64 bytes;
//   - a user variable is at most maxUserVariable (SET stores no more), a
//     system variable systemVariableSize, a column or a subquery's value
//     columnSize (catalog metadata and released values are short);
//   - REPEAT(s, n) is size(s)·n, SPACE(n) n, LPAD and RPAD(s, n, p) 4n
//     bytes (n characters), FORMAT(x, n) n + 64, REPLACE and
//     REGEXP_REPLACE(s, from, to) size(s)·max(1, size(to)), with n an
//     integer literal, and none may exceed maxAmplified; BENCHMARK is
//     refused;
//   - CAST and CONVERT to a type of n characters (BINARY(n), CHAR(n))
//     are at least 4n bytes, n at most maxAmplified; JSON_ARRAYAGG and
//     JSON_OBJECTAGG catalogRows times their arguments; GROUP_CONCAT
//     catalogRows times its values and separator, but at most
//     maxGroupConcatLen, the largest group_concat_max_len a session may
//     set (the engine cuts its result there), and the values it holds
//     (catalogRows times the values, not its ORDER BY items) at most
//     maxGroupConcatHeld;
//   - a function that returns a number is at most numberSize, the longest
//     text of a number (LENGTH, CHAR_LENGTH, SIGN, POW, SQRT, EXP, LN, the
//     LOGs, DATEDIFF, TIMESTAMPDIFF: numberFunctions), or, for those that
//     keep a DECIMAL's digits (ABS, ROUND, TRUNCATE, FLOOR, CEIL, MOD:
//     digitFunctions), the larger of numberSize and their arguments' sum,
//     since the catalog engine keeps every digit of a DECIMAL computed
//     from long literals; so nesting them adds nothing (ABS(ABS(…(1)))
//     nine deep was refused as reaching 22 MB);
//   - CONCAT is the sum of its arguments' bounds, CONCAT_WS that with its
//     separator once between every two of the others (ten nested CONCATs
//     of an 11-byte result were refused);
//   - any other function is four times the sum of its arguments' bounds
//     plus 64 (HEX doubles a string, TO_BASE64 and QUOTE grow it, so
//     nesting them multiplies), any other expression the sum plus 64.
//
// A statement whose expressions together exceed maxStatementStrings is
// refused, and so is a SET whose value may exceed what a variable may hold
// (maxUserVariable, maxSystemVariable).
const (
	maxAmplified        = 1 << 20
	maxStatementStrings = 16 << 20
	maxUserVariable     = 256 << 10
	maxSystemVariable   = 64 << 10
	systemVariableSize  = 4 << 10
	columnSize          = 1 << 10
	subqueryValueSize   = 64 << 10
	otherLiteralSize    = 64
	// numberSize is the longest text of a number: a DOUBLE near its
	// largest, 309 integer digits, with 30 fixed decimals, a sign and a
	// point (a DECIMAL has at most 65 digits, a BIGINT 20).
	numberSize = 1 + 309 + 1 + 30
	// catalogRows bounds the rows an aggregate over the catalog reads
	// (catalog tables hold the configuration's metadata: a few thousand).
	catalogRows = 10000
	// maxGroupConcatLen is the largest group_concat_max_len a session
	// may set (package catalogdb's bound, which README states).
	maxGroupConcatLen = 1 << 20
	// maxGroupConcatHeld bounds the values one GROUP_CONCAT holds, one
	// per row, before it joins them: as much as a catalog statement may
	// return (catalog.MaxResultBytes).
	maxGroupConcatHeld   = catalog.MaxResultBytes
	expressionOverhead   = 64
	supportedStringSizes = "string functions whose results stay under 1 MiB (REPEAT, SPACE, LPAD, RPAD with literal counts), " +
		"statements whose strings stay under 16 MiB and variables of at most 256 KiB"
)

// guardSizes refuses a statement whose strings may exceed the bounds
// above; it returns the bound of every expression it measured.
func guardSizes(stmt ast.Node) (map[ast.Node]int64, error) {
	g := &sizeGuard{bounds: map[ast.Node]int64{}}
	stmt.Accept(g)
	if g.err != nil {
		return nil, g.err
	}
	if g.total > maxStatementStrings {
		return nil, refuse(fmt.Sprintf("a statement whose strings may reach %d bytes", g.total), supportedStringSizes)
	}
	return g.bounds, nil
}

// checkAssignedSize refuses a SET of a value whose bound exceeds what the
// variable may hold.
func checkAssignedSize(bounds map[ast.Node]int64, v *ast.VariableAssignment) error {
	limit, kind := int64(maxUserVariable), "user variable"
	if v.IsSystem {
		limit, kind = maxSystemVariable, "system variable"
	}
	if b := bounds[v.Value]; b > limit {
		return refuse(fmt.Sprintf("SET of a %s to a value that may reach %d bytes", kind, b), supportedStringSizes)
	}
	return nil
}

// sizeGuard computes the bounds bottom-up: each open node's entry in sums
// collects its children's bounds.
type sizeGuard struct {
	sums   []int64
	bounds map[ast.Node]int64
	total  int64
	err    error
}

func (g *sizeGuard) Enter(n ast.Node) (ast.Node, bool) {
	g.sums = append(g.sums, 0)
	return n, g.err != nil
}

func (g *sizeGuard) Leave(n ast.Node) (ast.Node, bool) {
	children := g.sums[len(g.sums)-1]
	g.sums = g.sums[:len(g.sums)-1]
	if g.err != nil {
		return n, false
	}
	b, err := g.bound(n, children)
	if err != nil {
		g.err = err
		return n, false
	}
	g.bounds[n] = b
	if len(g.sums) > 0 {
		g.sums[len(g.sums)-1] = saturatingAdd(g.sums[len(g.sums)-1], b)
	} else {
		g.total = b
	}
	return n, true
}

// bound is n's bound given the sum of its children's.
func (g *sizeGuard) bound(n ast.Node, children int64) (int64, error) {
	switch x := n.(type) {
	case ast.ValueExpr:
		switch v := x.GetValue().(type) {
		case string:
			return int64(len(v)), nil
		case []byte:
			return int64(len(v)), nil
		}
		return otherLiteralSize, nil
	case *ast.VariableExpr:
		switch {
		case x.Value != nil: // @v := e inside a SELECT
			return children, nil
		case x.IsSystem:
			return systemVariableSize, nil
		}
		return maxUserVariable, nil
	case *ast.ColumnNameExpr:
		return columnSize, nil
	case *ast.SubqueryExpr:
		return subqueryValueSize, nil
	case *ast.FuncCallExpr:
		return g.function(x, children)
	case *ast.FuncCastExpr:
		// CAST(x AS BINARY(n)) and CHAR(n) pad or cut to n characters
		// (an independent review built 300 MB with one).
		// MariaDB refuses more than 4294967295 (1439) and reads
		// CHAR(4294967295) as CHAR.
		n := int64(x.Tp.GetFlen())
		switch text := x.Tp.EvalType() == types.ETString; {
		case text && n > maxCastChars:
			return 0, castWidthError(x)
		case text && n == maxCastChars:
			n = -1
		}
		if n > 0 {
			if n > maxAmplified {
				return 0, refuse(fmt.Sprintf("CAST to %d characters", n), supportedStringSizes)
			}
			return max(children, 4*n), nil
		}
		return saturatingAdd(children, expressionOverhead), nil
	case *ast.AggregateFuncExpr:
		// GROUP_CONCAT, JSON_ARRAYAGG and JSON_OBJECTAGG repeat their
		// arguments once per row, as many as a catalog result holds.
		switch strings.ToLower(x.F) {
		case ast.AggFuncGroupConcat:
			return groupConcatBound(x, g.bounds)
		case ast.AggFuncJsonArrayagg, ast.AggFuncJsonObjectAgg:
			out := saturatingMul(children, catalogRows)
			if out > maxStatementStrings {
				return 0, refuse(fmt.Sprintf("%s of up to %d bytes", strings.ToUpper(x.F), out), supportedStringSizes)
			}
			return out, nil
		}
		return saturatingAdd(children, expressionOverhead), nil
	case ast.ExprNode:
		return saturatingAdd(children, expressionOverhead), nil
	}
	return children, nil // a clause or a statement: what its expressions hold
}

// groupConcatBound bounds GROUP_CONCAT's result, given its arguments'
// bounds: its values (every argument but the last, the separator) and
// separator once per row, cut at maxGroupConcatLen; its ORDER BY items
// sort the rows and are no part of it. It refuses a GROUP_CONCAT whose
// values, which it holds for every row before joining them, may exceed
// maxGroupConcatHeld.
func groupConcatBound(x *ast.AggregateFuncExpr, bounds map[ast.Node]int64) (int64, error) {
	var values, separator int64
	for i, arg := range x.Args {
		if i == len(x.Args)-1 {
			separator = bounds[arg]
		} else {
			values = saturatingAdd(values, bounds[arg])
		}
	}
	if held := saturatingMul(values, catalogRows); held > maxGroupConcatHeld {
		return 0, refuse(fmt.Sprintf("GROUP_CONCAT holding up to %d bytes of values", held),
			"GROUP_CONCAT of values that stay under 64 MiB over the rows it reads (its result is cut at group_concat_max_len, at most 1 MiB)")
	}
	return min(saturatingMul(saturatingAdd(values, separator), catalogRows), maxGroupConcatLen), nil
}

// function bounds a function call's result.
func (g *sizeGuard) function(f *ast.FuncCallExpr, children int64) (int64, error) {
	name := strings.ToLower(f.FnName.L)
	arg := func(i int) int64 {
		if i < len(f.Args) {
			return g.bounds[f.Args[i]]
		}
		return 0
	}
	count := func(i int) (int64, bool) {
		if i >= len(f.Args) {
			return 0, false
		}
		v, ok := literal(f.Args[i])
		if !ok || v.IsText || v.Null || v.Num != float64(int64(v.Num)) {
			return 0, false
		}
		return max(int64(v.Num), 0), true
	}
	var out int64
	switch name {
	case "benchmark":
		return 0, refuse("BENCHMARK", supportedStringSizes)
	case "repeat", "space", "lpad", "rpad", "format":
		countArg := 1
		if name == "space" {
			countArg = 0
		}
		n, ok := count(countArg)
		if !ok {
			return 0, refuse(strings.ToUpper(name)+" with a count that is not an integer literal", supportedStringSizes)
		}
		if n > maxAmplified {
			return 0, refuse(fmt.Sprintf("%s to %d characters", strings.ToUpper(name), n), supportedStringSizes)
		}
		switch name {
		case "repeat":
			out = saturatingMul(arg(0), n)
		case "space":
			out = n
		case "format":
			out = n + otherLiteralSize
		default:
			out = 4 * n
		}
	case "replace", "regexp_replace":
		out = saturatingMul(arg(0), max(arg(2), 1))
	case "concat":
		return children, nil // it only joins: no bound of its own
	case "concat_ws":
		// The separator once between every two of the other arguments
		// (those that are not NULL), none when there are fewer than two.
		return saturatingAdd(children-arg(0), saturatingMul(arg(0), int64(max(len(f.Args)-2, 0)))), nil
	default:
		if numberFunctions[name] {
			return numberSize, nil
		}
		if digitFunctions[name] {
			return max(numberSize, children), nil
		}
		return saturatingAdd(saturatingMul(children, 4), expressionOverhead), nil
	}
	if out > maxAmplified {
		return 0, refuse(fmt.Sprintf("%s building a string of up to %d bytes", strings.ToUpper(name), out), supportedStringSizes)
	}
	return out, nil
}

// numberFunctions return a number however long their arguments are;
// digitFunctions return a number of at most their arguments' digits (the
// catalog engine's ABS, FLOOR, CEIL, TRUNCATE and MOD keep a DECIMAL's,
// ROUND a DECIMAL(65, 30)'s).
var (
	numberFunctions = map[string]bool{
		"length": true, "octet_length": true, "char_length": true, "character_length": true, "bit_length": true,
		"sign": true, "pow": true, "power": true, "sqrt": true, "exp": true, "ln": true, "log": true, "log2": true, "log10": true,
		"datediff": true, "timestampdiff": true, "dp_interval_low": true, "dp_interval_high": true,
	}
	digitFunctions = map[string]bool{
		"abs": true, "round": true, "truncate": true, "floor": true, "ceil": true, "ceiling": true, "mod": true,
	}
)

func saturatingAdd(a, b int64) int64 {
	if a > maxStatementStrings<<8 || b > maxStatementStrings<<8 {
		return maxStatementStrings << 9
	}
	return a + b
}

func saturatingMul(a, n int64) int64 {
	if n != 0 && a > (maxStatementStrings<<9)/n {
		return maxStatementStrings << 9
	}
	return a * n
}
