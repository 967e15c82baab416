package sqlrewrite

// Query is a private aggregate query in the shape analysts and BI tools
// write it: aggregates grouped by public keys, post-processed by a typed
// expression per output column, filtered by HAVING, ordered, cut by
// LIMIT/OFFSET and made DISTINCT, all over released values.
//
// Privacy contract (the planner and executor rely on it): every part of a
// Query other than Base is public or post-processing. Keys come from the
// configuration (declared domains, buckets over declared bounds, calendar
// parts of a date column's declared bounds), so the
// set of groups, and the groups computed, never depend on the data; every
// output value is a function of released values and keys; HAVING, ORDER BY,
// LIMIT and DISTINCT act on those released rows after all of them are
// released. A Listing query has no aggregates and reads no data at all.
type Query struct {
	TopLevel
	// Base is the table, the WHERE and the distinct aggregates the outputs
	// use (Items; Label is the aggregate's text). Base.GroupBy is nil.
	Base *Select
	// Keys are the GROUP BY keys; the groups are the cross product of
	// their domains, the first key most significant. Empty: one group,
	// the whole filtered table.
	Keys []GroupKey
	// Columns are the output columns, in the client's order.
	Columns []OutputColumn
	// Having keeps the rows where it is true; nil keeps every row.
	Having *Expr
	// OrderBy sorts the released rows; stable, so ties keep group order.
	OrderBy []OrderKey
	// Limit cuts the sorted rows; nil returns every row.
	Limit *Limit
	// Distinct drops repeated output rows.
	Distinct bool
	// Rollup adds WITH ROLLUP's super-aggregate rows: after the groups of
	// each prefix of the keys, a row with the later keys NULL whose
	// aggregates (COUNT and SUM only) are the sums of those groups'
	// released values, and a grand total last. Post-processing.
	Rollup bool
	// Windows are the window functions over released rows that the
	// output columns and ORDER BY refer to (ExprWindow).
	Windows []OutputWindow
	// Outer, if set, aggregates the output rows (Columns) into the rows
	// the client receives.
	Outer *Outer
	// Listing is set when the query has no aggregates: it lists the
	// declared values of its keys (SELECT DISTINCT col, SELECT col ...
	// GROUP BY col), answered from the configuration at no cost.
	Listing bool
	// FromLess, on a SELECT without FROM whose every column
	// post-processing evaluates (constantQuery), is the statement's text:
	// Base names no table and has no items, and the one output row is
	// the columns computed from constants alone, as beside an aggregate.
	// The catalog engine answers the text instead where post-processing
	// refuses it (text compared in a collation_connection it does not
	// implement). Empty for every other query.
	FromLess string
	// Collation is the session's collation_connection when the statement
	// was parsed (Parser.SetSessionCollation): post-processing compares
	// the text of literals in it. "" is the proxy's default,
	// utf8mb4_0900_bin.
	Collation string
	// ColumnCollation is the collation dpproxy declares for text columns
	// (catalog.Config.TextCollation), which post-processing compares a
	// released text key in: the backend's.
	ColumnCollation string
	// MaxAllowedPacket is the session's max_allowed_packet
	// (catalog.Config.MaxAllowedPacket): a string function of
	// post-processing whose result would exceed it is NULL with warning
	// 1301, as in MySQL. 0 is catalog.DefaultMaxAllowedPacket.
	MaxAllowedPacket int64
	// Scalars are the scalar subqueries the query reads (ExprScalar), each
	// once, in the order the statement first writes them (scalar.go):
	// statements of their own, released before the query's own
	// aggregates, whose values the query post-processes like its own
	// released values. A Query with Scalars and no table (Base.Table
	// empty) is a SELECT without FROM of subqueries:
	// SELECT (SELECT COUNT(*) FROM pums).
	Scalars []Scalar
}

// Scalar is an uncorrelated scalar subquery, (SELECT AVG(income) FROM
// pums): a Query dpproxy answers on its own, with one output column and
// at most one row (the planner refuses one that may have more), read by
// the statement that holds it as that row's value, or NULL when it has
// no row, as MySQL reads a scalar subquery.
type Scalar struct {
	Query *Query
	// Text is the subquery as written, in parentheses, for plans and notes.
	Text string
}

// GroupKey is one GROUP BY key with its public domain.
type GroupKey struct {
	// Column is the declared column (catalog spelling).
	Column string
	// Bucket is set for FLOOR(col / w) * w keys; nil for a column with a
	// declared domain.
	Bucket *Bucketing
	// Expr is set for buckets of a row expression (FLOOR(TIMESTAMPDIFF(YEAR,
	// born, '2024-06-30') / 10) * 10): Column is then its text, the name of
	// the column the planner derives for it (Select.Derive).
	Expr *RowExpr
	// Tiers is set for a CASE of tiers (tiers.go); Values are its labels.
	Tiers *Tiering
	// Date is set for a key over a date or timestamp column (dates.go);
	// Values are its labels.
	Date *Dating
	// Values are the key's values, in output order: the declared values,
	// or the bucket keys (Bucketing.Label: lower edges, or bucket numbers
	// for Index) of the buckets that meet the column's bounds. Nil for a
	// Private key.
	Values []Value
	// First is the bucket number (Bucketing.Of) of Values[0] when Bucket
	// is set: Values[i] is bucket First + i.
	First float64
	// Private is set for a column without declared values that allows
	// partition selection: its values come from the data, and only those
	// that pass DP partition selection are released. At most one key is
	// private; a query whose only outputs are keys then releases the
	// selected values alone (it is no Listing).
	Private bool
}

