package sqlrewrite

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/dpproxy/dpproxy/internal/catalog"
)

// Order statistics of a date or timestamp column: MIN(col), MAX(col),
// MEDIAN(col), PERCENTILE_CONT(col, p) and APPROX_PERCENTILE(col, p·100)
// are the DP quantiles (0, 1, 0.5, p) of the column's number, its day
// (date) or second (timestamp) from 1970-01-01, computed by the database
// per row as a RowTemporal row expression. The planner derives it as an
// integer column with the declared bounds, so every quantile mechanism
// and the `auto` rule apply to it as to an integer column; the released
// number is written back as a date or timestamp (planner.Output). A value
// that is not a date by the reading rule of dates.go is skipped (like
// NULL), a date outside the bounds counts as the nearer bound (as a
// number outside a numeric column's bounds does).

// temporalNumber names a date or timestamp column's number in plans and
// in the derived column's name.
var temporalNumber = map[catalog.ColumnType]string{catalog.Date: "day_number", catalog.Timestamp: "epoch_second"}

// temporalQuantile answers an order statistic of a date or timestamp
// column (above); ok is false when e is not one (the caller's other rules
// apply).
func (qb *queryBuilder) temporalQuantile(e ast.ExprNode) (*Expr, bool, error) {
	var (
		arg ast.ExprNode
		agg = Aggregate{Func: Percentile}
	)
	switch x := e.(type) {
	case *ast.AggregateFuncExpr:
		name := strings.ToLower(x.F)
		if x.Distinct || len(x.Args) == 0 {
			return nil, false, nil
		}
		arg = x.Args[0]
		switch {
		case name == "min" && len(x.Args) == 1:
		case name == "max" && len(x.Args) == 1:
			agg.Quantile = 1
		case name == "approx_percentile" && len(x.Args) == 2:
			if _, ok := qb.sc.temporalArgument(arg); !ok {
				return nil, false, nil
			}
			pct, err := quantileArgument(x.F, x.Args[1], 100)
			if err != nil {
				return nil, true, err
			}
			agg.Quantile = pct / 100
		default:
			return nil, false, nil
		}
	case *ast.FuncCallExpr:
		f, ok := functionAggs[x.FnName.L]
		if !ok || x.Schema.L != "" || len(x.Args) != f.args {
			return nil, false, nil
		}
		arg = x.Args[0]
		switch f.fn {
		case Median:
			agg.Quantile = 0.5
		case Percentile:
			if _, ok := qb.sc.temporalArgument(arg); !ok {
				return nil, false, nil
			}
			q, err := quantileArgument(x.FnName.O, x.Args[1], 1)
			if err != nil {
				return nil, true, err
			}
			agg.Quantile = q
		default:
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	x, ok := qb.sc.temporalArgument(arg)
	if !ok {
		return nil, false, nil
	}
	if x == nil {
		return nil, true, fmt.Errorf("sqlrewrite: date column of %s has no bounds", restore(arg))
	}
	agg.Column, agg.Expr = x.String(), x
	return qb.item(agg, restore(e)), true, nil
}

// temporalArgument reads the argument of an order statistic of dates: a
// date or timestamp column (RowTemporal), or the date of one, DATE(col)
// or CAST(col AS DATE): of a timestamp column the floor of its second
// number over 86400, its day number (MIN(DATE(created_at)) is the DP
// first day). ok is false for anything else; x is nil when the column has
// no bounds.
func (sc *scope) temporalArgument(arg ast.ExprNode) (x *RowExpr, ok bool) {
	day := false
	switch f := unparen(arg).(type) {
	case *ast.FuncCallExpr:
		if f.FnName.L != "date" || f.Schema.L != "" || len(f.Args) != 1 {
			return nil, false
		}
		arg, day = f.Args[0], true
	case *ast.FuncCastExpr:
		if f.Tp.GetType() != mysql.TypeDate {
			return nil, false
		}
		arg, day = f.Expr, true
	}
	col, ok := sc.dateColumn(arg)
	if !ok {
		return nil, false
	}
	if col.Lower == nil || col.Upper == nil {
		return nil, true
	}
	x = &RowExpr{Kind: RowTemporal, Column: col.Name, Temporal: col.Type, Lower: *col.Lower, Upper: *col.Upper}
	if day && col.Type == catalog.Timestamp {
		x = &RowExpr{Kind: RowIntDiv, Op: 'f', Num: catalog.SecondsPerDay, Args: []*RowExpr{x}}
	}
	return x, true
}

// TemporalOf returns the type of the dates or timestamps whose day or
// second numbers e computes: a RowTemporal's own (but for UNIX_TIMESTAMP,
// Seconds), or catalog.Date for the date of a timestamp
// (temporalArgument). ok is false for any other expression.
func (e *RowExpr) TemporalOf() (typ catalog.ColumnType, ok bool) {
	switch {
	case e == nil:
	case e.Kind == RowTemporal && !e.Seconds:
		return e.Temporal, true
	case e.Kind == RowIntDiv && e.Op == 'f' && e.Num == catalog.SecondsPerDay && len(e.Args) == 1 &&
		e.Args[0].Kind == RowTemporal && e.Args[0].Temporal == catalog.Timestamp:
		return catalog.Date, true
	}
	return "", false
}

// temporalValue renders a RowTemporal (the rule of RowTemporal and
// Render's totality): on a value that is a date, the nearer bound
// outside the bounds, else its number; NULL on any other value:
//
//	CASE WHEN readable THEN CAST(CASE WHEN c <= lo THEN lo WHEN c >= hi THEN hi ELSE number END AS double) END
//
// The comparisons are with typed literals, so that a value no arithmetic
// can take (PostgreSQL's ±infinity, which the day arithmetic rejects) is a
// bound before any arithmetic; on PostgreSQL they read the wall clock
// (wallClock), as the number does. The number:
//
//   - SQLite: strftime('%s', c), an integer second (a date is midnight),
//     divided by 86400 for a date (exact at midnight);
//   - PostgreSQL: CAST(c AS DATE) - DATE '1970-01-01' (days), FLOOR of
//     EXTRACT(EPOCH FROM CAST(c AS TIMESTAMP)) (seconds: a timestamptz is
//     read in the session's time zone, as everywhere in dates.go);
//   - MySQL and MariaDB: DATEDIFF(c, DATE '1970-01-01'),
//     TIMESTAMPDIFF(SECOND, TIMESTAMP '1970-01-01 00:00:00', c).
func (r *renderer) temporalValue(e *RowExpr) (string, error) {
	if e.Temporal != catalog.Date && e.Temporal != catalog.Timestamp || !(e.Lower <= e.Upper) {
		return "", fmt.Errorf("sqlrewrite: bad date row expression on %s", e.Column)
	}
	col, err := r.spec.ident(e.Column)
	if err != nil {
		return "", err
	}
	date := e.Temporal == catalog.Date
	var number string
	switch r.spec.name {
	case "sqlite":
		number = "CAST(strftime('%s', " + col + ") AS INTEGER)"
		if date {
			number += " / 86400"
		}
	case "postgres":
		number = "FLOOR(EXTRACT(EPOCH FROM CAST(" + col + " AS TIMESTAMP)))"
		if date {
			number = "(CAST(" + col + " AS DATE) - DATE '1970-01-01')"
		}
	default:
		number = "TIMESTAMPDIFF(SECOND, TIMESTAMP '1970-01-01 00:00:00', " + col + ")"
		if date {
			number = "DATEDIFF(" + col + ", DATE '1970-01-01')"
		}
	}
	lo, hi := realLiteral(e.Lower), realLiteral(e.Upper)
	value := r.wallClock(col, e.Temporal)
	return "CASE WHEN " + r.dateReadable(col, e.Temporal) + " THEN CAST(CASE WHEN " +
		value + " <= " + r.dateValue(e.Temporal, e.Lower) + " THEN " + lo + " WHEN " +
		value + " >= " + r.dateValue(e.Temporal, e.Upper) + " THEN " + hi + " ELSE " + number +
		" END AS " + r.spec.double + ") END", nil
}

// monthDiff renders a RowMonthDiff by catalog.MonthsBetween's rule from
// each operand's month number M = 12·year + month and position in its
// month in microseconds P = day·86400·10⁶ + microsecond of the day
// (< 32·86400·10⁶, so that M·2764800000000 + P orders the times; exact
// integers on MySQL and SQLite, numeric on PostgreSQL):
//
//	CASE WHEN M_b·2764800000000 + P_b >= M_a·2764800000000 + P_a
//	THEN M_b − M_a − (1 if P_b < P_a) ELSE M_b − M_a + (1 if P_b > P_a) END
//
// NULL when either operand is (every field of it is, and the ELSE
// branch's arithmetic with it).
func (r *renderer) monthDiff(e *RowExpr) (string, error) {
	if len(e.Args) != 2 {
		return "", fmt.Errorf("sqlrewrite: bad month difference %s", e)
	}
	var m, p [2]string
	for i, a := range e.Args {
		x, err := r.clampedTime(a)
		if err != nil {
			return "", err
		}
		f := r.timeFields(x)
		m[i] = "(" + f[0] + " * 12 + " + f[1] + ")"
		p[i] = "(" + f[2] + " * 86400000000 + " + f[3] + " * 3600000000 + " + f[4] + " * 60000000 + " + r.minuteMicroseconds(x, f[5]) + ")"
	}
	order := func(i int) string { return "(" + m[i] + " * 2764800000000 + " + p[i] + ")" }
	months := "CASE WHEN " + order(1) + " >= " + order(0) +
		" THEN " + m[1] + " - " + m[0] + " - CASE WHEN " + p[1] + " < " + p[0] + " THEN 1 ELSE 0 END" +
		" ELSE " + m[1] + " - " + m[0] + " + CASE WHEN " + p[1] + " > " + p[0] + " THEN 1 ELSE 0 END END"
	return "CAST(" + months + " AS " + r.spec.double + ")", nil
}

// minuteMicroseconds renders the microseconds of the time value x within
// its minute, an integer: its whole second (timeFields' sec) times 10⁶
// plus its fraction's microseconds (none on SQLite, where a readable
// timestamp has no fraction).
func (r *renderer) minuteMicroseconds(x, sec string) string {
	switch r.spec.name {
	case "sqlite":
		return "(" + sec + " * 1000000)"
	case "postgres":
		return "EXTRACT(MICROSECONDS FROM " + x + ")"
	}
	return "(" + sec + " * 1000000 + MICROSECOND(" + x + "))"
}

// secondDiff renders a RowSecondDiff: the whole seconds of the exact
// difference of the operands (clampedTime), truncated toward zero:
//
//   - PostgreSQL: TRUNC(EXTRACT(EPOCH FROM b) - EXTRACT(EPOCH FROM a)),
//     numeric and exact to the microsecond (of timestamps read on the
//     wall clock, as clampedTime reads them);
//   - MySQL and MariaDB: TIMESTAMPDIFF(SECOND, a, b), which truncates the
//     exact difference;
//   - SQLite: the difference of the second numbers (temporalValue), whose
//     readable timestamps have no fraction of a second.
//
// NULL when either operand is.
func (r *renderer) secondDiff(e *RowExpr) (string, error) {
	if len(e.Args) != 2 {
		return "", fmt.Errorf("sqlrewrite: bad second difference %s", e)
	}
	if r.spec.name == "sqlite" {
		var ops [2]*RowExpr
		for i, a := range e.Args {
			switch {
			case a.Temporal != catalog.Date && a.Temporal != catalog.Timestamp:
				return "", fmt.Errorf("sqlrewrite: a second difference of %s, which is no date or timestamp", a)
			case a.Kind == RowConst && a.Temporal == catalog.Date:
				ops[i] = &RowExpr{Kind: RowConst, Num: a.Num * catalog.SecondsPerDay}
			case a.Kind == RowConst:
				ops[i] = &RowExpr{Kind: RowConst, Num: a.Num}
			case a.Temporal == catalog.Date:
				ops[i] = &RowExpr{Kind: RowOp, Op: '*', Args: []*RowExpr{a, {Kind: RowConst, Num: catalog.SecondsPerDay}}}
			default:
				ops[i] = a
			}
		}
		return r.rowExpr(&RowExpr{Kind: RowOp, Op: '-', Args: []*RowExpr{ops[1], ops[0]}})
	}
	var x [2]string
	for i, a := range e.Args {
		v, err := r.clampedTime(a)
		if err != nil {
			return "", err
		}
		x[i] = v
	}
	diff := "TIMESTAMPDIFF(SECOND, " + x[0] + ", " + x[1] + ")"
	if r.spec.name == "postgres" {
		diff = "TRUNC(EXTRACT(EPOCH FROM " + x[1] + ") - EXTRACT(EPOCH FROM " + x[0] + "))"
	}
	return "CAST(" + diff + " AS " + r.spec.double + ")", nil
}

// clampedTime renders a date or timestamp operand of a RowMonthDiff or a
// RowSecondDiff as a time value: a literal for a RowConst; for a
// RowTemporal, the column's value clamped to its bounds (with its
// fraction of a second between them), NULL when it is no date by the
// reading rule (as temporalValue reads it), as a timestamp on PostgreSQL
// (a timestamptz read in the session's time zone).
func (r *renderer) clampedTime(e *RowExpr) (string, error) {
	lit := func(typ catalog.ColumnType, x float64) string {
		v := r.dateValue(typ, x)
		if r.spec.name == "postgres" {
			v = "CAST(" + v + " AS TIMESTAMP)"
		}
		return v
	}
	switch {
	case e.Kind == RowConst && (e.Temporal == catalog.Date || e.Temporal == catalog.Timestamp):
		return lit(e.Temporal, e.Num), nil
	case e.Kind != RowTemporal || e.Temporal != catalog.Date && e.Temporal != catalog.Timestamp || !(e.Lower <= e.Upper):
		return "", fmt.Errorf("sqlrewrite: a month difference of %s, which is no date or timestamp", e)
	}
	col, err := r.spec.ident(e.Column)
	if err != nil {
		return "", err
	}
	value := col
	if r.spec.name == "postgres" {
		value = "CAST(" + col + " AS TIMESTAMP)"
	}
	clock := r.wallClock(col, e.Temporal)
	return "CASE WHEN " + r.dateReadable(col, e.Temporal) + " THEN CASE WHEN " +
		clock + " <= " + r.dateValue(e.Temporal, e.Lower) + " THEN " + lit(e.Temporal, e.Lower) + " WHEN " +
		clock + " >= " + r.dateValue(e.Temporal, e.Upper) + " THEN " + lit(e.Temporal, e.Upper) + " ELSE " + value + " END END", nil
}

// timeFields renders the year, month, day, hour, minute and whole second
// of the time value x, as integers.
func (r *renderer) timeFields(x string) [6]string {
	var f [6]string
	switch r.spec.name {
	case "sqlite":
		for i, spec := range []string{"%Y", "%m", "%d", "%H", "%M", "%S"} {
			f[i] = "CAST(strftime('" + spec + "', " + x + ") AS INTEGER)"
		}
	case "postgres":
		for i, field := range []string{"YEAR", "MONTH", "DAY", "HOUR", "MINUTE"} {
			f[i] = "EXTRACT(" + field + " FROM " + x + ")"
		}
		f[5] = "FLOOR(EXTRACT(SECOND FROM " + x + "))"
	default:
		for i, fn := range []string{"YEAR", "MONTH", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND"} {
			f[i] = fn + "(" + x + ")"
		}
	}
	return f
}
