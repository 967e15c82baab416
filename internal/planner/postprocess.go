package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Datum is one value of a released row: NULL, a number (Int when it is
// an integer, as counts are) or a string.
type Datum struct {
	Null bool
	Num  float64
	Int  bool
	// Double marks a number MySQL computes as a DOUBLE: a released
	// aggregate other than a count (the proxy sends it as one), a
	// non-integer key, a float literal (2.5e0), and what is computed from
	// one (arithmetic, FLOOR, ROUND, ...) or by POWER, SQRT, EXP, the
	// logarithms, CAST AS DOUBLE, AVG and the variances of one. A number
	// that is neither Int nor Double is exact, as MySQL computes integers
	// and DECIMALs (a decimal literal, COUNT(*) / 2): ROUND takes a
	// DOUBLE's ties to even and an exact value's away from zero, as MySQL
	// does. Functions that return one of their arguments (IF, COALESCE,
	// GREATEST, ...) keep that argument's, where MySQL makes them a DOUBLE
	// when any of their arguments is one.
	Double bool
	// fixed, on a DOUBLE, is the decimals its type fixes, which its text
	// shows (FormatFixedDouble): ROUND(x, 2)'s 2, FLOOR(x)'s 0, and what
	// arithmetic, ABS and the aggregates of post-processing compute from
	// them as MariaDB types them (ResultType's rules: ROUND(x, 2) + 1
	// shows 2, FLOOR(x) / 2 shows 4); notFixed elsewhere (a released
	// aggregate, SQRT(x), a float literal). Functions that return one of
	// their arguments (IF, CASE, COALESCE, GREATEST, ...) keep that
	// argument's, where MariaDB gives them the most decimals of all their
	// arguments.
	fixed fixedDecimals
	// single, on a DOUBLE, marks a FLOAT (CAST(x AS FLOAT)): Num holds a
	// single-precision value, written as MariaDB writes a FLOAT
	// (FormatFloat) and sent as one (Float). Anything computed from it is
	// a DOUBLE of that value, as in MariaDB (CAST(0.1 AS FLOAT) + 0 is
	// 0.10000000149011612); functions that return one of their arguments
	// keep it.
	single bool
	Str    string
	IsText bool
	// Temporal, on a text datum, is catalog.Date or catalog.Timestamp
	// when the text is a date or timestamp of that MySQL type
	// (sqlrewrite.Value.Temporal, a date aggregate): Value returns a Date
	// or a DateTime. Functions that return one of their arguments (IF,
	// COALESCE, GREATEST, ...) keep it; the others make plain text or
	// numbers.
	Temporal catalog.ColumnType
	// coll, on other text, is the collation it compares in (textColl).
	coll textColl
	// Rolled, on a released COUNT or SUM of a Laplace release, an AVG of
	// the sums from both bounds or a VARIANCE or STDDEV of the squares
	// from both bounds, holds the release or those sums: WITH ROLLUP's
	// totals of the aggregate, and their intervals, are computed from
	// theirs.
	Rolled Additive
	// Interval, on a released aggregate, is its 95% interval (Estimate's
	// Low and High), which DP_INTERVAL_LOW and DP_INTERVAL_HIGH return.
	Interval *Interval
	// exact, on an exact number that post-processing computed (a
	// constant, arithmetic, a CAST), is its value with every digit MySQL
	// keeps of it (decimal.String: "1.666666666" for 5 / 3); on one read
	// from Num (a released count, a key) it is empty and Num is the
	// value. scale is the scale of its DECIMAL type, the decimals MySQL
	// shows (4 for 5 / 3, 0 for an integer: scaleOf), and unsigned marks a
	// BIGINT UNSIGNED (CAST(x AS UNSIGNED) and arithmetic of one).
	exact    string
	scale    int
	unsigned bool
}

// Interval is the 95% interval of a released value, computed from the
// noise distribution and released or public quantities only.
type Interval struct{ Low, High float64 }

// Additive is what a released aggregate adds up over groups: sums whose
// values on disjoint groups add up to the sums of their union, and the
// aggregate derived from them. WITH ROLLUP's super-aggregates add their
// groups' (PostProcess): post-processing.
type Additive interface {
	// Plus returns the sums of the union of the groups of a and o, which
	// is of a's type.
	Plus(o Additive) Additive
	// Value is the aggregate derived from the sums.
	Value() float64
	// Interval is the aggregate's 95% interval, computed from the noise of
	// the sums (the sum of their groups' independent noises) and released
	// values only, or nil when the sums carry no description of their
	// noise.
	Interval() *Interval
}

// RolledSum is a COUNT's or SUM's released value and the Laplace release
// it is derived from (laplace.Total). The releases add up over groups to a
// release of the union's COUNT or SUM, whose noise is the sum of theirs:
// the total is that release limited to the statistic's range, with the
// interval of the summed noise. It is not the sum of the shown values,
// each limited to the range on its own (a count at ≥ 0): over many
// sparse groups that sum is biased by about half the noise of every
// group (a ROLLUP over 9,804 mostly empty buckets of 1,000 rows showed a
// total count near 100,000).
type RolledSum struct {
	Shown   float64
	Release laplace.Total
	Integer bool
}

func (s *RolledSum) Plus(o Additive) Additive {
	other := o.(*RolledSum)
	return &RolledSum{Shown: s.Shown + other.Shown, Release: s.Release.Plus(other.Release), Integer: s.Integer}
}

// Value is the summed release limited to the statistic's range
// (laplace.DeriveTotal), or the sum of the shown values when the releases
// carry no description of their noise.
func (s *RolledSum) Value() float64 {
	est, err := laplace.DeriveTotal(s.Release, Confidence)
	if err != nil {
		return s.Shown
	}
	return est.Value
}

// Interval is the interval of the summed release (laplace.DeriveTotal:
// it holds the union's true COUNT or SUM with probability ≥ 95%, and the
// value); a COUNT's ends are whole.
func (s *RolledSum) Interval() *Interval {
	est, err := laplace.DeriveTotal(s.Release, Confidence)
	if err != nil {
		return nil
	}
	in := &Interval{Low: est.Low, High: est.High}
	if s.Integer {
		in.Low, in.High = math.Floor(in.Low), math.Ceil(in.High)
	}
	return in
}

// RolledMean is an AVG's released sums from both bounds, Σ(x−L) and
// Σ(U−x) (laplace.EdgeSums), and the bounds [L, U] of its column. The sums
// of several groups' add up to the sums of their union, whose mean
// (laplace.EdgeSums.Mean) is the union's AVG.
type RolledMean struct {
	Sums   laplace.EdgeSums
	Bounds mech.Bounds
}

func (m *RolledMean) Plus(o Additive) Additive {
	other := o.(*RolledMean)
	return &RolledMean{Sums: m.Sums.Plus(other.Sums), Bounds: m.Bounds}
}

func (m *RolledMean) Value() float64 { return m.Sums.Mean(m.Bounds) }

// Interval is laplace.EdgeMeanEstimate's interval of the summed sums.
func (m *RolledMean) Interval() *Interval {
	est, err := laplace.EdgeMeanEstimate(m.Bounds, m.Sums, Confidence)
	if err != nil {
		return nil
	}
	return &Interval{Low: est.Low, High: est.High}
}

// RolledVariance is a VARIANCE's or STDDEV's released squares from both
// bounds (laplace.EdgeSquares), the bounds of its column, the kind of
// variance and whether it is its square root. The squares of several
// groups add up to those of their union (laplace.EdgeSquares.Plus), which
// hold its count, sum and sum of squares.
type RolledVariance struct {
	Squares laplace.EdgeSquares
	Bounds  mech.Bounds
	Kind    laplace.VarianceKind
	Root    bool
}

func (v *RolledVariance) Plus(o Additive) Additive {
	sum := *v
	sum.Squares = v.Squares.Plus(o.(*RolledVariance).Squares)
	return &sum
}

func (v *RolledVariance) Value() float64 {
	x := v.Squares.Variance(v.Bounds, v.Kind)
	if v.Root {
		return math.Sqrt(x)
	}
	return x
}

// Interval is the interval of the summed squares (varianceEstimate).
func (v *RolledVariance) Interval() *Interval {
	est, err := varianceEstimate(v.Bounds, v.Kind, v.Root, v.Squares)
	if err != nil {
		return nil
	}
	return &Interval{Low: est.Low, High: est.High}
}

// Date and DateTime are result cells of MySQL type DATE ('YYYY-MM-DD')
// and DATETIME ('YYYY-MM-DD hh:mm:ss'); package wire sends them so
// (wire.Temporal).
type (
	Date     string
	DateTime string
)

// MySQLTemporal returns the date's text; it is not a DATETIME.
func (d Date) MySQLTemporal() (string, bool) { return string(d), false }

// MySQLTemporal returns the timestamp's text; it is a DATETIME.
func (d DateTime) MySQLTemporal() (string, bool) { return string(d), true }

// Row is one released group: its key values and the released value of
// every aggregate of Query.Base.Items.
type Row struct {
	Keys []sqlrewrite.Value
	Aggs []Datum
	// Windows are the values of Query.Windows, computed by PostProcess.
	Windows []Datum
	// Super marks a WITH ROLLUP super-aggregate row (Rollup).
	Super bool
	// Cols, OuterKeys and OuterAggs are what an Outer query reads
	// (sqlrewrite.ExprColumn, ExprOuterKey, ExprOuterAgg): an output row of
	// the query, and a group's keys and aggregates.
	Cols, OuterKeys, OuterAggs []Datum
	// NoRow marks the row of a group that has no row whatever the data
	// (QueryPlan.NoRow), where an aggregate of a constant
	// (sqlrewrite.ExprConstAgg) is NULL.
	NoRow bool
}

// Rollup returns released, one row per group in group order, with WITH
// ROLLUP's super-aggregate rows (rollup) when q asks for them, else
// released itself.
func Rollup(q *sqlrewrite.Query, released []Row) []Row {
	if !q.Rollup {
		return released
	}
	return rollup(released, 0, len(q.Keys))
}

// PostProcess computes the output rows of a query from released rows,
// one per group in group order, followed by WITH ROLLUP's super-aggregates
// where q has them (as Rollup returns them): HAVING, the window functions over the
// rows it keeps, each column's expression, then ORDER BY (stable, NULLs first ascending as in MySQL), LIMIT/OFFSET and
// DISTINCT; then, for a query with an Outer query, the same steps over
// the Outer's groups of those rows. It is post-processing: it reads only
// released values, public keys and constants, so it costs no budget and
// adds nothing to what the releases reveal; the rows it starts from are
// every group of the public domain, so which rows exist before HAVING
// never depends on the data. Its warnings, and its errors of MySQL (1690,
// dperr.OutOfRange), likewise depend on released values only, and so does
// its failure once the cells it keeps pass catalog.MaxResultBytes
// (dperr.ResultTooLarge: Warnings.hold, which counts cells of released
// values, public keys and constants, row by row).
func PostProcess(q *sqlrewrite.Query, released []Row) ([][]Datum, Warnings, error) {
	return PostProcessScalars(q, released, nil)
}

// PostProcessScalars is PostProcess of a query with scalar subqueries
// (sqlrewrite.Query.Scalars), whose released values are scalars, one
// per subquery (NULL for one that has no row): every row reads them
// (sqlrewrite.ExprScalar).
func PostProcessScalars(q *sqlrewrite.Query, released []Row, scalars []Datum) ([][]Datum, Warnings, error) {
	if len(scalars) != len(q.Scalars) {
		return nil, Warnings{}, fmt.Errorf("planner: %d values for %d scalar subqueries", len(scalars), len(q.Scalars))
	}
	w := Warnings{conn: connectionCollation(q), column: columnCollation(q), packet: q.MaxAllowedPacket, scalars: scalars}
	for _, k := range q.Keys {
		w.literalKeys = append(w.literalKeys, k.Tiers != nil)
		t, _ := bucketType(k)
		w.keyTypes = append(w.keyTypes, t)
	}
	literalLocales(q, &w)
	kept, err := having(q.Having, released, &w)
	if err != nil {
		return nil, w, err
	}
	if err := computeWindows(q, kept, &w); err != nil {
		return nil, w, err
	}
	out, err := project(q.Columns, q.OrderBy, q.Distinct, q.Limit, kept, &w)
	if err != nil || q.Outer == nil {
		return out, w, err
	}
	out, err = postProcessOuter(q.Outer, out, &w)
	return out, w, err
}

// Warnings counts the warnings MySQL gives for what Eval computes. It
// also carries what Eval reads of the statement besides the row, which
// PostProcess sets: the session's collation_connection, the collation of
// text columns and the keys whose text is a literal's; the zero value has
// utf8mb4_0900_bin for both collations and no such key.
type Warnings struct {
	// DivisionsByZero counts the evaluations that were NULL for a division
	// by zero: x / 0, x DIV 0, x % 0 (MOD), and the logarithm of a number
	// at most 0 or to a base at most 0 or 1, which MariaDB counts as one.
	// Each is MySQL's warning 1365 "Division by 0" (sql_mode
	// ERROR_FOR_DIVISION_BY_ZERO, the default). MySQL evaluates some
	// expressions more than once (per row of a temporary table, and of
	// the result), so it may give more of them.
	DivisionsByZero int
	// Truncations are the texts read as numbers that are not numbers as a
	// whole, each MySQL's 1292 (Truncation).
	Truncations []Truncation
	// conn is the session's collation_connection, of literals' text;
	// column is the declared collation of text columns, of released text
	// keys; literalKeys marks the keys whose text is a literal's (a CASE
	// of tiers), the others' a column's (textColl).
	conn        collation
	column      collation
	literalKeys []bool
	// keyTypes are the types of the bucket keys whose bucketing fixes
	// them (bucketType), 0 for the other keys: a DOUBLE's values carry
	// its fixed decimals, a DECIMAL's its scale.
	keyTypes []ResultType
	// packet is the session's max_allowed_packet (maxPacket), which the
	// string functions' results may not exceed.
	packet int64
	// Casts are the warnings and notes of CASTs that changed a value to
	// fit their target type (CastWarning), in the order evaluated.
	Casts []CastWarning
	// held counts the cells PostProcess has kept (hold, result_size.go).
	held int64
	// scalars are the released values of the query's scalar subqueries
	// (PostProcessScalars).
	scalars []Datum
}

// rollup returns rows, which share their first level keys, with WITH
// ROLLUP's super-aggregate rows, as MySQL orders them: each run of rows
// with equal key[level], then its subtotals, recursively, and last the
// total of rows with the keys from level on NULL. A super-aggregate's
// values are the sums of its groups' released aggregates, NULLs skipped,
// NULL when every one is; an AVG's, VARIANCE's or STDDEV's
// (Datum.Rolled) the one derived from the sums of its groups' released sums
// or squares from both bounds (checkRollup allows COUNT, SUM, AVG and the
// variances, and the planner the last only where their releases carry
// those sums). Where every group with a value carries its Rolled sums, the
// super-aggregate's interval is theirs added up (Additive.Interval): the
// noises of m groups' releases add up, so the interval is that of the sum
// of m noises; otherwise it has none.
func rollup(rows []Row, level, keys int) []Row {
	if level >= keys || len(rows) == 0 {
		return rows
	}
	var out []Row
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].Keys[level] == rows[start].Keys[level] {
			end++
		}
		out = append(out, rollup(rows[start:end], level+1, keys)...)
		start = end
	}
	total := Row{Keys: slices.Clone(rows[0].Keys), Aggs: make([]Datum, len(rows[0].Aggs)), Super: true}
	for k := level; k < keys; k++ {
		total.Keys[k] = sqlrewrite.Value{Null: true}
	}
	for a := range total.Aggs {
		total.Aggs[a] = superAggregate(rows, a)
	}
	return append(out, total)
}

