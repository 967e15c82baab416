package main

import (
	"math"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestSetTimeZoneRefusesUnknownZones sets time_zone through the real
// proxy with go-sql-driver: a value private statements could not read as
// a zone (an unknown name, NULL, ”, 'Local', an offset outside
// [-13:59, +14:00]) is refused at SET with MySQL's 1298 (HY000) "Unknown
// or incorrect time zone: '…'", in each of SET's spellings, and the
// session keeps its zone; '+5:00' is taken as MySQL takes it, shown as
// '+05:00', and NOW() reads it both in the session's SELECT NOW() and in
// a private statement.
func TestSetTimeZoneRefusesUnknownZones(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	direct := testdb.Open(t, "mysql", dsn)
	if _, err := direct.Exec("CREATE TABLE events (ts DATETIME)"); err != nil {
		t.Fatal(err)
	}
	_, db := startCarolProxy(t, "mysql", dsn, "{default_epsilon: 1, max_epsilon: 5}", "epsilon: 100, delta: 1.0e-5",
		`  - name: events
    columns:
      - {name: ts, type: timestamp, lower: "2000-01-01 00:00:00", upper: "2100-01-01 00:00:00"}
`)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	zone := func() string {
		t.Helper()
		var z string
		if err := conn.QueryRowContext(t.Context(), "SELECT @@time_zone").Scan(&z); err != nil {
			t.Fatal(err)
		}
		return z
	}
	if _, err := conn.ExecContext(t.Context(), "SET time_zone = 'Europe/Paris'"); err != nil {
		t.Fatal(err)
	}
	for q, shown := range map[string]string{
		"SET time_zone = 'Mars/Olympus'":         "Mars/Olympus",
		"SET time_zone = NULL":                   "NULL",
		"SET time_zone = ''":                     "",
		"SET time_zone = 'Local'":                "Local",
		"SET @@session.time_zone = '+14:30'":     "+14:30",
		"SET SESSION time_zone = '-14:00'":       "-14:00",
		"SET time_zone = 'Mars/Olympus', @x = 1": "Mars/Olympus",
	} {
		_, err := conn.ExecContext(t.Context(), q)
		if code := mysqlCode(err); code != 1298 || err.Error() != "Error 1298 (HY000): Unknown or incorrect time zone: '"+shown+"'" {
			t.Errorf("%s: %v, want Error 1298 (HY000): Unknown or incorrect time zone: '%s'", q, err, shown)
		}
		if z := zone(); z != "Europe/Paris" {
			t.Errorf("after %s: @@time_zone %q, want the old Europe/Paris", q, z)
		}
	}

	if _, err := conn.ExecContext(t.Context(), "SET time_zone = '+5:00'"); err != nil {
		t.Fatal(err)
	}
	if z := zone(); z != "+05:00" {
		t.Errorf("SET time_zone = '+5:00': @@time_zone %q, want +05:00", z)
	}
	var now string
	if err := conn.QueryRowContext(t.Context(), "SELECT NOW()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	if shown, err := time.Parse(time.DateTime, now); err != nil || math.Abs(shown.Sub(time.Now().UTC().Add(5*time.Hour)).Seconds()) > 5 {
		t.Errorf("SELECT NOW() in +5:00 gave %q (%v), want UTC + 5 h", now, err)
	}
	var n float64
	if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM events WHERE ts >= NOW() - INTERVAL 1 HOUR").Scan(&n); err != nil {
		t.Errorf("a private statement reading NOW() in +5:00: %v", err)
	}
}
