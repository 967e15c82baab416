package sqlrewrite

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// supportedGrouped names the nearest supported forms in the refusals of a
// Query that would read rows.
const supportedGrouped = "the nearest supported form aggregates: SELECT key, COUNT(*), AVG(col) FROM t [WHERE ...] GROUP BY key [HAVING ...] [ORDER BY ...] [LIMIT n], key a column with declared values or FLOOR(col / w) * w, and arithmetic, ROUND, ABS, COALESCE, CASE, FORMAT, CONCAT, LPAD, UPPER ... over the aggregates and keys"

// refuseRows refuses a shape that would read rows: its message says so and
// names the nearest supported form.
func refuseRows(format string, args ...any) error {
	return dperr.New(dperr.Unsupported, "not supported: %s would read rows; %s", fmt.Sprintf(format, args...), supportedGrouped)
}

// query converts a SELECT with FROM that the one-row and histogram forms
// do not cover into a Query (query.go): grouped aggregates over public
// keys, post-processing, HAVING, ORDER BY, LIMIT, DISTINCT, and listings
// of declared domains.
func (p *Parser) query(s *ast.SelectStmt) (*Query, error) {
	return p.queryIn(s, nil)
}

// queryIn is query for a SELECT that may be a scalar subquery of the
// queries whose scopes are enclosing, outermost first (scalar.go); the
// scalar subqueries it holds itself become its Scalars.
func (p *Parser) queryIn(s *ast.SelectStmt, enclosing []*scope) (*Query, error) {
	switch {
	case s.Kind != ast.SelectStmtKindSelect:
		return nil, refuseQuery("%s statements", s.Kind.String())
	case s.With != nil:
		return nil, refuseQuery("WITH (common table expressions)")
	case len(s.WindowSpecs) > 0:
		return nil, refuseRows("WINDOW over the table's rows")
	case s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone:
		return nil, refuseQuery("FOR UPDATE and LOCK IN SHARE MODE")
	case s.SelectIntoOpt != nil:
		return nil, refuseInto()
	}
	sc, err := p.source(s)
	if err != nil {
		return nil, err
	}
	sub := &subqueries{p: p, enclosing: append(slices.Clip(enclosing), sc)}
	qb := &queryBuilder{sc: sc, q: &Query{Base: &Select{Table: sc.table.Name}, Distinct: s.Distinct}, fields: s.Fields.Fields, sub: sub}
	qb.havingOrOrderAggregate = s.Having != nil && containsOwnNode(s.Having.Expr, isRowAggregate) || s.OrderBy != nil && containsOwnNode(s.OrderBy, isRowAggregate)
	q := qb.q
	if s.Where != nil {
		sc.scalars = sub
		pred, err := sc.predicate(s.Where, whereSite)
		sc.scalars = nil
		if err != nil {
			return nil, err
		}
		if conds, ok := conjunction(pred); ok {
			q.Base.Where = conds
			sc.where = conds
		} else {
			q.Base.Boolean = pred
		}
	}
	for _, f := range qb.fields {
		if f.WildCard != nil {
			return nil, refuseRows("SELECT *")
		}
	}
	if s.GroupBy != nil {
		if err := qb.groupBy(s.GroupBy); err != nil {
			return nil, err
		}
	} else if s.Distinct && !qb.anyAggregate() {
		// SELECT DISTINCT key, ...: a listing; the expressions become the
		// keys (columns with declared values, buckets, date parts such as
		// YEAR(col), listed from the configuration as GROUP BY lists them),
		// or a column open to partition selection, whose values are
		// selected as GROUP BY selects them.
		qb.grouping = true
		for _, f := range qb.fields {
			e := unparen(f.Expr)
			if _, err := qb.keyExpr(e); err != nil {
				if _, isColumn := e.(*ast.ColumnNameExpr); isColumn || dperr.KindOf(err) != dperr.Unsupported {
					return nil, err
				}
				return nil, refuseRows("SELECT DISTINCT of %s (only columns with declared values, buckets FLOOR(col / w) * w and date parts such as YEAR(col) can be listed)", label(f))
			}
		}
		qb.grouping = false
		if err := qb.onePrivateKey(); err != nil {
			return nil, err
		}
	}
	for _, f := range qb.fields {
		e, err := qb.expr(f.Expr, "field list")
		if err != nil {
			return nil, err
		}
		name := label(f)
		if c, ok := unparen(f.Expr).(*ast.ColumnNameExpr); ok && f.AsName.O == "" {
			name = c.Name.Name.O // MySQL labels t.col and `col` as col
		}
		q.Columns = append(q.Columns, OutputColumn{Label: name, Expr: e})
	}
	if !qb.anyAggregate() {
		if err := qb.listing(s); err != nil {
			return nil, err
		}
	}
	if s.Having != nil {
		if containsNode(s.Having.Expr, func(n ast.Node) bool { _, ok := n.(*ast.WindowFuncExpr); return ok }) {
			return nil, refuseQuery("window functions in HAVING")
		}
		if q.Having, err = qb.named(s.Having.Expr, "having clause"); err != nil {
			return nil, err
		}
	}
	if s.OrderBy != nil {
		for _, it := range s.OrderBy.Items {
			e, err := qb.named(it.Expr, "order clause")
			if err != nil {
				return nil, err
			}
			q.OrderBy = append(q.OrderBy, OrderKey{Expr: e, Desc: it.Desc})
		}
	}
	if s.Limit != nil {
		if q.Limit, err = limitOf(s.Limit); err != nil {
			return nil, err
		}
	}
	q.Base.Derive = sc.derived
	q.Scalars = sub.list
	if q.Rollup {
		if err := checkRollup(q); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// checkRollup refuses WITH ROLLUP where its super-aggregate rows are not
// post-processing of the released groups: each super-aggregate of a COUNT
// or SUM is the sum of its groups' released values, of an AVG the mean of
// the sums of its groups' released sums from both bounds, of a VARIANCE or
// STDDEV the one of the sums of its groups' released squares from both
// bounds (the planner refuses one released otherwise); a quantile or a
// MIN of a union is no function of the groups' releases. And over every group of
// the domain only with public keys (a key chosen by partition selection
// releases some of its values).
func checkRollup(q *Query) error {
	for _, k := range q.Keys {
		if k.Private {
			return refuseQuery("WITH ROLLUP beside GROUP BY %s, a key chosen by partition selection (its total would miss the values not released)", k.Column)
		}
	}
	for _, it := range q.Base.Items {
		switch it.Agg.Func {
		case CountRows, CountColumn, Sum, Avg, VarPop, VarSamp, StddevPop, StddevSamp:
		default:
			return refuseQuery("WITH ROLLUP with %s (its totals are computed from the groups' released values, which answers COUNT, SUM, AVG, VARIANCE and STDDEV only)", it.Label)
		}
	}
	if len(q.Windows) > 0 {
		return refuseQuery("window functions with WITH ROLLUP")
	}
	return nil
}

// listing checks a query without aggregates. With GROUP BY or DISTINCT
// over keys with declared domains it lists the domain from the
// configuration; with a key chosen by partition selection it is the
// selection alone (the planner spends all of the statement's ε and δ on
// it); anything else would return one row per table row.
func (qb *queryBuilder) listing(s *ast.SelectStmt) error {
	q := qb.q
	if slices.ContainsFunc(q.Keys, func(k GroupKey) bool { return k.Private }) {
		return nil
	}
	if len(q.Keys) == 0 {
		return refuseRows("a SELECT with FROM and no aggregate (it returns one row per row)")
	}
	if s.Where != nil || s.Having != nil {
		return refuseRows("listing the values of a column with WHERE or HAVING (the declared values are listed from the configuration, for the whole table)")
	}
	q.Listing = true
	return nil
}

// limitOf reads LIMIT [offset,] count of constants: integer literals up
// to 18446744073709551615, as MySQL takes them.
func limitOf(l *ast.Limit) (*Limit, error) {
	read := func(e ast.ExprNode) (uint64, error) {
		n, ok := limitValue(e)
		if !ok {
			return 0, refuseQuery("a LIMIT or OFFSET other than a non-negative integer constant")
		}
		return n, nil
	}
	var out Limit
	var err error
	if out.Count, err = read(l.Count); err != nil {
		return nil, err
	}
	if l.Offset != nil {
		if out.Offset, err = read(l.Offset); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// anyAggregate reports whether the select list, HAVING or ORDER BY
// holds an aggregate call (constant aggregates such as MAX(1) included).
func (qb *queryBuilder) anyAggregate() bool {
	for _, f := range qb.fields {
		if f.Expr != nil && containsOwnNode(f.Expr, isRowAggregate) {
			return true
		}
	}
	return qb.havingOrOrderAggregate
}

// isRowAggregate matches an aggregate of rows, not a window function
// (which computes over the released rows).
func isRowAggregate(n ast.Node) bool {
	_, window := n.(*ast.WindowFuncExpr)
	return !window && isAggregate(n)
}

// queryBuilder converts the clauses of one Query.
type queryBuilder struct {
	sc     *scope
	q      *Query
	fields []*ast.SelectField
	// havingOrOrderAggregate is set when HAVING or ORDER BY holds an aggregate.
	havingOrOrderAggregate bool
	// grouping is set while the keys of GROUP BY or of a SELECT DISTINCT
	// without aggregates are converted: only there may a key be private
	// (chosen by partition selection).
	grouping bool
	// derived, when set, are the output columns of an aggregate subquery
	// (by lower-case name) that an outer query post-processes; its column
	// references resolve to them (derived_query.go), under derivedName.
	derived     map[string]*Expr
	derivedName string
	// outer, when set with derived, collects the aggregates of an outer
	// query over the derived rows (derived_query.go): derived then maps
	// names to ExprColumn.
	outer *Outer
	// sub, when set, collects the query's scalar subqueries (scalar.go);
	// nil where no subquery is read.
	sub *subqueries
}

// groupBy converts GROUP BY: each item names a key by a column, a select
// alias, a 1-based position, or the key expression itself.
func (qb *queryBuilder) groupBy(g *ast.GroupByClause) error {
	qb.q.Rollup = g.Rollup
	qb.grouping = true
	defer func() { qb.grouping = false }()
	groups := 1
	for _, it := range g.Items {
		e := unparen(it.Expr)
		switch x := e.(type) {
		case *ast.PositionExpr:
			if x.P != nil {
				return refuseQuery("GROUP BY a parameter")
			}
			if x.N < 1 || x.N > len(qb.fields) {
				return dperr.New(dperr.UnknownColumn, "Unknown column '%d' in 'group statement'", x.N)
			}
			e = unparen(qb.fields[x.N-1].Expr)
		case *ast.ColumnNameExpr:
			if _, declared := qb.sc.table.Column(x.Name.Name.O); !declared && x.Name.Table.O == "" {
				if f := qb.alias(x.Name.Name.O); f != nil {
					e = unparen(f.Expr)
				}
			}
		}
		before := len(qb.q.Keys)
		if _, err := qb.keyExpr(e); err != nil {
			return err
		}
		if len(qb.q.Keys) > before && qb.q.Keys[before].Private {
			continue
		}
		if len(qb.q.Keys) > before {
			groups *= len(qb.q.Keys[before].Values)
			if groups > catalog.MaxGroups {
				return refuseQuery("GROUP BY with more than %d groups (the cross product of the keys' declared domains)", catalog.MaxGroups)
			}
		}
	}
	return qb.onePrivateKey()
}

// onePrivateKey refuses more than one key chosen by partition selection.
func (qb *queryBuilder) onePrivateKey() error {
	var private []string
	for _, k := range qb.q.Keys {
		if k.Private {
			private = append(private, k.Column)
		}
	}
	if len(private) > 1 {
		return refuseQuery("GROUP BY %s, %d keys chosen by partition selection (the selection counts one key); group by one of them, with keys of declared domains beside it", strings.Join(private, ", "), len(private))
	}
	return nil
}

// alias returns the select field with the alias name, or nil.
func (qb *queryBuilder) alias(name string) *ast.SelectField {
	for _, f := range qb.fields {
		if f.AsName.O != "" && strings.EqualFold(f.AsName.O, name) {
			return f
		}
	}
	return nil
}

// keyExpr converts a GROUP BY key expression, adding the key if new, and
// returns its index.
func (qb *queryBuilder) keyExpr(e ast.ExprNode) (int, error) {
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		return qb.key(x)
	case *ast.PositionExpr:
		return 0, refuseQuery("GROUP BY a position that names another position")
	}
	if b, x, ok, err := qb.sc.expressionBucket(e); ok {
		if err != nil {
			return 0, err
		}
		return qb.bucketKeyOf(b, x)
	}
	if d, labels, ok, err := qb.sc.dating(e); ok {
		if err != nil {
			return 0, err
		}
		return qb.dateKeyIndex(d, labels), nil
	}
	if isBucketShaped(e) {
		b, err := qb.sc.bucket(e, "group statement")
		if err != nil {
			return 0, err
		}
		return qb.bucketKey(b)
	}

	if t, labels, ok, err := qb.sc.tiering(e); ok {
		if err != nil {
			return 0, err
		}
		return qb.tierKey(t, labels)
	}
	if t, labels, x, ok, err := qb.sc.mappedKey(e); ok {
		if err != nil {
			return 0, err
		}
		qb.sc.derive(x)
		return qb.tierKey(t, labels)
	}
	if b, ok, err := qb.sc.originBucket(e, "group statement"); ok {
		if err != nil {
			return 0, err
		}
		return qb.bucketKey(b)
	}
	if containsNode(e, isAggregate) {
		return 0, refuseQuery("GROUP BY an aggregate")
	}
	if containsNode(e, isColumn) {
		return 0, refuseRows("GROUP BY the expression %s (its groups are not declared)", restore(e))
	}
	return 0, refuseQuery("GROUP BY a constant")
}

// key returns the key of a column with a declared domain, adding it if new.
func (qb *queryBuilder) key(c *ast.ColumnNameExpr) (int, error) {
	col, err := qb.sc.column(c.Name, "group statement")
	if err != nil {
		return 0, err
	}
	for i, k := range qb.q.Keys {
		if k.Column == col.Name && k.Bucket == nil && k.Tiers == nil && bareDate(k) {
			return i, nil
		}
	}
	if col.Type == catalog.Date {
		d, labels, err := columnDating(col, qb.sc.dateWindow(col))
		if err != nil {
			return 0, err
		}
		return qb.dateKeyIndex(d, labels), nil
	}
	if col.Temporal() {
		return 0, refuseRows("GROUP BY or listing the timestamp column %s (its values are not declared); group by DATE(%s), DATE_FORMAT(%s, '%%Y-%%m') or YEAR(%s)", col.Name, col.Name, col.Name, col.Name)
	}
	if !col.HasDomain() && col.PartitionSelection && qb.grouping {
		qb.q.Keys = append(qb.q.Keys, GroupKey{Column: col.Name, Private: true})
		return len(qb.q.Keys) - 1, nil
	}
	if !col.HasDomain() {
		hint := "declare its values in the configuration"
		if col.Numeric() {
			hint += fmt.Sprintf(", or group by FLOOR(%s / w) * w", col.Name)
		}
		return 0, refuseRows("GROUP BY or listing the column %s, which has no declared domain (%s)", col.Name, hint)
	}
	// A declared null is the NULL group: the rows whose value is
	// unreadable (IsText tells the renderer which reading rule applies).
	// The values of a numeric column that the WHERE's ranges and IN lists
	// exclude are left out, public groups that hold no row the WHERE
	// keeps (whereAllows); text values are all kept, the backend's
	// collation deciding which of them equal a literal.
	k := GroupKey{Column: col.Name}
	for _, v := range qb.sc.declaredValues(col) {
		if !col.Numeric() || qb.sc.whereAllows(col.Name, v) {
			k.Values = append(k.Values, v)
		}
	}
	if len(k.Values) == 0 {
		k.Values = qb.sc.declaredValues(col) // the WHERE keeps no row: every group answers, empty
	}
	qb.q.Keys = append(qb.q.Keys, k)
	return len(qb.q.Keys) - 1, nil
}

// bareDate reports whether a key that is neither a bucketing nor tiers is
// its column itself: a declared domain, or a date column's days (GROUP BY
// col), not a date key computed from it.
func bareDate(k GroupKey) bool { return k.Date == nil || k.Date.Bare() }

// bucketKey returns the key of a bucketing, adding it if new: its values
// are the buckets that meet the column's declared bounds.
func (qb *queryBuilder) bucketKey(b *Bucketing) (int, error) {
	return qb.bucketKeyOf(b, nil)
}

// bucketKeyOf is bucketKey of a bucketing of a declared column (x nil) or
// of the row expression x, over its derived bounds (expressionBucket)
// narrowed by the WHERE (scope.whereBounds): the key then carries x,
// which the base Select's Derive lists for the fetches to compute.
func (qb *queryBuilder) bucketKeyOf(b *Bucketing, x *RowExpr) (int, error) {
	for i, k := range qb.q.Keys {
		if k.Bucket != nil && *k.Bucket == *b {
			return i, nil
		}
	}
	var lo, hi float64
	if x != nil {
		// The values of x on the rows the WHERE keeps: the other buckets,
		// public groups that hold none of those rows, are left out, as
		// for a column below.
		lo, hi, _ = qb.sc.whereBounds(x)
	} else {
		col, _ := qb.sc.table.Column(b.Column)
		lo, hi, _ = col.Bounds()
		// A value outside the bounds clamps into an end bucket, so the
		// rows the WHERE's range keeps are in the buckets of its ends
		// clamped and those between: the others, public groups that hold
		// none of those rows, are left out.
		if rg, ok := qb.sc.whereRange(col.Name); ok {
			bottom, top := lo, hi
			clamp := func(v float64) float64 { return math.Min(math.Max(v, bottom), top) }
			if rg.HasLower {
				lo = clamp(rg.Lower)
			}
			if rg.HasUpper {
				hi = clamp(rg.Upper)
			}
			if lo > hi { // the WHERE keeps no row: every bucket answers, empty
				lo, hi, _ = col.Bounds()
			}
		}
	}
	first, last := b.Of(lo), b.Of(hi)
	if math.IsInf(first, 0) || math.IsInf(last, 0) || last-first+1 > catalog.MaxGroups {
		return 0, refuseQuery("GROUP BY with more than %d buckets of %s over its bounds [%g, %g]", catalog.MaxGroups, b.Column, lo, hi)
	}
	if err := checkBucketNumbers(b, first, last, lo, hi); err != nil {
		return 0, err
	}
	k := GroupKey{Column: b.Column, Bucket: b, Expr: x, First: first}
	if x != nil {
		qb.sc.derive(x)
	}
	for i := first; i <= last; i++ {
		k.Values = append(k.Values, b.Key(i))
	}
	qb.q.Keys = append(qb.q.Keys, k)
	return len(qb.q.Keys) - 1, nil
}

// named converts an ORDER BY or HAVING expression, where a name or a
// position may refer to an output column (MySQL resolves them to select
// aliases first).
func (qb *queryBuilder) named(e ast.ExprNode, clause string) (*Expr, error) {
	switch x := unparen(e).(type) {
	case *ast.PositionExpr:
		if x.P != nil {
			return nil, refuseQuery("a parameter in ORDER BY")
		}
		if x.N < 1 || x.N > len(qb.q.Columns) {
			return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%d' in '%s'", x.N, clause)
		}
		return qb.q.Columns[x.N-1].Expr, nil
	}
	return qb.exprIn(e, clause, true)
}

func (qb *queryBuilder) expr(e ast.ExprNode, clause string) (*Expr, error) {
	return qb.exprIn(e, clause, false)
}

// postOps are the binary operators of post-processing.
var postOps = map[opcode.Op]string{
	opcode.Plus: "+", opcode.Minus: "-", opcode.Mul: "*", opcode.Div: "/", opcode.IntDiv: "div", opcode.Mod: "%",
	opcode.EQ: "=", opcode.NE: "<>", opcode.LT: "<", opcode.LE: "<=", opcode.GT: ">", opcode.GE: ">=", opcode.NullEQ: "<=>",
	opcode.LogicAnd: "and", opcode.LogicOr: "or", opcode.LogicXor: "xor",
}

// arity is how many arguments a function of post-processing takes: at
// least min, at most max (no bound when max is negative).
type arity struct{ min, max int }

// postFuncs are the functions of post-processing with their arities.
var postFuncs = map[string]arity{
	"round": {1, 2}, "truncate": {2, 2}, "floor": {1, 1}, "ceil": {1, 1}, "ceiling": {1, 1}, "abs": {1, 1}, "sign": {1, 1},
	"power": {2, 2}, "pow": {2, 2}, "sqrt": {1, 1}, "log": {1, 2}, "ln": {1, 1}, "log10": {1, 1}, "log2": {1, 1}, "exp": {1, 1},
	"coalesce": {1, -1}, "ifnull": {2, 2}, "nullif": {2, 2}, "if": {3, 3}, "greatest": {1, -1}, "least": {1, -1}, "concat": {1, -1},
	"datediff": {2, 2}, "timestampdiff": {3, 3}, "dp_interval_low": {1, 1}, "dp_interval_high": {1, 1},
	// The string functions (MariaDB's semantics: planner.evalString).
	"format": {2, 3}, "concat_ws": {2, -1}, "lpad": {2, 3}, "rpad": {2, 3}, "repeat": {2, 2}, "replace": {3, 3},
	"upper": {1, 1}, "ucase": {1, 1}, "lower": {1, 1}, "lcase": {1, 1},
	"left": {2, 2}, "right": {2, 2}, "substring": {2, 3}, "substr": {2, 3}, "mid": {2, 3},
	"length": {1, 1}, "octet_length": {1, 1}, "char_length": {1, 1}, "character_length": {1, 1},
	"trim": {1, 3}, "ltrim": {1, 1}, "rtrim": {1, 1},
}

// postSynonyms are the names of post-processing's functions that MySQL
// spells two ways, and the one the planner evaluates.
var postSynonyms = map[string]string{
	"ceiling": "ceil", "pow": "power", "ucase": "upper", "lcase": "lower", "substr": "substring", "mid": "substring",
	"octet_length": "length", "character_length": "char_length",
}

// exprIn converts a post-processing expression: constants, aggregates
// (each added once to Base.Items), keys, and operators and functions of
// them. Bare columns that are not keys would read rows and are refused.
// aliases allows a bare name to refer to an output column's alias.
func (qb *queryBuilder) exprIn(e ast.ExprNode, clause string, aliases bool) (*Expr, error) {
	e = unparen(e)
	if v, ok := literal(e); ok {
		v.Decimal = decimalLiteral(e)
		return floatConst(e, &Expr{Kind: ExprConst, Value: v}), nil
	}
	if qb.derived != nil {
		switch x := e.(type) {
		case *ast.ColumnNameExpr:
			if aliases && x.Name.Table.O == "" {
				for i, f := range qb.fields {
					if f.AsName.O != "" && strings.EqualFold(f.AsName.O, x.Name.Name.O) && i < len(qb.q.Columns) {
						return qb.q.Columns[i].Expr, nil
					}
				}
			}
			return qb.derivedColumn(x, clause)
		case *ast.AggregateFuncExpr:
			if qb.outer != nil {
				return qb.outerAggregate(x, clause)
			}
			return nil, refuseQuery("aggregates over the rows of an aggregate subquery")
		case *ast.WindowFuncExpr:
			return nil, refuseQuery("window functions over the rows of an aggregate subquery")
		case *ast.FuncCallExpr:
			if f, ok := functionAggs[x.FnName.L]; ok {
				return nil, refuseQuery("%s over the rows of an aggregate subquery (they take COUNT, SUM, AVG, MIN, MAX, STDDEV and VARIANCE)", f.usage)
			}
		}
	} else if qb.sc == nil {
		// A SELECT without FROM (constantQuery): no column, so no key.
	} else if b, ok, err := qb.sc.originBucket(e, clause); ok {
		if err != nil {
			return nil, err
		}
		for i, k := range qb.q.Keys {
			if k.Bucket != nil && *k.Bucket == *b {
				return &Expr{Kind: ExprKey, Index: i}, nil
			}
		}
		return nil, refuseRows("the bin %s outside GROUP BY", restore(e))
	} else if isBucketShaped(e) {
		b, err := qb.sc.bucket(e, clause)
		if err != nil {
			return nil, err
		}
		for i, k := range qb.q.Keys {
			if k.Bucket != nil && *k.Bucket == *b {
				return &Expr{Kind: ExprKey, Index: i}, nil
			}
		}
		return nil, refuseRows("the bucket %s outside GROUP BY", restore(e))
	} else if b, _, ok, err := qb.sc.expressionBucket(e); ok {
		if err != nil {
			return nil, err
		}
		for i, k := range qb.q.Keys {
			if k.Bucket != nil && *k.Bucket == *b {
				return &Expr{Kind: ExprKey, Index: i}, nil
			}
		}
		return nil, refuseRows("the bucket %s outside GROUP BY", restore(e))
	} else if k, ok := qb.tierExpr(e); ok {
		return k, nil
	} else if k, ok := qb.dateExpr(e); ok {
		return k, nil
	}
	switch x := e.(type) {
	case *ast.ColumnNameExpr:
		if aliases && x.Name.Table.O == "" {
			for i, f := range qb.fields {
				if f.AsName.O != "" && strings.EqualFold(f.AsName.O, x.Name.Name.O) && i < len(qb.q.Columns) {
					return qb.q.Columns[i].Expr, nil
				}
			}
		}
		col, err := qb.sc.column(x.Name, clause)
		if err != nil {
			return nil, err
		}
		for i, k := range qb.q.Keys {
			if k.Column == col.Name && k.Bucket == nil && k.Tiers == nil && bareDate(k) {
				return &Expr{Kind: ExprKey, Index: i}, nil
			}
		}
		return nil, refuseRows("the bare column %s outside an aggregate and not a GROUP BY key", col.Name)
	case *ast.AggregateFuncExpr:
		return qb.aggregate(x)
	case *ast.FuncCallExpr:
		if _, ok := functionAggs[x.FnName.L]; ok && x.Schema.L == "" {
			return qb.aggregate(x)
		}
		return qb.function(x, clause, aliases)
	case *ast.WindowFuncExpr:
		return qb.window(x, clause)
	case *ast.SubqueryExpr:
		if qb.sub == nil {
			return nil, refuseScalar("a subquery here")
		}
		i, err := qb.sub.scalar(x)
		if err != nil {
			return nil, err
		}
		return &Expr{Kind: ExprScalar, Index: i}, nil
	case *ast.ExistsSubqueryExpr:
		return nil, refuseScalar("EXISTS (subquery)")
	case *ast.CompareSubqueryExpr:
		return nil, refuseScalar("a comparison with ANY, SOME or ALL of a subquery")
	case *ast.BinaryOperationExpr:
		op, ok := postOps[x.Op]
		if !ok {
			return nil, refuseQuery("the operator %s over aggregates", x.Op.String())
		}
		return qb.op(op, clause, aliases, x.L, x.R)
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Minus:
			return qb.op("neg", clause, aliases, x.V)
		case opcode.Plus:
			return qb.exprIn(x.V, clause, aliases)
		case opcode.Not, opcode.Not2:
			return qb.op("not", clause, aliases, x.V)
		}
		return nil, refuseQuery("the operator %s over aggregates", x.Op.String())
	case *ast.IsNullExpr:
		if x.Not {
			return qb.op("isnotnull", clause, aliases, x.Expr)
		}
		return qb.op("isnull", clause, aliases, x.Expr)
	case *ast.IsTruthExpr:
		op := "isfalse"
		if x.True > 0 {
			op = "istrue"
		}
		return qb.negated(x.Not, op, clause, aliases, x.Expr)
	case *ast.BetweenExpr:
		return qb.negated(x.Not, "between", clause, aliases, x.Expr, x.Left, x.Right)
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return nil, refuseScalar("IN (subquery)")
		}
		return qb.negated(x.Not, "in", clause, aliases, append([]ast.ExprNode{x.Expr}, x.List...)...)
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return nil, refuseQuery("ILIKE (MySQL has none; LIKE compares in the collation, case-insensitive in utf8mb4_general_ci)")
		}
		like, err := qb.negated(x.Not, "like", clause, aliases, x.Expr, x.Pattern)
		if err != nil {
			return nil, err
		}
		escape := &Expr{Kind: ExprConst, Value: Value{IsText: true}}
		if x.Escape != 0 {
			escape.Value.Str = string(rune(x.Escape))
		}
		target := like
		if x.Not {
			target = like.Args[0]
		}
		target.Args = append(target.Args, escape)
		return like, nil
	case *ast.FuncCastExpr:
		arg, err := qb.exprIn(x.Expr, clause, aliases)
		if err != nil {
			return nil, err
		}
		out, err := castExpr(x, arg)
		if err != nil {
			return nil, err
		}
		return out, qb.checkDateArithmetic(out)
	case *ast.CaseExpr:
		return qb.caseExpr(x, clause, aliases)
	case *ast.VariableExpr:
		return nil, refuseQuery("variables in a SELECT with FROM")
	}
	return nil, refuseQuery("the expression %s", restore(e))
}

