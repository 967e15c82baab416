package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNowInTheSessionsZone serves events, one a minute for the last 12
// hours, with their time both as a wall-clock column in UTC (MariaDB
// DATETIME, PostgreSQL timestamp) and as a column with a time zone
// (TIMESTAMP, timestamptz), from MariaDB and PostgreSQL through the real
// proxy with a repeat window, and counts at ε = 40 (exact once rounded)
// through go-sql-driver the events of the last hours as Metabase asks
// with a report time zone: after SET @@session.time_zone = '+05:00',
// NOW() is five hours later on the wall clock, in the private statement
// as in the session's SELECT NOW(), so ts >= NOW() - INTERVAL 3 HOUR
// counts 0 (as MariaDB itself does on the DATETIME column) where it
// counted 180 in the default zone (the repeat window does not serve the
// earlier answer), and 8 hours back counts 180; SET SESSION time_zone
// to a named zone reads NOW() there, SET time_zone = 'SYSTEM' and
// DEFAULT go back to backend.time_zone (UTC). The column with a time
// zone, which dpproxy reads in backend.time_zone, is refused with 1235
// and nothing spent while the session's zone is another, and counted
// in the default zone.
func TestNowInTheSessionsZone(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Minute)
	const n = 720
	at := make([]time.Time, n)
	for i := range at {
		at[i] = start.Add(-time.Duration(i)*time.Minute + 30*time.Second)
	}
	// truth counts the rows at or after the wall-clock time back before
	// NOW() in zone, for every instant the statement may have read NOW()
	// at (between before and after): a one-element set but when a row's
	// minute passed meanwhile.
	truth := func(before, after time.Time, zone *time.Location, back time.Duration) map[float64]bool {
		counts := map[float64]bool{}
		for _, now := range []time.Time{before.Truncate(time.Second), after.Truncate(time.Second)} {
			wall := now.In(zone)
			from := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC).Add(-back)
			var c float64
			for _, a := range at {
				if !a.Before(from) {
					c++
				}
			}
			counts[c] = true
		}
		return counts
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	plus5 := time.FixedZone("+05:00", 5*3600)
	lower, upper := start.Add(-48*time.Hour).Format(time.DateTime), start.Add(48*time.Hour).Format(time.DateTime)
	for _, b := range visitsBackends {
		if b.driver == "sqlite" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			conn, err := direct.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			setup := []string{"CREATE TABLE events (ts TIMESTAMP, tz TIMESTAMPTZ)", "SET TIME ZONE 'UTC'"}
			if b.driver == "mysql" {
				setup = []string{"CREATE TABLE events (ts DATETIME, tz TIMESTAMP NULL)", "SET time_zone = '+00:00'"}
			}
			for _, q := range setup {
				if _, err := conn.ExecContext(t.Context(), q); err != nil {
					t.Fatal(err)
				}
			}
			var vals []string
			for _, a := range at {
				vals = append(vals, fmt.Sprintf("('%s', '%[1]s')", a.Format(time.DateTime)))
			}
			if _, err := conn.ExecContext(t.Context(), "INSERT INTO events (ts, tz) VALUES "+strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50, repeat_window: 1h}", "epsilon: 1000, delta: 1.0e-5", fmt.Sprintf(`  - name: events
    columns:
      - {name: ts, type: timestamp, lower: "%s", upper: "%s"}
      - {name: tz, type: timestamp, lower: "%[1]s", upper: "%[2]s"}
`, lower, upper))
			exec := func(q string) {
				t.Helper()
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			remaining := func() float64 {
				t.Helper()
				var r float64
				if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
					t.Fatal(err)
				}
				return r
			}
			count := func(zone *time.Location, column string, back time.Duration) {
				t.Helper()
				q := fmt.Sprintf("SELECT COUNT(*) FROM events WHERE %s >= NOW() - INTERVAL %d HOUR", column, int(back.Hours()))
				before := time.Now()
				var got float64
				if err := db.QueryRow(q).Scan(&got); err != nil {
					t.Fatalf("%s in %s: %v", q, zone, err)
				}
				if want := truth(before, time.Now(), zone, back); !want[math.Round(got)] {
					t.Errorf("%s in %s: %g, want one of %v", q, zone, got, want)
				}
			}
			exec("SET @dp_epsilon = 40")
			count(time.UTC, "ts", 3*time.Hour)
			count(time.UTC, "tz", 3*time.Hour)

			exec("SET @@session.time_zone = '+05:00'")
			// The session's own NOW() is five hours ahead of UTC's.
			var now string
			if err := db.QueryRow("SELECT NOW()").Scan(&now); err != nil {
				t.Fatal(err)
			}
			if shown, err := time.Parse(time.DateTime, now); err != nil || math.Abs(shown.Sub(time.Now().UTC().Add(5*time.Hour)).Seconds()) > 5 {
				t.Errorf("SELECT NOW() in +05:00 gave %q (%v), want UTC + 5 h", now, err)
			}
			count(plus5, "ts", 3*time.Hour)
			count(plus5, "ts", 8*time.Hour)
			if b.driver == "mysql" {
				// MariaDB itself, in the same zone, on the DATETIME column.
				if _, err := conn.ExecContext(t.Context(), "SET time_zone = '+05:00'"); err != nil {
					t.Fatal(err)
				}
				var own int
				if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM events WHERE ts >= NOW() - INTERVAL 3 HOUR").Scan(&own); err != nil || own != 0 {
					t.Errorf("MariaDB in +05:00 counts %d (%v); the proxy's answer is compared with 0", own, err)
				}
			}
			before := remaining()
			for _, q := range []string{
				"SELECT COUNT(*) FROM events WHERE tz >= NOW() - INTERVAL 3 HOUR",
				"SELECT COUNT(*) FROM events WHERE tz >= '2024-01-01 00:00:00'",
			} {
				var got float64
				err := db.QueryRow(q).Scan(&got)
				if code := mysqlCode(err); code != 1235 || !strings.Contains(err.Error(), "SET time_zone") {
					t.Errorf("%s in +05:00: got %v, want 1235 naming SET time_zone", q, err)
				}
			}
			if after := remaining(); after != before {
				t.Errorf("the refused statements spent: dp_remaining_epsilon() went from %g to %g", before, after)
			}

			exec("SET SESSION time_zone = 'America/New_York'")
			count(newYork, "ts", 3*time.Hour)
			exec("SET time_zone = 'SYSTEM'")
			count(time.UTC, "ts", 8*time.Hour)
			exec("SET time_zone = '+05:00'")
			exec("SET time_zone = DEFAULT")
			count(time.UTC, "tz", 8*time.Hour)
		})
	}
}
