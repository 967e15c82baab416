package sqlrewrite

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
)

// maxNestingDepth bounds how deeply a statement's syntax tree may nest
// (every node counts: a parenthesis, an operator, a function call, a
// subquery), and maxChainLinks how many links its chains of one logical
// operator may have (a OR b OR c nests as ((a OR b) OR c): each OR below
// an OR is a link, not a level, since the conversions flatten such
// chains). The proxy's conversions recurse once per level or link, with
// frames of kilobytes, and Go's stack overflow is fatal, not a panic a
// handler can recover: 260,000 parentheses around a condition took the
// whole proxy down; at these limits the conversions and the catalog
// engine use tens of megabytes of stack and answer in about a second (a
// chain of 50,000 ANDs kept the catalog engine busy for 50 s). Generated
// BI queries nest a few dozen levels.
const (
	maxNestingDepth = 5000
	maxChainLinks   = 10000
)

// maxSetOprSelects bounds the SELECTs a statement's UNIONs, INTERSECTs and
// EXCEPTs join, all lists together. Only the catalog engine answers set
// operations, and it plans a chain of them in time that doubles with each
// SELECT past six (8: 49 ms, 9: 90 ms, 11: 1.2 s, 14: over a minute),
// without looking at the statement's context, so neither its timeout nor
// KILL stopped it: MariaDB ODBC's SQLGetTypeInfo, 43 constant SELECTs,
// held a catalog slot for good, and four of them every analyst's catalog
// statements, logins included (an independent review). A statement that
// is a ConstantUnion (SQLGetTypeInfo's form) is answered without the
// engine and has its own bounds (constant_union.go).
const maxSetOprSelects = 8

// setOprShape is what guardSetOpr judges of a statement's set operations:
// the SELECTs they join, all lists together, and whether one of them has
// a parenthesized part, a SELECT or a set operation in parentheses.
type setOprShape struct {
	selects       int
	parenthesized bool
}

// guardDepth refuses a statement nested deeper than maxNestingDepth or
// with more than maxChainLinks links of AND or OR chains open at once, and
// returns the shape of its set operations (guardSetOpr judges it). It
// runs first on every parsed statement, before any recursive conversion,
// and never itself descends past either limit.
func guardDepth(stmt ast.Node) (setOpr setOprShape, err error) {
	g := &depthGuard{}
	stmt.Accept(g)
	switch {
	case g.depth > maxNestingDepth:
		return setOprShape{}, refuse(fmt.Sprintf("expressions nested more than %d levels deep", maxNestingDepth),
			"the same statement with fewer nested parentheses, operators or function calls")
	case g.links > maxChainLinks:
		return setOprShape{}, refuse(fmt.Sprintf("a chain of more than %d ANDs or ORs", maxChainLinks),
			"IN (...) lists, or fewer conditions")
	}
	return g.setOpr, nil
}

// guardSetOpr refuses set operations of more than maxSetOprSelects
// SELECTs, and those with a parenthesized part: the catalog engine, the
// only one that answers set operations, orders and limits them unlike
// MySQL and MariaDB ((SELECT 1) UNION (SELECT 2) ORDER BY 1 DESC came out
// 1, 2). A ConstantUnion, which answers both kinds itself, is recognised
// before this.
func guardSetOpr(setOpr setOprShape) error {
	switch {
	case setOpr.selects > maxSetOprSelects:
		return refuse(fmt.Sprintf("UNION, INTERSECT or EXCEPT of more than %d SELECTs", maxSetOprSelects),
			"separate statements of at most that many SELECTs, or a UNION of up to 4,096 SELECTs of literal strings, integers and NULLs only")
	case setOpr.parenthesized:
		return refuse("a parenthesized SELECT or set operation within a UNION, INTERSECT or EXCEPT (other than of literal strings, integers and NULLs)",
			"the same statement without the parentheses (an ORDER BY and LIMIT after the last SELECT apply to the whole), or separate statements")
	}
	return nil
}

// depthGuard tracks the levels and chain links open on the path to the
// node being visited; it stops descending, leaving depth or links above
// its limit, once either is passed.
type depthGuard struct {
	path         []ast.Node
	depth, links int
	setOpr       setOprShape
}

// logicOp returns n's operator if n is an AND or OR (or XOR), else 0.
func logicOp(n ast.Node) opcode.Op {
	if b, ok := n.(*ast.BinaryOperationExpr); ok {
		switch b.Op {
		case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
			return b.Op
		}
	}
	return 0
}

// isLink reports whether n, entered below parent, continues parent's chain.
func isLink(parent, n ast.Node) bool {
	op := logicOp(n)
	return op != 0 && op == logicOp(parent)
}

func (g *depthGuard) Enter(n ast.Node) (ast.Node, bool) {
	if g.depth > maxNestingDepth || g.links > maxChainLinks {
		return n, true
	}
	if len(g.path) > 0 && isLink(g.path[len(g.path)-1], n) {
		g.links++
	} else {
		g.depth++
	}
	if list, ok := n.(*ast.SetOprSelectList); ok {
		g.setOpr.selects += len(list.Selects)
		for _, sel := range list.Selects {
			if _, nested := sel.(*ast.SetOprSelectList); nested {
				g.setOpr.parenthesized = true
			}
		}
	}
	g.path = append(g.path, n)
	return n, g.depth > maxNestingDepth || g.links > maxChainLinks
}

func (g *depthGuard) Leave(n ast.Node) (ast.Node, bool) {
	if g.depth > maxNestingDepth || g.links > maxChainLinks {
		return n, true // keep the verdict: nothing is unwound past a limit
	}
	g.path = g.path[:len(g.path)-1]
	if len(g.path) > 0 && isLink(g.path[len(g.path)-1], n) {
		g.links--
	} else {
		g.depth--
	}
	return n, true
}