// op converts an operator's operands.
func (qb *queryBuilder) op(op, clause string, aliases bool, operands ...ast.ExprNode) (*Expr, error) {
	out := &Expr{Kind: ExprOp, Op: op}
	for _, a := range operands {
		x, err := qb.exprIn(a, clause, aliases)
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, x)
	}
	return out, qb.checkDateArithmetic(out)
}

// negated converts the predicate op of the operands, wrapped in NOT when
// not is set (NOT BETWEEN, NOT IN, NOT LIKE, IS NOT TRUE).
func (qb *queryBuilder) negated(not bool, op, clause string, aliases bool, operands ...ast.ExprNode) (*Expr, error) {
	x, err := qb.op(op, clause, aliases, operands...)
	if err != nil || !not {
		return x, err
	}
	return &Expr{Kind: ExprOp, Op: "not", Args: []*Expr{x}}, nil
}

// function converts a post-processing function call.
func (qb *queryBuilder) function(x *ast.FuncCallExpr, clause string, aliases bool) (*Expr, error) {
	n, ok := postFuncs[x.FnName.L]
	if !ok || x.Schema.L != "" {
		if containsNode(x, isAggregate) {
			return nil, refuse(funcName(x)+" of an aggregate", supportedPost)
		}
		return nil, refuseRows("%s outside an aggregate", funcName(x))
	}
	if len(x.Args) < n.min || n.max >= 0 && len(x.Args) > n.max {
		return nil, dperr.New(dperr.Unsupported, "not supported: %s with %d arguments", strings.ToUpper(x.FnName.O), len(x.Args))
	}
	name := x.FnName.L
	if s, ok := postSynonyms[name]; ok {
		name = s
	}
	out := &Expr{Kind: ExprFunc, Op: name}
	args := x.Args
	switch name {
	case "timestampdiff":
		unit, err := timestampDiffUnit(args[0])
		if err != nil {
			return nil, err
		}
		out.Args, args = []*Expr{{Kind: ExprConst, Value: Value{IsText: true, Str: unit}}}, args[1:]
	case "trim", "ltrim", "rtrim":
		out.Op, args = trimmed(name, args)
	}
	for _, a := range args {
		arg, err := qb.exprIn(a, clause, aliases)
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, arg)
	}
	if (name == "dp_interval_low" || name == "dp_interval_high") && out.Args[0].Kind != ExprAgg {
		return nil, refuseQuery("%s of %s (it takes an aggregate of the statement: %s(AVG(col)) is the low or high end of the released AVG's 95%% interval)",
			strings.ToUpper(name), restore(args[0]), strings.ToUpper(name))
	}
	if (out.Op == "trim" || out.Op == "ltrim" || out.Op == "rtrim") && len(out.Args) == 1 {
		out.Args = append(out.Args, &Expr{Kind: ExprConst, Value: Value{IsText: true, Str: " "}})
	}
	return out, qb.checkDateArithmetic(out)
}

