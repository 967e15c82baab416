package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDateKeysOnHostileValues stores dates and timestamps, valid and
// hostile (NULL, out of bounds, the bounds themselves, impossible days,
// other spellings on SQLite, blobs and numbers on SQLite, ±infinity on
// PostgreSQL, zero dates on MariaDB, a timestamp with a time zone), and
// checks on every backend that the date keys' cells (year, month, day,
// quarter, day of week, day of month) count exactly the values the
// reading rule (dates.go) reads as dates within the bounds, each in the
// cell Go computes for it; that each group's condition (DateCell) selects
// exactly its cell's rows; that a WHERE date range counts the dates in
// it; and that no statement fails.
func TestDateKeysOnHostileValues(t *testing.T) {
	day := catalog.Column{Type: catalog.Date}
	at := catalog.Column{Type: catalog.Timestamp}
	lo, _ := day.ParseTemporal("2015-01-01")
	hi, _ := day.ParseTemporal("2024-12-31")
	tlo, _ := at.ParseTemporal("2015-01-01 00:00:00")
	thi, _ := at.ParseTemporal("2024-12-31 23:59:59")
	// A value, and what the rule reads: the date or time, or "" (no cell).
	type value struct{ sql, read string }
	common := []value{{"NULL", ""}}
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		types   [3]string // date, timestamp, timestamp with a time zone
		setup   []string
		days    []value
		times   []value
		zoned   []value
		// otherDates counts the days values that are dates outside
		// [2019-01-01, 2021-01-01), within the bounds or not.
		otherDates int
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, [3]string{"DATE", "TIMESTAMP", "TEXT"}, nil,
			[]value{{"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", ""}, {"'2025-01-01'", ""},
				{"'2020-02-29'", "2020-02-29"}, {"'2021-02-29'", ""}, {"'2021-02-30'", ""}, {"'2021-1-5'", ""}, {"' 2021-01-05'", ""},
				{"'2021-01-05 10:00:00'", ""}, {"20210105", ""}, {"2459220.5", ""}, {"x'323032312d30312d3035'", ""}, {"'garbage'", ""},
				{"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59'", ""}, {"'2025-01-01 00:00:00'", ""}, {"'2020-06-15T10:00:00'", ""},
				{"'2020-06-15 10:00:00.5'", ""}, {"'2020-06-15'", ""}, {"'2020-06-15 24:00:00'", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}},
			nil, 4},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, [3]string{"DATE", "TIMESTAMP", "TIMESTAMPTZ"}, []string{"SET TIME ZONE 'UTC'"},
			[]value{{"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", ""}, {"'2025-01-01'", ""},
				{"'2020-02-29'", "2020-02-29"}, {"'infinity'", ""}, {"'-infinity'", ""}, {"'0044-03-15 BC'", ""},
				{"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59.999'", ""}, {"'2024-12-31 23:59:59.5'", ""}, {"'infinity'", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}},
			[]value{{"'2020-12-31 23:30:00-02'", "2021-01-01 01:30:00"}, {"'2024-12-31 23:30:00+02'", "2024-12-31 21:30:00"}, {"'2025-01-01 01:00:00+02'", "2024-12-31 23:00:00"}}, 7},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, [3]string{"DATE", "DATETIME", "TIMESTAMP NULL"}, []string{"SET SESSION sql_mode = ''", "SET time_zone = '+00:00'"},
			[]value{{"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", ""}, {"'2025-01-01'", ""},
				{"'2020-02-29'", "2020-02-29"}, {"'0000-00-00'", ""}, {"'2020-00-10'", ""}, {"'2020-05-00'", ""}, {"'1000-01-01'", ""},
				{"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59'", ""}, {"'0000-00-00 00:00:00'", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}},
			[]value{{"'2020-12-31 23:30:00'", "2020-12-31 23:30:00"}, {"'2024-06-01 12:00:00'", "2024-06-01 12:00:00"}}, 5},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			db.SetMaxOpenConns(1) // the session settings hold for every statement
			for _, s := range b.setup {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_dates (d %s, ts %s, tz %s)", b.types[0], b.types[1], b.types[2])); err != nil {
				t.Fatal(err)
			}
			insert := func(column string, vals []value) {
				for _, v := range append(common, vals...) {
					if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_dates (%s) VALUES (%s)", column, v.sql)); err != nil {
						t.Fatalf("insert %s: %v", v.sql, err)
					}
				}
			}
			insert("d", b.days)
			insert("ts", b.times)
			insert("tz", b.zoned)
			cells := func(d sqlrewrite.CellDim) map[int]int {
				t.Helper()
				return cellCounts(t, db, b.dialect, "dp_dates", d)
			}
			count := func(c sqlrewrite.Condition) int {
				t.Helper()
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_dates", Filter: []sqlrewrite.Condition{c},
					Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if err := db.QueryRow(q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return n
			}
			type axisCase struct {
				column string
				col    catalog.Column
				vals   []value
				axis   sqlrewrite.DateAxis
				index  func(time.Time) int
			}
			loT, tloT := day.TimeOf(lo), at.TimeOf(tlo)
			var cases []axisCase
			for _, c := range []struct {
				column string
				col    catalog.Column
				vals   []value
				lo, hi float64
				start  time.Time
			}{{"d", day, b.days, lo, hi, loT}, {"ts", at, b.times, tlo, thi, tloT}, {"tz", at, b.zoned, tlo, thi, tloT}} {
				if c.vals == nil {
					continue
				}
				start := c.start
				cases = append(cases,
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartYear, Lower: c.lo, Upper: c.hi},
						func(t time.Time) int { return t.Year() - start.Year() }},
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartMonth, Lower: c.lo, Upper: c.hi},
						func(t time.Time) int { return (t.Year()-start.Year())*12 + int(t.Month()) - 1 }},
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartDay, Lower: c.lo, Upper: c.hi},
						func(t time.Time) int {
							return int(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Sub(start).Hours() / 24)
						}},
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartQuarterOfYear, Lower: c.lo, Upper: c.hi, Cycle: []int{1, 2, 3, 4}},
						func(t time.Time) int { return (int(t.Month()) - 1) / 3 }},
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartDayOfWeek, Lower: c.lo, Upper: c.hi, Cycle: []int{1, 2, 3, 4, 5, 6, 7}},
						func(t time.Time) int { return int(t.Weekday()) }},
					axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartDayOfMonth, Lower: c.lo, Upper: c.hi, Cycle: []int{1, 15, 29, 31}},
						func(t time.Time) int { return slices.Index([]int{1, 15, 29, 31}, t.Day()) }},
				)
				cases = append(cases, axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartQuarter, Lower: c.lo, Upper: c.hi},
					func(t time.Time) int {
						return (t.Year()-start.Year())*4 + (int(t.Month())-1)/3 - (int(start.Month())-1)/3
					}})
				for _, part := range []sqlrewrite.DatePart{sqlrewrite.PartWeekSunday, sqlrewrite.PartWeekMonday} {
					// Weeks from the Sunday (Monday) on or before the lower bound.
					back := int(start.Weekday())
					if part == sqlrewrite.PartWeekMonday {
						back = (back + 6) % 7
					}
					first := time.Date(start.Year(), start.Month(), start.Day()-back, 0, 0, 0, 0, time.UTC)
					cases = append(cases, axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: part, Lower: c.lo, Upper: c.hi},
						func(t time.Time) int {
							return int(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC).Sub(first).Hours()/24) / 7
						}})
				}
				if c.col.Type == catalog.Timestamp {
					hours := []int{0, 1, 10, 11, 23}
					cases = append(cases, axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartHourOfDay, Lower: c.lo, Upper: c.hi, Cycle: hours},
						func(t time.Time) int { return slices.Index(hours, t.Hour()) }},
						axisCase{c.column, c.col, c.vals, sqlrewrite.DateAxis{Type: c.col.Type, Part: sqlrewrite.PartHour, Lower: c.lo, Upper: c.hi},
							func(t time.Time) int { return int(t.Truncate(time.Hour).Sub(start.Truncate(time.Hour)).Hours()) }})
				}
			}
			for _, c := range cases {
				want := map[int]int{}
				for _, v := range c.vals {
					if v.read == "" {
						continue
					}
					x, err := c.col.ParseTemporal(v.read)
					if err != nil {
						t.Fatal(err)
					}
					if i := c.index(c.col.TimeOf(x)); i >= 0 {
						want[i]++
					}
				}
				got := cells(sqlrewrite.CellDim{Column: c.column, Date: &c.axis})
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s part %d: cells %v, want %v", c.column, c.axis.Part, got, want)
				}
				for i, n := range want {
					if m := count(sqlrewrite.Condition{Column: c.column, Cell: &sqlrewrite.DateCell{Axis: c.axis, Index: i}}); m != n {
						t.Errorf("%s part %d: the condition of cell %d counts %d rows, want %d", c.column, c.axis.Part, i, m, n)
					}
				}
			}
			// WHERE d >= 2019-01-01 AND d < 2021-01-01 counts the dates in it.
			from, _ := day.ParseTemporal("2019-01-01")
			until, _ := day.ParseTemporal("2021-01-01")
			want := 0
			for _, v := range b.days {
				if v.read >= "2019-01-01" && v.read < "2021-01-01" {
					want++
				}
			}
			inRange := sqlrewrite.Condition{Column: "d", Temporal: catalog.Date, Range: &sqlrewrite.Range{Lower: from, Upper: until, HasLower: true, HasUpper: true, UpperOpen: true}}
			if got := count(inRange); got != want {
				t.Errorf("d in [2019-01-01, 2021-01-01): %d rows, want %d", got, want)
			}
			// Its NOT holds for the other dates only (out of bounds
			// included: b.otherDates counts them): a value that is not a
			// date satisfies neither, as NULL does.
			q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_dates", Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}},
				Boolean: &sqlrewrite.Predicate{Op: sqlrewrite.Not, Args: []*sqlrewrite.Predicate{{Op: sqlrewrite.Leaf, Leaf: &inRange}}}}, b.dialect)
			if err != nil {
				t.Fatal(err)
			}
			var outside int
			if err := db.QueryRow(q, args...).Scan(&outside); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if outside != b.otherDates {
				t.Errorf("NOT (d in [2019-01-01, 2021-01-01)): %d rows, want the %d other dates", outside, b.otherDates)
			}
		})
	}
}

