package planner_test

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestWithScalarsComputesTheComparedValue checks that Plan.WithScalars
// computes a WHERE's comparison value from the released subquery values
// as MariaDB computes it, and binds the result: exact DECIMAL arithmetic
// of a count (2000 / 20000 * 3 * 10 is 3.0000, no double's
// 3.0000000000000004), NULL for a division by zero, a date ± INTERVAL as
// DATE_ADD (the day clamped to the month's last, a date plus hours a
// datetime, a datetime keeping its fraction), NULL past 9999-12-31. It
// failed before (the compared value was a bare subquery only).
func TestWithScalarsComputesTheComparedValue(t *testing.T) {
	sub := &sqlrewrite.Expr{Kind: sqlrewrite.ExprScalar}
	num := func(s string) *sqlrewrite.Expr {
		return &sqlrewrite.Expr{Kind: sqlrewrite.ExprConst, Value: sqlrewrite.Value{Decimal: s}}
	}
	op := func(o string, args ...*sqlrewrite.Expr) *sqlrewrite.Expr {
		return &sqlrewrite.Expr{Kind: sqlrewrite.ExprOp, Op: o, Args: args}
	}
	shift := func(f string, n float64, unit string) *sqlrewrite.Expr {
		return &sqlrewrite.Expr{Kind: sqlrewrite.ExprFunc, Op: f, Args: []*sqlrewrite.Expr{sub,
			{Kind: sqlrewrite.ExprConst, Value: sqlrewrite.Value{Num: n}},
			{Kind: sqlrewrite.ExprConst, Value: sqlrewrite.Value{IsText: true, Str: unit}}}}
	}
	date := func(s string) planner.Datum { return planner.Datum{Str: s, IsText: true, Temporal: catalog.Date} }
	stamp := func(s string) planner.Datum { return planner.Datum{Str: s, IsText: true, Temporal: catalog.Timestamp} }
	count := planner.Datum{Num: 2000, Int: true}
	for _, c := range []struct {
		name     string
		temporal catalog.ColumnType
		value    *sqlrewrite.Expr
		released planner.Datum
		kind     sqlrewrite.ArgKind
		null     bool
		text     string
	}{
		{"count / 20000 * 3 * 10", "", op("*", op("*", op("/", sub, num("20000")), num("3")), num("10")), count, sqlrewrite.ArgDecimal, false, "3.0000"},
		{"count / 0", "", op("/", sub, num("0")), count, sqlrewrite.ArgDecimal, true, ""},
		{"-count DIV 700 + 4", "", op("+", op("div", op("neg", sub), num("700")), num("4")), count, sqlrewrite.ArgDecimal, false, "2"},
		{"2024-01-31 + 1 MONTH", catalog.Date, shift("date_add", 1, "MONTH"), date("2024-01-31"), sqlrewrite.ArgDate, false, "2024-02-29"},
		{"2024-03-01 - 7 DAY", catalog.Date, shift("date_sub", 7, "DAY"), date("2024-03-01"), sqlrewrite.ArgDate, false, "2024-02-23"},
		{"2024-03-01 + 1 HOUR", catalog.Timestamp, shift("date_add", 1, "HOUR"), date("2024-03-01"), sqlrewrite.ArgTimestamp, false, "2024-03-01 01:00:00"},
		{"2024-03-01 10:00:00.250000 - 1 DAY", catalog.Timestamp, shift("date_sub", 1, "DAY"), stamp("2024-03-01 10:00:00.250000"), sqlrewrite.ArgTimestamp, false, "2024-02-29 10:00:00.250000"},
		{"9999-12-31 + 1 DAY", catalog.Date, shift("date_add", 1, "DAY"), date("9999-12-31"), sqlrewrite.ArgDate, true, ""},
	} {
		cond := sqlrewrite.Condition{Column: "c", Temporal: c.temporal, Scalar: &sqlrewrite.ScalarBound{Range: sqlrewrite.Range{HasLower: true}, Lower: c.value}}
		p, err := (&planner.Plan{Filter: []sqlrewrite.Condition{cond}}).WithScalars([]planner.Datum{c.released})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := p.Filter[0].Range
		if r == nil || r.LowerArg == nil {
			t.Fatalf("%s: not resolved: %+v", c.name, p.Filter[0])
		}
		if a := r.LowerArg; a.Kind != c.kind || a.Null != c.null || !c.null && a.Text != c.text {
			t.Errorf("%s: bound %+v, want kind %d null %t %q", c.name, *a, c.kind, c.null, c.text)
		}
	}
}
