package planner_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestTemporalOutputs checks by hand how a released day or second number
// of a date order statistic is written back (rounded to the nearest day
// or second, within the bounds) and DATEDIFF on released dates in
// post-processing (MySQL's days between the date parts; NULL on text that
// is no date), across a leap day and the whole range of bounds.
func TestTemporalOutputs(t *testing.T) {
	day := catalog.Column{Type: catalog.Date}
	at := catalog.Column{Type: catalog.Timestamp}
	dlo, _ := day.ParseTemporal("2023-01-01")
	dhi, _ := day.ParseTemporal("2024-12-31")
	tlo, _ := at.ParseTemporal("2023-01-01 00:00:00")
	thi, _ := at.ParseTemporal("2024-12-31 23:59:59")
	out := func(typ catalog.ColumnType, lo, hi float64) *planner.Output {
		return &planner.Output{Agg: sqlrewrite.Aggregate{Func: sqlrewrite.Percentile,
			Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowTemporal, Column: "d", Temporal: typ, Lower: lo, Upper: hi}},
			Column: &catalog.Column{Name: "d", Type: catalog.Integer, Lower: &lo, Upper: &hi}}
	}
	leap, _ := day.ParseTemporal("2024-02-29")
	for _, c := range []struct {
		o    *planner.Output
		v    float64
		want string
	}{
		{out(catalog.Date, dlo, dhi), leap, "2024-02-29"},
		{out(catalog.Date, dlo, dhi), leap + 0.49, "2024-02-29"},
		{out(catalog.Date, dlo, dhi), leap + 0.51, "2024-03-01"},
		{out(catalog.Date, dlo, dhi), dlo - 3.7, "2023-01-01"},
		{out(catalog.Date, dlo, dhi), dhi + 100, "2024-12-31"},
		{out(catalog.Timestamp, tlo, thi), tlo + 86400 + 3661.4, "2023-01-02 01:01:01"},
		{out(catalog.Timestamp, tlo, thi), thi + 0.6, "2024-12-31 23:59:59"},
	} {
		if typ, ok := c.o.Temporal(); !ok || typ != c.o.Agg.Expr.Temporal {
			t.Errorf("Temporal() = %q, %v", typ, ok)
		}
		if got := c.o.FormatTemporal(c.v); got != c.want {
			t.Errorf("FormatTemporal(%v) = %s, want %s", c.v, got, c.want)
		}
	}
	if _, ok := (&planner.Output{Agg: sqlrewrite.Aggregate{Func: sqlrewrite.Percentile, Column: "age"}}).Temporal(); ok {
		t.Error("a quantile of a numeric column is not Temporal")
	}

	text := func(s string) planner.Datum { return planner.Datum{Str: s, IsText: true} }
	diff := func(a, b planner.Datum) string {
		e := &sqlrewrite.Expr{Kind: sqlrewrite.ExprFunc, Op: "datediff", Args: []*sqlrewrite.Expr{
			{Kind: sqlrewrite.ExprAgg, Index: 0}, {Kind: sqlrewrite.ExprAgg, Index: 1}}}
		d, err := planner.Eval(e, planner.Row{Aggs: []planner.Datum{a, b}}, new(planner.Warnings))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(d.Value())
	}
	for _, c := range []struct {
		a, b planner.Datum
		want string
	}{
		{text("2024-03-01"), text("2024-02-28"), "2"},
		{text("2023-03-01"), text("2023-02-28"), "1"},
		{text("2024-02-28"), text("2024-03-01"), "-2"},
		{text("2024-12-31 23:59:59"), text("2024-12-31 00:00:00"), "0"},
		{text("9999-12-31"), text("1000-01-01"), "3287181"},
		{text("2024-02-30"), text("2024-02-28"), "<nil>"},
		{text("2024-02-28T10:00:00"), text("2024-02-28"), "<nil>"},
		{planner.Datum{Num: 20240228, Int: true}, text("2024-02-28"), "<nil>"},
		{planner.Datum{Null: true}, text("2024-02-28"), "<nil>"},
	} {
		if got := diff(c.a, c.b); got != c.want {
			t.Errorf("DATEDIFF(%v, %v) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// TestTimestampDiffOfReleasedValues checks TIMESTAMPDIFF(unit, a, b) in
// post-processing (TIMESTAMPDIFF(HOUR, MIN(at), MAX(at))) on hand-checked
// values: whole units from a to b truncated toward zero (calendar months
// as MySQL counts them), a date as its midnight, NULL on text that is no date or timestamp and on numbers.
func TestTimestampDiffOfReleasedValues(t *testing.T) {
	text := func(s string) planner.Datum { return planner.Datum{Str: s, IsText: true} }
	for _, c := range []struct {
		unit string
		a, b planner.Datum
		want string
	}{
		{"SECOND", text("2024-01-01 10:00:00"), text("2024-01-01 10:01:01"), "61"},
		{"MINUTE", text("2024-01-01 10:00:00"), text("2024-01-01 10:59:59"), "59"},
		{"MINUTE", text("2024-01-01 10:00:00"), text("2024-01-01 09:00:01"), "-59"},
		{"HOUR", text("2024-02-28"), text("2024-03-01 11:59:59"), "59"},
		{"DAY", text("2024-01-01 23:59:59"), text("2024-01-02 00:00:00"), "0"},
		{"DAY", text("1969-12-31 12:00:00"), text("1969-12-30 11:00:00"), "-1"},
		{"WEEK", text("2020-02-01"), text("2020-02-14 23:59:59"), "1"},
		{"WEEK", text("2020-02-01"), text("2020-02-15"), "2"},
		{"MONTH", text("2024-01-31 10:00:00"), text("2024-02-29 23:00:00"), "0"},
		{"MONTH", text("2024-01-15 10:00:00"), text("2024-02-15 10:00:00"), "1"},
		{"MONTH", text("2024-02-15 10:00:00"), text("2023-11-15 10:00:01"), "-2"},
		{"QUARTER", text("2023-11-30"), text("2024-05-30"), "2"},
		{"YEAR", text("1980-02-29"), text("2024-02-28"), "43"},
		{"YEAR", text("1980-02-29"), text("2024-02-29"), "44"},
		{"YEAR", text("2024-06-30"), text("1980-07-01"), "-43"},
		{"DAY", text("2024-02-30"), text("2024-03-01"), "<nil>"},
		{"DAY", planner.Datum{Num: 20240228, Int: true}, text("2024-03-01"), "<nil>"},
		{"DAY", planner.Datum{Null: true}, text("2024-03-01"), "<nil>"},
	} {
		e := &sqlrewrite.Expr{Kind: sqlrewrite.ExprFunc, Op: "timestampdiff", Args: []*sqlrewrite.Expr{
			{Kind: sqlrewrite.ExprConst, Value: sqlrewrite.Value{IsText: true, Str: c.unit}},
			{Kind: sqlrewrite.ExprAgg, Index: 0}, {Kind: sqlrewrite.ExprAgg, Index: 1}}}
		d, err := planner.Eval(e, planner.Row{Aggs: []planner.Datum{c.a, c.b}}, new(planner.Warnings))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(d.Value()); got != c.want {
			t.Errorf("TIMESTAMPDIFF(%s, %v, %v) = %s, want %s", c.unit, c.a, c.b, got, c.want)
		}
	}
}
