package main

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNumericFunctionsEndToEnd sends statements with numeric functions of
// columns (ABS, MOD, ROUND, SQRT in WHERE; POW, FLOOR, ROUND, LN inside
// aggregates, a geometric mean by EXP(AVG(LN(...))), a ratio by an integer
// column that is sometimes 0; MySQL's IF, NULLIF and simple CASE; the
// share AVG(condition); CAST to numbers) through the real
// proxy on SQLite, PostgreSQL and MariaDB at ε = 40, and checks each
// answer against Go's value on the rows: counts exactly (the noise of a
// count at ε = 40 is 0 but with probability below 10^−17), means and
// sums within ten standard deviations of their noise, the median of
// ROUND(y) within 2; and groups of ROUND(y, -2), SIGN(x) and
// FLOOR(SQRT(y)), each counted exactly. A wrong rendering (ROUND(y, -2) read as ROUND(y), a
// MOD of the absolute value) moves a count by tens.
func TestNumericFunctionsEndToEnd(t *testing.T) {
	type row struct {
		x   int
		y   float64
		grp int
	}
	var rows []row
	for i := range 300 {
		rows = append(rows, row{x: (i*37)%101 - 50, y: float64((i*7919)%100003) / 100, grp: i % 3})
	}
	count := func(keep func(r row) bool) float64 { return countWhere(rows, keep) }
	mean := func(f func(r row) float64) float64 {
		s := 0.0
		for _, r := range rows {
			s += f(r)
		}
		return s / float64(len(rows))
	}
	ys := make([]float64, len(rows))
	for i, r := range rows {
		ys[i] = math.RoundToEven(r.y) // the backends' ties differ; no y here is a tie
	}
	slices.Sort(ys)
	geoMean := math.Exp(mean(func(r row) float64 { return math.Log(r.y + 1) }))
	ratioSum, ratioN := 0.0, 0.0
	for _, r := range rows {
		if r.x != 0 {
			ratioSum, ratioN = ratioSum+r.y/float64(r.x), ratioN+1
		}
	}
	ratioMean := ratioSum / ratioN
	nonzeroSum := 0.0
	for _, r := range rows {
		nonzeroSum += float64(r.x)
	}
	nonzeroMean := nonzeroSum / ratioN // the rows with x ≠ 0
	checks := []valueCheck{
		{"SELECT COUNT(*) FROM m WHERE ABS(x) <= 10", count(func(r row) bool { return r.x >= -10 && r.x <= 10 }), 0},
		{"SELECT COUNT(*) FROM m WHERE MOD(x, 7) = 0", count(func(r row) bool { return r.x%7 == 0 }), 0},
		{"SELECT COUNT(*) FROM m WHERE x % 7 = -3", count(func(r row) bool { return r.x%7 == -3 }), 0},
		{"SELECT COUNT(*) FROM m WHERE ROUND(y, -2) = 300", count(func(r row) bool { return math.Round(r.y/100) == 3 }), 0},
		{"SELECT COUNT(*) FROM m WHERE SQRT(y) > 20 AND grp = 1", count(func(r row) bool { return math.Sqrt(r.y) > 20 && r.grp == 1 }), 0},
		// AVG over [0, 2500] of 300 rows at ε = 40: noise sd ≈ 2500·√2/(40·300) ≈ 0.3.
		{"SELECT AVG(POW(x, 2)) FROM m", mean(func(r row) float64 { return float64(r.x * r.x) }), 3},
		// SUM over [0, 10]: noise sd ≈ 10·√2/40 ≈ 0.35.
		{"SELECT SUM(FLOOR(y / 100)) FROM m", 300 * mean(func(r row) float64 { return math.Floor(r.y / 100) }), 4},
		{"SELECT MEDIAN(ROUND(y)) FROM m", (ys[149] + ys[150]) / 2, 2},
		// y / x skips x = 0 (NULL, as MySQL divides): bounds [-1000, 1000],
		// noise sd ≈ 2000·√2/(40·297) ≈ 0.25.
		{"SELECT AVG(y / x) FROM m", ratioMean, 3},
		// MySQL's IF and NULLIF as the CASE they stand for.
		{"SELECT COUNT(IF(x > 0, 1, NULL)) FROM m", count(func(r row) bool { return r.x > 0 }), 0},
		{"SELECT SUM(IF(grp = 1 AND x < 0, 1, 0)) FROM m", count(func(r row) bool { return r.grp == 1 && r.x < 0 }), 0},
		{"SELECT SUM(CASE grp WHEN 2 THEN 1 ELSE 0 END) FROM m", count(func(r row) bool { return r.grp == 2 }), 0},
		// CAST to numbers: SIGNED rounds (no y here is a tie), DOUBLE is the
		// column itself.
		{"SELECT COUNT(*) FROM m WHERE CAST(y AS SIGNED) >= 500", count(func(r row) bool { return math.RoundToEven(r.y) >= 500 }), 0},
		{"SELECT SUM(CAST(x AS DOUBLE) > 0) FROM m", count(func(r row) bool { return r.x > 0 }), 0},
		// AVG(condition): the share of rows where it holds; over [0, 1] of
		// 300 rows at ε = 40 its noise sd is about 1.2·10^−4.
		{"SELECT AVG(x > 10) FROM m", count(func(r row) bool { return r.x > 10 }) / float64(len(rows)), 0.01},
		// AVG over [-50, 50] of the rows with x ≠ 0: noise sd ≈ 100·√2/(40·297) ≈ 0.012.
		{"SELECT AVG(NULLIF(x, 0)) FROM m", nonzeroMean, 0.2},
		// The geometric mean of y + 1: AVG of LN over [0, ln 1001] ≈ [0, 6.9].
		{"SELECT EXP(AVG(LN(y + 1))) FROM m", geoMean, 0.05 * geoMean},
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			vals := make([]string, len(rows))
			for i, r := range rows {
				vals[i] = fmt.Sprintf("(%d, %g, %d)", r.x, r.y, r.grp)
			}
			conn := loadedSession(t, b, "m (x INTEGER, y DOUBLE PRECISION, grp INTEGER)", vals, `
  - name: m
    columns:
      - {name: x, type: integer, lower: -50, upper: 50}
      - {name: y, type: real, lower: 0, upper: 1000}
      - {name: grp, type: integer, lower: 0, upper: 2, values: [0, 1, 2]}
`)
			// Groups of a rounded expression: one per multiple of 100 in
			// [0, 1000], one per sign, each counted exactly.
			for _, g := range []struct {
				sql string
				key func(r row) float64
			}{
				{"SELECT ROUND(y, -2) AS b, COUNT(*) FROM m GROUP BY b ORDER BY b", func(r row) float64 { return 100 * math.Round(r.y/100) }},
				{"SELECT SIGN(x), COUNT(*) FROM m GROUP BY SIGN(x) ORDER BY 1", func(r row) float64 { return float64(min(max(r.x, -1), 1)) }},
				{"SELECT IF(x >= 0, 1, 0) AS nonneg, COUNT(*) FROM m GROUP BY nonneg", func(r row) float64 { return map[bool]float64{true: 1}[r.x >= 0] }},
				{"SELECT x > 10 AS big, COUNT(*) FROM m GROUP BY big", func(r row) float64 { return map[bool]float64{true: 1}[r.x > 10] }},
				{"SELECT grp = 1 AS one, COUNT(*) FROM m GROUP BY one", func(r row) float64 { return map[bool]float64{true: 1}[r.grp == 1] }},
				{"SELECT grp * 10 + 1 AS g, COUNT(*) FROM m GROUP BY g", func(r row) float64 { return float64(r.grp*10 + 1) }},
				{"SELECT FLOOR(SQRT(y)) AS s, COUNT(*) FROM m WHERE grp = 2 GROUP BY s ORDER BY s", func(r row) float64 {
					if r.grp != 2 {
						return math.NaN()
					}
					return math.Floor(math.Sqrt(r.y))
				}},
			} {
				want := map[float64]float64{}
				for _, r := range rows {
					if k := g.key(r); !math.IsNaN(k) {
						want[k]++
					}
				}
				res, err := conn.QueryContext(t.Context(), g.sql)
				if err != nil {
					t.Fatalf("%s: %v", g.sql, err)
				}
				groups := 0
				for res.Next() {
					var k sql.NullFloat64
					var n float64
					if err := res.Scan(&k, &n); err != nil {
						t.Fatal(err)
					}
					if !k.Valid {
						// A condition's NULL group, released empty or
						// not: no row's x is NULL.
						if n != 0 {
							t.Errorf("%s: the NULL group counts %g, want 0", g.sql, n)
						}
						continue
					}
					groups++
					if n != want[k.Float64] {
						t.Errorf("%s: group %g counts %g, want %g", g.sql, k.Float64, n, want[k.Float64])
					}
				}
				res.Close()
				if groups < len(want) {
					t.Errorf("%s: %d groups, want every one of the %d the rows fill", g.sql, groups, len(want))
				}
			}
			checkValues(t, conn, checks)
		})
	}
}

