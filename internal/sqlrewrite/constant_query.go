package sqlrewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
)

// constantQuery converts a SELECT without FROM whose every column is an
// expression post-processing evaluates — literals, arithmetic, CAST to a
// number, DECIMAL or CHAR, ROUND, FORMAT and the other functions of
// postFuncs, comparisons, LIKE, IN, BETWEEN, CASE, IF, COALESCE, CONCAT — into a
// Query of no table (Query.FromLess): its values, types, warnings and
// errors (1690) are then those of the same expressions beside an
// aggregate, MySQL's, where the catalog engine casts, rounds, pads and
// overflows its own way. ok is false for every other statement, which the
// catalog engine answers as before: a column that reads a variable or
// calls a session function (@@version, DATABASE(), NOW()), a clause
// other than the select list, a parameter marker, a COLLATE, a CAST to
// a temporal, BINARY or sized CHAR type, DATEDIFF and TIMESTAMPDIFF
// (notConstantFuncs), a text literal that is not valid UTF-8, and text
// that holds an executable comment or hint (executableComment).
func (p *Parser) constantQuery(s *ast.SelectStmt, sql string) (*Query, bool) {
	switch {
	case executableComment(sql):
		return nil, false
	case s.Kind != ast.SelectStmtKindSelect, s.From != nil, s.With != nil, s.Where != nil, s.GroupBy != nil,
		s.Having != nil, s.OrderBy != nil, s.Limit != nil, s.Distinct, len(s.WindowSpecs) > 0,
		s.SelectIntoOpt != nil, s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone:
		return nil, false
	}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil || !evaluable(f.Expr) {
			return nil, false
		}
	}
	if checkTextLiterals(s) != nil {
		return nil, false
	}
	qb := &queryBuilder{q: &Query{Base: &Select{}, FromLess: sql}, fields: s.Fields.Fields}
	for _, f := range s.Fields.Fields {
		e, err := qb.expr(f.Expr, "field list")
		if err != nil {
			return nil, false
		}
		name := label(f)
		if v, isLiteral := literal(f.Expr); isLiteral && f.AsName.O == "" {
			name = literalLabel(literalText(f.Text()), v)
		}
		qb.q.Columns = append(qb.q.Columns, OutputColumn{Label: name, Expr: e})
	}
	return qb.q, true
}

// executableComment reports whether sql holds, anywhere, the opening of
// a comment that some server reads as code: /*! ... */ (version-gated
// differently by MySQL, MariaDB and TiDB), /*M! ... */ (run by MariaDB,
// ignored by TiDB), /*T![feature] ... */ and optimizer hints /*+ ... */
// (read as tokens by TiDB's parser, whose tree the checks see, and as a
// comment by MySQL and MariaDB). The statement then goes to the catalog
// engine, whose lexical check refuses such comments (1235). The text is
// searched as a whole, strings included, so that no reading of quotes
// (a backslash under NO_BACKSLASH_ESCAPES, a "--" that is or is not a
// comment) can hide one; a string that merely holds "/*!" goes to the
// catalog engine too, which answers it as before.
func executableComment(sql string) bool {
	for i := strings.Index(sql, "/*"); i >= 0; i = indexFrom(sql, i+2, "/*") {
		rest := strings.ToUpper(sql[i+2 : min(i+4, len(sql))])
		if strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "+") ||
			strings.HasPrefix(rest, "T!") || strings.HasPrefix(rest, "M!") {
			return true
		}
	}
	return false
}

// notConstantFuncs are the functions of post-processing that a SELECT
// without FROM leaves to the catalog engine: DP_INTERVAL_LOW and _HIGH
// take an aggregate, and DATEDIFF and TIMESTAMPDIFF read only the
// canonical texts of released dates ('2024-03-01', '2024-03-01
// 10:00:00'), where MySQL reads any date or number ('2024-3-1',
// 20240301) and warns (1292) of text that is none.
var notConstantFuncs = map[string]bool{
	"dp_interval_low": true, "dp_interval_high": true, "datediff": true, "timestampdiff": true,
}

// literalText is the column name MariaDB gives a number literal written
// as text: without the parentheses around an unsigned number ((1) is 1,
// but (-1) stays (-1), and - 1 keeps its space).
func literalText(text string) string {
	for len(text) > 2 && text[0] == '(' && text[len(text)-1] == ')' && !strings.ContainsAny(text[1:len(text)-1], "()-+") {
		text = strings.TrimSpace(text[1 : len(text)-1])
	}
	return text
}

// evaluable reports whether every node of e is one post-processing
// evaluates over constants alone (constantQuery).
func evaluable(e ast.ExprNode) bool {
	c := &evaluableChecker{ok: true}
	e.Accept(c)
	return c.ok
}

type evaluableChecker struct{ ok bool }

func (c *evaluableChecker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case ast.ParamMarkerExpr:
		c.ok = false
	case ast.ValueExpr:
		// A charset introducer (_latin1'x', N'x') gives text its own
		// collation, and 0x41, x'41' and b'1' are binary strings:
		// post-processing has neither.
		_, binary := x.GetValue().(test_driver.BinaryLiteral)
		c.ok = c.ok && !binary && x.GetType().GetFlag()&mysql.UnderScoreCharsetFlag == 0
	case *ast.ParenthesesExpr, *ast.UnaryOperationExpr, *ast.BinaryOperationExpr,
		*ast.IsNullExpr, *ast.IsTruthExpr, *ast.BetweenExpr, *ast.CaseExpr, *ast.WhenClause, *ast.TrimDirectionExpr:
	case *ast.PatternInExpr:
		c.ok = c.ok && x.Sel == nil
	case *ast.PatternLikeOrIlikeExpr:
		c.ok = c.ok && x.IsLike
	case *ast.FuncCallExpr:
		_, known := postFuncs[x.FnName.L]
		c.ok = c.ok && known && x.Schema.L == "" && !notConstantFuncs[x.FnName.L]
	case *ast.FuncCastExpr:
		c.ok = c.ok && evaluableCast(x)
	default:
		c.ok = false
	}
	return n, !c.ok
}

func (c *evaluableChecker) Leave(n ast.Node) (ast.Node, bool) { return n, c.ok }

// evaluableCast reports whether post-processing casts as MySQL does to
// x's target: SIGNED, UNSIGNED, DECIMAL(p, s), FLOAT, DOUBLE, and CHAR
// without a length or a character set other than utf8mb4 (castExpr).
func evaluableCast(x *ast.FuncCastExpr) bool {
	if x.FunctionType != ast.CastFunction && x.FunctionType != ast.CastConvertFunction {
		return false // BINARY x, CONVERT(x USING cs)
	}
	switch x.Tp.GetType() {
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeInt24, mysql.TypeShort, mysql.TypeTiny,
		mysql.TypeNewDecimal, mysql.TypeFloat, mysql.TypeDouble:
		return true
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		cs := x.Tp.GetCharset()
		return x.Tp.GetFlen() < 0 && (cs == "" || cs == "utf8mb4") && !mysql.HasBinaryFlag(x.Tp.GetFlag())
	}
	return false
}