// OutputColumn is one output column: its label and how it is computed.
type OutputColumn struct {
	Label string
	Expr  *Expr
}

// OrderKey is one ORDER BY term.
type OrderKey struct {
	Expr *Expr
	Desc bool
}

// ExprKind is the kind of an Expr node.
type ExprKind int

// The expression kinds.
const (
	// ExprConst is the constant Value.
	ExprConst ExprKind = iota + 1
	// ExprAgg is the released value of Base.Items[Index].
	ExprAgg
	// ExprKey is the value of Keys[Index] for the row's group.
	ExprKey
	// ExprOp applies Op to Args: arithmetic (+ - * / div %), comparison
	// (= <> < <= > >= <=>), logic (and or not xor), neg, isnull, isnotnull,
	// and the predicates between (x, low, high), in (x, v₁, …, vₙ), istrue,
	// isfalse and like (x, pattern, escape character).
	ExprOp
	// ExprFunc applies the function Op (lower case) to Args.
	ExprFunc
	// ExprCase is CASE: Args are when₁, then₁, …, whenₙ, thenₙ[, else]
	// (HasElse set); a simple CASE x WHEN v is rewritten to x = v.
	ExprCase
	// ExprWindow is the value of Windows[Index] for the row.
	ExprWindow
	// ExprColumn is the value of the query's output column Index in an
	// inner row, in an Outer query's keys and aggregate arguments.
	ExprColumn
	// ExprOuterKey is the value of Outer.Keys[Index] for the outer row's
	// group.
	ExprOuterKey
	// ExprOuterAgg is the value of Outer.Aggs[Index] for the outer row's
	// group.
	ExprOuterAgg
	// ExprNoRow is Value, the value of the aggregate Op (its text) over
	// no row: its arguments are NULL on every row (SUM(col = NULL), or
	// COUNT(CASE WHEN col = ? THEN 1 END) with NULL bound), so it
	// aggregates no value whatever the rows, and is 0 for COUNT and NULL
	// otherwise, as MySQL answers. It reads no data and releases nothing.
	ExprNoRow
	// ExprConstAgg is the aggregate Op (its text: AVG, MIN or MAX of the
	// constant Value) over a group's rows: Value over a group that has a
	// row, NULL over one that has none, as MySQL answers. dpproxy never
	// reveals whether a group is empty, so it is Value except where the
	// WHERE selects no row whatever the data (planner.QueryPlan.NoRow),
	// where it is NULL. It reads no data and releases nothing.
	ExprConstAgg
	// ExprScalar is the released value of the scalar subquery
	// Scalars[Index], the same in every row.
	ExprScalar
)

// Outer is an outer query that aggregates the output rows of its Query,
// the inner query of FROM (SELECT ... GROUP BY ...) AS t, after that
// query's HAVING, ORDER BY, LIMIT and DISTINCT: SELECT AVG(n) FROM
// (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) AS t, Metabase's
// nested questions, BI tools' totals over a grouped query. It is
// post-processing of released rows like the rest of a Query and costs
// what the inner query costs.
type Outer struct {
	// Keys are the inner output columns the outer query groups by: one
	// outer row per distinct combination of their values among the inner
	// rows, in ascending order (as MariaDB returns GROUP BY), NULLs
	// first. Without keys, one outer row, also over no inner row (COUNT 0,
	// SUM NULL, as SQL answers an aggregate of an empty set).
	Keys []int
	// Aggs are the aggregates of each group's inner rows.
	Aggs []OuterAgg
	// Columns, Having, OrderBy, Limit and Distinct are the outer query's,
	// over ExprOuterKey, ExprOuterAgg and constants.
	Columns  []OutputColumn
	Having   *Expr
	OrderBy  []OrderKey
	Limit    *Limit
	Distinct bool
}

// OuterAgg is one aggregate of an Outer query: Func (count, sum, avg,
// min, max, stddev_pop, stddev_samp, var_pop, var_samp) of Arg, an
// expression of the inner output columns (ExprColumn), over a group's
// inner rows, NULLs skipped, each distinct value once when Distinct is
// set; Arg nil is COUNT(*).
type OuterAgg struct {
	Func     string
	Arg      *Expr
	Distinct bool
}

// OutputWindow is a window function over the released rows that HAVING keeps:
// post-processing, like every other expression. Func is row_number,
// rank, dense_rank, or sum, avg, count, min, max of Arg (nil for
// COUNT(*)). The frame is the whole partition without OrderBy; with it,
// the rows up to the current one, its peers included (RANGE, the SQL
// default) or not (Rows set: ROWS UNBOUNDED PRECEDING).
type OutputWindow struct {
	Func        string
	Arg         *Expr
	PartitionBy []*Expr
	OrderBy     []OrderKey
	Rows        bool
}

// Expr is a typed expression over released values, keys and constants:
// post-processing, evaluated by the planner on released rows, never
// rendered to SQL.
type Expr struct {
	Kind    ExprKind
	Value   Value
	Index   int
	Op      string
	Args    []*Expr
	HasElse bool
}

func (*Query) statement() {}
