package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTimeDifferencesOnDatabases stores pairs of timestamps and a date
// (within the declared bounds and outside them, before 1970, across
// midnight, a leap day, negative differences, NULL) and checks on every
// backend that DATEDIFF and TIMESTAMPDIFF inside an aggregate, parsed as
// a client writes them and rendered as the derived column a fetch reads,
// compute per row what Go computes from the operands clamped to their
// bounds: whole units truncated toward zero for TIMESTAMPDIFF, the
// difference of the dates for DATEDIFF (a timestamp's date, a date as
// midnight; calendar months by MySQL's rule, catalog.MonthsBetween),
// LEAST and GREATEST of them, NULL (skipped) when an operand
// is NULL, on PostgreSQL too, whose LEAST would ignore it. On MariaDB the same values are also MySQL's
// own TIMESTAMPDIFF and DATEDIFF on the rows inside the bounds, so the
// rule Go applies is MySQL's.
func TestTimeDifferencesOnDatabases(t *testing.T) {
	const layout = time.DateTime
	lower, upper := "1960-01-01 00:00:00", "2030-12-31 23:59:59"
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "dp_time_diffs", Source: "dp_time_diffs", Columns: []catalog.Column{
		dated(catalog.Timestamp, "a", lower, upper),
		dated(catalog.Timestamp, "b", lower, upper),
		dated(catalog.Date, "d", lower[:10], upper[:10]),
	}}}}
	// Rows: a, b, d ("" is NULL).
	rows := [][3]string{
		{"2024-01-01 10:00:00", "2024-01-01 10:59:59", "2024-01-01"},
		{"2024-01-01 10:00:00", "2024-01-01 09:00:01", "2023-12-31"},
		{"2024-01-01 23:59:59", "2024-01-02 00:00:00", "2024-01-02"},
		{"1969-12-31 23:00:00", "1970-01-01 01:00:00", "1969-12-31"},
		{"1969-12-31 12:00:00", "1969-12-30 13:00:00", "1965-07-04"},
		{"2020-02-01 00:00:00", "2020-02-15 00:00:00", "2020-02-29"},
		{"2020-02-01 00:00:00", "2020-02-14 23:59:59", "2020-03-01"},
		{"2020-02-28 12:00:00", "2020-03-01 11:59:59", "2020-02-28"},
		{"1950-06-01 08:00:00", "2031-06-01 00:00:00", "1900-01-01"}, // both ends clamped
		{"2030-12-31 23:59:59", "1960-01-01 00:00:00", "2099-12-31"},
		{"", "2024-05-05 05:05:05", "2024-05-05"},
		{"2024-05-05 05:05:05", "", ""},
		{"2024-06-01 00:00:00", "2024-06-02 00:00:00", ""},
		{"2024-01-31 10:00:00", "2024-02-29 23:00:00", "2023-02-28"},
		{"2024-03-31 00:00:00", "2024-02-29 00:00:01", "2024-02-29"},
		{"2023-05-15 12:00:00", "2024-05-15 11:59:59", "2000-02-29"},
		{"2024-01-15 10:00:00", "2024-02-15 10:00:00", "2023-02-15"},
		{"2024-02-15 10:00:00", "2023-11-15 10:00:00", "2024-05-15"},
	}
	// Random pairs, many near the ends of months, for the calendar units.
	rng := rand.New(rand.NewPCG(3, 5))
	stamp := func() string {
		day := 1 + rng.IntN(31)
		if rng.IntN(2) == 0 {
			day = 27 + rng.IntN(5)
		}
		t := time.Date(1961+rng.IntN(69), time.Month(1+rng.IntN(12)), 1, rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
		t = t.AddDate(0, 0, day-1)
		return t.Format(layout)
	}
	for range 200 {
		a := stamp()
		rows = append(rows, [3]string{a, stamp(), stamp()[:10]})
	}
	clock := catalog.Column{Type: catalog.Timestamp}
	// seconds reads a value as its second number clamped to its column's
	// bounds (a date's are midnight of its bounds' days).
	seconds := func(s string) (int64, bool) {
		if s == "" {
			return 0, false
		}
		lo, _ := clock.ParseTemporal(lower)
		hi, _ := clock.ParseTemporal(upper)
		if len(s) == len(time.DateOnly) {
			s += " 00:00:00"
			hi, _ = clock.ParseTemporal(upper[:10])
		}
		v, err := time.Parse(layout, s)
		if err != nil {
			t.Fatal(err)
		}
		return max(int64(lo), min(int64(hi), v.Unix())), true
	}
	inBounds := func(r [3]string) bool {
		for _, v := range r {
			if v != "" && (v < lower[:len(v)] || v > upper[:len(v)]) {
				return false
			}
		}
		return true
	}
	floorDiv := func(x, y int64) int64 {
		q := x / y
		if x%y != 0 && x < 0 {
			q--
		}
		return q
	}
	at2000, _ := seconds("2000-01-01 00:00:00")
	noon, _ := seconds("2024-01-01 23:30:00")
	june30, _ := seconds("2024-06-30")
	months := func(a, b int64) int64 { return catalog.MonthsBetween(time.Unix(a, 0).UTC(), time.Unix(b, 0).UTC()) }
	// Each expression and its value on a row (ok false: NULL).
	exprs := []struct {
		sql string
		of  func(a, b, d int64) int64
		use [3]bool // which of a, b, d it reads
	}{
		{"TIMESTAMPDIFF(SECOND, a, b)", func(a, b, _ int64) int64 { return b - a }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(MINUTE, a, b)", func(a, b, _ int64) int64 { return (b - a) / 60 }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(HOUR, a, b)", func(a, b, _ int64) int64 { return (b - a) / 3600 }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(DAY, a, b)", func(a, b, _ int64) int64 { return (b - a) / 86400 }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(WEEK, a, b)", func(a, b, _ int64) int64 { return (b - a) / 604800 }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(HOUR, d, b)", func(_, b, d int64) int64 { return (b - d) / 3600 }, [3]bool{false, true, true}},
		{"TIMESTAMPDIFF(MINUTE, '2000-01-01 00:00:00', a)", func(a, _, _ int64) int64 { return (a - at2000) / 60 }, [3]bool{true, false, false}},
		{"DATEDIFF(b, a)", func(a, b, _ int64) int64 { return floorDiv(b, 86400) - floorDiv(a, 86400) }, [3]bool{true, true, false}},
		{"DATEDIFF(a, d)", func(a, _, d int64) int64 { return floorDiv(a, 86400) - floorDiv(d, 86400) }, [3]bool{true, false, true}},
		{"DATEDIFF('2024-01-01 23:30:00', a)", func(a, _, _ int64) int64 { return floorDiv(noon, 86400) - floorDiv(a, 86400) }, [3]bool{true, false, false}},
		{"TIMESTAMPDIFF(MONTH, a, b)", func(a, b, _ int64) int64 { return months(a, b) }, [3]bool{true, true, false}},
		{"TIMESTAMPDIFF(QUARTER, d, b)", func(_, b, d int64) int64 { return months(d, b) / 3 }, [3]bool{false, true, true}},
		{"TIMESTAMPDIFF(YEAR, d, '2024-06-30')", func(_, _, d int64) int64 { return months(d, june30) / 12 }, [3]bool{false, false, true}},
		{"TIMESTAMPDIFF(YEAR, a, b)", func(a, b, _ int64) int64 { return months(a, b) / 12 }, [3]bool{true, true, false}},
		{"GREATEST(LEAST(TIMESTAMPDIFF(MINUTE, a, b), 240), 0)", func(a, b, _ int64) int64 { return max(min((b-a)/60, 240), 0) }, [3]bool{true, true, false}},
		{"LEAST(DATEDIFF(b, a), DATEDIFF(a, d), 3)", func(a, b, d int64) int64 {
			return min(floorDiv(b, 86400)-floorDiv(a, 86400), floorDiv(a, 86400)-floorDiv(d, 86400), 3)
		}, [3]bool{true, true, true}},
	}
	p := sqlrewrite.NewParser(cat)
	for _, b := range backendsForTests {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_time_diffs (a %s, b %s, d DATE)", b.timestamp, b.timestamp)); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				insertQuoted(t, db, "dp_time_diffs (a, b, d)", r[:])
			}
			for _, e := range exprs {
				x, lo, hi := aggregateExpr(t, p, "dp_time_diffs", e.sql)
				var want, native []float64
				for _, r := range rows {
					var v [3]int64
					null := false
					for i, s := range r {
						var ok bool
						if v[i], ok = seconds(s); !ok && e.use[i] {
							null = true
						}
					}
					if null {
						continue
					}
					got := float64(e.of(v[0], v[1], v[2]))
					if got < lo || got > hi {
						t.Errorf("%s = %g on %v, outside its derived bounds [%g, %g]", e.sql, got, r, lo, hi)
					}
					want = append(want, got)
					if inBounds(r) {
						native = append(native, got)
					}
				}
				slices.Sort(want)
				slices.Sort(native)
				if got := derivedValues(t, db, b.dialect, "dp_time_diffs", x, lo, hi); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: %v, want %v", e.sql, got, want)
				}
				if b.name != "mysql" {
					continue
				}
				q := "SELECT " + e.sql + " FROM dp_time_diffs WHERE " + e.sql + " IS NOT NULL AND (a IS NULL OR a BETWEEN '" + lower + "' AND '" + upper +
					"') AND (b IS NULL OR b BETWEEN '" + lower + "' AND '" + upper + "') AND (d IS NULL OR d BETWEEN '" + lower[:10] + "' AND '" + upper[:10] + "') ORDER BY 1"
				if got := queryNumbers(t, db, q); fmt.Sprint(got) != fmt.Sprint(native) {
					t.Errorf("MariaDB's own %s: %v, Go's rule %v", e.sql, got, native)
				}
			}
		})
	}
}

