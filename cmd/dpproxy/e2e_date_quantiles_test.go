package main

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/demo"
)

// TestDateOrderStatisticsOnEveryBackend serves demo.Visits from SQLite,
// PostgreSQL and MariaDB through the real proxy and asks, through
// go-sql-driver, for MIN, MAX, MEDIAN, PERCENTILE_CONT and
// APPROX_PERCENTILE of the date column visit_date, alone and per year.
// Each answer is a date 'YYYY-MM-DD' within the declared bounds whose
// rank among the true visit dates is within 5% of the quantile asked for
// (at ε = 40 over thousands of rows the mechanisms err by a few ranks, so
// a miss has negligible probability), the statement costs its ε once, and
// SHOW WARNINGS says a MIN or MAX is a DP quantile; AVG and MEDIAN of
// DATEDIFF(col, literal) are near the true mean and median delays. Result columns are
// typed as MySQL types them (DATE, DATETIME, VARCHAR), in the text and
// the binary protocol (a prepared statement). DATEDIFF(MAX, MIN)
// is a number of days within the bounds' span. On the person-level table
// (at most 5 visits a person) MIN, MEDIAN and MAX answer near the truth,
// protecting each person. SUM of a date and arithmetic on a date
// aggregate are refused with 1235.
func TestDateOrderStatisticsOnEveryBackend(t *testing.T) {
	rows := demo.Visits(datesSeed)
	var all []string
	perYear := map[string][]string{}
	for _, r := range rows {
		all = append(all, r.VisitDate)
		perYear[r.VisitDate[:4]] = append(perYear[r.VisitDate[:4]], r.VisitDate)
	}
	slices.Sort(all)
	for _, ds := range perYear {
		slices.Sort(ds)
	}
	// rankOf is the share of sorted dates at or before d, and of those before it.
	rankOf := func(sorted []string, d string) (below, atOrBelow float64) {
		i, _ := slices.BinarySearch(sorted, d)
		j := i
		for j < len(sorted) && sorted[j] == d {
			j++
		}
		return float64(i) / float64(len(sorted)), float64(j) / float64(len(sorted))
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			conn, remaining := visitsSession(t, b, rows, visitDateTables("", "      - {name: site, type: text, partition_selection: true}\n"))
			// near checks a released date against the quantile q of sorted.
			near := func(what, got string, sorted []string, q float64) {
				t.Helper()
				if len(got) != len("2006-01-02") || got < "2018-01-01" || got > "2024-12-31" {
					t.Errorf("%s = %q, want a date YYYY-MM-DD within the bounds", what, got)
					return
				}
				below, atOrBelow := rankOf(sorted, got)
				if atOrBelow < q-0.05 || below > q+0.05 {
					t.Errorf("%s = %s, at ranks [%.3f, %.3f] of the true dates, want within 0.05 of %g", what, got, below, atOrBelow, q)
				}
			}
			before := remaining()
			var lo, hi, med, p90, p10 string
			if err := conn.QueryRowContext(t.Context(), "SELECT MIN(visit_date), MAX(visit_date), MEDIAN(visit_date), PERCENTILE_CONT(visit_date, 0.9), "+
				"APPROX_PERCENTILE(visit_date, 10) FROM visits").Scan(&lo, &hi, &med, &p90, &p10); err != nil {
				t.Fatal(err)
			}
			t.Logf("MIN %s, MAX %s, MEDIAN %s, p90 %s, p10 %s of %d dates in [%s, %s]", lo, hi, med, p90, p10, len(all), all[0], all[len(all)-1])
			near("MIN", lo, all, 0)
			near("MAX", hi, all, 1)
			near("MEDIAN", med, all, 0.5)
			near("PERCENTILE_CONT 0.9", p90, all, 0.9)
			near("APPROX_PERCENTILE 10", p10, all, 0.1)
			ws := strings.Join(warnings(t, conn), "\n")
			if !strings.Contains(ws, "MIN(visit_date) is answered as the DP 0-quantile") {
				t.Errorf("SHOW WARNINGS does not say MIN is a DP quantile: %s", ws)
			}
			if spent := before - remaining(); spent < 40-1e-9 || spent > 40+1e-9 {
				t.Errorf("spent ε = %g, want 40", spent)
			}
			// Per year: every declared year, each quantile within its year.
			rs, err := conn.QueryContext(t.Context(), "SELECT YEAR(visit_date) AS y, MIN(visit_date), MEDIAN(visit_date), MAX(visit_date) FROM visits GROUP BY y ORDER BY y")
			if err != nil {
				t.Fatal(err)
			}
			var years []string
			for rs.Next() {
				var y, ylo, ymed, yhi string
				if err := rs.Scan(&y, &ylo, &ymed, &yhi); err != nil {
					t.Fatal(err)
				}
				years = append(years, y)
				if sorted := perYear[y]; len(sorted) > 0 {
					near(y+" MIN", ylo, sorted, 0)
					near(y+" MEDIAN", ymed, sorted, 0.5)
					near(y+" MAX", yhi, sorted, 1)
				}
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			rs.Close()
			if strings.Join(years, ",") != "2018,2019,2020,2021,2022,2023,2024" {
				t.Errorf("years %v, want every declared year", years)
			}
			// The result columns are typed as MySQL types them, from the
			// statement alone: DATE for a date aggregate, a DATE(col) key,
			// a date column key and COALESCE of dates, DATETIME for
			// TIMESTAMP(...), VARCHAR for DATE_FORMAT, and VARCHAR where a
			// column may hold a date or text or a number (COALESCE(MAX(d),
			// 'none') even when no value is 'none').
			colTypes := func(q string) string {
				t.Helper()
				rs, err := conn.QueryContext(t.Context(), q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer rs.Close()
				cts, err := rs.ColumnTypes()
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, ct := range cts {
					names = append(names, ct.DatabaseTypeName())
				}
				for rs.Next() {
				}
				return strings.Join(names, " ")
			}
			for q, want := range map[string]string{
				"SELECT MIN(visit_date), COALESCE(MAX(visit_date), 'none'), CAST(MAX(visit_date) AS CHAR) FROM visits":                                         "DATE VARCHAR VARCHAR",
				"SELECT YEAR(visit_date) AS y, IF(COUNT(*) > 0, MIN(visit_date), COUNT(*)), COALESCE(MIN(visit_date), MAX(visit_date)) FROM visits GROUP BY 1": "INT VARCHAR DATE",
				"SELECT DATE(visit_date) AS d, COUNT(*) FROM visits WHERE visit_date >= '2024-12-30' GROUP BY 1":                                               "DATE BIGINT",
				"SELECT visit_date, COUNT(*) FROM visits GROUP BY visit_date ORDER BY visit_date DESC LIMIT 2":                                                 "DATE BIGINT",
				"SELECT TIMESTAMP(DATE_FORMAT(visit_date, '%Y-%m-01 00:00:00')) AS m, COUNT(*) FROM visits GROUP BY 1":                                         "DATETIME BIGINT",
				"SELECT DATE_FORMAT(visit_date, '%Y-%m') AS m, COUNT(*) FROM visits GROUP BY 1":                                                                "VARCHAR BIGINT",
				"SELECT YEAR(visit_date) AS y, IF(YEAR(visit_date) = 2018, 'none', MAX(visit_date)) FROM visits GROUP BY 1":                                    "INT VARCHAR",
			} {
				if got := colTypes(q); got != want {
					t.Errorf("%s: column types %s, want %s", q, got, want)
				}
			}
			// A prepared statement: the binary protocol's DATE structure,
			// decoded by the driver.
			var prepared string
			if err := conn.QueryRowContext(t.Context(), "SELECT MEDIAN(visit_date) FROM visits WHERE visit_date >= ?", "2024-01-01").Scan(&prepared); err != nil {
				t.Fatal(err)
			}
			near("prepared MEDIAN of 2024", prepared, perYear["2024"], 0.5)
			// DATEDIFF inside an aggregate: a row expression of day numbers.
			day := func(s string) float64 {
				d, err := time.Parse(time.DateOnly, s)
				if err != nil {
					t.Fatal(err)
				}
				return float64(d.Unix() / 86400)
			}
			var meanDays float64
			for _, d := range all {
				meanDays += day(d) - day("2019-01-01")
			}
			meanDays /= float64(len(all))
			medianDays := day("2024-12-31") - day(all[len(all)/2])
			var avgDiff, medDiff float64
			if err := conn.QueryRowContext(t.Context(), "SELECT AVG(DATEDIFF(visit_date, '2019-01-01')), MEDIAN(DATEDIFF('2024-12-31', visit_date)) FROM visits").Scan(&avgDiff, &medDiff); err != nil {
				t.Fatal(err)
			}
			if math.Abs(avgDiff-meanDays) > 20 || math.Abs(medDiff-medianDays) > 60 {
				t.Errorf("AVG(DATEDIFF) = %g days (truth %g), MEDIAN(DATEDIFF) = %g days (truth %g)", avgDiff, meanDays, medDiff, medianDays)
			}
			// DATEDIFF of two released dates is post-processing: free.
			before = remaining()
			var span int64
			if err := conn.QueryRowContext(t.Context(), "SELECT DATEDIFF(MAX(visit_date), MIN(visit_date)) FROM visits").Scan(&span); err != nil {
				t.Fatal(err)
			}
			if span < 0 || span > 2556 {
				t.Errorf("DATEDIFF(MAX, MIN) = %d days, want within [0, 2556] (the bounds' span)", span)
			}
			if spent := before - remaining(); spent < 40-1e-9 || spent > 40+1e-9 {
				t.Errorf("DATEDIFF(MAX, MIN) spent ε = %g, want 40 (two releases sharing it)", spent)
			}
			// On the person-level table: the quantiles of each person's
			// (at most 5) bounded visits, near the truth, protecting persons.
			var ulo, umed, uhi string
			if err := conn.QueryRowContext(t.Context(), "SELECT MIN(visit_date), MEDIAN(visit_date), MAX(visit_date) FROM visits_units").Scan(&ulo, &umed, &uhi); err != nil {
				t.Fatal(err)
			}
			if ws := strings.Join(warnings(t, conn), "\n"); !strings.Contains(ws, "protects each person_id") {
				t.Errorf("the person-level statement's warnings do not name the unit: %s", ws)
			}
			// Per site released by partition selection over persons.
			srs, err := conn.QueryContext(t.Context(), "SELECT site, MEDIAN(visit_date) FROM visits_units GROUP BY site")
			if err != nil {
				t.Fatal(err)
			}
			sites := 0
			for srs.Next() {
				var site, m string
				if err := srs.Scan(&site, &m); err != nil {
					t.Fatal(err)
				}
				sites++
				if len(m) != len("2006-01-02") || m < "2018-01-01" || m > "2024-12-31" {
					t.Errorf("site %s: MEDIAN(visit_date) = %q, want a date within the bounds", site, m)
				}
			}
			if err := srs.Err(); err != nil {
				t.Fatal(err)
			}
			srs.Close()
			if sites == 0 {
				t.Error("no site released on the person-level table at ε = 40")
			}
			near("person-level MIN", ulo, all, 0)
			near("person-level MEDIAN", umed, all, 0.5)
			near("person-level MAX", uhi, all, 1)
			for _, q := range []string{"SELECT SUM(visit_date) FROM visits", "SELECT MAX(visit_date) - MIN(visit_date) FROM visits"} {
				var v any
				err := conn.QueryRowContext(t.Context(), q).Scan(&v)
				if me, ok := errors.AsType[*mysql.MySQLError](err); !ok || me.Number != 1235 {
					t.Errorf("%s: %v, want error 1235", q, err)
				}
			}
		})
	}
}
