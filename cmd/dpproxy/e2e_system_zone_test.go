package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSystemZoneIsBackendZone starts the proxy binary with TZ=Asia/Tokyo
// in its environment and backend.time_zone UTC, then '+05:00': a session
// in the default zone ('SYSTEM', as Metabase and JDBC leave or SET it)
// reads NOW() and CURDATE() from the catalog engine in backend.time_zone,
// as its private statements do, whatever the host's zone;
// @@time_zone is SYSTEM and @@system_time_zone names backend.time_zone,
// as MySQL shows a server running in that zone. A count of the rows of
// the last hour (ε = 40, exact once rounded) over a SQLite DATETIME
// column, one row a minute for three hours of backend.time_zone's wall
// clock, agrees with that SELECT NOW(): 60 rows. With the host's zone as
// the system zone, SELECT NOW() was nine hours ahead of UTC.
func TestSystemZoneIsBackendZone(t *testing.T) {
	for _, c := range []struct {
		zone, system string
		loc          *time.Location
	}{
		{"UTC", "UTC", time.UTC},
		{"+05:00", "+05:00", time.FixedZone("+05:00", 5*3600)},
	} {
		t.Run(c.zone, func(t *testing.T) {
			dsn := testdb.SQLiteDSN(t)
			wall := func(at time.Time) time.Time {
				w := at.In(c.loc)
				return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
			}
			start := wall(time.Now()).Truncate(time.Minute)
			var rows []string
			for i := range 180 {
				rows = append(rows, fmt.Sprintf("('%s')", start.Add(-time.Duration(i)*time.Minute+30*time.Second).Format(time.DateTime)))
			}
			direct := testdb.Open(t, "sqlite", dsn)
			for _, q := range []string{"CREATE TABLE ev (ts TEXT)", "INSERT INTO ev (ts) VALUES " + strings.Join(rows, ", ")} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			dir := t.TempDir()
			config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: sqlite, dsn: %q, time_zone: %q", dsn, c.zone),
				"{default_epsilon: 40, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5",
				fmt.Sprintf("  - name: ev\n    columns:\n      - {name: ts, type: timestamp, lower: %q, upper: %q}\n",
					start.Add(-48*time.Hour).Format(time.DateTime), start.Add(48*time.Hour).Format(time.DateTime)))
			db := startProxy(t, dir, []string{"TZ=Asia/Tokyo"}, "--config", config).connect(t, "carol", "carol-pw")
			db.SetMaxOpenConns(1)

			var now, today, zone, system string
			before := time.Now()
			if err := db.QueryRow("SELECT NOW(), CURDATE(), @@time_zone, @@system_time_zone").Scan(&now, &today, &zone, &system); err != nil {
				t.Fatal(err)
			}
			got, err := time.Parse(time.DateTime, now)
			if err != nil {
				t.Fatal(err)
			}
			if lo, hi := wall(before).Add(-2*time.Second), wall(time.Now()).Add(2*time.Second); got.Before(lo) || got.After(hi) {
				t.Errorf("SELECT NOW() = %s, want between %s and %s (backend.time_zone %s)", now, lo.Format(time.DateTime), hi.Format(time.DateTime), c.zone)
			}
			if want := got.Format(time.DateOnly); today != want {
				t.Errorf("CURDATE() = %s, want %s", today, want)
			}
			if zone != "SYSTEM" || system != c.system {
				t.Errorf("@@time_zone, @@system_time_zone = %q, %q, want SYSTEM, %q", zone, system, c.system)
			}

			// The private statement reads NOW() at about the same
			// instant: rows are 30 s off the minute, so a second or two
			// later changes nothing.
			var count float64
			if err := db.QueryRow("SELECT COUNT(*) FROM ev WHERE ts >= NOW() - INTERVAL 1 HOUR").Scan(&count); err != nil {
				t.Fatal(err)
			}
			var want float64
			for _, r := range rows {
				ts, _ := time.Parse(time.DateTime, strings.Trim(r, "()'"))
				if !ts.Before(got.Add(-time.Hour)) {
					want++
				}
			}
			if math.Round(count) != want {
				t.Errorf("COUNT(*) of ts >= NOW() - INTERVAL 1 HOUR = %g, want %g as SELECT NOW() %s gives", count, want, now)
			}
		})
	}
}
