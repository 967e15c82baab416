package sqlrewrite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// supportedScalar names the scalar subqueries dpproxy answers, for the
// refusals of every other subquery.
const supportedScalar = "a subquery must be an uncorrelated scalar subquery, (SELECT agg FROM t [WHERE ...]) of one column and one row " +
	"(one aggregate, or arithmetic and functions of its aggregates), used as a value in the select list, HAVING or ORDER BY, " +
	"or compared with a numeric, date or timestamp column in WHERE (col > (SELECT ...), col BETWEEN (SELECT ...) AND b)"

// refuseScalar refuses a subquery form other than a scalar subquery.
func refuseScalar(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), supportedScalar)
}

// subqueries collects the scalar subqueries of one query while it is
// parsed (Query.Scalars): SELECT COUNT(*) / (SELECT COUNT(*) FROM pums)
// FROM pums WHERE married = 1.
//
// Each is parsed as a statement of its own (a Query), which dpproxy
// answers with its own releases before the query's: its value is then a
// released value like the query's own aggregates, which post-processing
// reads (ExprScalar). A subquery is uncorrelated (it reads no column of
// an enclosing query, which would make it one statement per row), reads
// a configured table and has one output column; the planner refuses one
// that may have more than one row. The same subquery written twice is
// one (MySQL evaluates an uncorrelated subquery once per statement).
type subqueries struct {
	p *Parser
	// enclosing are the scopes of the queries that hold the subqueries,
	// outermost first, the query being parsed last (nil for a SELECT
	// without FROM): a column of one of them is a correlated reference.
	enclosing []*scope
	list      []Scalar
	// keys are the subqueries' texts as the parser reads them, which
	// identify a subquery written twice.
	keys []string
}

// scalar converts the scalar subquery x and returns its index in the list.
func (c *subqueries) scalar(x *ast.SubqueryExpr) (int, error) {
	key := restore(x)
	if i := slices.Index(c.keys, key); i >= 0 {
		return i, nil
	}
	sel, ok := x.Query.(*ast.SelectStmt)
	if !ok {
		return 0, refuseScalar("UNION, INTERSECT and EXCEPT in a subquery")
	}
	text := key
	if t := strings.TrimSpace(sel.Text()); t != "" {
		text = "(" + t + ")" // as written: the parser reads COUNT(*) as COUNT(1)
	}
	if sel.From == nil {
		return 0, refuseScalar("a subquery without FROM")
	}
	if err := flatten(sel); err != nil {
		return 0, err
	}
	own, err := c.p.source(sel)
	if err != nil {
		return 0, err
	}
	if ref := correlated(sel, own, c.enclosing); ref != "" {
		return 0, refuseScalar("a correlated subquery (it reads %s of the enclosing query, which would make it one statement per row)", ref)
	}
	q, err := c.p.queryIn(sel, c.enclosing)
	if err != nil {
		return 0, err
	}
	if q.Listing {
		return 0, refuseScalar("a subquery that lists declared values (it returns a row per value)")
	}
	if len(q.Columns) != 1 {
		return 0, refuseScalar("a subquery of %d columns", len(q.Columns))
	}
	c.list, c.keys = append(c.list, Scalar{Query: q, Text: text}), append(c.keys, key)
	return len(c.list) - 1, nil
}

// correlated returns the first column reference of sel, outside its own
// subqueries (checked when they are parsed), that reads an enclosing
// query's column rather than one of sel's table (own), as MySQL resolves
// names: a name qualified by an enclosing query's table or alias, or an
// unqualified name that is neither a column of own's table nor an alias
// of sel's select list but is a column of an enclosing table. "" when
// there is none.
func correlated(sel *ast.SelectStmt, own *scope, enclosing []*scope) string {
	aliases := map[string]bool{}
	for _, f := range sel.Fields.Fields {
		if f.AsName.L != "" {
			aliases[f.AsName.L] = true
		}
	}
	found := ""
	containsOwnNode(sel, func(n ast.Node) bool {
		c, ok := n.(*ast.ColumnNameExpr)
		if !ok {
			return false
		}
		name := c.Name
		for _, o := range enclosing {
			if o == nil {
				continue
			}
			outer := false
			switch {
			case name.Table.O != "":
				outer = !strings.EqualFold(name.Table.O, own.qualifier) && strings.EqualFold(name.Table.O, o.qualifier)
			default:
				_, inner := own.table.Column(name.Name.O)
				_, theirs := o.table.Column(name.Name.O)
				outer = !inner && !aliases[name.Name.L] && theirs
			}
			if outer {
				found = restore(c)
				return true
			}
		}
		return false
	})
	return found
}

// hasSubquery reports whether a SELECT holds a subquery outside its FROM
// clause: in its select list, WHERE, HAVING or ORDER BY.
func hasSubquery(s *ast.SelectStmt) bool {
	return s.Fields != nil && containsNode(s.Fields, isSubquery) ||
		s.Where != nil && containsNode(s.Where, isSubquery) ||
		s.Having != nil && containsNode(s.Having, isSubquery) ||
		s.OrderBy != nil && containsNode(s.OrderBy, isSubquery)
}

// fromLessScalars converts a SELECT without FROM whose select list reads
// scalar subqueries of configured tables: SELECT (SELECT COUNT(*) FROM
// pums), SELECT (SELECT AVG(age) FROM pums) - (SELECT AVG(age) FROM pums
// WHERE sex = 1) AS gap. Its one row is post-processing of the
// subqueries' released values and of constants (a Query of no table with
// Scalars).
func (p *Parser) fromLessScalars(s *ast.SelectStmt) (*Query, error) {
	if err := refuseClauses(s); err != nil {
		return nil, err
	}
	if s.Where != nil {
		return nil, refuseScalar("WHERE in a SELECT without FROM")
	}
	sub := &subqueries{p: p, enclosing: []*scope{nil}}
	qb := &queryBuilder{q: &Query{Base: &Select{}}, fields: s.Fields.Fields, sub: sub}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			return nil, refuseQuery("SELECT * without FROM")
		}
		var column *ast.ColumnNameExpr
		containsOwnNode(f.Expr, func(n ast.Node) bool {
			column, _ = n.(*ast.ColumnNameExpr)
			return column != nil
		})
		if column != nil {
			return nil, unknownColumn(column.Name, "field list")
		}
		if containsOwnNode(f.Expr, isAggregate) {
			return nil, refuseScalar("aggregates without FROM outside a subquery")
		}
		e, err := qb.expr(f.Expr, "field list")
		if err != nil {
			return nil, err
		}
		name := label(f)
		if v, isLiteral := literal(f.Expr); isLiteral && f.AsName.O == "" {
			name = literalLabel(literalText(f.Text()), v)
		}
		qb.q.Columns = append(qb.q.Columns, OutputColumn{Label: name, Expr: e})
	}
	qb.q.Scalars = sub.list
	return qb.q, nil
}

// containsOwnNode is containsNode within one query level: it does not
// look into subqueries (a subquery node itself is matched).
func containsOwnNode(e ast.Node, match func(ast.Node) bool) bool {
	f := &ownFinder{finder{match: match}}
	e.Accept(f)
	return f.found
}

// ownFinder is a finder that skips the inside of subqueries.
type ownFinder struct{ finder }

func (f *ownFinder) Enter(n ast.Node) (ast.Node, bool) {
	if f.match(n) {
		f.found = true
	}
	return n, f.found || isSubquery(n)
}