// trimmed is the function and the arguments, the string and the text to
// remove, of TRIM([BOTH | LEADING | TRAILING] [remstr FROM] str), LTRIM(str)
// and RTRIM(str), as the TiDB parser gives them (str, then remstr and the
// direction where written): trim from both ends, ltrim from the start,
// rtrim from the end. Without a remstr, function appends ' '.
func trimmed(name string, args []ast.ExprNode) (string, []ast.ExprNode) {
	if len(args) == 3 {
		if d, ok := args[2].(*ast.TrimDirectionExpr); ok {
			switch d.Direction {
			case ast.TrimLeading:
				name = "ltrim"
			case ast.TrimTrailing:
				name = "rtrim"
			}
			args = args[:2]
		}
	}
	return name, args
}

// dateSafe are the operators and functions of post-processing that take a
// date aggregate (temporalQuantile) as the date text it is released as:
// comparisons (BETWEEN, IN and LIKE too), logic, NULL tests, the choosing
// functions, CONCAT and the string functions that read only text, CAST to
// text, DATEDIFF and TIMESTAMPDIFF. The others would read the text as a
// number, but for the text arguments of the string functions of dateText.
var dateSafe = map[string]bool{
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true, "<=>": true,
	"between": true, "in": true, "like": true,
	"and": true, "or": true, "xor": true, "not": true, "isnull": true, "isnotnull": true,
	"coalesce": true, "ifnull": true, "nullif": true, "if": true, "greatest": true, "least": true,
	"concat": true, "cast-char": true, "datediff": true, "timestampdiff": true,
	"concat_ws": true, "replace": true, "trim": true, "ltrim": true, "rtrim": true,
	"upper": true, "lower": true, "length": true, "char_length": true,
}

