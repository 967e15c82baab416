package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// SetCharsets makes the parser refuse text constants that the character
// set of a text column they meet cannot represent (checkCharsets). cs is
// read at every statement, so that a column read again later is checked
// by its new character set; nil, the default, checks nothing.
func (p *Parser) SetCharsets(cs *catalog.Charsets) { p.charsets = cs }

// literalCollation is the collation MySQL gives the proxy's text bind
// arguments (the driver's default connection collation), for the message
// of a refusal.
const literalCollation = "utf8mb4_general_ci"

// checkCharsets refuses (CollationMix, 1267, HY000, MySQL's own error) a
// statement in which a text constant meets a text column whose backend
// character set (Parser.SetCharsets) cannot represent it: a comparison
// (= <> < <= > >= <=>, LIKE, IN, BETWEEN, CASE col WHEN), or a function
// whose arguments hold both (LEFT(col, 1), CONCAT, IF's values). MySQL and
// MariaDB fail such a statement with "Illegal mix of collations" and
// PostgreSQL under a database encoding that lacks the character fails to
// bind it, whatever the data, but only when the fetch runs, after the
// reservation (DESIGN.md §2: everything that can be validated is, before).
//
// The check is conservative: within one comparison or call, every column
// reached through string-valued operands (not through nested conditions,
// aggregates or subqueries) meets every constant there; a name that is no
// column of the statement's configured tables (a derived table's alias)
// stands for every text column of those tables; a character set the proxy
// does not know holds ASCII only (catalog.Representable). It may refuse a
// statement the backend would answer (CAST(col AS CHAR) = '😀'), never
// pass one that fails this way.
func (p *Parser) checkCharsets(n ast.Node) error {
	if p.charsets == nil {
		return nil
	}
	var tables []*catalog.Table
	for _, name := range p.collect(n).data {
		if t, ok := p.cat.Table(name); ok {
			tables = append(tables, t)
		}
	}
	c := &charsetChecker{p: p, tables: tables}
	n.Accept(c)
	return c.err
}

// charsetChecker walks a statement for the comparisons and calls that
// checkCharsets checks; err is the first refusal.
type charsetChecker struct {
	p      *Parser
	tables []*catalog.Table
	err    error
}

func (c *charsetChecker) Enter(n ast.Node) (ast.Node, bool) {
	if c.err != nil {
		return n, true
	}
	switch n := n.(type) {
	case *ast.BinaryOperationExpr:
		if op, ok := comparisonNames[n.Op]; ok {
			c.check(op, n.L, n.R)
		}
	case *ast.PatternLikeOrIlikeExpr:
		c.check("like", n.Expr, n.Pattern)
	case *ast.PatternInExpr:
		c.check("in", append([]ast.ExprNode{n.Expr}, n.List...)...)
	case *ast.BetweenExpr:
		c.check("between", n.Expr, n.Left, n.Right)
	case *ast.CaseExpr:
		if n.Value != nil {
			compared := []ast.ExprNode{n.Value}
			for _, w := range n.WhenClauses {
				compared = append(compared, w.Expr)
			}
			c.check("case", compared...)
		}
		results := []ast.ExprNode{n.ElseClause}
		for _, w := range n.WhenClauses {
			results = append(results, w.Result)
		}
		c.check("case", results...)
	case *ast.FuncCallExpr:
		c.check(n.FnName.L, n.Args...)
	}
	return n, c.err != nil
}

func (c *charsetChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// comparisonNames name the comparison operators as MySQL's message does.
var comparisonNames = map[opcode.Op]string{
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=", opcode.NullEQ: "<=>",
}

// check refuses the operands of op when a text constant among them meets
// a column among them that cannot represent it.
func (c *charsetChecker) check(op string, operands ...ast.ExprNode) {
	var g stringOperands
	for _, e := range operands {
		if e != nil {
			e.Accept(&g)
		}
	}
	if len(g.columns) == 0 || len(g.texts) == 0 {
		return
	}
	for _, name := range g.columns {
		for _, col := range c.textColumns(name) {
			for _, s := range g.texts {
				if !catalog.Representable(col.cs, s) {
					c.err = collationMix(col.name, col.cs, op)
					return
				}
			}
		}
	}
}

// charsetColumn is a text column with its character set.
type charsetColumn struct {
	name string
	cs   catalog.Charset
}

// textColumns returns the text columns name may stand for, with their
// character sets: the column of that name of the statement's tables, or,
// when none has one, every text column of theirs (checkCharsets).
func (c *charsetChecker) textColumns(name string) []charsetColumn {
	var named, all []charsetColumn
	resolved := false
	for _, t := range c.tables {
		for i := range t.Columns {
			col := &t.Columns[i]
			is := strings.EqualFold(col.Name, name)
			resolved = resolved || is
			if col.Type != catalog.Text {
				continue
			}
			cs, ok := c.p.charsets.Of(t.Name, col.Name)
			if !ok {
				continue
			}
			all = append(all, charsetColumn{name: col.Name, cs: cs})
			if is {
				named = append(named, all[len(all)-1])
			}
		}
	}
	if resolved {
		return named
	}
	return all
}

// collationMix is MySQL's error for a column of cs compared with a
// constant it cannot represent, or its counterpart under a PostgreSQL
// database encoding.
func collationMix(column string, cs catalog.Charset, op string) error {
	if enc, ok := strings.CutPrefix(cs.Name, catalog.PostgresEncodingPrefix); ok {
		return dperr.New(dperr.CollationMix,
			"Illegal mix of collations: a text constant compared with column %s has a character that the backend database's encoding %s cannot represent, for operation '%s'", column, enc, op)
	}
	collation := cs.Collation
	if collation == "" {
		collation = cs.Name
	}
	return dperr.New(dperr.CollationMix, "Illegal mix of collations (%s,IMPLICIT) and (%s,COERCIBLE) for operation '%s'", collation, literalCollation, op)
}

// stringOperands gathers the column names and text constants of an
// operand that its string value may come from: it does not descend into
// conditions (comparisons, logical operators, IS, LIKE, IN, BETWEEN),
// aggregates, window functions or subqueries, whose values are numbers or
// checked on their own.
type stringOperands struct {
	columns []string
	texts   []string
}

func (g *stringOperands) Enter(n ast.Node) (ast.Node, bool) {
	switch n := n.(type) {
	case *ast.ColumnNameExpr:
		g.columns = append(g.columns, n.Name.Name.O)
	case ast.ValueExpr:
		if s, ok := n.GetValue().(string); ok {
			g.texts = append(g.texts, s)
		}
	case *ast.BinaryOperationExpr:
		_, comparison := comparisonNames[n.Op]
		return n, comparison || n.Op == opcode.LogicAnd || n.Op == opcode.LogicOr || n.Op == opcode.LogicXor
	case *ast.UnaryOperationExpr:
		return n, n.Op == opcode.Not
	case *ast.PatternLikeOrIlikeExpr, *ast.PatternInExpr, *ast.BetweenExpr, *ast.IsNullExpr, *ast.IsTruthExpr,
		*ast.AggregateFuncExpr, *ast.WindowFuncExpr, *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return n, true
	}
	return n, false
}

func (g *stringOperands) Leave(n ast.Node) (ast.Node, bool) { return n, true }
