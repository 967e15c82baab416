package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTimeDifferencesThroughProxy serves a table of sessions (a start and
// an end timestamp; 3,000 rows of 2024, durations from a minute to ten
// hours, some across midnight) from SQLite (text), PostgreSQL (TIMESTAMP)
// and MariaDB (DATETIME) through the real proxy, and asks through
// go-sql-driver at ε = 40 for the mean duration in minutes capped to
// [0, 240] with LEAST and GREATEST, the median duration in seconds, the
// mean number of midnights crossed (DATEDIFF of timestamps), the mean
// capped duration per quarter, and the days between the first and last
// start (TIMESTAMPDIFF of released values), and the mean whole calendar
// months from New Year to the start, the first and last days
// (MIN(DATE(started_at))), and counts under conditions on a row expression
// (WHERE TIMESTAMPDIFF(MINUTE, started_at, ended_at) >= 60). Each answer is near the truth Go computes
// with MySQL's rules (whole units truncated toward zero, dates of the
// timestamps) — within a few of its noise scales, or within 5% in rank for
// the median —, each statement costs its ε once, and MICROSECOND is
// refused with 1235 naming the units.
func TestTimeDifferencesThroughProxy(t *testing.T) {
	const n = 3000
	first := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 11))
	type session struct{ start, end time.Time }
	sessions := make([]session, n)
	for i := range sessions {
		start := first.Add(time.Duration(rng.Int64N(366*86400)) * time.Second)
		dur := time.Duration(60+rng.Int64N(2*3600)) * time.Second
		if rng.IntN(10) == 0 {
			dur = time.Duration(60+rng.Int64N(10*3600)) * time.Second
		}
		sessions[i] = session{start, start.Add(dur)}
	}
	capped := func(s session) float64 {
		return math.Max(0, math.Min(240, math.Trunc(s.end.Sub(s.start).Minutes())))
	}
	var meanCapped, meanMidnights, meanMonths, truthLong, truthCrossing float64
	perQuarter := map[int][]float64{}
	perHour := map[int]int{}
	var durations []float64
	for _, s := range sessions {
		meanCapped += capped(s) / n
		days := s.end.Truncate(24*time.Hour).Sub(s.start.Truncate(24*time.Hour)).Hours() / 24
		meanMidnights += days / n
		if s.end.Sub(s.start) >= time.Hour {
			truthLong++
		}
		if days >= 1 {
			truthCrossing++
		}
		meanMonths += float64(catalog.MonthsBetween(first, s.start)) / n
		q := (int(s.start.Month()) + 2) / 3
		perQuarter[q] = append(perQuarter[q], capped(s))
		perHour[s.start.Hour()]++
		durations = append(durations, s.end.Sub(s.start).Seconds())
	}
	slices.Sort(durations)
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"sqlite": "TEXT", "postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE sessions (started_at %s, ended_at %s)", typ, typ)); err != nil {
				t.Fatal(err)
			}
			for start := 0; start < n; start += 500 {
				var vals []string
				for _, s := range sessions[start:min(start+500, n)] {
					vals = append(vals, fmt.Sprintf("('%s', '%s')", s.start.Format(time.DateTime), s.end.Format(time.DateTime)))
				}
				if _, err := db.Exec("INSERT INTO sessions (started_at, ended_at) VALUES " + strings.Join(vals, ", ")); err != nil {
					t.Fatal(err)
				}
			}
			conn, remaining := doraSession(t, b, dsn, `
  - name: sessions
    columns:
      - {name: started_at, type: timestamp, lower: "2024-01-01 00:00:00", upper: "2025-01-01 23:59:59"}
      - {name: ended_at, type: timestamp, lower: "2024-01-01 00:00:00", upper: "2025-01-01 23:59:59"}
`)
			before := remaining()
			var avgMinutes, medianSeconds, avgMidnights float64
			if err := conn.QueryRowContext(t.Context(), "SELECT AVG(GREATEST(LEAST(TIMESTAMPDIFF(MINUTE, started_at, ended_at), 240), 0)), "+
				"MEDIAN(TIMESTAMPDIFF(SECOND, started_at, ended_at)), AVG(DATEDIFF(ended_at, started_at)) FROM sessions").
				Scan(&avgMinutes, &medianSeconds, &avgMidnights); err != nil {
				t.Fatal(err)
			}
			t.Logf("mean capped minutes %.3f (truth %.3f), median seconds %g (truth %g), mean midnights %.4f (truth %.4f)",
				avgMinutes, meanCapped, medianSeconds, durations[n/2], avgMidnights, meanMidnights)
			// Noise scales at ε = 40 split over three releases: the capped
			// mean's is about 240/(13·3000) ≈ 0.006 minutes, the midnights'
			// (bounds ±367 days) about 734/(13·3000) ≈ 0.02.
			if math.Abs(avgMinutes-meanCapped) > 1 {
				t.Errorf("AVG of the capped duration = %g minutes, truth %g", avgMinutes, meanCapped)
			}
			if math.Abs(avgMidnights-meanMidnights) > 0.3 {
				t.Errorf("AVG(DATEDIFF(ended_at, started_at)) = %g, truth %g", avgMidnights, meanMidnights)
			}
			lo, _ := slices.BinarySearch(durations, medianSeconds)
			hi, _ := slices.BinarySearch(durations, math.Nextafter(medianSeconds, math.Inf(1)))
			if float64(hi)/n < 0.45 || float64(lo)/n > 0.55 {
				t.Errorf("MEDIAN(TIMESTAMPDIFF(SECOND, ...)) = %g s, at ranks [%g, %g] of the true durations", medianSeconds, float64(lo)/n, float64(hi)/n)
			}
			if spent := before - remaining(); math.Abs(spent-40) > 1e-9 {
				t.Errorf("spent ε = %g, want 40", spent)
			}
			// Per quarter of the start.
			rs, err := conn.QueryContext(t.Context(), "SELECT QUARTER(started_at) AS q, AVG(GREATEST(LEAST(TIMESTAMPDIFF(MINUTE, started_at, ended_at), 240), 0)) "+
				"FROM sessions GROUP BY q ORDER BY q")
			if err != nil {
				t.Fatal(err)
			}
			var quarters []int
			for rs.Next() {
				var q int
				var avg float64
				if err := rs.Scan(&q, &avg); err != nil {
					t.Fatal(err)
				}
				quarters = append(quarters, q)
				var truth float64
				for _, m := range perQuarter[q] {
					truth += m / float64(len(perQuarter[q]))
				}
				if math.Abs(avg-truth) > 3 {
					t.Errorf("quarter %d: mean capped duration %g minutes, truth %g", q, avg, truth)
				}
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			rs.Close()
			if fmt.Sprint(quarters) != "[1 2 3 4]" {
				t.Errorf("quarters %v, want [1 2 3 4]", quarters)
			}
			// Sessions by hour of the start: every hour 0 to 23, each count
			// within 5 of the truth (noise scale 1/40).
			rs, err = conn.QueryContext(t.Context(), "SELECT HOUR(started_at) AS h, COUNT(*) FROM sessions GROUP BY h ORDER BY h")
			if err != nil {
				t.Fatal(err)
			}
			var hours []int
			for rs.Next() {
				var h int
				var c float64
				if err := rs.Scan(&h, &c); err != nil {
					t.Fatal(err)
				}
				hours = append(hours, h)
				if math.Abs(c-float64(perHour[h])) > 5 {
					t.Errorf("hour %d: %g sessions, truth %d", h, c, perHour[h])
				}
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			rs.Close()
			if len(hours) != 24 || hours[0] != 0 || hours[23] != 23 {
				t.Errorf("hours %v, want 0 to 23", hours)
			}
			// TIMESTAMPDIFF of two released timestamps is post-processing:
			// the days between the DP 0- and 1-quantiles of the starts,
			// which span 2024 (at ε = 40 the extremes err by a few ranks).
			var span int
			if err := conn.QueryRowContext(t.Context(), "SELECT TIMESTAMPDIFF(DAY, MIN(started_at), MAX(started_at)) FROM sessions").Scan(&span); err != nil {
				t.Fatal(err)
			}
			if span < 330 || span > 367 {
				t.Errorf("TIMESTAMPDIFF(DAY, MIN(started_at), MAX(started_at)) = %d days, want about 365", span)
			}
			// Conditions on a row expression: sessions of an hour or more,
			// and those that cross midnight (a range count), each within 3
			// of the truth; the median start of the long ones is a 2024 day.
			var long, crossing float64
			var longMedian string
			if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*), MEDIAN(DATE(started_at)) FROM sessions WHERE TIMESTAMPDIFF(MINUTE, started_at, ended_at) >= 60").Scan(&long, &longMedian); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(t.Context(), "SELECT SUM(DATEDIFF(ended_at, started_at) >= 1) FROM sessions").Scan(&crossing); err != nil {
				t.Fatal(err)
			}
			if math.Abs(long-truthLong) > 3 || math.Abs(crossing-truthCrossing) > 3 {
				t.Errorf("sessions of an hour or more: %g (truth %g); crossing midnight: %g (truth %g)", long, truthLong, crossing, truthCrossing)
			}
			if !strings.HasPrefix(longMedian, "2024-") {
				t.Errorf("MEDIAN(DATE(started_at)) of the long sessions = %q, want a day of 2024", longMedian)
			}
			// The first and last days of the sessions: the DP 0- and
			// 1-quantiles of the dates of the timestamps, released as dates.
			var firstDay, lastDay string
			if err := conn.QueryRowContext(t.Context(), "SELECT MIN(DATE(started_at)), MAX(CAST(ended_at AS DATE)) FROM sessions").Scan(&firstDay, &lastDay); err != nil {
				t.Fatal(err)
			}
			if firstDay < "2024-01-01" || firstDay > "2024-01-20" || lastDay < "2024-12-10" || lastDay > "2025-01-01" {
				t.Errorf("MIN(DATE(started_at)) = %q, MAX(CAST(ended_at AS DATE)) = %q, want dates near the ends of 2024", firstDay, lastDay)
			}
			// Calendar months as MySQL counts them: the mean whole months
			// from New Year to the start (bounds [0, 12]: noise ≈ 12/(40·3000)).
			var avgMonths float64
			if err := conn.QueryRowContext(t.Context(), "SELECT AVG(TIMESTAMPDIFF(MONTH, '2024-01-01 00:00:00', started_at)) FROM sessions").Scan(&avgMonths); err != nil {
				t.Fatal(err)
			}
			if math.Abs(avgMonths-meanMonths) > 0.1 {
				t.Errorf("AVG(TIMESTAMPDIFF(MONTH, '2024-01-01 00:00:00', started_at)) = %g, truth %g", avgMonths, meanMonths)
			}
			// MICROSECOND is refused before anything is charged.
			before = remaining()
			var x float64
			err = conn.QueryRowContext(t.Context(), "SELECT AVG(TIMESTAMPDIFF(MICROSECOND, started_at, ended_at)) FROM sessions").Scan(&x)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, "SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR") {
				t.Errorf("TIMESTAMPDIFF(MICROSECOND, ...): %v, want 1235 naming the supported units", err)
			}
			if spent := before - remaining(); spent != 0 {
				t.Errorf("a refused statement spent ε = %g", spent)
			}
		})
	}
}