// TestDatePartsEndToEnd sends date parts of a timestamp and a date column
// through the real proxy on SQLite, PostgreSQL and MariaDB at ε = 40:
// counts in WHERE on HOUR, DAYOFWEEK (IN) and WEEKDAY exactly, the mean
// hour and the median year near Go's values on the rows, and five-year
// groups of YEAR(d) counted exactly. A wrong day of the week (Sunday as
// 0, as PostgreSQL and SQLite number it) moves the weekend count by
// hundreds.
func TestDatePartsEndToEnd(t *testing.T) {
	type row struct{ ts, d time.Time }
	var rows []row
	start := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 400 {
		rows = append(rows, row{ts: start.Add(time.Duration(i*7919%(24*3650)) * time.Hour).Add(time.Duration(i%60) * time.Minute),
			d: start.AddDate(0, 0, i*37%3650)})
	}
	count := func(keep func(r row) bool) float64 { return countWhere(rows, keep) }
	hours, years := 0.0, make([]float64, len(rows))
	for i, r := range rows {
		hours += float64(r.ts.Hour()) / float64(len(rows))
		years[i] = float64(r.d.Year())
	}
	slices.Sort(years)
	checks := []valueCheck{
		{"SELECT COUNT(*) FROM e WHERE HOUR(ts) BETWEEN 9 AND 17", count(func(r row) bool { return r.ts.Hour() >= 9 && r.ts.Hour() <= 17 }), 0},
		{"SELECT COUNT(*) FROM e WHERE DAYOFWEEK(d) IN (1, 7)", count(func(r row) bool { return r.d.Weekday() == time.Sunday || r.d.Weekday() == time.Saturday }), 0},
		{"SELECT COUNT(*) FROM e WHERE WEEKDAY(ts) < 5 AND MONTH(d) = 3", count(func(r row) bool {
			return r.ts.Weekday() != time.Saturday && r.ts.Weekday() != time.Sunday && r.d.Month() == time.March
		}), 0},
		// AVG over [0, 23] of 400 rows at ε = 40: noise sd ≈ 23·√2/(40·400) ≈ 0.002.
		{"SELECT AVG(HOUR(ts)) FROM e", hours, 0.1},
		{"SELECT MEDIAN(YEAR(d)) FROM e", (years[199] + years[200]) / 2, 1},
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			timestamp := map[string]string{"mysql": "DATETIME"}[b.driver]
			if timestamp == "" {
				timestamp = "TIMESTAMP"
			}
			vals := make([]string, len(rows))
			for i, r := range rows {
				vals[i] = fmt.Sprintf("('%s', '%s')", r.ts.Format(time.DateTime), r.d.Format(time.DateOnly))
			}
			conn := loadedSession(t, b, "e (ts "+timestamp+", d DATE)", vals, `
  - name: e
    columns:
      - {name: ts, type: timestamp, lower: '2015-01-01 00:00:00', upper: '2024-12-31 23:59:59'}
      - {name: d, type: date, lower: '2015-01-01', upper: '2024-12-31'}
`)
			checkValues(t, conn, checks)
			res, err := conn.QueryContext(t.Context(), "SELECT FLOOR(YEAR(d) / 5) * 5 AS y, COUNT(*) FROM e GROUP BY y ORDER BY y")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for res.Next() {
				var y, n float64
				if err := res.Scan(&y, &n); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%g:%g", y, n))
			}
			res.Close()
			want := []string{
				fmt.Sprintf("2015:%g", count(func(r row) bool { return r.d.Year() < 2020 })),
				fmt.Sprintf("2020:%g", count(func(r row) bool { return r.d.Year() >= 2020 })),
			}
			if !slices.Equal(got, want) {
				t.Errorf("five-year groups of YEAR(d): %v, want %v", got, want)
			}
		})
	}
}

