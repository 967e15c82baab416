// Package sqlrewrite turns client SQL text into typed statements, and typed
// fetches into backend SQL.
//
// Parse is deny-by-default: it recognises the aggregate queries dpproxy can
// answer privately (Select), the settings and bootstrap statements clients
// send (SetVariables, ShowWarnings, ShowGrants, ConstantSelect, Use,
// Explain), the statements the catalog engine answers (Catalog; route.go
// decides), and
// refuses everything else with a dperr error (Parse, Unsupported,
// UnknownTable, UnknownColumn). The TiDB AST never leaves this package.
//
// Render is the only producer of backend SQL: it renders a typed Fetch for one
// dialect, with every identifier taken from the catalog and every value either
// a number formatted by the proxy or a bind argument. Client SQL text is never
// sent to a backend.
package sqlrewrite

import (
	"cmp"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Statement is one parsed client statement: one of *Select, *Explain,
// *SetVariables, *ShowWarnings, *ShowGrants, *Catalog, *ConstantSelect, *Use, *Empty.
type Statement interface{ statement() }

// TopLevel is embedded in the statements a client's SELECT, set
// operation or SHOW becomes (Select, Query, ConstantSelect, ConstantUnion,
// Catalog); Parse sets it.
type TopLevel struct {
	// SelectLimited is set when sql_select_limit cuts the statement's
	// rows: a SELECT or set operation without a LIMIT of its own (MySQL
	// leaves a subquery's rows, and a statement with its own LIMIT,
	// alone), or a SHOW or DESCRIBE the catalog engine answers (MariaDB
	// cuts those too; SHOW WARNINGS, SHOW GRANTS and EXPLAIN it does not).
	SelectLimited bool
	// ColumnsOnly is set on a private statement (a *Select or *Query) that
	// sql_select_limit 0 cuts but whose LIMIT 0 form is refused
	// (Parser.SetSelectLimitZero): it is planned as it is, for its
	// refusals and columns, and answered with those columns and no row,
	// reserving and reading nothing, as it has no row whatever the data.
	ColumnsOnly bool
}

func (t *TopLevel) topLevel() *TopLevel { return t }

// ColumnsOnlyApplies reports whether st is answered with its columns and
// no row (TopLevel.ColumnsOnly).
func ColumnsOnlyApplies(st Statement) bool {
	t, ok := st.(interface{ topLevel() *TopLevel })
	return ok && t.topLevel().ColumnsOnly
}

// SelectLimitApplies reports whether the session's sql_select_limit cuts
// the rows of st's answer (TopLevel.SelectLimited).
func SelectLimitApplies(st Statement) bool {
	t, ok := st.(interface{ topLevel() *TopLevel })
	return ok && t.topLevel().SelectLimited
}

// Select is a private aggregate query: SELECT agg [, agg ...] FROM table
// [WHERE predicate], or a histogram (GroupBy set).
type Select struct {
	TopLevel
	// Table is the catalog name of the table, in its declared spelling.
	Table string
	// Items are the output columns, in the client's order.
	Items []Item
	// Where is the conjunction of conditions; empty means every row. A
	// WHERE that is one condition or an AND of conditions (parentheses
	// anywhere) is always given here, in the order written.
	Where []Condition
	// Boolean is set instead of Where when the predicate uses OR or NOT
	// (<>, NOT BETWEEN and NOT IN included), or is Never: a row condition
	// the fetches apply like Where (a COUNT(*) on a table with an
	// interactive domain may instead be answered over that domain).
	Boolean *Predicate
	// GroupBy is set for a histogram: SELECT FLOOR(col/w)*w AS b, COUNT(*)
	// FROM t GROUP BY b. The result has one row per bucket, in ascending
	// bucket order (the client may say ORDER BY b, and nothing else). Items
	// then hold exactly one BucketKey item, on GroupBy.Column, and one or
	// more CountRows items (range counts included), in the client's order.
	GroupBy *Bucketing
	// Derive are the row expressions the statement reads as columns besides
	// the aggregates' arguments: a Query's GROUP BY buckets of an
	// expression (GroupKey.Expr) and conditions on an expression (WHERE
	// DATEDIFF(shipped, ordered) > 7). The planner derives each as a
	// column named by its text, for every fetch of the statement.
	Derive []*RowExpr
}

// Predicate is a boolean combination of conditions, as the client wrote
// it with parentheses dropped and nested ANDs (ORs) flattened into one node.
// It has SQL's meaning: a row is counted where the predicate is true, and a
// leaf on a NULL column is neither true nor false, so NOT of it is not true
// either (col <> 5 keeps no row where col is NULL). Never, a node with
// neither Leaf nor Args, holds for no row.
type Predicate struct {
	Op PredicateOp
	// Leaf is set for Op == Leaf.
	Leaf *Condition
	// Args are the operands of And and Or (two or more) and Not (one).
	Args []*Predicate
}

// PredicateOp is the operator of a Predicate node.
type PredicateOp int

// The boolean operators.
const (
	Leaf PredicateOp = iota + 1
	And
	Or
	Not
	// Never is the constant FALSE: a condition that the statement's text
	// alone makes true for no row (category = NULL, from a NULL bound to
	// a parameter; NOT (col IN (1, NULL))). The parser gives it only as a
	// whole WHERE or a whole aggregate condition (Select.Boolean,
	// Aggregate.Boolean), never inside another node; the planner may AND
	// it with a statement's WHERE. It reads no column.
	Never
	// always is the constant TRUE, which exists only while a condition is
	// parsed: a condition true for every row is no condition.
	always
)

// Bucketing is GROUP BY FLOOR(col / Width) * Width (or FLOOR(col / Width),
// Index set): equal-width buckets of a numeric column, aligned at 0. Width
// is a positive finite number. In SQL, rows where the column is NULL form
// one more group with a NULL key.
type Bucketing struct {
	Column string
	Width  float64
	// Index is set when the key is FLOOR(col / Width), the bucket number,
	// rather than its lower edge.
	Index bool
	// Origin aligns the buckets at Origin instead of 0: the key
	// FLOOR((col - Origin) / Width) * Width + Origin, as BI tools spell
	// bins (only in a Query's GROUP BY; the histogram form has Origin 0).
	Origin float64
	// Exact is set when MySQL computes the bucket in DECIMAL rather than
	// in doubles: always for x DIV w (MySQL converts a non-integer
	// operand of DIV to DECIMAL, a double by its shortest digits), and
	// for FLOOR((x - o) / w) when x is exact (a column declared integer,
	// MySQL's BIGINT, or an exact row expression) and w and o are integer
	// or decimal literals. WidthDecimal and OriginDecimal ("" for 0) are
	// then the exact numbers MySQL divides by and subtracts: the literals
	// as written, or a float literal w of a DIV by its shortest digits.
	Exact                       bool
	WidthDecimal, OriginDecimal string
	// ExactValues is set when MySQL holds the bucketed values exactly, as
	// BIGINT or DECIMAL (a column declared integer, an exact row
	// expression), not as doubles: beyond 2^53 they may lie between two
	// doubles, and the bucket edges are exact numbers (Edges).
	ExactValues bool
	// KeyDecimal is set when MySQL computes the key exactly, a BIGINT or
	// a DECIMAL: x DIV w, or FLOOR of an Exact quotient, times and plus
	// integer or decimal literals (a float literal multiplier or origin
	// makes it a DOUBLE). Its integer labels then carry their digits
	// (Key), which a double may not hold beyond 2^53.
	KeyDecimal bool
	// Type is the MariaDB type of the key (bucketLabelType), which its
	// labels are written in (Key); LabelUnset for a bucket of a row
	// expression or a rounded key, typed by their labels.
	Type LabelType
}

// Explain is EXPLAIN of a private aggregate query: the plan, without
// running it. Exactly one of Select, Query and ZeroRow is set.
type Explain struct {
	Select *Select
	Query  *Query
	// ZeroRow is the configured table of a zero-row probe (Catalog.ZeroRow),
	// which the catalog engine answers: no plan, no data, no budget.
	ZeroRow string
}

// Item is one output column of a Select.
type Item struct {
	// Label is the column name the client sees: the alias, or the
	// expression's text as the client wrote it (as MySQL does).
	Label string
	Agg   Aggregate
}

// AggFunc is an aggregate function dpproxy can answer.
type AggFunc int

// The aggregates.
const (
	// CountRows is COUNT(*) (and COUNT of a constant).
	CountRows AggFunc = iota + 1
	// CountColumn is COUNT(col): rows where col is not NULL.
	CountColumn
	Sum
	Avg
	// VarPop is VARIANCE, VAR_POP.
	VarPop
	VarSamp
	// StddevPop is STD, STDDEV, STDDEV_POP.
	StddevPop
	StddevSamp
	// Median is MEDIAN(col); Quantile is 0.5.
	Median
	// Percentile is PERCENTILE_CONT(col, p) with p in [0, 1], or
	// APPROX_PERCENTILE(col, pct) with pct in [0, 100] divided by 100.
	Percentile
	// IQR is IQR(col): dpproxy's private scale (interquartile range).
	IQR
	// RegrSlope is REGR_SLOPE(y, x): Column is y, Column2 is x.
	RegrSlope
	// RegrIntercept is REGR_INTERCEPT(y, x).
	RegrIntercept
	// BucketKey is the GROUP BY key column of a histogram (Select.GroupBy).
	BucketKey
	// CountDistinct is COUNT(DISTINCT col): the number of distinct
	// non-NULL values of col (sensitivity 1 under add/remove of one row).
	CountDistinct
)

var aggNames = map[AggFunc]string{
	CountRows: "count(*)", CountColumn: "count", Sum: "sum", Avg: "avg",
	VarPop: "var_pop", VarSamp: "var_samp", StddevPop: "stddev_pop", StddevSamp: "stddev_samp",
	Median: "median", Percentile: "percentile", IQR: "iqr",
	RegrSlope: "regr_slope", RegrIntercept: "regr_intercept", BucketKey: "bucket", CountDistinct: "count distinct",
}

// String is the canonical lower-case name, for plans and golden tests.
func (f AggFunc) String() string { return aggNames[f] }

// Filtered reports whether the aggregate has its own condition, on top of
// the statement's WHERE (Where or Boolean).
func (a Aggregate) Filtered() bool { return len(a.Where) > 0 || a.Boolean != nil }

// Aggregate is an aggregate function applied to a declared column.
// Where and Boolean are its own condition (Filtered).
type Aggregate struct {
	Func AggFunc
	// Column is the declared column name (catalog spelling); empty for CountRows.
	Column string
	// Quantile is the requested quantile in [0, 1] for Median and Percentile.
	Quantile float64
	// Column2 is the second argument (x of REGR_SLOPE(y, x)).
	Column2 string
	// Where restricts the rows this aggregate counts, on top of the
	// statement's WHERE: SUM(col BETWEEN a AND b) and
	// COUNT(CASE WHEN col BETWEEN a AND b THEN 1 END) are CountRows with
	// Where = [col in [a, b]] (a range count).
	Where []Condition
	// Boolean is set instead of Where when the aggregate's own condition
	// uses OR or NOT (<>, NOT BETWEEN and NOT IN included):
	// SUM(CASE WHEN a <> 1 OR b = 2 THEN col END), COUNT(CASE WHEN NOT
	// (age BETWEEN 20 AND 30) THEN 1 END), or is Never (SUM(CASE WHEN
	// category = NULL THEN 1 END)). Only a Query answers it, as its
	// own part (planner.QueryPlan.Parts); no synopsis does.
	Boolean *Predicate
	// Expr, if set, is the row expression the aggregate reads (an
	// aggregate over two or more columns, rowexpr.go); Column is then its
	// text, the name of the column the planner derives for it.
	Expr *RowExpr
	// Summed, on CountRows, says the statement spells the count as a SUM:
	// SUM(condition), SUM(CASE WHEN condition THEN 1 [ELSE 0] END),
	// SUM(IF(condition, 1, 0)), SUM(1) (1 times the count). Over rows it
	// is the count; over no row it is NULL, as MySQL's SUM is, where
	// COUNT is 0 (planner.Plan.NoRow).
	Summed bool
}

// Condition restricts one declared column. Exactly one of Range and In is
// set, or neither with IsNull: comparisons and BETWEEN give a Range
// (BETWEEN closed at both ends), col = v gives In with one value, col IN
// (...) gives In. A Range or In holds only for readable values (NULL, and
// on SQLite text or blobs in a numeric column, are unreadable: the rule of
// Render's doc comment).
type Condition struct {
	// Column is the declared column name (catalog spelling).
	Column string
	Range  *Range
	In     []Value
	// IsNull, with neither Range nor In, holds for the unreadable values:
	// col IS NULL (col IS NOT NULL is its Complement). On a date or
	// timestamp column (Temporal) these are NULL and every value that is
	// no date by dates.go's reading rule.
	IsNull bool
	// Complement selects exactly the rows the condition without it does
	// not select, unreadable values included: col IS NOT NULL, and
	// col <> v OR col IS NULL (BI tools' "is not" filter), col NOT IN (...)
	// OR col IS NULL, col NOT BETWEEN a AND b OR col IS NULL. Such a
	// condition is two-valued: it and its negation partition the rows.
	Complement bool
	// Text is set when the column is a text column, whose values are
	// unreadable only when NULL (IsNull and Complement read it so).
	Text bool
	// Temporal is set (catalog.Date or catalog.Timestamp) on a condition
	// on a date or timestamp column, a Range or IsNull: a Range's ends are
	// day or second numbers (catalog.Column.ParseTemporal), and the values
	// dates.go's rule reads as dates are the readable ones, so a Range
	// holds only for them and IsNull, as for NULL, for every other value
	// (SQLite text that spells no day, a MariaDB zero date).
	Temporal catalog.ColumnType
	// Cell, set alone (with Column), holds for the rows in one cell of a
	// date GROUP BY key: a group's filter (dates.go).
	Cell *DateCell
	// Like, set instead of Range and In (Text set), holds for the values
	// of a text column that match the pattern, as the backend's LIKE
	// matches them in the column's collation (case-insensitive under
	// MySQL's and SQLite's defaults, case-sensitive on PostgreSQL). The
	// pattern is written with LikeEscape as its escape character: % and _
	// are wildcards, and an escaped character stands for itself.
	Like *string
	// LikeCase, with Like, is "lower" or "upper" when the pattern matches
	// LOWER(col) or UPPER(col) (Metabase's case-insensitive "contains"),
	// as the backend computes them.
	LikeCase string
	// Function, with Like, is the comparison of a function of the column
	// that the statement wrote and Like stands for on PostgreSQL
	// (TextFunction).
	Function *TextFunction
	// Exact, with In on a text column, matches the values character for
	// character rather than in the column's collation (MySQL's equate
	// 'a', 'A' and 'a '): the values partition selection released, which
	// it counted so (KeyCounts), each its own key.
	Exact bool
	// ExactNumbers, on a numeric condition, is set when each number of
	// Range or In is exactly the constant the statement wrote or computed,
	// as MySQL reads it (exactFloat: 0.1, 7 * 24), so that comparing them
	// compares the statement's constants. It is clear where one is only
	// the nearest float64 (5.0000000000000001 is 5, 365 / 7 is 52.1429 to
	// MySQL), read as a number from a string (which MySQL compares in
	// double precision), or not from the statement's text.
	ExactNumbers bool
	// Scalar, set with neither Range nor In, compares the column with the
	// released value of a scalar subquery of the statement (scalar_where.go:
	// WHERE income > (SELECT AVG(income) FROM pums), age BETWEEN (SELECT
	// ...) AND 60). Until the subquery is released the planner knows
	// nothing of the rows it keeps; the executor resolves it
	// (ResolveScalars) into a Range whose ends are the released values,
	// bound to the backend as typed arguments (Range.LowerArg).
	Scalar *ScalarBound
}

// TextFunction is a text test BI tools write with a function of a text
// column: LOWER(col) = 's' and UPPER(col) = 's' (also LCASE, UCASE), a
// prefix LEFT(col, n) = 's' (also SUBSTRING(col, 1, n), SUBSTR, MID), a
// suffix RIGHT(col, n) = 's', and "contains" LOCATE('s', col) > 0 (also
// INSTR(col, 's') > 0). MySQL/MariaDB and SQLite compute it as written
// (SQLite with its lower, upper, substr and instr), so each answers as it
// would itself: on MariaDB = ignores trailing spaces (PAD SPACE) where
// LIKE does not, and LOCATE folds case but not accents where LIKE under
// utf8mb4_general_ci folds both; SQLite's LIKE folds ASCII case, its =
// and instr do not. PostgreSQL matches the Condition's Like pattern
// instead, in the "C" collation (its strpos and = fail or fold under a
// nondeterministic collation), which selects the same rows under every
// deterministic one: = of text is byte equality there. None of these
// functions fails on any value of a text column.
type TextFunction struct {
	// Func is "lower", "upper", "left", "right" or "locate".
	Func string
	// Length is n of LEFT and RIGHT, at most MaxTextFunctionLength.
	Length int64
	// Value is the string compared with or searched for.
	Value string
}

// MaxTextFunctionLength caps the n of LEFT(col, n) and RIGHT(col, n): no
// value of a MySQL text column has more characters (LONGTEXT holds 2^32 -
// 1 bytes), so a larger n takes the whole value, as this one does.
// SQLite's are capped lower (maxSQLiteTextLength).
const MaxTextFunctionLength = 1 << 32

// LikeEscape is the escape character of Condition.Like patterns, which
// every dialect renders with ESCAPE '!' (a backslash would read
// differently under MySQL's NO_BACKSLASH_ESCAPES).
const LikeEscape = '!'

// Range is an interval of a numeric column. A missing end is unbounded.
type Range struct {
	Lower, Upper         float64
	HasLower, HasUpper   bool
	LowerOpen, UpperOpen bool
	// LowerMicros and UpperMicros, on a timestamp range (Condition.Temporal
	// catalog.Timestamp), are the microseconds past the whole seconds
	// Lower and Upper, in [0, 10^6): a compared literal's fraction of a
	// second ('2024-01-01 00:00:00.250' from a client's Timestamp or Date
	// argument), which the backend compares exactly with the column's
	// values, fractions of their own included. Zero on every other range.
	LowerMicros, UpperMicros int32
	// LowerExact and UpperExact, on a bucket's range, are its ends' exact
	// digits when they are no doubles (Edge.Exact), which the backend
	// compares with; Lower and Upper are then the doubles nearest them.
	LowerExact, UpperExact string
	// LowerArg and UpperArg, on a range resolved from a ScalarBound
	// (ResolveScalars), are the ends that are a scalar subquery's released
	// value, rendered as typed bind arguments of the backend (RangeArg);
	// Lower and Upper (with LowerMicros, UpperMicros) are then the numbers
	// nearest them.
	LowerArg, UpperArg *RangeArg
}

// Below reports whether every point of r is below every point of s,
// fractions of a second included.
func (r Range) Below(s Range) bool {
	if !r.HasUpper || !s.HasLower {
		return false
	}
	c := compareBounds(r.Upper, r.UpperMicros, s.Lower, s.LowerMicros)
	return c < 0 || c == 0 && (r.UpperOpen || s.LowerOpen)
}

// WholeSeconds is the smallest range with whole-number ends that holds r:
// r itself when it has no fractions of a second, else with a fractional
// lower end s + f taken down to s (closed) and a fractional upper end up
// to s + 1 (open). The ranges that reason on whole ends (a date key's
// window, a histogram's buckets) read a WHERE range so.
func (r Range) WholeSeconds() Range {
	if r.LowerMicros > 0 {
		r.LowerMicros, r.LowerOpen = 0, false
	}
	if r.UpperMicros > 0 {
		r.Upper, r.UpperMicros, r.UpperOpen = r.Upper+1, 0, true
	}
	return r
}

// compareBounds compares x + xµ·10⁻⁶ with y + yµ·10⁻⁶ exactly, for
// whole x and y: -1, 0 or +1.
func compareBounds(x float64, xµ int32, y float64, yµ int32) int {
	if c := cmp.Compare(x, y); c != 0 {
		return c
	}
	return cmp.Compare(xµ, yµ)
}

// Value is a constant from the client's SQL: a number or a string (text
// columns compare only with strings, numeric columns only with numbers). Null
// is SQL NULL; it occurs only in SET and in a ConstantSelect, never in a
// Condition.
type Value struct {
	Num    float64
	Str    string
	IsText bool
	Null   bool
	// Temporal, on a text value, is catalog.Date or catalog.Timestamp when
	// the text is a date 'YYYY-MM-DD' or a timestamp 'YYYY-MM-DD
	// hh:mm:ss' that MySQL would type DATE or DATETIME (the label of
	// GROUP BY DATE(col), CAST(... AS DATE), a date column): the result
	// column is then sent with that type.
	Temporal catalog.ColumnType
	// Decimal, on a constant of a post-processing expression written as
	// an integer or decimal literal (not a float literal such as 2.5e0),
	// is the literal with its signs as MySQL reads it exactly: "0.10",
	// "-7", "18446744073709551615". Its digits after the point are the
	// scale of MySQL's DECIMAL (0.10 is DECIMAL(…,2)); without a point it
	// is a BIGINT, or BIGINT UNSIGNED or DECIMAL beyond BIGINT's range.
	// Empty for every other value.
	Decimal string
}

// SetVariables is SET of one or more variables. Assignments are those to
// dpproxy's settings (@dp_epsilon, @dp_delta, @dp_mechanism, @dp_trim), which
// the session validates; Catalog, when not empty, is the statement's text,
// which the catalog engine evaluates for every other variable (system
// variables, SET NAMES, SET TRANSACTION, other user variables).
type SetVariables struct {
	Assignments []Assignment
	Catalog     string
}

// Assignment is one "@dp_name = value" of a SET.
type Assignment struct {
	// Name is lower case without the @.
	Name string
	// Value is the assigned constant; Default is true for SET x = DEFAULT
	// and for SET @x = NULL (back to the default).
	Value   Value
	Default bool
}

// ShowWarnings is SHOW WARNINGS (or SHOW ERRORS): the notes that describe the
// last answer.
type ShowWarnings struct {
	// Errors is true for SHOW ERRORS: only the Error-level entries.
	Errors bool
	// Limit is SHOW WARNINGS LIMIT [offset,] count; nil lists everything.
	Limit *Limit
	// Count is true for SHOW COUNT(*) WARNINGS (or ERRORS): how many
	// entries there are, not the list.
	Count bool
}

// Limit is a LIMIT clause: skip Offset rows, then return at most Count.
// Either may be as large as MySQL's LIMIT takes (18446744073709551615).
type Limit struct{ Offset, Count uint64 }

// Rows returns the rows [start, end) of n that the limit keeps, without
// overflowing however large Offset and Count are.
func (l Limit) Rows(n int) (start, end int) {
	start = int(min(l.Offset, uint64(n)))
	return start, start + int(min(l.Count, uint64(n-start)))
}

// ConstantSelect is a SELECT without FROM: variables, session functions and
// literals that clients send at connect time (SELECT @@version_comment,
// DATABASE(), USER(), 1), and dpproxy's budget functions.
type ConstantSelect struct {
	TopLevel
	Items []ConstItem
}

// ConstKind is the kind of a ConstItem.
type ConstKind int

// The kinds of constant output.
const (
	// Literal is a constant such as 1 or 'x'.
	Literal ConstKind = iota + 1
	// SystemVariable is @@name.
	SystemVariable
	// UserVariable is @name.
	UserVariable
	// Function is a function of the session, not of data: DATABASE(), USER(),
	// CURRENT_USER(), VERSION(), CONNECTION_ID(), NOW(), dp_remaining_epsilon(),
	// dp_remaining_delta().
	Function
	// Expression is any other expression of literals, variables and
	// functions, over no table: the catalog engine evaluates it once the
	// session has put its values of the dpproxy settings (@dp_epsilon,
	// @dp_delta, @dp_mechanism, @dp_trim) and budget functions it reads
	// (Refs) in their places (ConstItem.SQL). Those values are public to
	// the analyst: their own settings and remaining budget.
	Expression
)

// ConstItem is one output column of a ConstantSelect.
type ConstItem struct {
	Label string
	Kind  ConstKind
	// Name is the lower-case variable or function name.
	Name  string
	Value Value
	// Refs are, for an Expression, its references to dpproxy's settings
	// and budget functions (UserVariable and Function items), in order.
	Refs []ConstItem
	// template is an Expression's SQL cut at its Refs.
	template []string
}

// Use is USE db.
type Use struct{ Database string }

// Kill is KILL [CONNECTION | QUERY] id: interrupt the statement connection
// ConnectionID is running and, unless Query, close that connection.
type Kill struct {
	ConnectionID uint64
	Query        bool
}

// Empty is a statement with nothing to do, answered with OK: only a comment,
// or a transaction statement (BEGIN, START TRANSACTION, COMMIT, ROLLBACK),
// which is a no-op because dpproxy never writes.
type Empty struct{}

func (*Select) statement()         {}
func (*Explain) statement()        {}
func (*SetVariables) statement()   {}
func (*ShowWarnings) statement()   {}
func (*ConstantSelect) statement() {}
func (*Use) statement()            {}
func (*Kill) statement()           {}
func (*Empty) statement()          {}

// Contains reports whether x is in the range.
func (r *Range) Contains(x float64) bool {
	switch {
	case r.HasLower && (x < r.Lower || r.LowerOpen && x == r.Lower):
		return false
	case r.HasUpper && (x > r.Upper || r.UpperOpen && x == r.Upper):
		return false
	}
	return !math.IsNaN(x)
}