// TestRelativeDatesThroughProxy serves orders dated relative to today (a
// date and a timestamp per row: 60 days back and 100 hours back) from
// SQLite, PostgreSQL and MariaDB through the real proxy, and counts at
// ε = 40 through go-sql-driver the rows of BI tools' relative filters,
// which the proxy evaluates with its clock in backend.time_zone (UTC):
// the last 7 days (CURDATE() - INTERVAL 7 DAY), Metabase's "previous 30
// days" (date_add(date(now()), INTERVAL -30 day) up to today), the last
// 24 hours of a timestamp (NOW() - INTERVAL 24 HOUR), yesterday
// (DATE(placed_at) = CURDATE() - INTERVAL 1 DAY), this year
// (YEAR(ordered_on) = YEAR(CURDATE())), days picked with IN and NOT IN,
// a number read as a date (ordered_on >= 20240105, as MySQL reads it),
// and an OR of a date and a timestamp condition. Each count is within 3 of the
// truth Go computes from the same clock (the noise scale is 1/40). Orders
// per hour of the last days (Metabase's STR_TO_DATE(DATE_FORMAT(col,
// '%Y-%m-%d %H'), ...)) answer every hour of the bounds as a DATETIME,
// each count near its truth.
func TestRelativeDatesThroughProxy(t *testing.T) {
	// Away from midnight, so that today is the same day for the whole test.
	if now := time.Now().UTC(); now.Hour() == 23 && now.Minute() >= 55 {
		time.Sleep(time.Until(now.Truncate(24 * time.Hour).Add(24*time.Hour + time.Second)))
	}
	start := time.Now().UTC().Truncate(time.Second)
	today := start.Truncate(24 * time.Hour)
	const n = 3000
	type order struct{ day, placed time.Time }
	orders := make([]order, n)
	for i := range orders {
		orders[i] = order{today.AddDate(0, 0, -(i % 60)), start.Add(-time.Duration(i%100)*time.Hour - 30*time.Minute)}
	}
	count := func(keep func(o order) bool) float64 {
		var c float64
		for _, o := range orders {
			if keep(o) {
				c++
			}
		}
		return c
	}
	checks := []struct {
		where string
		truth float64
	}{
		{"ordered_on >= CURDATE() - INTERVAL 7 DAY", count(func(o order) bool { return !o.day.Before(today.AddDate(0, 0, -7)) })},
		{"(ordered_on >= date_add(date(now()), INTERVAL -30 day) AND ordered_on < date(now()))",
			count(func(o order) bool { return !o.day.Before(today.AddDate(0, 0, -30)) && o.day.Before(today) })},
		{"placed_at >= NOW() - INTERVAL 24 HOUR", count(func(o order) bool { return !o.placed.Before(start.Add(-24 * time.Hour)) })},
		{"DATE(placed_at) = CURDATE() - INTERVAL 1 DAY", count(func(o order) bool { return o.placed.Truncate(24 * time.Hour).Equal(today.AddDate(0, 0, -1)) })},
		{"YEAR(ordered_on) = YEAR(CURDATE())", count(func(o order) bool { return o.day.Year() == today.Year() })},
		{"ordered_on IN (CURDATE(), CURDATE() - INTERVAL 3 DAY, '" + today.AddDate(0, 0, -40).Format(time.DateOnly) + "')",
			count(func(o order) bool {
				return o.day.Equal(today) || o.day.Equal(today.AddDate(0, 0, -3)) || o.day.Equal(today.AddDate(0, 0, -40))
			})},
		{"ordered_on >= " + today.AddDate(0, 0, -10).Format("20060102"), count(func(o order) bool { return !o.day.Before(today.AddDate(0, 0, -10)) })},
		{"ordered_on NOT IN (CURDATE()) AND (placed_at < NOW() - INTERVAL 90 HOUR OR ordered_on < CURDATE() - INTERVAL 50 DAY)",
			count(func(o order) bool {
				return !o.day.Equal(today) && (o.placed.Before(start.Add(-90*time.Hour)) || o.day.Before(today.AddDate(0, 0, -50)))
			})},
	}
	lower, upper := today.AddDate(-1, 0, 0), today.AddDate(0, 0, 10)
	recentFrom, recentTo := today.AddDate(0, 0, -2), today.Add(23*time.Hour)
	perHour := map[time.Time]int{}
	for _, o := range orders {
		if !o.placed.Before(recentFrom) && !o.placed.After(recentTo) { // within the bounds: in a group
			perHour[o.placed.Truncate(time.Hour)]++
		}
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"sqlite": "TEXT", "postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE orders (ordered_on DATE, placed_at %s)", typ)); err != nil {
				t.Fatal(err)
			}
			for from := 0; from < n; from += 500 {
				var vals []string
				for _, o := range orders[from:min(from+500, n)] {
					vals = append(vals, fmt.Sprintf("('%s', '%s')", o.day.Format(time.DateOnly), o.placed.Format(time.DateTime)))
				}
				if _, err := db.Exec("INSERT INTO orders (ordered_on, placed_at) VALUES " + strings.Join(vals, ", ")); err != nil {
					t.Fatal(err)
				}
			}
			conn, _ := doraSession(t, b, dsn, fmt.Sprintf(`
  - name: orders
    columns:
      - {name: ordered_on, type: date, lower: %s, upper: %s}
      - {name: placed_at, type: timestamp, lower: "%s 00:00:00", upper: "%s 00:00:00"}
  - name: recent_orders
    source: orders
    columns:
      - {name: placed_at, type: timestamp, lower: "%s", upper: "%s"}
`, lower.Format(time.DateOnly), upper.Format(time.DateOnly), lower.Format(time.DateOnly), upper.Format(time.DateOnly),
				recentFrom.Format(time.DateTime), recentTo.Format(time.DateTime)))
			for _, c := range checks {
				var got float64
				if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM orders WHERE "+c.where).Scan(&got); err != nil {
					t.Fatalf("WHERE %s: %v", c.where, err)
				}
				if math.Abs(got-c.truth) > 3 {
					t.Errorf("WHERE %s: COUNT(*) = %g, truth %g", c.where, got, c.truth)
				}
			}
			// Orders per hour of the last days, as Metabase groups by hour:
			// every hour of the bounds (empty ones included), labelled as a
			// DATETIME at the hour, each count within 3 of its truth.
			rs, err := conn.QueryContext(t.Context(), "SELECT str_to_date(date_format(placed_at, '%Y-%m-%d %H'), '%Y-%m-%d %H') AS h, COUNT(*) "+
				"FROM recent_orders GROUP BY str_to_date(date_format(placed_at, '%Y-%m-%d %H'), '%Y-%m-%d %H') ORDER BY h")
			if err != nil {
				t.Fatal(err)
			}
			cts, err := rs.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			if typ := cts[0].DatabaseTypeName(); typ != "DATETIME" {
				t.Errorf("the hour key has type %s, want DATETIME", typ)
			}
			var rows int
			for rs.Next() {
				var label string
				var got float64
				if err := rs.Scan(&label, &got); err != nil {
					t.Fatal(err)
				}
				rows++
				h, err := time.Parse(time.DateTime, strings.Replace(strings.TrimSuffix(label, "Z"), "T", " ", 1))
				if err != nil {
					t.Fatalf("hour label %q: %v", label, err)
				}
				if math.Abs(got-float64(perHour[h])) > 3 {
					t.Errorf("hour %s: %g orders, truth %d", label, got, perHour[h])
				}
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			rs.Close()
			if want := int(recentTo.Sub(recentFrom).Hours()) + 1; rows != want {
				t.Errorf("%d hours, want every hour of the bounds, %d", rows, want)
			}
		})
	}
}

