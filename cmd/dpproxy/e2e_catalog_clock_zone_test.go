package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestCatalogClockInSessionZone starts the proxy binary (TZ=Asia/Tokyo in
// its environment) with backend.time_zone '+05:00', then Europe/Berlin (a
// zone with summer time), and after SET time_zone to 'UTC', a named zone,
// '+00:00' and 'SYSTEM' asks the catalog engine through go-sql-driver for
// NOW() and its synonyms, CURDATE(), UTC_TIMESTAMP(),
// TIMEDIFF(NOW(), UTC_TIMESTAMP()) and UNIX_TIMESTAMP(NOW()) -
// UNIX_TIMESTAMP(): NOW() is the current time in the session's zone
// (backend.time_zone for 'SYSTEM'), the offset that zone's, the
// difference 0, and a private statement's NOW() (a count at ε = 40,
// exact once rounded, of the rows of the last hour of a DATETIME column,
// one a minute, 30 s off the minute) agrees with that SELECT NOW(). The
// engine's own NOW() was off by backend.time_zone's offset for a session
// zone given by name: at backend.time_zone '+05:00', SET time_zone =
// 'UTC' made NOW() five hours behind UTC_TIMESTAMP().
func TestCatalogClockInSessionZone(t *testing.T) {
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	plus5 := time.FixedZone("+05:00", 5*3600)
	// The rows cover every zone's last hours: a minute apart from 16
	// hours before the UTC wall clock to 6 hours after it.
	start := time.Now().UTC().Truncate(time.Minute).Add(6 * time.Hour)
	var rows []string
	var at []time.Time
	for i := range 22 * 60 {
		ts := start.Add(-time.Duration(i)*time.Minute + 30*time.Second)
		at = append(at, ts)
		rows = append(rows, fmt.Sprintf("('%s')", ts.Format(time.DateTime)))
	}
	for _, backend := range []struct {
		zone string
		loc  *time.Location
	}{
		{"+05:00", plus5},
		{"Europe/Berlin", berlin},
	} {
		t.Run(backend.zone, func(t *testing.T) {
			dsn := testdb.SQLiteDSN(t)
			direct := testdb.Open(t, "sqlite", dsn)
			for _, q := range []string{"CREATE TABLE ev (ts TEXT)", "INSERT INTO ev (ts) VALUES " + strings.Join(rows, ", ")} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatalf("%.100s: %v", q, err)
				}
			}
			dir := t.TempDir()
			config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: sqlite, dsn: %q, time_zone: %q", dsn, backend.zone),
				"{default_epsilon: 40, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5",
				fmt.Sprintf("  - name: ev\n    columns:\n      - {name: ts, type: timestamp, lower: %q, upper: %q}\n",
					start.Add(-48*time.Hour).Format(time.DateTime), start.Add(48*time.Hour).Format(time.DateTime)))
			db := startProxy(t, dir, []string{"TZ=Asia/Tokyo"}, "--config", config).connect(t, "carol", "carol-pw")
			db.SetMaxOpenConns(1)

			for _, session := range []struct {
				zone string
				loc  *time.Location
			}{
				{"UTC", time.UTC},
				{"America/New_York", newYork},
				{"Europe/Berlin", berlin},
				{"+00:00", time.UTC},
				{"SYSTEM", backend.loc},
			} {
				if _, err := db.Exec("SET time_zone = '" + session.zone + "'"); err != nil {
					t.Fatalf("SET time_zone = '%s': %v", session.zone, err)
				}
				wall := func(at time.Time) time.Time {
					w := at.In(session.loc)
					return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
				}
				var now, ts, local, sysdate, today, utc, diff, unixDiff string
				before := time.Now()
				if err := db.QueryRow("SELECT NOW(), CURRENT_TIMESTAMP, LOCALTIME, SYSDATE(), CURDATE(), UTC_TIMESTAMP(), TIMEDIFF(NOW(), UTC_TIMESTAMP()), UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP()").
					Scan(&now, &ts, &local, &sysdate, &today, &utc, &diff, &unixDiff); err != nil {
					t.Fatal(err)
				}
				after := time.Now()
				got, err := time.Parse(time.DateTime, now)
				if err != nil {
					t.Fatal(err)
				}
				if lo, hi := wall(before).Add(-2*time.Second), wall(after).Add(2*time.Second); got.Before(lo) || got.After(hi) {
					t.Errorf("time_zone '%s': SELECT NOW() = %s, want between %s and %s", session.zone, now, lo.Format(time.DateTime), hi.Format(time.DateTime))
				}
				if ts != now || local != now || math.Abs(mustParse(t, sysdate).Sub(got).Seconds()) > 2 {
					t.Errorf("time_zone '%s': CURRENT_TIMESTAMP, LOCALTIME, SYSDATE() = %s, %s, %s, want NOW() %s", session.zone, ts, local, sysdate, now)
				}
				if want := got.Format(time.DateOnly); today != want {
					t.Errorf("time_zone '%s': CURDATE() = %s, want %s", session.zone, today, want)
				}
				if u := mustParse(t, utc); math.Abs(u.Sub(time.Date(after.UTC().Year(), after.UTC().Month(), after.UTC().Day(), after.UTC().Hour(), after.UTC().Minute(), after.UTC().Second(), 0, time.UTC)).Seconds()) > 3 {
					t.Errorf("time_zone '%s': UTC_TIMESTAMP() = %s, want about %s", session.zone, utc, after.UTC().Format(time.DateTime))
				}
				_, offset := after.In(session.loc).Zone()
				sign := ""
				if offset < 0 {
					sign, offset = "-", -offset
				}
				if want := fmt.Sprintf("%s%02d:%02d:00", sign, offset/3600, offset%3600/60); diff != want {
					t.Errorf("time_zone '%s': TIMEDIFF(NOW(), UTC_TIMESTAMP()) = %s, want %s", session.zone, diff, want)
				}
				if unixDiff != "0" {
					t.Errorf("time_zone '%s': UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP() = %s, want 0", session.zone, unixDiff)
				}

				// A FROM-less SELECT that reads a dpproxy setting is
				// answered by the session, its NOW() the engine's.
				var withSetting string
				var eps float64
				if err := db.QueryRow("SELECT NOW(), @dp_epsilon").Scan(&withSetting, &eps); err != nil {
					t.Fatal(err)
				}
				if math.Abs(mustParse(t, withSetting).Sub(got).Seconds()) > 2 {
					t.Errorf("time_zone '%s': SELECT NOW(), @dp_epsilon gave NOW() %s, want %s", session.zone, withSetting, now)
				}

				// A private statement reads NOW() at about the same
				// instant: rows are 30 s off the minute, so a second
				// or two later changes nothing.
				var count float64
				if err := db.QueryRow("SELECT COUNT(*) FROM ev WHERE ts >= NOW() - INTERVAL 1 HOUR").Scan(&count); err != nil {
					t.Fatalf("time_zone '%s': %v", session.zone, err)
				}
				var want float64
				for _, ts := range at {
					if !ts.Before(got.Add(-time.Hour)) {
						want++
					}
				}
				if math.Round(count) != want {
					t.Errorf("time_zone '%s': COUNT(*) of ts >= NOW() - INTERVAL 1 HOUR = %g, want %g as SELECT NOW() %s gives", session.zone, count, want, now)
				}
			}
		})
	}
}

// mustParse reads a DATETIME as go-sql-driver gives it without parseTime.
func mustParse(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