// TestDateNumbersOnHostileValues stores dates and timestamps, valid and
// hostile, and checks on every backend that the number of a date column
// (RowTemporal, the argument of MIN, MAX, MEDIAN and PERCENTILE_CONT of a
// date) reads each value as the rule says: its day or second when it is
// a date within the bounds, the nearer bound when it is a date outside
// them (±infinity, a date BC, a fraction past the upper bound), NULL when
// it is no date (a zero date, an impossible day, text or a blob that does
// not spell one), through a sorted window of the derived column and the
// count of its non-NULL values, without any statement failing.
func TestDateNumbersOnHostileValues(t *testing.T) {
	day := catalog.Column{Type: catalog.Date}
	at := catalog.Column{Type: catalog.Timestamp}
	lo, _ := day.ParseTemporal("2015-01-01")
	hi, _ := day.ParseTemporal("2024-12-31")
	tlo, _ := at.ParseTemporal("2015-01-01 00:00:00")
	thi, _ := at.ParseTemporal("2024-12-31 23:59:59")
	// A value and what the number reads: a date or time, or "" (NULL).
	type value struct{ sql, read string }
	for _, b := range []struct {
		name               string
		dialect            sqlrewrite.Dialect
		open               func(testing.TB) *sql.DB
		types              [3]string // date, timestamp, timestamp with a time zone
		setup              []string
		days, times, zoned []value
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, [3]string{"DATE", "TIMESTAMP", "TEXT"}, nil,
			[]value{{"NULL", ""}, {"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", "2015-01-01"}, {"'2025-01-01'", "2024-12-31"},
				{"'1969-07-20'", "2015-01-01"}, {"'2020-02-29'", "2020-02-29"}, {"'2021-02-29'", ""}, {"'2021-1-5'", ""}, {"'2021-01-05 10:00:00'", ""},
				{"20210105", ""}, {"2459220.5", ""}, {"x'323032312d30312d3035'", ""}, {"'garbage'", ""}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"NULL", ""}, {"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59'", "2015-01-01 00:00:00"}, {"'2099-01-01 00:00:00'", "2024-12-31 23:59:59"}, {"'2020-06-15T10:00:00'", ""},
				{"'2020-06-15 10:00:00.5'", ""}, {"'2020-06-15'", ""}, {"'2020-06-15 10:00:01'", "2020-06-15 10:00:01"}},
			nil},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, [3]string{"DATE", "TIMESTAMP", "TIMESTAMPTZ"}, []string{"SET TIME ZONE 'UTC'"},
			[]value{{"NULL", ""}, {"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", "2015-01-01"}, {"'2025-01-01'", "2024-12-31"},
				{"'2020-02-29'", "2020-02-29"}, {"'infinity'", "2024-12-31"}, {"'-infinity'", "2015-01-01"}, {"'0044-03-15 BC'", "2015-01-01"},
				{"'1969-07-20'", "2015-01-01"}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"NULL", ""}, {"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59.999'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59.5'", "2024-12-31 23:59:59"}, {"'infinity'", "2024-12-31 23:59:59"},
				{"'-infinity'", "2015-01-01 00:00:00"}, {"'2020-06-15 10:00:00.75'", "2020-06-15 10:00:00"}},
			[]value{{"'2020-12-31 23:30:00-02'", "2021-01-01 01:30:00"}, {"'2025-01-01 01:00:00+02'", "2024-12-31 23:00:00"}, {"'infinity'", "2024-12-31 23:59:59"}}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, [3]string{"DATE", "DATETIME(3)", "TIMESTAMP NULL"}, []string{"SET SESSION sql_mode = ''", "SET time_zone = '+00:00'"},
			[]value{{"NULL", ""}, {"'2015-01-01'", "2015-01-01"}, {"'2024-12-31'", "2024-12-31"}, {"'2014-12-31'", "2015-01-01"}, {"'2025-01-01'", "2024-12-31"},
				{"'2020-02-29'", "2020-02-29"}, {"'0000-00-00'", ""}, {"'2020-00-10'", ""}, {"'2020-05-00'", ""}, {"'1000-01-01'", "2015-01-01"},
				{"'9999-12-31'", "2024-12-31"}, {"'2019-07-14'", "2019-07-14"}},
			[]value{{"NULL", ""}, {"'2015-01-01 00:00:00'", "2015-01-01 00:00:00"}, {"'2024-12-31 23:59:59'", "2024-12-31 23:59:59"},
				{"'2014-12-31 23:59:59'", "2015-01-01 00:00:00"}, {"'0000-00-00 00:00:00'", ""}, {"'2024-12-31 23:59:59.5'", "2024-12-31 23:59:59"},
				{"'2020-06-15 10:00:00.75'", "2020-06-15 10:00:00"}},
			[]value{{"'2020-12-31 23:30:00'", "2020-12-31 23:30:00"}, {"'2030-06-01 12:00:00'", "2024-12-31 23:59:59"}, {"'2038-06-01 12:00:00'", ""}}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			db.SetMaxOpenConns(1) // the session settings hold for every statement
			for _, s := range b.setup {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_date_numbers (d %s, ts %s, tz %s)", b.types[0], b.types[1], b.types[2])); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				column string
				col    catalog.Column
				vals   []value
				lo, hi float64
			}{{"d", day, b.days, lo, hi}, {"ts", at, b.times, tlo, thi}, {"tz", at, b.zoned, tlo, thi}} {
				if c.vals == nil {
					continue
				}
				var want []float64
				for _, v := range c.vals {
					if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_date_numbers (%s) VALUES (%s)", c.column, v.sql)); err != nil {
						t.Fatalf("insert %s: %v", v.sql, err)
					}
					if v.read != "" {
						x, err := c.col.ParseTemporal(v.read)
						if err != nil {
							t.Fatal(err)
						}
						want = append(want, x)
					}
				}
				slices.Sort(want)
				derived := []sqlrewrite.DerivedColumn{{Name: "n", Expr: &sqlrewrite.RowExpr{Kind: sqlrewrite.RowTemporal, Column: c.column,
					Temporal: c.col.Type, Lower: c.lo, Upper: c.hi}}}
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_date_numbers", Derived: derived,
					Window: &sqlrewrite.Window{Column: "n", Lower: c.lo, Upper: c.hi, Offset: 0, Limit: 100}}, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				got := queryNumbers(t, db, q, args...)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: numbers %v, want %v\n%s", c.column, got, want, q)
				}
				q, args, err = sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_date_numbers", Derived: derived,
					Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNumbers, Column: "n"}}}, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if err := db.QueryRow(q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if n != len(want) {
					t.Errorf("%s: %d numbers counted, want %d", c.column, n, len(want))
				}
			}
		})
	}
}