// backendsForTests are the three backends, with their timestamp type.
var backendsForTests = []struct {
	name      string
	dialect   sqlrewrite.Dialect
	open      func(testing.TB) *sql.DB
	timestamp string
}{
	{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "TIMESTAMP"},
	{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "TIMESTAMP"},
	{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DATETIME"},
}

// insertQuoted inserts one row of quoted values into target ("table
// (columns)"), "" standing for NULL.
func insertQuoted(t *testing.T, db *sql.DB, target string, values []string) {
	t.Helper()
	vals := make([]string, len(values))
	for i, v := range values {
		vals[i] = "NULL"
		if v != "" {
			vals[i] = "'" + v + "'"
		}
	}
	if _, err := db.Exec("INSERT INTO " + target + " VALUES (" + strings.Join(vals, ", ") + ")"); err != nil {
		t.Fatal(err)
	}
}

// aggregateExpr parses SELECT AVG(expr) FROM table and returns the row
// expression the aggregate reads and its derived bounds.
func aggregateExpr(t *testing.T, p *sqlrewrite.Parser, table, expr string) (x *sqlrewrite.RowExpr, lo, hi float64) {
	t.Helper()
	st, err := p.Parse("SELECT AVG(" + expr + ") FROM " + table)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	x = st.(*sqlrewrite.Query).Base.Items[0].Agg.Expr
	if lo, hi, err = x.Bounds(); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return x, lo, hi
}

// derivedValues renders x as the derived column a fetch's window reads
// from table (clamped to [lo, hi], NULLs skipped) and returns its values
// in order, as the database computes them.
func derivedValues(t *testing.T, db *sql.DB, dialect sqlrewrite.Dialect, table string, x *sqlrewrite.RowExpr, lo, hi float64) []float64 {
	t.Helper()
	q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: table, Derived: []sqlrewrite.DerivedColumn{{Name: "n", Expr: x}},
		Window: &sqlrewrite.Window{Column: "n", Lower: lo, Upper: hi, Offset: 0, Limit: 1000}}, dialect)
	if err != nil {
		t.Fatal(err)
	}
	return queryNumbers(t, db, q, args...)
}

// queryNumbers runs q and returns its first column's numbers in order.
func queryNumbers(t *testing.T, db *sql.DB, q string, args ...any) []float64 {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	var out []float64
	for rs.Next() {
		var x float64
		if err := rs.Scan(&x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}