// dateText reports whether argument i of op reads a date aggregate as
// its text: every argument of dateSafe's, the string of LEFT, RIGHT,
// SUBSTRING and REPEAT (LEFT(MAX(day), 7) is '2024-03'), the string and
// the padding of LPAD and RPAD, FORMAT's locale; not their counts, which
// MySQL would read as the number YYYYMMDD.
func dateText(op string, i int) bool {
	switch op {
	case "left", "right", "substring", "repeat":
		return i == 0
	case "lpad", "rpad":
		return i != 1
	case "format":
		return i == 2
	}
	return dateSafe[op]
}

// checkDateArithmetic refuses an operator or function that would read a
// date aggregate (MIN(day), released as the text 'YYYY-MM-DD') as a
// number (dateText), where MySQL's own arithmetic on dates gives numbers
// of the form YYYYMMDD: MAX(day) - MIN(day) is refused with DATEDIFF as
// the nearest form.
func (qb *queryBuilder) checkDateArithmetic(x *Expr) error {
	for i, a := range x.Args {
		if a.Kind != ExprAgg || dateText(x.Op, i) {
			continue
		}
		it := qb.q.Base.Items[a.Index]
		if _, ok := it.Agg.Expr.TemporalOf(); ok {
			return refuseQuery("arithmetic on %s, a date released as text 'YYYY-MM-DD' (compare it, order by it, or write DATEDIFF(MAX(col), MIN(col)) for the days between two dates)", it.Label)
		}
	}
	return nil
}