// superAggregate is the super-aggregate of the aggregate a of rows: from
// their additive sums (Datum.Rolled) with its interval when every row with
// a value has them, else the sum of their values; NULL when no row has a
// value.
func superAggregate(rows []Row, a int) Datum {
	var (
		rolled              Additive
		complete            = true
		sum                 float64
		ints, value, double = true, false, false
	)
	for _, r := range rows {
		d := r.Aggs[a]
		if d.Null {
			continue
		}
		sum, ints, value, double = sum+number(d), ints && d.Int, true, double || d.Double
		switch {
		case d.Rolled == nil:
			complete = false
		case rolled == nil:
			rolled = d.Rolled
		default:
			rolled = rolled.Plus(d.Rolled)
		}
	}
	switch {
	case !value:
		return Datum{Null: true}
	case rolled == nil || !complete:
		return numberOf(sum, ints, double)
	}
	d := num(rolled.Value(), ints)
	if !d.Null {
		d.Rolled, d.Interval, d.Double = rolled, rolled.Interval(), double
	}
	return d
}

// having returns the rows where cond is true (every row when it is nil).
func having(cond *sqlrewrite.Expr, rows []Row, w *Warnings) ([]Row, error) {
	if cond == nil {
		return rows, nil
	}
	var kept []Row
	for _, r := range rows {
		keep, err := Eval(cond, r, w)
		if err != nil {
			return nil, err
		}
		w.readTruth(keep)
		if truth(keep) {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// project computes the columns of each row and applies DISTINCT, ORDER
// BY and LIMIT.
func project(columns []sqlrewrite.OutputColumn, orderBy []sqlrewrite.OrderKey, distinct bool, limit *sqlrewrite.Limit, kept []Row, w *Warnings) ([][]Datum, error) {
	type outRow struct {
		cols  []Datum
		order []Datum
	}
	rows := make([]outRow, 0, len(kept))
	for _, r := range kept {
		o := outRow{cols: make([]Datum, 0, len(columns))}
		if len(orderBy) > 0 {
			o.order = make([]Datum, 0, len(orderBy))
		}
		for _, c := range columns {
			d, err := Eval(c.Expr, r, w)
			if err == nil {
				err = w.hold(d)
			}
			if err != nil {
				return nil, err
			}
			o.cols = append(o.cols, d)
		}
		for _, k := range orderBy {
			d, err := Eval(k.Expr, r, w)
			if err == nil {
				err = w.hold(d)
			}
			if err != nil {
				return nil, err
			}
			o.order = append(o.order, d)
		}
		rows = append(rows, o)
	}
	if distinct {
		seen := map[string]bool{}
		kept := rows[:0]
		for _, r := range rows {
			key := distinctKeys(r.cols)
			if !seen[key] {
				seen[key] = true
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	slices.SortStableFunc(rows, func(a, b outRow) int {
		for i, k := range orderBy {
			c := compareDatum(a.order[i], b.order[i])
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	if limit != nil {
		start, end := limit.Rows(len(rows))
		rows = rows[start:end]
	}
	out := make([][]Datum, len(rows))
	for i, r := range rows {
		out[i] = r.cols
	}
	return out, nil
}

// postProcessOuter computes an Outer query's rows from the inner output
// rows: groups by the key columns (ascending, NULLs first; one group of
// every row, even of none, without keys), each group's aggregates, then
// HAVING, the columns, DISTINCT, ORDER BY and LIMIT.
func postProcessOuter(o *sqlrewrite.Outer, inner [][]Datum, w *Warnings) ([][]Datum, error) {
	var groups [][][]Datum
	if len(o.Keys) == 0 {
		groups = [][][]Datum{inner}
	} else {
		sorted := slices.Clone(inner)
		compareKeys := func(a, b []Datum) int {
			for _, k := range o.Keys {
				if c := compareDatum(a[k], b[k]); c != 0 {
					return c
				}
			}
			return 0
		}
		slices.SortStableFunc(sorted, compareKeys)
		for i, r := range sorted {
			if i == 0 || compareKeys(sorted[i-1], r) != 0 {
				groups = append(groups, nil)
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], r)
		}
	}
	rows := make([]Row, len(groups))
	for g, members := range groups {
		for _, k := range o.Keys {
			if err := w.hold(members[0][k]); err != nil {
				return nil, err
			}
			rows[g].OuterKeys = append(rows[g].OuterKeys, members[0][k])
		}
		for _, a := range o.Aggs {
			d, err := outerAggregate(a, members, w)
			if err == nil {
				err = w.hold(d)
			}
			if err != nil {
				return nil, err
			}
			rows[g].OuterAggs = append(rows[g].OuterAggs, d)
		}
	}
	kept, err := having(o.Having, rows, w)
	if err != nil {
		return nil, err
	}
	return project(o.Columns, o.OrderBy, o.Distinct, o.Limit, kept, w)
}

// outerAggregate computes one aggregate of an Outer query over a group's
// inner rows, as MySQL computes it: NULLs skipped (COUNT(*) counts every
// row), each distinct value once with DISTINCT, NULL over no value (COUNT:
// 0), the sample variance NULL over one value.
func outerAggregate(a sqlrewrite.OuterAgg, members [][]Datum, w *Warnings) (Datum, error) {
	if a.Arg == nil {
		return num(float64(len(members)), true), nil
	}
	var vals []Datum
	seen := map[string]bool{}
	for _, m := range members {
		d, err := Eval(a.Arg, Row{Cols: m}, w)
		if err == nil {
			err = w.hold(d)
		}
		if err != nil {
			return Datum{}, err
		}
		if d.Null {
			continue
		}
		if a.Distinct {
			key := distinctKey(d)
			if seen[key] {
				continue
			}
			seen[key] = true
		}
		vals = append(vals, d)
	}
	return aggregateOf(a.Func, vals)
}

// compareDatum orders NULL first, then numbers (compareNumbers), then
// strings (in their collation, compareText).
func compareDatum(a, b Datum) int {
	switch {
	case a.Null || b.Null:
		return cmp.Compare(btoi(!a.Null), btoi(!b.Null))
	case a.IsText && b.IsText:
		return compareText(a, b)
	case a.IsText != b.IsText:
		return cmp.Compare(btoi(a.IsText), btoi(b.IsText))
	}
	return compareNumbers(a, b)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func truth(d Datum) bool { return !d.Null && number(d) != 0 }

// number reads a datum as a number, as MySQL converts strings: text's
// longest numeric prefix (parseNumber; Warnings.readNumber counts the
// truncation).
func number(d Datum) float64 {
	if d.IsText {
		f, _ := parseNumber(d.Str)
		return f
	}
	return d.Num
}

// roundingDigits reads the digits argument of ROUND or TRUNCATE as MySQL
// does: text is cut to an integer ('2.7' is 2), a DOUBLE rounded half to
// even (2.5e0 is 2, 2.7e0 is 3), an exact number rounded half away from
// zero (2.5 is 3, -0.5 is -1).
func roundingDigits(d Datum) float64 {
	switch {
	case d.IsText:
		return math.Trunc(number(d))
	case approximate(d):
		return math.RoundToEven(d.Num)
	}
	return math.Round(d.Num)
}

// maxBigint is the largest float64 below 2^63, the end of BIGINT's range
// a double reaches.
const maxBigint = float64(1<<63 - 1024)

// bigint is the integer x an integer operator op computed, or MySQL's
// 1690 when it is outside BIGINT's range (NULL for NaN, as num).
func bigint(x float64, op string) (Datum, error) {
	if math.Abs(x) > maxBigint && !math.IsNaN(x) {
		return Datum{}, dperr.New(dperr.OutOfRange, "BIGINT value is out of range in '%s' of released values", op)
	}
	return num(x, true), nil
}

// roundDigits rounds (or, with truncate, truncates) x to digits decimal
// places, a negative digits to tens, hundreds, ...: dividing by the
// power of ten for negative digits, whose multiplication by 10^digits
// would round (ROUND(100500, -5) was 99999.99999999999). Ties go to even,
// as MySQL rounds a DOUBLE (rint of the scaled value, so ROUND(2.5e0) is
// 2; an exact number's ties go away from zero: roundExact). Beyond what a
// double holds, x is itself (digits ≥ 16 past its point) or 0.
func roundDigits(x, digits float64, truncate bool) float64 {
	step := math.RoundToEven
	if truncate {
		step = math.Trunc
	}
	switch {
	case digits > 300:
		return x
	case digits < -308:
		return 0
	case digits < 0:
		p := math.Pow(10, -digits)
		return step(x/p) * p
	}
	p := math.Pow(10, digits)
	if v := step(x*p) / p; !math.IsInf(x*p, 0) {
		return v
	}
	return x
}

func num(x float64, isInt bool) Datum {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Datum{Null: true}
	}
	if x == 0 {
		x = 0 // no negative zero
	}
	return Datum{Num: x, Int: isInt && x == math.Trunc(x)}
}

// numberOf is num(x, isInt) marked Double when double.
func numberOf(x float64, isInt, double bool) Datum {
	d := num(x, isInt)
	d.Double = double && !d.Null
	return d
}

func boolean(b bool) Datum { return Datum{Num: float64(btoi(b)), Int: true} }

// KeyDatum is the datum of a key value or a constant: an integer or
// decimal literal (Value.Decimal) exact, as literalDatum reads it.
func KeyDatum(v sqlrewrite.Value) Datum {
	switch {
	case v.Null:
		return Datum{Null: true}
	case v.IsText:
		return Datum{Str: v.Str, IsText: true, Temporal: v.Temporal}
	}
	if d, ok := literalDatum(v.Decimal); ok {
		return d
	}
	return num(v.Num, math.Abs(v.Num) < 1<<53)
}

// Eval evaluates a post-processing expression on one released row, with
// MySQL's meaning: NULL in, NULL out (except COALESCE, IFNULL, IS NULL,
// AND/OR and CASE); IF, COALESCE, IFNULL, AND, OR and CASE evaluate
// only the arguments MySQL evaluates. A division by zero and the
// logarithm of a number out of its domain are NULL, each counted in w
// (Warnings.DivisionsByZero); the square root of a negative number is
// NULL. Integers and DECIMALs are computed exactly (exactArithmetic),
// anything with a DOUBLE in float64. An integer result beyond BIGINT's
// range (or BIGINT UNSIGNED's), a DECIMAL beyond MySQL's digits, or a
// DOUBLE beyond DOUBLE's (infinite or not a number: 1e308 * 10,
// EXP(1000), POWER(-8, 1/3)), is MySQL's error 1690 (dperr.OutOfRange);
// a CAST that changes a value to fit its type adds its warning to w
// (Warnings.Casts).
func Eval(e *sqlrewrite.Expr, r Row, w *Warnings) (Datum, error) {
	switch e.Kind {
	case sqlrewrite.ExprConst, sqlrewrite.ExprNoRow:
		return w.literalText(KeyDatum(e.Value)), nil
	case sqlrewrite.ExprConstAgg:
		if r.NoRow {
			return Datum{Null: true}, nil
		}
		return w.literalText(KeyDatum(e.Value)), nil
	case sqlrewrite.ExprAgg:
		d := r.Aggs[e.Index]
		// The sums behind a released aggregate are for WITH ROLLUP, its interval for
		// DP_INTERVAL_LOW and DP_INTERVAL_HIGH only.
		d.Rolled, d.Interval = nil, nil
		return d, nil
	case sqlrewrite.ExprScalar:
		if e.Index >= len(w.scalars) {
			return Datum{}, fmt.Errorf("planner: scalar subquery %d has no value", e.Index)
		}
		d := w.scalars[e.Index]
		d.Rolled, d.Interval = nil, nil
		return d, nil
	case sqlrewrite.ExprKey:
		v := r.Keys[e.Index]
		d := KeyDatum(v)
		d.Double = !d.Null && !d.IsText && !d.Int // a real column's value
		if t := w.keyType(e.Index); !d.Null {
			switch t.Kind() {
			case ResultDouble: // FLOOR(d / 0.3) * 0.3 of a DOUBLE d: -7.2 of 1 decimal
				d = Datum{Num: v.Num, Double: true, fixed: fixed(t.Decimals())}
			case ResultDecimal: // of a BIGINT b: DECIMAL(23,1)
				if x, ok := parseDecimal(v.Decimal); ok {
					d = decimalDatum(x, t.Scale())
				}
			}
		}
		return w.keyText(d, e.Index), nil
	case sqlrewrite.ExprWindow:
		if e.Index >= len(r.Windows) {
			return Datum{}, fmt.Errorf("planner: window %d outside the select list or ORDER BY", e.Index)
		}
		return r.Windows[e.Index], nil
	case sqlrewrite.ExprColumn:
		return r.Cols[e.Index], nil
	case sqlrewrite.ExprOuterKey:
		return r.OuterKeys[e.Index], nil
	case sqlrewrite.ExprOuterAgg:
		return r.OuterAggs[e.Index], nil
	case sqlrewrite.ExprCase:
		n := len(e.Args)
		if e.HasElse {
			n--
		}
		for i := 0; i+1 < n; i += 2 {
			c, err := Eval(e.Args[i], r, w)
			if err != nil {
				return Datum{}, err
			}
			w.readTruth(c)
			if truth(c) {
				return Eval(e.Args[i+1], r, w)
			}
		}
		if e.HasElse {
			return Eval(e.Args[n], r, w)
		}
		return Datum{Null: true}, nil
	}
	if e.Kind == sqlrewrite.ExprFunc && (e.Op == "dp_interval_low" || e.Op == "dp_interval_high") {
		return intervalEnd(e, r)
	}
	if d, done, err := evalShort(e, r, w); done || err != nil {
		return d, err
	}
	args := make([]Datum, len(e.Args))
	for i, a := range e.Args {
		d, err := Eval(a, r, w)
		if err != nil {
			return Datum{}, err
		}
		args[i] = d
	}
	w.readArgs(e.Op, args)
	if e.Kind == sqlrewrite.ExprFunc && (e.Op == "round" || e.Op == "truncate") {
		d, err := evalFunc(e.Op, args, w)
		return withDecimals(d, roundedDecimals(e, datumDecimals(args[0]))), err
	}
	if e.Kind == sqlrewrite.ExprFunc && e.Op == "format" {
		return formatFunc(args, literalLocale(e), w), nil
	}
	if e.Kind == sqlrewrite.ExprFunc {
		return evalFunc(e.Op, args, w)
	}
	if d, ok := evalPredicate(e.Op, args, w); ok {
		return d, nil
	}
	return evalOp(e.Op, args, w)
}

// evalShort evaluates IF, COALESCE and IFNULL, and AND and OR, as MySQL
// does, the arguments from the left up to the one that decides the value
// (done); the arguments it skips are never evaluated, so they add no
// warning and no error. done is false for any other expression, which
// evaluates every argument.
func evalShort(e *sqlrewrite.Expr, r Row, w *Warnings) (d Datum, done bool, err error) {
	switch {
	case e.Kind == sqlrewrite.ExprFunc && e.Op == "if":
		c, err := Eval(e.Args[0], r, w)
		if err != nil {
			return Datum{}, true, err
		}
		w.readTruth(c)
		if truth(c) {
			d, err = Eval(e.Args[1], r, w)
		} else {
			d, err = Eval(e.Args[2], r, w)
		}
		return d, true, err
	case e.Kind == sqlrewrite.ExprFunc && (e.Op == "coalesce" || e.Op == "ifnull"):
		for _, a := range e.Args {
			if d, err = Eval(a, r, w); err != nil || !d.Null {
				return d, true, err
			}
		}
		return Datum{Null: true}, true, nil
	case e.Kind == sqlrewrite.ExprOp && (e.Op == "and" || e.Op == "or"):
		first, err := Eval(e.Args[0], r, w)
		if err != nil {
			return Datum{}, true, err
		}
		w.readTruth(first)
		if !first.Null && truth(first) == (e.Op == "or") {
			return boolean(e.Op == "or"), true, nil
		}
		second, err := Eval(e.Args[1], r, w)
		if err != nil {
			return Datum{}, true, err
		}
		w.readTruth(second)
		d, err = evalOp(e.Op, []Datum{first, second}, w)
		return d, true, err
	}
	return Datum{}, false, nil
}

// intervalEnd is DP_INTERVAL_LOW or DP_INTERVAL_HIGH of an aggregate
// (the parser allows no other argument): the end of its released value's
// 95% interval, NULL where the value has none (an answer from a synopsis,
// a refused release, a date, a WITH ROLLUP total of groups without
// intervals).
func intervalEnd(e *sqlrewrite.Expr, r Row) (Datum, error) {
	a := e.Args[0]
	if a.Kind != sqlrewrite.ExprAgg {
		return Datum{}, fmt.Errorf("planner: %s of %v, not an aggregate", e.Op, a.Kind)
	}
	d := r.Aggs[a.Index]
	if d.Null || d.Interval == nil {
		return Datum{Null: true}, nil
	}
	end := d.Interval.High
	if e.Op == "dp_interval_low" {
		end = d.Interval.Low
	}
	return numberOf(end, d.Int, d.Double), nil
}

func evalOp(op string, a []Datum, w *Warnings) (Datum, error) {
	switch op {
	case "isnull":
		return boolean(a[0].Null), nil
	case "isnotnull":
		return boolean(!a[0].Null), nil
	case "and":
		if !a[0].Null && !truth(a[0]) || !a[1].Null && !truth(a[1]) {
			return boolean(false), nil
		}
		if a[0].Null || a[1].Null {
			return Datum{Null: true}, nil
		}
		return boolean(true), nil
	case "or":
		if truth(a[0]) || truth(a[1]) {
			return boolean(true), nil
		}
		if a[0].Null || a[1].Null {
			return Datum{Null: true}, nil
		}
		return boolean(false), nil
	case "<=>":
		if a[0].Null || a[1].Null {
			return boolean(a[0].Null && a[1].Null), nil
		}
		return boolean(compareValues(a[0], a[1]) == 0), nil
	}
	for _, d := range a {
		if d.Null {
			return Datum{Null: true}, nil
		}
	}
	switch op {
	case "neg":
		if isExact(a[0]) {
			return negateExact(a[0])
		}
		return fixedFraction(-number(a[0]), "-", datumDecimals(a[0]))
	case "not":
		return boolean(!truth(a[0])), nil
	case "xor":
		return boolean(truth(a[0]) != truth(a[1])), nil
	case "=", "<>", "<", "<=", ">", ">=":
		c := compareValues(a[0], a[1])
		return boolean(map[string]bool{"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]), nil
	}
	if isExact(a[0]) && isExact(a[1]) {
		return exactArithmetic(op, a[0], a[1], w)
	}
	// A DOUBLE operand (or text read as one): computed in DOUBLE, with
	// the most decimals of the operands (opType).
	x, y := number(a[0]), number(a[1])
	decimals := max(datumDecimals(a[0]), datumDecimals(a[1]))
	switch op {
	case "+":
		return fixedFraction(x+y, op, decimals)
	case "-":
		return fixedFraction(x-y, op, decimals)
	case "*":
		return fixedFraction(x*y, op, decimals)
	case "/", "div", "%":
		if y == 0 {
			w.DivisionsByZero++
			return Datum{Null: true}, nil
		}
	}
	switch op {
	case "/":
		return fixedFraction(x/y, op, decimals+divIncrement)
	case "div":
		return bigint(math.Trunc(x/y), "DIV")
	case "%":
		return fixedFraction(math.Mod(x, y), op, decimals)
	}
	return Datum{}, fmt.Errorf("planner: unknown operator %q", op)
}

// fixedFraction is fraction(x, op) whose type fixes decimals
// (withDecimals).
func fixedFraction(x float64, op string, decimals int) (Datum, error) {
	d, err := fraction(x, op)
	return withDecimals(d, decimals), err
}

// approximate reports whether MySQL computes with d as a DOUBLE: a
// Double number, or text read as a number.
func approximate(d Datum) bool { return d.Double || d.IsText }

// fraction is the DOUBLE x an operator or function op computed; MySQL's
// 1690 when x is infinite or not a number.
func fraction(x float64, op string) (Datum, error) {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return Datum{}, dperr.New(dperr.OutOfRange, "DOUBLE value is out of range in '%s' of released values", op)
	}
	return numberOf(x, false, true), nil
}

// compareValues compares as MySQL does: strings as strings in their
// collation (compareText), else numbers (compareNumbers).
func compareValues(a, b Datum) int {
	if a.IsText && b.IsText {
		return compareText(a, b)
	}
	return compareNumbers(a, b)
}

func evalFunc(name string, a []Datum, w *Warnings) (Datum, error) {
	if d, ok := evalString(name, a, w); ok {
		return d, nil
	}
	switch name {
	case "nullif":
		if !a[0].Null && !a[1].Null && compareValues(a[0], a[1]) == 0 {
			return Datum{Null: true}, nil
		}
		return a[0], nil
	case "cast-char":
		return castChar(a, w), nil
	case "concat":
		var sb strings.Builder
		for _, d := range a {
			if d.Null {
				return Datum{Null: true}, nil
			}
			sb.WriteString(text(d))
		}
		return Datum{Str: sb.String(), IsText: true, coll: w.madeText(a)}, nil
	}
	for _, d := range a {
		if d.Null {
			return Datum{Null: true}, nil
		}
	}
	switch name {
	case "datediff":
		return dateDiff(a[0], a[1]), nil
	case "timestampdiff":
		return timestampDiff(a[0].Str, a[1], a[2]), nil
	case "date_add", "date_sub":
		return dateAdd(a[0], a[1], a[2].Str, name == "date_sub"), nil
	}
	x := number(a[0])
	double := approximate(a[0])
	switch name {
	case "round", "truncate":
		digits := 0.0
		if len(a) > 1 {
			digits = roundingDigits(a[1])
		}
		if !double {
			return roundExact(a[0], digits, name == "truncate")
		}
		// Eval fixes its decimals (roundedDecimals).
		return numberOf(roundDigits(x, digits, name == "truncate"), false, true), nil
	case "floor", "ceil": // of a DOUBLE a DOUBLE of no decimals, as in MySQL (funcType)
		if !double {
			return floorExact(a[0], name == "ceil"), nil
		}
		return withDecimals(numberOf(map[string]func(float64) float64{"floor": math.Floor, "ceil": math.Ceil}[name](x), false, true), 0), nil
	case "abs":
		if !double {
			return absExact(a[0])
		}
		return withDecimals(numberOf(math.Abs(x), false, true), datumDecimals(a[0])), nil
	case "sign":
		return num(float64(cmp.Compare(x, 0)), true), nil
	case "power":
		return fraction(math.Pow(x, number(a[1])), "POWER")
	case "sqrt":
		if x < 0 {
			return Datum{Null: true}, nil
		}
		return fraction(math.Sqrt(x), "SQRT")
	case "exp":
		return fraction(math.Exp(x), "EXP")
	case "ln", "log", "log10", "log2":
		if len(a) == 2 { // LOG(b, x)
			b, y := x, number(a[1])
			if b <= 0 || b == 1 || y <= 0 {
				w.DivisionsByZero++
				return Datum{Null: true}, nil
			}
			return fraction(math.Log(y)/math.Log(b), "LOG")
		}
		if x <= 0 {
			w.DivisionsByZero++
			return Datum{Null: true}, nil
		}
		f := map[string]func(float64) float64{"ln": math.Log, "log": math.Log, "log10": math.Log10, "log2": math.Log2}[name]
		return fraction(f(x), strings.ToUpper(name))
	case "greatest", "least":
		return extreme(a, name == "greatest"), nil
	case "cast-int", "cast-unsigned":
		return castInteger(a[0], name == "cast-unsigned", w), nil
	case "cast-decimal":
		return castDecimal(a[0], int(number(a[1])), int(number(a[2])), w), nil
	case "cast-real":
		return fraction(x, "CAST")
	case "cast-float":
		return castFloat(a[0], w), nil
	}
	return Datum{}, fmt.Errorf("planner: unknown function %q", name)
}

// dateAdd is MySQL's DATE_ADD(x, INTERVAL n unit), or DATE_SUB when sub
// (sqlrewrite.ShiftTime): of a date a date, or a datetime for a unit
// shorter than a day; of a datetime a datetime with x's fraction of a
// second; NULL when x is neither, or the result is outside the years 1
// to 9999.
func dateAdd(x, n Datum, unit string, sub bool) Datum {
	if !x.IsText || x.Temporal == "" {
		return Datum{Null: true}
	}
	layout := time.DateOnly
	if x.Temporal == catalog.Timestamp {
		layout = time.DateTime
		if _, frac, ok := strings.Cut(x.Str, "."); ok {
			layout += "." + strings.Repeat("0", len(frac))
		}
	}
	t, err := time.Parse(layout, x.Str)
	k := int64(number(n))
	if sub {
		k = -k
	}
	if err != nil {
		return Datum{Null: true}
	}
	t, isDate, ok := sqlrewrite.ShiftTime(t, x.Temporal == catalog.Date, k, unit)
	switch {
	case !ok:
		return Datum{Null: true}
	case isDate:
		return Datum{Str: t.Format(time.DateOnly), IsText: true, Temporal: catalog.Date}
	case x.Temporal == catalog.Date:
		layout = time.DateTime
	}
	return Datum{Str: t.Format(layout), IsText: true, Temporal: catalog.Timestamp}
}

// dateDiff is MySQL's DATEDIFF(a, b): the days from the date of b to the
// date of a, each read from text that starts with a date 'YYYY-MM-DD' (a
// date aggregate, a date key, a literal; a time after it is ignored), NULL
// when either is no such text.
func dateDiff(a, b Datum) Datum {
	day := func(d Datum) (time.Time, bool) {
		if !d.IsText || len(d.Str) < len(time.DateOnly) {
			return time.Time{}, false
		}
		t, err := time.Parse(time.DateOnly, d.Str[:len(time.DateOnly)])
		return t, err == nil && (len(d.Str) == len(time.DateOnly) || d.Str[len(time.DateOnly)] == ' ')
	}
	x, okA := day(a)
	y, okB := day(b)
	if !okA || !okB {
		return Datum{Null: true}
	}
	return num(float64((x.Unix()-y.Unix())/86400), true)
}

// timestampDiff is MySQL's TIMESTAMPDIFF(unit, a, b) for the units of
// sqlrewrite.TimestampUnitSeconds and TimestampUnitMonths: the whole
// units from a to b, truncated toward zero (calendar months by
// catalog.MonthsBetween), each read from text 'YYYY-MM-DD hh:mm:ss' or
// 'YYYY-MM-DD' (midnight; a timestamp aggregate, a date aggregate, a key,
// a literal), NULL when either is no such text.
func timestampDiff(unit string, a, b Datum) Datum {
	read := func(d Datum) (time.Time, bool) {
		if !d.IsText {
			return time.Time{}, false
		}
		layout := time.DateTime
		if len(d.Str) == len(time.DateOnly) {
			layout = time.DateOnly
		}
		t, err := time.Parse(layout, d.Str)
		return t, err == nil
	}
	x, okA := read(a)
	y, okB := read(b)
	if !okA || !okB {
		return Datum{Null: true}
	}
	if months := int64(sqlrewrite.TimestampUnitMonths[unit]); months > 0 {
		return num(float64(catalog.MonthsBetween(x, y)/months), true)
	}
	seconds := int64(sqlrewrite.TimestampUnitSeconds[unit])
	if seconds == 0 {
		return Datum{Null: true}
	}
	return num(float64((y.Unix()-x.Unix())/seconds), true)
}

// text formats a datum as MySQL prints it in a string context.
func text(d Datum) string {
	switch {
	case d.IsText:
		return d.Str
	case d.single:
		return FormatFloat(float32(d.Num))
	case isExact(d) && (d.exact != "" || !d.Int):
		return decimalText(d)
	case d.Int && math.Abs(d.Num) <= maxBigint:
		return strconv.FormatInt(int64(d.Num), 10)
	case d.fixed != notFixed:
		return FormatFixedDouble(d.Num, d.fixed.decimals())
	}
	return FormatDouble(d.Num)
}

// datumDecimals is the decimals of d as numberDecimals counts those of
// its type: an exact number's scale (scaleOf), a DOUBLE's fixed decimals
// (Datum.fixed), NULL's 0, text's none fixed.
func datumDecimals(d Datum) int {
	switch {
	case d.Null:
		return 0
	case d.IsText:
		return NotFixedDecimals
	case d.Double:
		return d.fixed.decimals()
	}
	return scaleOf(d)
}

// withDecimals is d, a DOUBLE computed by an operator or function, with
// the decimals its type fixes (fixed); any other datum (NULL) as it is.
func withDecimals(d Datum, decimals int) Datum {
	if d.Double {
		d.fixed = fixed(decimals)
	}
	return d
}

// Value returns the datum as a result cell: nil, int64, uint64 (a BIGINT
// UNSIGNED beyond BIGINT), float64, FixedDouble (a DOUBLE whose type
// fixes its decimals), Float (a FLOAT), Decimal (an exact number post-processing computed
// that is no integer, with the decimals of its type), string, Date or
// DateTime.
func (d Datum) Value() any {
	switch {
	case d.Null:
		return nil
	case d.IsText && d.Temporal == catalog.Date:
		return Date(d.Str)
	case d.IsText && d.Temporal == catalog.Timestamp:
		return DateTime(d.Str)
	case d.IsText:
		return d.Str
	case d.exact != "" && d.Int:
		x := exactOf(d).unscaled
		if x.IsInt64() {
			return x.Int64()
		}
		return x.Uint64() // a BIGINT UNSIGNED beyond BIGINT
	case d.exact != "":
		return Decimal(decimalText(d))
	case d.Int && math.Abs(d.Num) < 1<<62:
		return int64(d.Num)
	case d.single:
		return Float(d.Num)
	case d.Double && d.fixed != notFixed:
		return FixedDouble{Num: d.Num, Decimals: d.fixed.decimals()}
	}
	return d.Num
}

// FixedDouble is a DOUBLE whose type fixes its decimals: a result cell
// of Datum.Value (Datum.fixed), which as text, as in a VARCHAR column,
// shows them (IF(c, 'none', ROUND(x, 2)) is 1.00), while a DOUBLE
// column holds its Num and has its decimals in the column's type
// (DoubleType); and a value of such a column in a private answer, which
// the text protocol writes with its decimals and the binary protocol
// sends as its double (wire.FixedDouble).
type FixedDouble struct {
	Num      float64
	Decimals int
}

// MySQLText is d as MySQL writes it as text (FormatFixedDouble).
func (d FixedDouble) MySQLText() string { return FormatFixedDouble(d.Num, d.Decimals) }

// MySQLDouble is d's double.
func (d FixedDouble) MySQLDouble() float64 { return d.Num }

// computeWindows sets rows[i].Windows: each window function of the query
// over the rows, partitioned, ordered (stably, so ties keep group order)
// and framed as sqlrewrite.OutputWindow says.
func computeWindows(q *sqlrewrite.Query, rows []Row, warnings *Warnings) error {
	if len(q.Windows) == 0 {
		return nil
	}
	for i := range rows {
		rows[i].Windows = make([]Datum, len(q.Windows))
	}
	for wi, w := range q.Windows {
		n := len(rows)
		parts := map[string][]int{}
		var order []string
		ord := make([][]Datum, n)
		args := make([]Datum, n)
		for i, r := range rows {
			var key []Datum
			for _, e := range w.PartitionBy {
				d, err := Eval(e, r, warnings)
				if err == nil {
					err = warnings.hold(d)
				}
				if err != nil {
					return err
				}
				key = append(key, d)
			}
			k := distinctKeys(key)
			if _, ok := parts[k]; !ok {
				order = append(order, k)
			}
			parts[k] = append(parts[k], i)
			for _, o := range w.OrderBy {
				d, err := Eval(o.Expr, r, warnings)
				if err == nil {
					err = warnings.hold(d)
				}
				if err != nil {
					return err
				}
				ord[i] = append(ord[i], d)
			}
			if w.Arg != nil {
				d, err := Eval(w.Arg, r, warnings)
				if err == nil {
					err = warnings.hold(d)
				}
				if err != nil {
					return err
				}
				args[i] = d
			}
		}
		compare := func(a, b int) int {
			for k, o := range w.OrderBy {
				c := compareDatum(ord[a][k], ord[b][k])
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c
				}
			}
			return 0
		}
		for _, k := range order {
			idx := parts[k]
			slices.SortStableFunc(idx, compare)
			dense, firstPeer := 0, 0
			for p, i := range idx {
				if p == 0 || compare(idx[p-1], i) != 0 {
					dense++
					firstPeer = p
				}
				lastPeer := p
				for lastPeer+1 < len(idx) && compare(idx[lastPeer+1], i) == 0 {
					lastPeer++
				}
				frame := idx
				switch {
				case len(w.OrderBy) == 0:
				case w.Rows:
					frame = idx[:p+1]
				default:
					frame = idx[:lastPeer+1]
				}
				switch w.Func {
				case "row_number":
					rows[i].Windows[wi] = num(float64(p+1), true)
				case "rank":
					rows[i].Windows[wi] = num(float64(firstPeer+1), true)
				case "dense_rank":
					rows[i].Windows[wi] = num(float64(dense), true)
				default:
					rows[i].Windows[wi] = aggregateFrame(w, frame, args)
				}
				if err := warnings.hold(rows[i].Windows[wi]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// aggregateFrame is SUM, AVG, COUNT, MIN or MAX of the window's argument
// over the frame's rows, NULLs skipped (NULL when none is left, except
// COUNT); COUNT(*) counts the rows.
func aggregateFrame(w sqlrewrite.OutputWindow, frame []int, args []Datum) Datum {
	if w.Arg == nil {
		return num(float64(len(frame)), true)
	}
	var vals []Datum
	for _, i := range frame {
		if !args[i].Null {
			vals = append(vals, args[i])
		}
	}
	d, _ := aggregateOf(w.Func, vals)
	return d
}

// aggregateOf computes count, sum, avg, min, max, var_pop, var_samp,
// stddev_pop or stddev_samp of non-NULL values as MySQL does: NULL over no
// value (COUNT: 0), the sample variance NULL over one value, a sum of
// integers an integer, the sum and mean of exact numbers exact
// (exactAggregate).
func aggregateOf(fn string, vals []Datum) (Datum, error) {
	n := float64(len(vals))
	switch {
	case fn == "count":
		return num(n, true), nil
	case len(vals) == 0, len(vals) == 1 && (fn == "var_samp" || fn == "stddev_samp"):
		return Datum{Null: true}, nil
	}
	double, sum, best := false, 0.0, vals[0]
	for _, v := range vals {
		sum += number(v)
		double = double || approximate(v)
		c := compareValues(v, best)
		if fn == "min" && c < 0 || fn == "max" && c > 0 {
			best = v
		}
	}
	if !double {
		if d, ok, err := exactAggregate(fn, vals); ok {
			return d, err
		}
	}
	mean := sum / n
	squares := 0.0
	for _, v := range vals {
		squares += (number(v) - mean) * (number(v) - mean)
	}
	decimals := 0 // of the values, and the aggregate's (aggregateType)
	for _, v := range vals {
		decimals = max(decimals, datumDecimals(v))
	}
	switch fn {
	case "sum":
		return withDecimals(numberOf(sum, false, true), decimals), nil
	case "avg":
		return withDecimals(numberOf(mean, false, true), decimals+divIncrement), nil
	case "min", "max":
		return best, nil
	case "var_pop":
		return withDecimals(numberOf(squares/n, false, true), decimals+divIncrement), nil
	case "var_samp":
		return withDecimals(numberOf(squares/(n-1), false, true), decimals+divIncrement), nil
	case "stddev_pop":
		return withDecimals(numberOf(math.Sqrt(squares/n), false, true), decimals+divIncrement), nil
	case "stddev_samp":
		return withDecimals(numberOf(math.Sqrt(squares/(n-1)), false, true), decimals+divIncrement), nil
	}
	return Datum{}, fmt.Errorf("planner: unknown aggregate %q", fn)
}
