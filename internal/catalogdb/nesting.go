package catalogdb

import (
	"fmt"
	"math"
	"reflect"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// go-mysql-server (v0.20.0) plans a statement in time that grows
// exponentially with how its subqueries and expressions nest, and its
// planning reads no context: a statement that the statement timeout, KILL
// and a closed connection cannot stop holds one of the engine's
// maxConcurrentStatements slots until it is planned (an independent
// review held all four with SELECT (SELECT (SELECT ... 1))). A subquery's
// type is its query's schema, computed twice per call (plan.Subquery.Type),
// and every expression above the subquery asks for its type again
// (Arithmetic.IsNullable twice per operator, the analyzer's operand checks
// once per expression), so each level of nesting multiplies the work below
// it by about the depth at which the subquery sits in its parent's
// expression; a unary minus asks for its operand's type twice
// (UnaryMinus.Type), doubling everything below it. Planning times measured
// on the 2-core development machine:
//
//	SELECT (SELECT (SELECT ... 1)), n levels       n=10 0.19 s, 12 2.2 s, 16 95 s (the review)
//	(SELECT x+1+...+1), L terms, at each of n      L=10: n=2 0.29 s, 3 6.2 s; L=50: n=2 9.6 s
//	(SELECT (SELECT 1)+(SELECT ...)), n levels     n=4 0.49 s, 5 1.3 s, 6 6.2 s
//	EXISTS(SELECT ...) nested n deep               n=100 40 s (the review)
//	-(-(...(@a))), m signs                         m=16 9 ms, 20 0.24 s (doubling with each sign)
//	@a+@a+...+@a, L terms, no subquery             L=1000 1.1 s, 4000 10 s, 16000 > 200 s
//	(SELECT 1), (SELECT 1), ..., n subqueries      n=1000 0.5 to 1.8 s
//
// planningCost bounds that work from the engine's own parse, before the
// engine sees the statement, with a model that multiplies as the engine
// does. A block (the statement, or one subquery of any kind: scalar,
// EXISTS, IN, a derived table, a CTE, with the set operations it holds)
// costs blockCost, plus, for each expression in it, one more than that
// expression's depth in the block (the operand checks; the chain a+b+c is
// that deep), plus, for each subquery in it, that subquery's cost times
// subqueryFactor·(1 + its depth in the block); each unary minus doubles
// everything below it. For every shape measured, the model's cost grows
// about as fast as the planning time or faster, and maxPlanningCost is set so that the slowest statement it lets through
// plans in well under a second: the shapes above at their largest allowed
// size plan in at most 0.1 s (TestPlanningCostBoundsPlanningTime logs
// them), and the slowest of 31,000 random statements of subqueries,
// arithmetic, CASE, IF, COALESCE, unary minus and derived tables costing
// 5,000 to maxPlanningCost planned in 10 ms (it ran for 0.2 s, evaluating
// its subqueries for each row, which the statement timeout bounds).
// Catalog statements of BI tools and drivers cost under 1,000 (MariaDB
// ODBC's SQLGetTypeInfo, a UNION of 43 SELECTs, 833).

// blockCost is a block's own cost: its analysis, whatever it holds.
const blockCost = 16

// subqueryFactor multiplies the cost of a subquery at depth 0 of its
// parent's expression: the engine computes its schema twice per type
// request, and its parent's analysis asks about twice.
const subqueryFactor = 4

// maxPlanningCost is the largest planningCost a statement over the
// catalog may have. SELECT (SELECT ... 1) is answered 6 levels deep, a
// chain of EXISTS or IN subqueries 4, of derived tables 5, of CTEs 6; an
// OR of 200 conditions, a sum of 300 terms, a unary minus 12 deep.
const maxPlanningCost = 100_000

// maxScalarNesting is how deep SELECT (SELECT ... 1) may nest under
// maxPlanningCost, for the error message (TestPlanningCostBoundsPlanningTime
// checks it).
const maxScalarNesting = 6

// maxSubqueries bounds the subqueries of one statement, whatever their
// nesting: each costs the engine about 1 ms to analyze.
const maxSubqueries = 64

// checkPlanningCost returns an error when the catalog engine may take too
// long to plan stmt, parsed from text of textLen bytes.
func checkPlanningCost(stmt sqlparser.SQLNode, textLen int) error {
	cost, subqueries, depth := planningCost(stmt, textLen)
	switch {
	case subqueries > maxSubqueries:
		return fmt.Errorf("%d subqueries (at most %d)", subqueries, maxSubqueries)
	case cost > maxPlanningCost:
		nesting := ""
		if depth > 0 {
			nesting = fmt.Sprintf("subqueries %d levels deep, ", depth)
		}
		return fmt.Errorf("subqueries or expressions nested too deeply: the catalog engine's planning time grows steeply with nesting, exponentially for subqueries "+
			"(%sestimated planning cost %.3g, at most %d; SELECT (SELECT ... 1) passes %d levels deep)", nesting, cost, maxPlanningCost, maxScalarNesting)
	}
	return nil
}

// planningCost returns the statement's cost in the model above, its
// number of subqueries and the depth of its deepest subquery (1 for a
// subquery of the statement itself). Every field of the parse is read, by
// reflection, so that a node whose Walk skips some of its children (a set
// operation's WITH and ORDER BY) cannot hide a subquery. The cost is +Inf
// once the walk has read more than visitsPerByte values of the parse per
// byte of text, which no parse of the text needs unless the parser shared
// one node between two places: walking stays linear in the text.
func planningCost(stmt sqlparser.SQLNode, textLen int) (cost float64, subqueries, depth int) {
	m := &costModel{visitsLeft: visitsPerByte * (textLen + 1)}
	cost = m.block(reflect.ValueOf(stmt), 0)
	if m.visitsLeft < 0 {
		cost = math.Inf(1)
	}
	return cost, m.subqueries, m.depth
}

// visitsPerByte bounds the values of the parse the walk reads per byte of
// the statement's text: (SELECT 1) is about 40 values for 10 bytes.
const visitsPerByte = 64

var (
	exprType     = reflect.TypeFor[sqlparser.Expr]()
	subqueryType = reflect.TypeFor[*sqlparser.Subquery]()
	parenType    = reflect.TypeFor[*sqlparser.ParenExpr]()
	unaryType    = reflect.TypeFor[*sqlparser.UnaryExpr]()
)

// costModel walks one statement's parse.
type costModel struct {
	subqueries, depth int
	visitsLeft        int
}

// block returns the cost of the block rooted at v, a subquery nested level
// deep (0 for the statement).
func (m *costModel) block(v reflect.Value, level int) float64 {
	m.depth = max(m.depth, level)
	return blockCost + m.walk(v, level, 0, 0)
}

// walk returns the cost of the parse v in a block nested level deep, v
// below depth expressions and minus unary minus signs of that block.
func (m *costModel) walk(v reflect.Value, level, depth, minus int) float64 {
	if m.visitsLeft--; m.visitsLeft < 0 {
		return 0
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return m.walk(v.Elem(), level, depth, minus)
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		if v.Type() == subqueryType {
			m.subqueries++
			scale := subqueryFactor * float64(1+depth) * math.Exp2(float64(minus))
			return scale * m.block(v.Elem(), level+1)
		}
		cost := 0.0
		if isExpression(v.Type()) {
			cost = float64(1+depth) * math.Exp2(float64(minus))
			depth++
			if v.Type() == unaryType && v.Elem().FieldByName("Operator").String() == sqlparser.UMinusStr {
				minus++
			}
		}
		return cost + m.walk(v.Elem(), level, depth, minus)
	case reflect.Struct:
		cost := 0.0
		for i := range v.NumField() {
			cost += m.walk(v.Field(i), level, depth, minus)
		}
		return cost
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return 0 // bytes: a literal's text, an identifier
		}
		cost := 0.0
		if v.Kind() == reflect.Slice && isExpression(v.Type()) {
			// A tuple (a, b, c) is one expression over its members.
			cost = float64(1+depth) * math.Exp2(float64(minus))
			depth++
		}
		for i := range v.Len() {
			cost += m.walk(v.Index(i), level, depth, minus)
		}
		return cost
	}
	return 0
}

// isExpression reports whether a node of type t becomes an expression of
// the engine's plan: an Expr other than parentheses, which the engine
// drops.
func isExpression(t reflect.Type) bool {
	return t != parenType && t.Implements(exprType)
}
