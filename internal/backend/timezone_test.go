package backend

import (
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSessionTimeZone opens real PostgreSQL and MariaDB pools with each
// kind of configured time zone and reads the session's zone and a stored
// timestamptz / TIMESTAMP as a wall-clock time: UTC by default, the
// configured zone or offset (east of UTC positive, on PostgreSQL too), the server's own with "server", and the
// DSN's own zone whenever the DSN sets one.
func TestSessionTimeZone(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := testdb.PostgresDSN(t)
		setup := testdb.Open(t, "postgres", dsn)
		if _, err := setup.Exec("CREATE TABLE tz (at TIMESTAMPTZ); INSERT INTO tz VALUES ('2024-12-31 23:30:00+00')"); err != nil {
			t.Fatal(err)
		}
		var server string
		if err := setup.QueryRow("SELECT current_setting('TimeZone')").Scan(&server); err != nil {
			t.Fatal(err)
		}
		sep := "&"
		if !strings.Contains(dsn, "?") {
			sep = "?"
		}
		if !strings.HasPrefix(dsn, "postgres") {
			sep = " "
		}
		for _, c := range []struct{ dsn, zone, want, wall string }{
			{dsn, "", "UTC", "2024-12-31 23:30:00"},
			{dsn, "Asia/Tokyo", "Asia/Tokyo", "2025-01-01 08:30:00"},
			// Offsets east of UTC are positive, as MySQL counts, not as
			// PostgreSQL reads a bare "+12:00" (POSIX: twelve hours west).
			{dsn, "+12:00", "<+12:00>-12:00", "2025-01-01 11:30:00"},
			{dsn, "-05:30", "<-05:30>+05:30", "2024-12-31 18:00:00"},
			{dsn, "+5:30", "<+05:30>-05:30", "2025-01-01 05:00:00"},
			{dsn, ServerTimeZone, server, ""},
			{dsn + sep + "timezone=America/New_York", "", "America/New_York", "2024-12-31 18:30:00"},
		} {
			db, err := OpenDB("postgres", c.dsn, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			var got, wall string
			err = db.QueryRow("SELECT current_setting('TimeZone'), to_char(CAST(at AS TIMESTAMP), 'YYYY-MM-DD HH24:MI:SS') FROM tz").Scan(&got, &wall)
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || c.wall != "" && wall != c.wall {
				t.Errorf("time_zone %q: session zone %s, timestamptz read as %s; want %s, %s", c.zone, got, wall, c.want, c.wall)
			}
		}
	})
	t.Run("mysql", func(t *testing.T) {
		dsn := testdb.MySQLDSN(t)
		setup := testdb.Open(t, "mysql", dsn)
		for _, q := range []string{"SET time_zone = '+00:00'", "CREATE TABLE tz (at TIMESTAMP NULL)", "INSERT INTO tz VALUES ('2024-12-31 23:30:00')"} {
			if _, err := setup.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		var server string
		if err := setup.QueryRow("SELECT @@global.time_zone").Scan(&server); err != nil {
			t.Fatal(err)
		}
		sep := "&"
		if !strings.Contains(dsn, "?") {
			sep = "?"
		}
		for _, c := range []struct{ dsn, zone, want, wall string }{
			{dsn, "", "+00:00", "2024-12-31 23:30:00"},
			{dsn, "UTC", "+00:00", "2024-12-31 23:30:00"},
			{dsn, "+09:00", "+09:00", "2025-01-01 08:30:00"},
			{dsn, "utc", "+00:00", "2024-12-31 23:30:00"},
			{dsn, "-05:30", "-05:30", "2024-12-31 18:00:00"},
			{dsn, "+5:30", "+05:30", "2025-01-01 05:00:00"},
			{dsn, ServerTimeZone, server, ""},
			{dsn + sep + "time_zone=%27-05:00%27", "+09:00", "-05:00", "2024-12-31 18:30:00"},
		} {
			db, err := OpenDB("mysql", c.dsn, c.zone)
			if err != nil {
				t.Fatal(err)
			}
			var got, wall string
			err = db.QueryRow("SELECT @@time_zone, DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s') FROM tz").Scan(&got, &wall)
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || c.wall != "" && wall != c.wall {
				t.Errorf("time_zone %q: session zone %s, TIMESTAMP read as %s; want %s, %s", c.zone, got, wall, c.want, c.wall)
			}
		}
	})
}