// caseExpr converts CASE over outputs and keys.
func (qb *queryBuilder) caseExpr(x *ast.CaseExpr, clause string, aliases bool) (*Expr, error) {
	out := &Expr{Kind: ExprCase}
	var subject *Expr
	if x.Value != nil {
		var err error
		if subject, err = qb.exprIn(x.Value, clause, aliases); err != nil {
			return nil, err
		}
	}
	for _, w := range x.WhenClauses {
		cond, err := qb.exprIn(w.Expr, clause, aliases)
		if err != nil {
			return nil, err
		}
		if subject != nil {
			cond = &Expr{Kind: ExprOp, Op: "=", Args: []*Expr{subject, cond}}
		}
		res, err := qb.exprIn(w.Result, clause, aliases)
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, cond, res)
	}
	if x.ElseClause != nil {
		res, err := qb.exprIn(x.ElseClause, clause, aliases)
		if err != nil {
			return nil, err
		}
		out.Args, out.HasElse = append(out.Args, res), true
	}
	return out, nil
}

// maxCastScale is the largest s of a CAST to DECIMAL(p, s): MariaDB's
// (MySQL's stops at 30); p is at most maxDecimalDigits.
const maxCastScale = 38

// maxCastChars is the largest n of CAST(x AS CHAR(n)), MariaDB's
// (error 1439 beyond); MariaDB reads CHAR(4294967295) as CHAR without a
// length.
const maxCastChars = 1<<32 - 1

