package sqlrewrite_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestDatePartsOnDatabases stores timestamps and dates (before 1970, on
// leap days and year ends, beyond the declared bounds, NULL, and 150
// random ones) and checks on every backend that the date parts inside an
// aggregate (YEAR, MONTH, DAYOFMONTH, HOUR, MINUTE, SECOND, QUARTER,
// DAYOFWEEK, WEEKDAY, DAYOFYEAR, EXTRACT), parsed as a client writes them
// and rendered as the derived column a fetch reads, compute per row what
// Go's time package computes on the value clamped to its bounds, inside
// the derived bounds; on MariaDB the same values are also MySQL's own
// functions on the rows inside the bounds.
func TestDatePartsOnDatabases(t *testing.T) {
	lower, upper := "1960-01-01 00:00:00", "2030-12-31 23:59:59"
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "dp_date_parts", Source: "dp_date_parts", Columns: []catalog.Column{
		dated(catalog.Timestamp, "a", lower, upper),
		dated(catalog.Date, "d", lower[:10], upper[:10]),
	}}}}
	rows := [][2]string{
		{"2024-02-29 23:59:59", "2024-02-29"},
		{"1969-12-31 23:00:00", "1969-12-31"},
		{"1960-01-01 00:00:00", "1960-01-03"},
		{"2030-12-31 23:59:59", "2030-12-31"},
		{"1950-06-01 08:00:00", "1900-01-01"}, // both clamped to the lower bounds
		{"2040-01-01 12:30:45", "2099-12-31"}, // both clamped to the upper bounds
		{"", "2024-05-05"},
		{"2024-05-05 05:05:05", ""},
		{"2023-12-31 12:00:00", "2023-01-01"},
		{"2021-01-03 00:00:00", "2021-01-04"}, // a Sunday and a Monday
	}
	rng := rand.New(rand.NewPCG(9, 4))
	for range 150 {
		t0 := time.Date(1961+rng.IntN(69), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
		rows = append(rows, [2]string{t0.Format(time.DateTime), t0.AddDate(0, 0, rng.IntN(400)-200).Format(time.DateOnly)})
	}
	clamped := func(s string, date bool) (time.Time, bool) {
		if s == "" {
			return time.Time{}, false
		}
		layout, lo, hi := time.DateTime, lower, upper
		if date {
			layout, lo, hi = time.DateOnly, lower[:10], upper[:10]
		}
		v, _ := time.Parse(layout, s)
		l, _ := time.Parse(layout, lo)
		h, _ := time.Parse(layout, hi)
		if v.Before(l) {
			v = l
		}
		if v.After(h) {
			v = h
		}
		return v, true
	}
	weekday := func(t time.Time) float64 { return float64((int(t.Weekday()) + 6) % 7) }
	exprs := []struct {
		sql  string
		date bool // reads d, else a
		of   func(time.Time) float64
	}{
		{"YEAR(a)", false, func(t time.Time) float64 { return float64(t.Year()) }},
		{"MONTH(d)", true, func(t time.Time) float64 { return float64(t.Month()) }},
		{"DAYOFMONTH(a)", false, func(t time.Time) float64 { return float64(t.Day()) }},
		{"DAY(d)", true, func(t time.Time) float64 { return float64(t.Day()) }},
		{"HOUR(a)", false, func(t time.Time) float64 { return float64(t.Hour()) }},
		{"HOUR(d)", true, func(time.Time) float64 { return 0 }},
		{"MINUTE(a)", false, func(t time.Time) float64 { return float64(t.Minute()) }},
		{"SECOND(a)", false, func(t time.Time) float64 { return float64(t.Second()) }},
		{"QUARTER(a)", false, func(t time.Time) float64 { return float64((int(t.Month())-1)/3 + 1) }},
		{"DAYOFWEEK(a)", false, func(t time.Time) float64 { return float64(t.Weekday()) + 1 }},
		{"WEEKDAY(d)", true, weekday},
		{"DAYOFYEAR(d)", true, func(t time.Time) float64 { return float64(t.YearDay()) }},
		{"EXTRACT(HOUR FROM a)", false, func(t time.Time) float64 { return float64(t.Hour()) }},
		{"EXTRACT(QUARTER FROM d)", true, func(t time.Time) float64 { return float64((int(t.Month())-1)/3 + 1) }},
		{"HOUR(a) * 60 + MINUTE(a)", false, func(t time.Time) float64 { return float64(t.Hour()*60 + t.Minute()) }},
	}
	inBounds := func(s string, date bool) bool {
		if date {
			return s != "" && s >= lower[:10] && s <= upper[:10]
		}
		return s != "" && s >= lower && s <= upper
	}
	p := sqlrewrite.NewParser(cat)
	for _, b := range backendsForTests {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec("CREATE TABLE dp_date_parts (a " + b.timestamp + ", d DATE)"); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				insertQuoted(t, db, "dp_date_parts (a, d)", r[:])
			}
			for _, e := range exprs {
				x, lo, hi := aggregateExpr(t, p, "dp_date_parts", e.sql)
				var want, native []float64
				for _, r := range rows {
					s := r[0]
					if e.date {
						s = r[1]
					}
					v, ok := clamped(s, e.date)
					if !ok {
						continue
					}
					got := e.of(v)
					if got < lo || got > hi {
						t.Errorf("%s = %g on %s, outside its derived bounds [%g, %g]", e.sql, got, s, lo, hi)
					}
					want = append(want, got)
					if inBounds(s, e.date) {
						native = append(native, got)
					}
				}
				slices.Sort(want)
				slices.Sort(native)
				if got := derivedValues(t, db, b.dialect, "dp_date_parts", x, lo, hi); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: %v, want %v", e.sql, got, want)
				}
				if b.name == "mysql" {
					col, lo, hi := "a", lower, upper
					if e.date {
						col, lo, hi = "d", lower[:10], upper[:10]
					}
					q := fmt.Sprintf("SELECT %s FROM dp_date_parts WHERE %s BETWEEN '%s' AND '%s' ORDER BY 1", e.sql, col, lo, hi)
					if got := queryNumbers(t, db, q); fmt.Sprint(got) != fmt.Sprint(native) {
						t.Errorf("MariaDB's own %s: %v, Go's rule %v", e.sql, got, native)
					}
				}
			}
		})
	}
}