// TestMetabaseWeekIsTheWeekFromSunday checks on MariaDB that Metabase's
// week, STR_TO_DATE(CONCAT(YEARWEEK(d), ' Sunday'), '%X%V %W'), is the
// Sunday on or before d (the week key it is read as, PartWeekSunday), and
// Metabase's and Superset's quarters the first day of d's quarter
// (PartQuarter), on every day of 2019 to 2025.
func TestMetabaseWeekIsTheWeekFromSunday(t *testing.T) {
	db := testdb.MySQL(t)
	rows, err := db.Query("SELECT d, str_to_date(concat(yearweek(d), ' Sunday'), '%X%V %W'), " +
		"str_to_date(concat(year(d), '-', ((quarter(d) * 3) - 2), '-01'), '%Y-%m-%d'), MAKEDATE(YEAR(d), 1) + INTERVAL QUARTER(d) QUARTER - INTERVAL 1 QUARTER FROM " +
		"(SELECT DATE '2019-01-01' + INTERVAL seq DAY AS d FROM seq_0_to_2556) AS days")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	checked := 0
	for rows.Next() {
		var d, sunday, metabaseQuarter, supersetQuarter string
		if err := rows.Scan(&d, &sunday, &metabaseQuarter, &supersetQuarter); err != nil {
			t.Fatal(err)
		}
		day, err := time.Parse(time.DateOnly, d[:10])
		if err != nil {
			t.Fatal(err)
		}
		want := day.AddDate(0, 0, -int(day.Weekday())).Format(time.DateOnly)
		if sunday[:10] != want {
			t.Errorf("%s: Metabase's week %s, the Sunday on or before it is %s", d, sunday, want)
		}
		quarter := time.Date(day.Year(), day.Month()-(day.Month()-1)%3, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		if metabaseQuarter[:10] != quarter || supersetQuarter[:10] != quarter {
			t.Errorf("%s: Metabase's quarter %s, Superset's %s, its quarter starts %s", d, metabaseQuarter, supersetQuarter, quarter)
		}
		checked++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if checked != 2557 {
		t.Errorf("%d days checked, want 2557", checked)
	}
}

// TestCyclicDateKeysOnEveryBackend renders the week keys WEEK(col) (mode 0)
// and the ISO week (WEEK(col, 3)), DAYOFYEAR and a timestamp's MINUTE as
// Cells fetches over every day from 2010 to 2030 on SQLite, PostgreSQL and
// MariaDB, a date column and a timestamp column (the day at 23:mm, mm the
// day's index mod 60), and checks each cell's count against Go's rule
// (sqlrewrite's component: (day of year − weekday + 6) / 7, time.ISOWeek,
// YearDay); on MariaDB it checks Go's week rules against WEEK(d, 0) and
// WEEK(d, 3) themselves for every day.
func TestCyclicDateKeysOnEveryBackend(t *testing.T) {
	first := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(2030, 12, 31, 0, 0, 0, 0, time.UTC)
	var days []time.Time
	want := map[sqlrewrite.DatePart]map[int]int{sqlrewrite.PartWeekOfYear: {}, sqlrewrite.PartISOWeek: {}, sqlrewrite.PartDayOfYear: {}, sqlrewrite.PartMinuteOfHour: {}}
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		want[sqlrewrite.PartWeekOfYear][(d.YearDay()-int(d.Weekday())+6)/7]++
		_, w := d.ISOWeek()
		want[sqlrewrite.PartISOWeek][w]++
		want[sqlrewrite.PartDayOfYear][d.YearDay()]++
		want[sqlrewrite.PartMinuteOfHour][len(days)%60]++
		days = append(days, d)
	}
	day, at := catalog.Column{Type: catalog.Date}, catalog.Column{Type: catalog.Timestamp}
	dlo, _ := day.ParseTemporal("2010-01-01")
	dhi, _ := day.ParseTemporal("2030-12-31")
	tlo, _ := at.ParseTemporal("2010-01-01 00:00:00")
	thi, _ := at.ParseTemporal("2030-12-31 23:59:59")
	cycle := make([]int, 60)
	for i := range cycle {
		cycle[i] = i
	}
	yearDays := make([]int, 366)
	for i := range yearDays {
		yearDays[i] = i + 1
	}
	for _, b := range dbBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.loadDays(t, "dp_weeks", days, func(i int) int { return i % 60 })
			for _, c := range []struct {
				column string
				axis   sqlrewrite.DateAxis
			}{
				{"d", sqlrewrite.DateAxis{Type: catalog.Date, Part: sqlrewrite.PartWeekOfYear, Lower: dlo, Upper: dhi, Cycle: cycle[:54]}},
				{"d", sqlrewrite.DateAxis{Type: catalog.Date, Part: sqlrewrite.PartISOWeek, Lower: dlo, Upper: dhi, Cycle: cycle[1:54]}},
				{"ts", sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartWeekOfYear, Lower: tlo, Upper: thi, Cycle: cycle[:54]}},
				{"ts", sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartISOWeek, Lower: tlo, Upper: thi, Cycle: cycle[1:54]}},
				{"d", sqlrewrite.DateAxis{Type: catalog.Date, Part: sqlrewrite.PartDayOfYear, Lower: dlo, Upper: dhi, Cycle: yearDays}},
				{"ts", sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartDayOfYear, Lower: tlo, Upper: thi, Cycle: yearDays}},
				{"ts", sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartMinuteOfHour, Lower: tlo, Upper: thi, Cycle: cycle[:60]}},
			} {
				axis := c.axis
				got := map[int]int{}
				for k, n := range cellCounts(t, db, b.dialect, "dp_weeks", sqlrewrite.CellDim{Column: c.column, Date: &axis}) {
					got[axis.Cycle[k]] = n
				}
				if !reflect.DeepEqual(got, want[axis.Part]) {
					t.Errorf("%s %v: week counts %v, want %v", c.column, axis.Part, got, want[axis.Part])
				}
			}
			if b.dialect != sqlrewrite.MySQL {
				return
			}
			rows, err := db.Query("SELECT d, WEEK(d, 0), WEEK(d, 3) FROM dp_weeks")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			checked := 0
			for rows.Next() {
				var d string
				var w0, w3 int
				if err := rows.Scan(&d, &w0, &w3); err != nil {
					t.Fatal(err)
				}
				dt, _ := time.Parse(time.DateOnly, d[:10])
				_, iso := dt.ISOWeek()
				if g := (dt.YearDay() - int(dt.Weekday()) + 6) / 7; g != w0 || iso != w3 {
					t.Errorf("%s: MariaDB WEEK(d, 0) = %d, WEEK(d, 3) = %d; Go's rule %d, ISO %d", d, w0, w3, g, iso)
				}
				checked++
			}
			if checked != len(days) {
				t.Errorf("%d days checked, want %d", checked, len(days))
			}
		})
	}
}

