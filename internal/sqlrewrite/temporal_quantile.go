package sqlrewrite

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

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
			if _, ok := qb.sc.dateColumn(arg); !ok {
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
			if _, ok := qb.sc.dateColumn(arg); !ok {
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
	col, ok := qb.sc.dateColumn(arg)
	if !ok {
		return nil, false, nil
	}
	if col.Lower == nil || col.Upper == nil {
		return nil, true, fmt.Errorf("sqlrewrite: date column %s has no bounds", col.Name)
	}
	x := &RowExpr{Kind: RowTemporal, Column: col.Name, Temporal: col.Type, Lower: *col.Lower, Upper: *col.Upper}
	agg.Column, agg.Expr = x.String(), x
	return qb.item(agg, restore(e)), true, nil
}

// temporalValue renders a RowTemporal (the rule of RowTemporal and
// Render's totality): on a value that is a date, the nearer bound
// outside the bounds, else its number; NULL on any other value:
//
//	CASE WHEN readable THEN CAST(CASE WHEN c <= lo THEN lo WHEN c >= hi THEN hi ELSE number END AS double) END
//
// The comparisons are on the column's own type with typed literals, so
// that a value no arithmetic can take (PostgreSQL's ±infinity, which the
// day arithmetic rejects) is a bound before any arithmetic. The number:
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
	return "CASE WHEN " + r.dateReadable(col, e.Temporal) + " THEN CAST(CASE WHEN " +
		col + " <= " + r.dateValue(e.Temporal, e.Lower) + " THEN " + lo + " WHEN " +
		col + " >= " + r.dateValue(e.Temporal, e.Upper) + " THEN " + hi + " ELSE " + number +
		" END AS " + r.spec.double + ") END", nil
}