// TestMappedKeysEndToEnd groups rows of a declared text column by
// functions of it and by a CASE over it (the proxy maps each declared
// value to its group) through the real proxy on SQLite, PostgreSQL and
// MariaDB at ε = 40, and checks every group's count against Go's count of
// the rows whose values the function or CASE maps to it.
func TestMappedKeysEndToEnd(t *testing.T) {
	// "" stands for NULL, which the domain declares: rows holding it are
	// grouped as MySQL groups them (a CASE's ELSE, a function's NULL).
	// "Atlantis" is not declared: its rows are in no group, whatever the
	// key (on SQLite too, where a text column's test for NULL once read
	// every text as unreadable).
	regions := []string{"north", "South", "east", "West", "north-east", "", "Atlantis"}
	var rows []string
	for i := range 300 {
		rows = append(rows, regions[(i*3)%len(regions)])
	}
	null := func(f func(string) string) func(string) string {
		return func(s string) string {
			if s == "" {
				return "NULL"
			}
			return f(s)
		}
	}
	countBy := func(key func(string) string) map[string]float64 {
		out := map[string]float64{}
		for _, r := range rows {
			if r != "Atlantis" {
				out[key(r)]++
			}
		}
		return out
	}
	// lvl: 1 or 2, NULL for every fifth row (declared null); COALESCE
	// gives NULL the label 9.
	lvl := func(i int) string {
		if i%5 == 0 {
			return "NULL"
		}
		return fmt.Sprint(1 + i%2)
	}
	lvlCounts := map[string]float64{}
	for i := range rows {
		lvlCounts[map[bool]string{true: "9", false: lvl(i)}[lvl(i) == "NULL"]]++
	}
	checks := []struct {
		sql  string
		want map[string]float64
	}{
		{"SELECT UPPER(region) AS g, COUNT(*) FROM r GROUP BY g", countBy(null(strings.ToUpper))},
		{"SELECT COALESCE(lvl, 9) AS g, COUNT(*) FROM r GROUP BY g", lvlCounts},
		{"SELECT LEFT(region, 1) AS g, COUNT(*) FROM r GROUP BY g", countBy(null(func(s string) string { return s[:1] }))},
		{"SELECT CONCAT('r-', SUBSTRING(region, -2)) AS g, COUNT(*) FROM r GROUP BY g", countBy(null(func(s string) string { return "r-" + s[len(s)-2:] }))},
		// One label and NULL for the rest (no ELSE), as MySQL groups it.
		{"SELECT CASE region WHEN 'north' THEN 'N' WHEN 'north-east' THEN 'N' END AS g, COUNT(*) FROM r GROUP BY g",
			countBy(func(s string) string { return map[bool]string{true: "N", false: "NULL"}[strings.HasPrefix(s, "north")] })},
		// <> and NOT: unknown on NULL, so NULL takes the ELSE.
		{"SELECT CASE WHEN region <> 'West' AND NOT (region = 'east') THEN 'keep' ELSE 'drop' END AS g, COUNT(*) FROM r GROUP BY g",
			countBy(func(s string) string {
				return map[bool]string{true: "keep", false: "drop"}[s != "" && s != "West" && s != "east"]
			})},
		{"SELECT CASE WHEN region IS NULL THEN 'none' ELSE 'some' END AS g, COUNT(*) FROM r GROUP BY g",
			countBy(func(s string) string { return map[bool]string{true: "none", false: "some"}[s == ""] })},
		{"SELECT CASE WHEN region IN ('north', 'east') THEN 'NE' WHEN region = 'South' THEN 'S' ELSE 'other' END AS g, COUNT(*) FROM r GROUP BY g",
			countBy(func(s string) string {
				switch s {
				case "north", "east":
					return "NE"
				case "South":
					return "S"
				}
				return "other"
			})},
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			vals := make([]string, len(rows))
			for i, r := range rows {
				region := "'" + r + "'"
				if r == "" {
					region = "NULL"
				}
				vals[i] = "(" + region + ", " + lvl(i) + ")"
			}
			conn := loadedSession(t, b, "r (region VARCHAR(20), lvl INTEGER)", vals, `
  - name: r
    columns:
      - {name: region, type: text, values: [north, South, east, West, north-east, null]}
      - {name: lvl, type: integer, lower: 1, upper: 2, values: [1, 2, null]}
`)
			for _, c := range checks {
				res, err := conn.QueryContext(t.Context(), c.sql)
				if err != nil {
					t.Errorf("%s: %v", c.sql, err)
					continue
				}
				got := map[string]float64{}
				for res.Next() {
					var g sql.NullString
					var n float64
					if err := res.Scan(&g, &n); err != nil {
						t.Fatal(err)
					}
					got[map[bool]string{true: g.String, false: "NULL"}[g.Valid]] = n
				}
				res.Close()
				if fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: %v, want %v", c.sql, got, c.want)
				}
			}
		})
	}
}

