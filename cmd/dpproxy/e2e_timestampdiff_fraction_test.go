package main

import (
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTimestampDiffFractions: TIMESTAMPDIFF of timestamp columns whose
// values have fractions of a second counts whole units of the exact
// difference, truncated toward zero, as MySQL does ('2024-01-01
// 00:00:05.5' to '2024-01-01 00:01:05' is 59 seconds, not 60), for the
// units of seconds (SECOND and MINUTE, of a column and a constant and of
// two columns) and for calendar months (a month from '2024-02-01
// 00:00:00.75' to '2024-03-01 00:00:00' is not whole), on a DATETIME(6)
// column of MariaDB and a timestamp column of PostgreSQL. Each expected
// grouped count is MySQL's rule computed in Go from the stored values; on
// MariaDB it is also MariaDB's own answer to the same statement. The table
// holds 120 rows; at ε = 40 a count's noise is below 0.5 with probability
// above 1 − 1e-8, so counts must be exact after rounding.
func TestTimestampDiffFractions(t *testing.T) {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	type row struct{ ts, te, m time.Time }
	var rows []row
	for id := range 120 {
		rows = append(rows, row{
			ts: base.Add(time.Duration(id) * 1100 * time.Millisecond),
			te: base.Add(30*time.Second + time.Duration(id)*700*time.Millisecond),
			m:  base.AddDate(0, 0, id).Add(time.Duration(id%4) * 250 * time.Millisecond),
		})
	}
	lit := func(x time.Time) string { return "'" + x.Format("2006-01-02 15:04:05.000000") + "'" }
	// seconds is MySQL's TIMESTAMPDIFF(SECOND, a, b): the exact difference
	// truncated toward zero (Go's integer division).
	seconds := func(a, b time.Time) int64 { return b.Sub(a).Microseconds() / 1e6 }
	// months is MySQL's TIMESTAMPDIFF(MONTH, a, b): the months between, one
	// fewer (more, backward) when b's day and time of day, to the
	// microsecond, has not reached a's.
	months := func(a, b time.Time) int64 {
		pos := func(x time.Time) int64 {
			return int64(x.Day())*86400e6 + x.Sub(x.Truncate(24*time.Hour)).Microseconds()
		}
		n := int64(b.Year()*12+int(b.Month())) - int64(a.Year()*12+int(a.Month()))
		switch {
		case !b.Before(a) && pos(b) < pos(a):
			n--
		case b.Before(a) && pos(b) > pos(a):
			n++
		}
		return n
	}
	at := func(s string) time.Time {
		x, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	floorDiv := func(x, d int64) int64 { return int64(math.Floor(float64(x) / float64(d))) }
	cases := []struct {
		sql string
		key func(r row) int64
	}{
		{"SELECT FLOOR(TIMESTAMPDIFF(SECOND, ts, '2024-01-01 00:01:05') / 60) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 { return floorDiv(seconds(r.ts, at("2024-01-01 00:01:05")), 60) }},
		{"SELECT FLOOR(TIMESTAMPDIFF(MINUTE, ts, '2024-01-01 00:02:00') / 1) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 { return seconds(r.ts, at("2024-01-01 00:02:00")) / 60 }},
		{"SELECT FLOOR(TIMESTAMPDIFF(SECOND, ts, te) / 10) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 { return floorDiv(seconds(r.ts, r.te), 10) }},
		{"SELECT FLOOR(TIMESTAMPDIFF(MINUTE, te, ts) / 1) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 { return seconds(r.te, r.ts) / 60 }},
		// The WHERE narrows ts to below 00:00:06, its fraction included:
		// 00:00:05.5 is 59 seconds before 00:01:05, within the key's
		// bounds.
		{"SELECT FLOOR(TIMESTAMPDIFF(SECOND, ts, '2024-01-01 00:01:05') / 1) k, COUNT(*) FROM ev WHERE ts < '2024-01-01 00:00:06' GROUP BY 1",
			func(r row) int64 {
				if !r.ts.Before(at("2024-01-01 00:00:06")) {
					return math.MinInt64
				}
				return seconds(r.ts, at("2024-01-01 00:01:05"))
			}},
		{"SELECT FLOOR(TIMESTAMPDIFF(MONTH, m, '2024-04-01 00:00:00') / 1) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 { return months(r.m, at("2024-04-01 00:00:00")) }},
		// A whole number of seconds is exact to MySQL: ROUND takes its
		// ties (25, 15, -5, ...) away from zero.
		{"SELECT ROUND(TIMESTAMPDIFF(SECOND, ts, te), -1) k, COUNT(*) FROM ev GROUP BY 1",
			func(r row) int64 {
				s := seconds(r.ts, r.te)
				return int64(math.Copysign(math.Floor(math.Abs(float64(s))/10+0.5), float64(s))) * 10
			}},
	}
	for _, b := range []struct {
		name, driver, typ string
		dsn               func(testing.TB) string
	}{
		{"postgres", "postgres", "TIMESTAMP(6)", testdb.PostgresDSN},
		{"mariadb", "mysql", "DATETIME(6)", testdb.MySQLDSN},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			if _, err := direct.Exec("CREATE TABLE ev (ts " + b.typ + ", te " + b.typ + ", m " + b.typ + ")"); err != nil {
				t.Fatal(err)
			}
			values := make([]string, len(rows))
			for i, r := range rows {
				values[i] = "(" + lit(r.ts) + ", " + lit(r.te) + ", " + lit(r.m) + ")"
			}
			if _, err := direct.Exec("INSERT INTO ev VALUES " + strings.Join(values, ", ")); err != nil {
				t.Fatal(err)
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 100000, delta: 1.0e-5", `  - name: ev
    columns:
      - {name: ts, type: timestamp, lower: "2024-01-01 00:00:00", upper: "2024-01-01 00:10:00"}
      - {name: te, type: timestamp, lower: "2024-01-01 00:00:00", upper: "2024-01-01 00:10:00"}
      - {name: m, type: timestamp, lower: "2024-01-01 00:00:00", upper: "2024-12-31 23:59:59"}
`)
			if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				want := map[int64]float64{}
				for _, r := range rows {
					if k := c.key(r); k != math.MinInt64 { // MinInt64: not kept
						want[k]++
					}
				}
				if b.name == "mariadb" {
					if own := keyedCounts(t, direct, c.sql); fmt.Sprint(own) != fmt.Sprint(want) {
						t.Fatalf("%s on MariaDB = %v, Go's MySQL rule %v", c.sql, own, want)
					}
				}
				got := keyedCounts(t, db, c.sql)
				for k, n := range got {
					got[k] = math.Round(n)
					if got[k] == 0 && want[k] == 0 {
						delete(got, k)
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", c.sql, got, want)
				}
			}
		})
	}
}

// keyedCounts runs a query of an integer key and a count on db and returns
// the count of each key.
func keyedCounts(t *testing.T, db *sql.DB, query string) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	for k, n := range groupCounts(t, db, query) {
		f, err := strconv.ParseFloat(k, 64)
		if err != nil || f != math.Trunc(f) {
			t.Fatalf("%s: key %q is no integer", query, k)
		}
		out[int64(f)] = n
	}
	return out
}