// castWidthError is MariaDB's error 1439 for a CAST to more than
// maxCastChars characters.
func castWidthError(x *ast.FuncCastExpr) error {
	return dperr.New(dperr.DisplayWidth, "Display width out of range for '%s' (max = %d)", restore(x.Expr), maxCastChars)
}

// castTargets names the targets castExpr converts released values to,
// for its refusals.
const castTargets = "CAST(x AS SIGNED | UNSIGNED | DECIMAL(p, s) | DOUBLE | FLOAT | CHAR)"

// castExpr is the CAST x of arg, named by its target: cast-int (SIGNED),
// cast-unsigned, cast-char (CHAR, of the connection's character set),
// cast-decimal with the constants p and s of DECIMAL(p, s) as its second
// and third arguments (DECIMAL alone is DECIMAL(10, 0)), cast-float (FLOAT:
// MariaDB's single precision, so CAST(0.1 AS FLOAT) + 0 is
// 0.10000000149011612), or cast-real (DOUBLE, and REAL and FLOAT(p) for p
// from 25, which the TiDB parser reads as DOUBLE where MariaDB 10.11
// rejects them). Every other target is refused: DATE, DATETIME and TIME
// (MariaDB reads 20000101 as the date 2000-01-01 and 2727 as the time
// 00:27:27, which post-processing does not; a date key is GROUP BY
// CAST(col AS DATE)), YEAR, JSON, BINARY (also BINARY x, and CHAR of a
// character set other than the connection's utf8mb4), and CONVERT(x
// USING cs); so is a DECIMAL beyond MySQL's limits (1425, 1426, 1427 in
// MySQL).
func castExpr(x *ast.FuncCastExpr, arg *Expr) (*Expr, error) {
	unsupported := func(why string) error {
		return dperr.New(dperr.Unsupported, "not supported: %s%s; released values convert with %s", restore(x), why, castTargets)
	}
	if x.FunctionType != ast.CastFunction && x.FunctionType != ast.CastConvertFunction {
		return nil, unsupported("") // BINARY x, CONVERT(x USING cs)
	}
	out := &Expr{Kind: ExprFunc, Args: []*Expr{arg}}
	switch x.Tp.GetType() {
	case mysql.TypeDouble:
		out.Op = "cast-real"
	case mysql.TypeFloat:
		out.Op = "cast-float"
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeInt24, mysql.TypeShort, mysql.TypeTiny:
		out.Op = "cast-int"
		if mysql.HasUnsignedFlag(x.Tp.GetFlag()) {
			out.Op = "cast-unsigned"
		}
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeBlob:
		if cs := x.Tp.GetCharset(); cs != "" && cs != "utf8mb4" || mysql.HasBinaryFlag(x.Tp.GetFlag()) {
			return nil, unsupported(" (binary or another character set than the connection's)")
		}
		out.Op = "cast-char"
		switch n := x.Tp.GetFlen(); {
		case n > maxCastChars:
			return nil, castWidthError(x)
		case n >= 0 && n != maxCastChars: // CHAR(4294967295) is CHAR, as in MariaDB
			out.Args = append(out.Args, &Expr{Kind: ExprConst, Value: Value{Num: float64(n), Decimal: strconv.Itoa(n)}})
		}
	case mysql.TypeNewDecimal:
		p, s := x.Tp.GetFlen(), max(x.Tp.GetDecimal(), 0)
		if p <= 0 {
			p = 10
		}
		if p > maxDecimalDigits || s > maxCastScale || s > p {
			return nil, dperr.New(dperr.Unsupported, "not supported: CAST(... AS DECIMAL(%d, %d)): DECIMAL(p, s) takes p at most %d and s at most %d and at most p",
				p, s, maxDecimalDigits, maxCastScale)
		}
		out.Op = "cast-decimal"
		for _, n := range []int{p, s} {
			d := strconv.Itoa(n)
			out.Args = append(out.Args, &Expr{Kind: ExprConst, Value: Value{Num: float64(n), Decimal: d}})
		}
	case mysql.TypeDate, mysql.TypeDatetime, mysql.TypeDuration:
		return nil, unsupported(" (released values are not read as dates or times; GROUP BY CAST(col AS DATE) is a date key)")
	default:
		return nil, unsupported("")
	}
	return out, nil
}