// loadedSession creates the table table ("name (column type, ...)") on
// backend b with the rows vals ("(v1, v2, ...)" each), and returns dora's
// session at ε = 40 on a proxy configured with tables.
func loadedSession(t *testing.T, b visitsBackend, table string, vals []string, tables string) *sql.Conn {
	t.Helper()
	dsn := b.dsn(t)
	db := testdb.Open(t, b.driver, dsn)
	if _, err := db.Exec("CREATE TABLE " + table); err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(table, " ")
	if _, err := db.Exec("INSERT INTO " + name + " VALUES " + strings.Join(vals, ", ")); err != nil {
		t.Fatal(err)
	}
	conn, _ := doraSession(t, b, dsn, tables)
	return conn
}

// countWhere counts the rows keep holds for.
func countWhere[T any](rows []T, keep func(T) bool) float64 {
	n := 0.0
	for _, r := range rows {
		if keep(r) {
			n++
		}
	}
	return n
}

// valueCheck is a statement answering one number and the value it should
// answer within tolerance.
type valueCheck struct {
	sql       string
	want      float64
	tolerance float64
}

// checkValues runs every check on conn.
func checkValues(t *testing.T, conn *sql.Conn, checks []valueCheck) {
	t.Helper()
	for _, c := range checks {
		var got float64
		if err := conn.QueryRowContext(t.Context(), c.sql).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if math.Abs(got-c.want) > c.tolerance {
			t.Errorf("%s = %g, want %g ± %g", c.sql, got, c.want, c.tolerance)
		}
	}
}