// TestMinutePeriodsOnEveryBackend renders minute periods (DATE_FORMAT(col,
// '%Y-%m-%d %H:%i')) of a timestamp column as a Cells fetch on SQLite,
// PostgreSQL and MariaDB over 600 instants 17 seconds apart from 08:59:03
// (some before the lower bound 09:00:30, some after the upper 11:30:00),
// and checks each minute's count against Go: the minutes from the lower
// bound's, the instants outside the bounds in none.
func TestMinutePeriodsOnEveryBackend(t *testing.T) {
	at := catalog.Column{Type: catalog.Timestamp}
	lo, _ := at.ParseTemporal("2024-03-01 09:00:30")
	hi, _ := at.ParseTemporal("2024-03-01 11:30:00")
	low, high := at.TimeOf(lo), at.TimeOf(hi)
	start := time.Date(2024, 3, 1, 8, 59, 3, 0, time.UTC)
	var stamps []string
	want := map[int]int{}
	for i := range 600 {
		s := start.Add(time.Duration(17*i) * time.Second)
		stamps = append(stamps, s.Format(time.DateTime))
		if !s.Before(low) && !s.After(high) {
			want[int(s.Sub(low.Truncate(time.Minute)).Minutes())]++
		}
	}
	for _, b := range dbBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec("CREATE TABLE dp_minutes (ts " + b.stamp + ")"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO dp_minutes (ts) VALUES ('" + strings.Join(stamps, "'), ('") + "')"); err != nil {
				t.Fatal(err)
			}
			axis := sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartMinute, Lower: lo, Upper: hi}
			got := cellCounts(t, db, b.dialect, "dp_minutes", sqlrewrite.CellDim{Column: "ts", Date: &axis})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("minute counts %v, want %v", got, want)
			}
			if axis.Size() != 151 {
				t.Errorf("%d minutes from 09:00 to 11:30, want 151", axis.Size())
			}
		})
	}
}