// aggregate converts an aggregate call into a reference to Base.Items,
// adding the aggregate once. An aggregate only of values NULL on every
// row is its value over no row whatever the rows (ExprNoRow: SUM(col =
// NULL) is NULL, COUNT(col = NULL) 0), its columns resolved as elsewhere.
// Aggregates of a constant are answered from COUNT(*) or as the constant:
// SUM(c) is c·COUNT(*); AVG(c), MIN(c) and MAX(c) are c (ExprConstAgg:
// what SQL returns on a non-empty group; dpproxy never reveals whether a
// group is empty, only that the WHERE selects no row whatever the data,
// where they are NULL); of a float literal c (1e300) they are DOUBLEs,
// as MySQL types them (floatConst).
// MIN(col) and MAX(col) are the DP 0th and 100th percentiles (clamped to
// the bounds), of a date column too (temporalQuantile).
func (qb *queryBuilder) aggregate(e ast.ExprNode) (*Expr, error) {
	if v, ok := overNoRow(e); ok {
		return &Expr{Kind: ExprNoRow, Value: v, Op: restore(e)}, qb.sc.columns(e, "field list")
	}
	if x, ok, err := qb.temporalQuantile(e); ok {
		return x, err
	}
	if a, ok := e.(*ast.AggregateFuncExpr); ok {
		if x, ok, err := qb.affineAggregate(a); ok {
			return x, err
		}
		if agg, ok, err := qb.sc.conditionalAggregate(e); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return qb.item(agg, restore(e)), nil
		}
		if !qb.sc.rangeCountShaped(a) {
			if x, ok, err := qb.rowExprAggregate(a); ok {
				return x, err
			}
		}
	}
	if a, ok := e.(*ast.AggregateFuncExpr); ok && len(a.Args) == 1 && !a.Distinct {
		name := strings.ToLower(a.F)
		if c, isConst := literal(a.Args[0]); isConst && !c.Null && !c.IsText {
			c.Decimal = decimalLiteral(a.Args[0])
			switch name {
			case "sum":
				count := qb.item(Aggregate{Func: CountRows, Summed: true}, restore(a))
				return &Expr{Kind: ExprOp, Op: "*", Args: []*Expr{floatConst(a.Args[0], &Expr{Kind: ExprConst, Value: c}), count}}, nil
			case "avg", "min", "max":
				return floatConst(a.Args[0], &Expr{Kind: ExprConstAgg, Value: c, Op: restore(a)}), nil
			}
		}
		if name == "min" || name == "max" {
			col, err := qb.sc.numericArgument(a.F, a.Args[0])
			if err != nil {
				return nil, err
			}
			q := 0.0
			if name == "max" {
				q = 1
			}
			return qb.item(Aggregate{Func: Percentile, Column: col.Name, Quantile: q}, restore(e)), nil
		}
	}
	if f, ok := e.(*ast.FuncCallExpr); ok {
		if x, ok, err := qb.rowExprFunction(f); ok {
			return x, err
		}
	}
	if a, ok := e.(*ast.AggregateFuncExpr); ok && strings.EqualFold(a.F, "group_concat") {
		return nil, refuseRows("GROUP_CONCAT")
	}
	agg, err := qb.sc.aggregate(e)
	if err != nil {
		return nil, err
	}
	if agg.Func == CountRows && !agg.Filtered() {
		return qb.item(agg, "COUNT(*)"), nil
	}
	return qb.item(agg, restore(e)), nil
}

