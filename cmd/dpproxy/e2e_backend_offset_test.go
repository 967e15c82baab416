package main

import (
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// zonedEvents creates, through a direct connection to backend b, the
// table ev2 of n rows whose column tz, with a time zone (PostgreSQL
// timestamptz, MariaDB TIMESTAMP), is the backend's own now() less an
// hour, and returns the YAML of the table for the proxy's configuration.
func zonedEvents(t *testing.T, b visitsBackend, dsn string, n int) string {
	t.Helper()
	create, row := "CREATE TABLE ev2 (tz TIMESTAMPTZ)", "(now() - interval '1 hour')"
	if b.driver == "mysql" {
		create, row = "CREATE TABLE ev2 (tz TIMESTAMP NULL)", "(NOW() - INTERVAL 1 HOUR)"
	}
	direct := testdb.Open(t, b.driver, dsn)
	for _, q := range []string{create, "INSERT INTO ev2 (tz) VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	now := time.Now().UTC()
	return fmt.Sprintf("  - name: ev2\n    columns:\n      - {name: tz, type: timestamp, lower: %q, upper: %q}\n",
		now.Add(-48*time.Hour).Format(time.DateTime), now.Add(48*time.Hour).Format(time.DateTime))
}

// TestBackendTimeZoneOffset (an independent review's failing test):
// with backend.time_zone an offset, east of UTC positive as MySQL and
// the proxy's NOW() count, PostgreSQL and MariaDB read the column with a
// time zone in that same offset, so 100 rows written an hour ago are
// counted (ε = 40, exact once rounded) by tz >= NOW() - INTERVAL 3 HOUR
// and not by tz >= NOW() - INTERVAL 30 MINUTE, east and west of UTC. On
// PostgreSQL a bare '+12:00' is twelve hours west (POSIX): the first
// counted 0 there, the second 100 at '-05:30'.
func TestBackendTimeZoneOffset(t *testing.T) {
	for _, b := range visitsBackends {
		if b.driver == "sqlite" {
			continue // no column with a time zone, no session zone
		}
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			tables := zonedEvents(t, b, dsn, 100)
			for _, zone := range []string{"+12:00", "-05:30", "+5:30"} {
				t.Run(zone, func(t *testing.T) {
					dir := t.TempDir()
					config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: %s, dsn: %q, time_zone: %q", b.driver, dsn, zone),
						"{default_epsilon: 40, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", tables)
					db := startProxy(t, dir, nil, "--config", config).connect(t, "carol", "carol-pw")
					for _, c := range []struct {
						since string
						want  float64
					}{{"3 HOUR", 100}, {"30 MINUTE", 0}} {
						q := "SELECT COUNT(*) FROM ev2 WHERE tz >= NOW() - INTERVAL " + c.since
						var got float64
						if err := db.QueryRow(q).Scan(&got); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
						if math.Round(got) != c.want {
							t.Errorf("%s in %s: %g, want %g", q, zone, got, c.want)
						}
					}
				})
			}
		})
	}
}

// TestRepeatWindowKeyedByBackendZone (an independent review's failing
// test): a proxy in UTC answers a count of PostgreSQL timestamptz rows
// after a wall-clock time (0: the time is six hours ahead), then one on
// the same ledger, configured alike but for backend.time_zone '+12:00'
// (where that wall-clock time was six hours ago: 360 rows), answers
// afresh instead of repeating the first answer.
func TestRepeatWindowKeyedByBackendZone(t *testing.T) {
	b := visitsBackends[1]
	if b.driver != "postgres" {
		t.Fatal("visitsBackends[1] is not PostgreSQL")
	}
	dsn := b.dsn(t)
	tables := zonedEvents(t, b, dsn, 360)
	dir := t.TempDir()
	q := fmt.Sprintf("SELECT COUNT(*) FROM ev2 WHERE tz >= '%s'", time.Now().UTC().Add(6*time.Hour).Format(time.DateTime))
	for _, c := range []struct {
		zone string
		want float64
	}{{"", 0}, {"+12:00", 360}} {
		config := carolConfig(t, dir, "dpproxy.yaml", fmt.Sprintf("driver: postgres, dsn: %q, time_zone: %q", dsn, c.zone),
			"{default_epsilon: 40, max_epsilon: 50, repeat_window: 1h}", "epsilon: 1000, delta: 1.0e-5", tables)
		p := startProxy(t, dir, nil, "--config", config)
		conn, err := p.connect(t, "carol", "carol-pw").Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		if err := conn.QueryRowContext(t.Context(), q).Scan(&got); err != nil {
			t.Fatalf("%s in %q: %v", q, c.zone, err)
		}
		rows, err := conn.QueryContext(t.Context(), "SHOW WARNINGS")
		if err != nil {
			t.Fatal(err)
		}
		var notes []string
		for rows.Next() {
			var level, msg string
			var code int
			if err := rows.Scan(&level, &code, &msg); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, msg)
		}
		rows.Close()
		if math.Round(got) != c.want || strings.Contains(strings.Join(notes, "\n"), "repeated answer") {
			t.Errorf("%s in %q: %g (%s), want %g answered afresh", q, c.zone, got, notes, c.want)
		}
		conn.Close()
		p.stop(syscall.SIGTERM)
	}
}