// cellCounts runs a Cells fetch of table over one dimension and returns
// each cell's count.
func cellCounts(t *testing.T, db *sql.DB, dialect sqlrewrite.Dialect, table string, d sqlrewrite.CellDim) map[int]int {
	t.Helper()
	q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: table, Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{d}}}, dialect)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[int]int{}
	for rows.Next() {
		var k, n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDateExtremesOnPostgres stores the extreme values PostgreSQL keeps
// in date, timestamp and timestamptz columns (years 294276 and 5874897,
// 4714 BC, ±infinity) beside ordinary ones, declares each column both as
// a date and as a timestamp (the configuration may declare a timestamp
// over a PostgreSQL date), and reads them in zones on both sides of UTC,
// where a timestamptz near the ends converts to no timestamp: a date
// range, year and hour cells, the column's number (MEDIAN's argument) and
// a month difference (clampedTime) must answer, the extremes reading as
// out of bounds (no cell; the nearer bound as a number), never failing
// (one such row failed every statement on the column: an independent
// review).
func TestDateExtremesOnPostgres(t *testing.T) {
	db := testdb.Postgres(t)
	db.SetMaxOpenConns(1) // the session's zone holds for every statement
	if _, err := db.Exec("CREATE TABLE dp_date_extremes (d DATE, ts TIMESTAMP, tz TIMESTAMPTZ)"); err != nil {
		t.Fatal(err)
	}
	values := map[string][]string{
		"d":  {"'5874897-12-31'", "'4714-11-24 BC'", "'infinity'", "'-infinity'", "'2020-06-15'"},
		"ts": {"'294276-12-31 23:59:59'", "'4714-11-24 00:00:00 BC'", "'infinity'", "'2020-06-15 10:00:00'"},
		"tz": {"'294276-12-31 23:59:59+00'", "'4714-11-24 00:00:00+00 BC'", "'-infinity'", "'2020-06-15 10:00:00+00'"},
	}
	for column, vals := range values {
		for _, v := range vals {
			if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_date_extremes (%s) VALUES (%s)", column, v)); err != nil {
				t.Fatalf("insert %s: %v", v, err)
			}
		}
	}
	day := catalog.Column{Type: catalog.Date}
	at := catalog.Column{Type: catalog.Timestamp}
	for _, zone := range []string{"UTC", "Europe/Paris", "America/Los_Angeles", "Pacific/Kiritimati"} {
		if _, err := db.Exec("SET TIME ZONE '" + zone + "'"); err != nil {
			t.Fatal(err)
		}
		for _, column := range []string{"d", "ts", "tz"} {
			for _, col := range []catalog.Column{day, at} {
				name := fmt.Sprintf("%s/%s as %v", zone, column, col.Type)
				bound := func(s string) float64 {
					if col.Type == catalog.Timestamp {
						s += " 00:00:00"
					}
					x, err := col.ParseTemporal(s)
					if err != nil {
						t.Fatal(err)
					}
					return x
				}
				lo, hi := bound("2015-01-01"), bound("2024-12-31")
				run := func(what string, f sqlrewrite.Fetch) *sql.Rows {
					t.Helper()
					q, args, err := sqlrewrite.Render(f, sqlrewrite.PostgreSQL)
					if err != nil {
						t.Fatal(err)
					}
					rows, err := db.Query(q, args...)
					if err != nil {
						t.Fatalf("%s: %s: %s: %v", name, what, q, err)
					}
					return rows
				}
				count := func(what string, f sqlrewrite.Fetch) int {
					t.Helper()
					rows := run(what, f)
					defer rows.Close()
					var n int
					for rows.Next() {
						if err := rows.Scan(&n); err != nil {
							t.Fatal(err)
						}
					}
					if err := rows.Err(); err != nil {
						t.Fatalf("%s: %s: %v", name, what, err)
					}
					return n
				}
				countAll := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
				from := bound("2019-01-01")
				inRange := sqlrewrite.Condition{Column: column, Temporal: col.Type, Range: &sqlrewrite.Range{Lower: from, HasLower: true}}
				later := 0 // 2020-06-15 and the values past 9999
				for _, v := range values[column] {
					if !strings.Contains(v, "BC") && v != "'-infinity'" {
						later++
					}
				}
				if n := count("range", sqlrewrite.Fetch{Table: "dp_date_extremes", Filter: []sqlrewrite.Condition{inRange}, Summary: countAll}); n != later {
					t.Errorf("%s: %d rows from 2019 on, want %d", name, n, later)
				}
				parts := []sqlrewrite.DatePart{sqlrewrite.PartYear, sqlrewrite.PartDay}
				if col.Type == catalog.Timestamp {
					parts = append(parts, sqlrewrite.PartHour)
				}
				for _, part := range parts {
					q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_date_extremes", Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{
						{Column: column, Date: &sqlrewrite.DateAxis{Type: col.Type, Part: part, Lower: lo, Upper: hi}}}}}, sqlrewrite.PostgreSQL)
					if err != nil {
						t.Fatal(err)
					}
					rows, err := db.Query(q, args...)
					if err != nil {
						t.Fatalf("%s: cells of part %d: %v", name, part, err)
					}
					total := 0
					for rows.Next() {
						var k, n int
						if err := rows.Scan(&k, &n); err != nil {
							t.Fatal(err)
						}
						total += n
					}
					if err := rows.Err(); err != nil {
						t.Fatalf("%s: cells of part %d: %v", name, part, err)
					}
					rows.Close()
					if total != 1 {
						t.Errorf("%s: %d rows in cells of part %d, want 1 (2020-06-15)", name, total, part)
					}
				}
				temporal := &sqlrewrite.RowExpr{Kind: sqlrewrite.RowTemporal, Column: column, Temporal: col.Type, Lower: lo, Upper: hi}
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_date_extremes", Derived: []sqlrewrite.DerivedColumn{{Name: "n", Expr: temporal}},
					Window: &sqlrewrite.Window{Column: "n", Lower: lo, Upper: hi, Offset: 0, Limit: 100}}, sqlrewrite.PostgreSQL)
				if err != nil {
					t.Fatal(err)
				}
				got := queryNumbers(t, db, q, args...)
				mid := bound("2020-06-15")
				if column != "d" && col.Type == catalog.Timestamp {
					mid += 10 * 3600
				}
				if column == "tz" && col.Type == catalog.Date {
					// The day of 2020-06-15 10:00 UTC on the zone's clock.
					loc, _ := time.LoadLocation(zone)
					x, _ := day.ParseTemporal(time.Date(2020, 6, 15, 10, 0, 0, 0, time.UTC).In(loc).Format(time.DateOnly))
					mid = x
				}
				if column == "tz" && col.Type == catalog.Timestamp {
					loc, _ := time.LoadLocation(zone)
					x, _ := at.ParseTemporal(time.Date(2020, 6, 15, 10, 0, 0, 0, time.UTC).In(loc).Format(time.DateTime))
					mid = x
				}
				var want []float64
				for _, v := range values[column] {
					switch {
					case strings.Contains(v, "BC") || v == "'-infinity'":
						want = append(want, lo)
					case strings.Contains(v, "2020"):
						want = append(want, mid)
					default:
						want = append(want, hi)
					}
				}
				slices.Sort(want)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: numbers %v, want %v", name, got, want)
				}
				months := &sqlrewrite.RowExpr{Kind: sqlrewrite.RowMonthDiff, Args: []*sqlrewrite.RowExpr{
					{Kind: sqlrewrite.RowConst, Temporal: col.Type, Num: lo}, temporal}}
				if n := count("months", sqlrewrite.Fetch{Table: "dp_date_extremes", Derived: []sqlrewrite.DerivedColumn{{Name: "m", Expr: months}},
					Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNumbers, Column: "m"}}}); n != len(values[column]) {
					t.Errorf("%s: %d month differences, want %d", name, n, len(values[column]))
				}
			}
		}
	}
}

