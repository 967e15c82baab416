package sqlrewrite

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// What dpproxy answers, quoted in every refusal so that the analyst learns
// what to write instead.
const (
	supportedQueries    = "dpproxy answers only SELECT of aggregates COUNT(*), COUNT(col), COUNT(DISTINCT col), SUM, AVG, VARIANCE, STDDEV, MIN, MAX, MEDIAN, PERCENTILE_CONT, IQR, REGR_SLOPE, REGR_INTERCEPT (of numeric columns and row expressions of them; MIN, MAX, MEDIAN and PERCENTILE_CONT of date columns too) and range counts over declared columns, with AND, OR and NOT of range/equality predicates, and GROUP BY columns with declared values or FLOOR(col / w) * w buckets, with arithmetic, HAVING, ORDER BY and LIMIT over the aggregates"
	supportedWhere      = "WHERE must combine with AND, OR and NOT the conditions col BETWEEN a AND b, col <, <=, >, >=, = or <> constant, and col IN (constants), col IS [NOT] NULL, on declared columns"
	supportedRangeCount = "a range count is SUM(condition), COUNT(CASE WHEN condition THEN 1 END) or SUM(CASE WHEN condition THEN 1 ELSE 0 END), the condition an AND, OR and NOT of col BETWEEN a AND b, col <, <=, >, >=, = or <> constant, and col IN (constants), col IS [NOT] NULL, on declared columns"
	supportedRowCase    = "a CASE in a row expression or in GROUP BY tiers has WHEN conditions that are an AND of col BETWEEN a AND b, col <, <=, >, >= or = constant, and col IN (constants), col IS [NOT] NULL, on declared columns"
	supportedHistogram  = "GROUP BY answers only histograms: SELECT FLOOR(col / w) * w AS bucket, COUNT(*) FROM t [WHERE ...] GROUP BY bucket [ORDER BY bucket], w a positive number (FLOOR(col / w) for bucket numbers), with only COUNT(*) and range counts beside the bucket"
	supportedConst      = "SELECT without FROM may list literals, @@system and @user variables, the functions DATABASE(), USER(), CURRENT_USER(), VERSION(), CONNECTION_ID(), NOW(), LAST_INSERT_ID(), dp_remaining_epsilon() and dp_remaining_delta(), and expressions of them (ROUND(dp_remaining_epsilon(), 2)), without subqueries, aggregates or := assignments"
	supportedSet        = "SET @dp_... takes constants: numbers, strings, or NULL (back to the default)"
	supportedPost       = "released aggregates and keys take arithmetic, comparisons, CASE, CAST and the functions ROUND, TRUNCATE, FLOOR, CEIL, ABS, SIGN, MOD, POWER, SQRT, EXP, LN, LOG, LOG2, LOG10, COALESCE, IFNULL, NULLIF, IF, GREATEST, LEAST, CONCAT, CONCAT_WS, FORMAT, LPAD, RPAD, REPEAT, REPLACE, UPPER, LOWER, LEFT, RIGHT, SUBSTRING, LENGTH, CHAR_LENGTH, TRIM, LTRIM, RTRIM, DATEDIFF, TIMESTAMPDIFF"
)

// refuse is an Unsupported error: what is not supported, then what is.
func refuse(what, supported string) error {
	return dperr.New(dperr.Unsupported, "not supported: %s; %s", what, supported)
}

// refuseQuery is refuse with the general description of dpproxy's queries.
func refuseQuery(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), supportedQueries)
}

// refuseHistogram is refuse with the description of the GROUP BY histogram.
func refuseHistogram(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), supportedHistogram)
}

// conditionSite is where conditions are written: the WHERE clause, or a
// range count in the select list. It words the errors about them.
type conditionSite struct {
	// clause names the clause in UnknownColumn messages, as MySQL does.
	clause string
	// supported describes what the site accepts, for refusals.
	supported string
	// expressions allows conditions on row expressions (WHERE
	// DATEDIFF(shipped, ordered) > 7), read from a derived column: not
	// in the WHEN of a row expression's CASE, which is computed beside
	// the derived columns, not over them.
	expressions bool
	// constants allows conditions the statement's text alone decides (a
	// comparison with NULL, as a NULL bound to a parameter gives, and IS
	// NULL of a constant), folded into the rows where the whole condition
	// is true (scope.predicate): only where a condition selects rows (WHERE,
	// a range count's or a CASE WHEN's of an aggregate), not where its
	// three-valued value is itself used (AVG(condition), GROUP BY
	// condition).
	constants bool
}

var (
	whereSite      = conditionSite{clause: "where clause", supported: supportedWhere, expressions: true, constants: true}
	rangeCountSite = conditionSite{clause: "field list", supported: supportedRangeCount, expressions: true, constants: true}
	rowCaseSite    = conditionSite{clause: "field list", supported: supportedRowCase}
	tierSite       = conditionSite{clause: "field list", supported: supportedRowCase, expressions: true}
)

// refuse is an Unsupported error about a condition written at the site.
func (s conditionSite) refuse(format string, args ...any) error {
	return refuse(fmt.Sprintf(format, args...), s.supported)
}