// TestExpressionBucketsThroughProxy groups demo.Visits by buckets of a row
// expression, the whole years since 2018 of the visit date
// (FLOOR(TIMESTAMPDIFF(MONTH, '2018-01-01', visit_date) / 12)), through the
// real proxy on SQLite, PostgreSQL and MariaDB: every bucket of the
// expression's derived bounds is answered (0 to 6, 2018 empty), each
// count within 5 of the truth at ε = 40 and each MEDIAN(DATEDIFF(...)) a
// day of its year; on the person-level table (at most 5 visits a person,
// 4 groups) every bucket is answered too, and no count exceeds the truth
// by more than the noise; WHERE DATEDIFF(visit_date, '2018-01-01') >= 1500
// counts near the truth on both.
func TestExpressionBucketsThroughProxy(t *testing.T) {
	rows := demo.Visits(datesSeed)
	perYear := map[int]float64{}
	for _, r := range rows {
		y, _ := strconv.Atoi(r.VisitDate[:4])
		perYear[y-2018]++
	}
	var truthLate float64
	for _, r := range rows {
		if r.VisitDate >= "2022-02-09" { // 1500 days after 2018-01-01
			truthLate++
		}
	}
	const q = "SELECT FLOOR(TIMESTAMPDIFF(MONTH, '2018-01-01', visit_date) / 12) AS y, COUNT(*), MEDIAN(DATEDIFF(visit_date, '2018-01-01')) FROM %s GROUP BY y ORDER BY y"
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			conn, _ := visitsSession(t, b, rows, visitDateTables("", ""))
			for _, table := range []string{"visits", "visits_units"} {
				rs, err := conn.QueryContext(t.Context(), fmt.Sprintf(q, table))
				if err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				var years []int
				for rs.Next() {
					var y int
					var n, median float64
					if err := rs.Scan(&y, &n, &median); err != nil {
						t.Fatal(err)
					}
					years = append(years, y)
					switch {
					case table == "visits" && math.Abs(n-perYear[y]) > 5:
						t.Errorf("%s year %d: COUNT(*) = %g, truth %g", table, y, n, perYear[y])
					case n > perYear[y]+50:
						t.Errorf("%s year %d: COUNT(*) = %g, above the truth %g", table, y, n, perYear[y])
					}
					// Days since 2018-01-01 of the year y: [365y, 365y + 366].
					if perYear[y] > 100 && (median < float64(365*y) || median > float64(365*y+367)) {
						t.Errorf("%s year %d: MEDIAN of the days since 2018 = %g, not a day of that year", table, y, median)
					}
				}
				if err := rs.Err(); err != nil {
					t.Fatal(err)
				}
				rs.Close()
				if fmt.Sprint(years) != "[0 1 2 3 4 5 6]" {
					t.Errorf("%s: buckets %v, want every one of the bounds, 0 to 6", table, years)
				}
				// A condition on a row expression, on both tables.
				var late float64
				if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table+" WHERE DATEDIFF(visit_date, '2018-01-01') >= 1500").Scan(&late); err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				if table == "visits" && math.Abs(late-truthLate) > 5 || late > truthLate+50 {
					t.Errorf("%s: %g visits 1500 days or more after 2018-01-01, truth %g", table, late, truthLate)
				}
			}
		})
	}
}