// item returns a reference to the aggregate in Base.Items, adding it if new.
func (qb *queryBuilder) item(agg Aggregate, text string) *Expr {
	for i, it := range qb.q.Base.Items {
		if reflect.DeepEqual(it.Agg, agg) {
			return &Expr{Kind: ExprAgg, Index: i}
		}
	}
	qb.q.Base.Items = append(qb.q.Base.Items, Item{Label: text, Agg: agg})
	return &Expr{Kind: ExprAgg, Index: len(qb.q.Base.Items) - 1}
}

// restore prints an expression as SQL text, for labels and messages.
// The parser builds MOD(a, b) as the operator a % b and keeps no
// parentheses around an operand it made so, which TiDB prints bare
// (MOD(x - 1 + 7, 7) as x-1+7%7, another expression): an operand that
// binds less tightly than its operator (or as tightly, on the right) is
// printed in parentheses, the tree restored afterwards (a statement's
// tree is one parse's, read by one goroutine).
func restore(e ast.Node) string {
	var p operandParens
	e.Accept(&p)
	defer p.undo()
	var sb strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase|format.RestoreStringWithoutCharset, &sb)); err != nil {
		return "the expression"
	}
	return sb.String()
}

// operandParens wraps the operands of binary operators that would print
// as another expression in parentheses, remembering how to undo it.
type operandParens struct{ undone []func() }

func (p *operandParens) Enter(n ast.Node) (ast.Node, bool) {
	b, ok := n.(*ast.BinaryOperationExpr)
	if !ok {
		return n, false
	}
	wrap := func(side *ast.ExprNode, right bool) {
		c, isOp := (*side).(*ast.BinaryOperationExpr)
		if !isOp {
			return
		}
		if pc, pb := precedence(c.Op), precedence(b.Op); pc < pb || right && pc == pb {
			orig := *side
			*side = &ast.ParenthesesExpr{Expr: orig}
			p.undone = append(p.undone, func() { *side = orig })
		}
	}
	wrap(&b.L, false)
	wrap(&b.R, true)
	return n, false
}

func (p *operandParens) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func (p *operandParens) undo() {
	for i := len(p.undone) - 1; i >= 0; i-- {
		p.undone[i]()
	}
}

// precedence is how tightly MySQL binds a binary operator (higher binds
// tighter).
func precedence(op opcode.Op) int {
	switch op {
	case opcode.LogicOr:
		return 1
	case opcode.LogicXor:
		return 2
	case opcode.LogicAnd:
		return 3
	case opcode.Or:
		return 6
	case opcode.And:
		return 7
	case opcode.LeftShift, opcode.RightShift:
		return 8
	case opcode.Plus, opcode.Minus:
		return 9
	case opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
		return 10
	case opcode.Xor:
		return 11
	}
	return 5 // comparisons
}
