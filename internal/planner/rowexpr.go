package planner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// withRowExprs returns t with a column for each distinct row expression
// the items aggregate (sqlrewrite.RowExpr: SUM(age + income)) or the
// GROUP BY keys bucket (keys: FLOOR(DATEDIFF(...) / 7) * 7), and the
// derived columns the fetches compute for them. Each such column is real
// (integer for a date's number or a difference of them: integerValued), named by the
// expression's text, with the expression's derived bounds
// (RowExpr.Bounds) as its declared bounds, so that every mechanism plans
// and runs on it as on a declared column with those bounds: the releases
// and their guarantees are those of that column's aggregates, their
// sensitivity fixed by the derived bounds, which the fetch clamps to like
// any bounds. t itself is returned when there is none. On a table with a
// privacy unit the bounding reads the derived columns as columns of the
// table (sqlrewrite's source), so a unit's rows are bounded as for any
// column, and each release's unit sensitivity (k rows of values within
// the derived bounds) is that of a declared column with those bounds.
func withRowExprs(t *catalog.Table, items []sqlrewrite.Item, keys []*sqlrewrite.RowExpr) (*catalog.Table, []sqlrewrite.DerivedColumn, error) {
	var out *catalog.Table
	var derived []sqlrewrite.DerivedColumn
	seen := map[string]bool{}
	// The GROUP BY keys' expressions first, then the aggregates', one
	// column per distinct expression text.
	type use struct {
		label, column string
		x             *sqlrewrite.RowExpr
	}
	var uses []use
	for _, x := range keys {
		uses = append(uses, use{"GROUP BY buckets of " + x.String(), x.String(), x})
	}
	for _, it := range items {
		if it.Agg.Expr != nil {
			uses = append(uses, use{it.Label, it.Agg.Column, it.Agg.Expr})
		}
	}
	for _, u := range uses {
		x := u.x
		if out == nil {
			clone := *t
			clone.Columns = slices.Clone(t.Columns)
			out = &clone
		}
		if seen[u.column] {
			continue // the same expression, already derived
		}
		if _, ok := t.Column(u.column); ok {
			return nil, nil, dperr.New(dperr.Unsupported, "not supported: %s, whose expression %s is also the name of a column", u.label, u.column)
		}
		seen[u.column] = true
		lo, hi, err := x.Bounds()
		if err != nil {
			return nil, nil, dperr.New(dperr.Unsupported, "not supported: %s, whose bounds cannot be derived: %v", u.label, err)
		}
		var missing string
		source := func(name string) string {
			c, ok := t.Column(name)
			if !ok {
				missing = name
				return name
			}
			return c.Source
		}
		expr := x.Sourced(source)
		if missing != "" {
			return nil, nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'field list'", missing)
		}
		name := "dpproxy_e" + strconv.Itoa(len(derived))
		typ := catalog.Real
		if integerValued(x) {
			typ = catalog.Integer // a day or second number, a difference of them, whole units of one
		}
		out.Columns = append(out.Columns, catalog.Column{Name: u.column, Source: name, Type: typ, Lower: &lo, Upper: &hi})
		derived = append(derived, sqlrewrite.DerivedColumn{Name: name, Expr: expr})
	}
	if out == nil {
		return t, nil, nil
	}
	return out, derived, nil
}

// integerValued reports whether x is built only from date numbers
// (sqlrewrite.RowTemporal), integer constants, +, -, *, LEAST and
// GREATEST, rounded quotients (sqlrewrite.RowIntDiv), calendar months
// (sqlrewrite.RowMonthDiff) and whole seconds (sqlrewrite.RowSecondDiff), as DATEDIFF and TIMESTAMPDIFF are, and the
// functions whose values are integers (SIGN, FLOOR, CEIL, ROUND and
// TRUNCATE to d ≤ 0 digits, the date parts) or stay integers on integers (ABS, POW, MOD
// by an integer): every value it takes is an integer (exactly so below
// 2^53, which the day and second numbers of years 1000–9999 and their
// differences are).
func integerValued(x *sqlrewrite.RowExpr) bool {
	switch x.Kind {
	case sqlrewrite.RowTemporal, sqlrewrite.RowIntDiv, sqlrewrite.RowMonthDiff, sqlrewrite.RowSecondDiff:
		return true
	case sqlrewrite.RowConst:
		return x.Num == math.Trunc(x.Num)
	case sqlrewrite.RowOp:
		return strings.ContainsRune("+-*LG", rune(x.Op)) && integerValued(x.Args[0]) && integerValued(x.Args[1])
	case sqlrewrite.RowFunc:
		switch x.Func {
		case sqlrewrite.FuncSign, sqlrewrite.FuncFloor, sqlrewrite.FuncCeil, sqlrewrite.FuncYear, sqlrewrite.FuncMonth, sqlrewrite.FuncDay,
			sqlrewrite.FuncHour, sqlrewrite.FuncMinute, sqlrewrite.FuncSecond, sqlrewrite.FuncQuarter, sqlrewrite.FuncDayOfWeek,
			sqlrewrite.FuncWeekday, sqlrewrite.FuncDayOfYear:
			return true
		case sqlrewrite.FuncRound, sqlrewrite.FuncTruncate:
			return x.Num <= 0
		case sqlrewrite.FuncAbs, sqlrewrite.FuncPow:
			return integerValued(x.Args[0])
		case sqlrewrite.FuncMod:
			return x.Num == math.Trunc(x.Num) && integerValued(x.Args[0])
		}
	}
	return false
}

// derivedName is the expression text of the derived column with backend
// name source.
func derivedName(t *catalog.Table, source string) string {
	for _, c := range t.Columns {
		if c.Source == source {
			return c.Name
		}
	}
	return source
}

// explainDerived states a derived column's bounds and how it is computed.
func explainDerived(t *catalog.Table, d sqlrewrite.DerivedColumn) string {
	var lo, hi float64
	for _, c := range t.Columns {
		if c.Source == d.Name {
			lo, hi, _ = c.Bounds()
		}
	}
	if typ, ok := d.Expr.TemporalOf(); ok {
		c := catalog.Column{Type: typ}
		unit := map[catalog.ColumnType]string{catalog.Date: "day", catalog.Timestamp: "second"}[typ]
		return fmt.Sprintf("the %s from 1970-01-01 of each value, computed per row by the database: NULL (skipped) when the value is not a date, "+
			"the nearer bound when it lies outside the declared bounds [%s, %s] = [%g, %g]; released as an integer column with those bounds and written back as a %s",
			unit, c.FormatTemporal(lo), c.FormatTemporal(hi), lo, hi, typ)
	}
	return fmt.Sprintf("bounds [%g, %g] by interval arithmetic (outward rounding) on the declared bounds; "+
		"computed per row by the database in double precision from the operands clamped to their declared bounds, "+
		"NULL (skipped) when an operand is NULL or unreadable; each release clamps it to these bounds, which fix its sensitivity", lo, hi)
}