// TestOpenDateWindowOnEveryBackend puts timestamps in the cells of an
// axis open above (a WHERE at < '2024-01-08' narrowing the key's days):
// the last second before the open end, a fraction of a second later on
// the backends that store one, is in the last day, and the end itself in
// no cell, by the grouped cells and by each cell's condition alike.
func TestOpenDateWindowOnEveryBackend(t *testing.T) {
	at := catalog.Column{Type: catalog.Timestamp}
	lo, _ := at.ParseTemporal("2024-01-01 00:00:00")
	hi, _ := at.ParseTemporal("2024-01-08 00:00:00")
	axis := sqlrewrite.DateAxis{Type: catalog.Timestamp, Part: sqlrewrite.PartDay, Lower: lo, Upper: hi, UpperOpen: true}
	if n := axis.Size(); n != 7 {
		t.Fatalf("an open week has %d days", n)
	}
	for _, b := range []struct {
		name     string
		dialect  sqlrewrite.Dialect
		open     func(testing.TB) *sql.DB
		typ      string
		fraction bool
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "TIMESTAMP", false},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "TIMESTAMP", true},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DATETIME(3)", true},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec("CREATE TABLE dp_open_window (at " + b.typ + ")"); err != nil {
				t.Fatal(err)
			}
			values := []string{"2023-12-31 23:59:59", "2024-01-01 00:00:00", "2024-01-07 23:59:59", "2024-01-08 00:00:00", "2024-01-09 12:00:00"}
			want := map[int]int{0: 1, 6: 1}
			if b.fraction {
				values = append(values, "2024-01-07 23:59:59.5")
				want[6]++
			}
			for _, v := range values {
				if _, err := db.Exec("INSERT INTO dp_open_window (at) VALUES ('" + v + "')"); err != nil {
					t.Fatal(err)
				}
			}
			got := cellCounts(t, db, b.dialect, "dp_open_window", sqlrewrite.CellDim{Column: "at", Date: &axis})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("cells %v, want %v", got, want)
			}
			for i := range 7 {
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_open_window", Filter: []sqlrewrite.Condition{{Column: "at", Cell: &sqlrewrite.DateCell{Axis: axis, Index: i}}},
					Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if err := db.QueryRow(q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if n != want[i] {
					t.Errorf("the condition of cell %d counts %d rows, want %d", i, n, want[i])
				}
			}
		})
	}
}

// loadDays creates table (d DATE, ts timestamp) in a fresh database of b
// and stores a row per day: the day, and the day at 23:mm, mm the
// minute minuteOf gives the day's index.
func (b dbBackend) loadDays(t *testing.T, table string, days []time.Time, minuteOf func(int) int) *sql.DB {
	t.Helper()
	db := b.open(t)
	if _, err := db.Exec("CREATE TABLE " + table + " (d DATE, ts " + b.stamp + ")"); err != nil {
		t.Fatal(err)
	}
	for from := 0; from < len(days); from += 1000 {
		var vals []string
		for i, d := range days[from:min(from+1000, len(days))] {
			vals = append(vals, fmt.Sprintf("('%s', '%s 23:%02d:00')", d.Format(time.DateOnly), d.Format(time.DateOnly), minuteOf(from+i)))
		}
		if _, err := db.Exec("INSERT INTO " + table + " (d, ts) VALUES " + strings.Join(vals, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
