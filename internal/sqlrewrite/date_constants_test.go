package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRelativeDatesInTheBackendsZone checks that CURDATE() and NOW() are
// the proxy's clock read in backend.time_zone (an offset, a name with
// daylight saving time, UTC by default; refused with "server", whose zone
// the proxy cannot know), and MySQL's month arithmetic at the ends of
// months, on hand-checked instants.
func TestRelativeDatesInTheBackendsZone(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		zone, now, where, want string
	}{
		// 2024-03-31 23:30 UTC is already April 1st at +14:00.
		{"", "2024-03-31 23:30:00", "day >= CURDATE()", "where day [2024-03-31, inf)"},
		{"+14:00", "2024-03-31 23:30:00", "day >= CURDATE()", "where day [2024-04-01, inf)"},
		{"-05:30", "2024-03-31 02:00:00", "at < NOW()", "where at (-inf, 2024-03-30 20:30:00)"},
		// New York is at UTC−4 in July (daylight saving) and UTC−5 in January.
		{"America/New_York", "2024-07-01 02:00:00", "day = CURDATE()", "where day [2024-06-30, 2024-06-30]"},
		{"America/New_York", "2024-01-01 02:00:00", "at >= NOW() - INTERVAL 1 HOUR", "where at [2023-12-31 20:00:00, inf)"},
		// FROM_UNIXTIME reads a Unix time in the zone, as MySQL's session does.
		{"+14:00", "2024-03-31 23:30:00", "at >= FROM_UNIXTIME(1704067200)", "where at [2024-01-01 14:00:00, inf)"},
		// UTC_DATE() ignores the zone.
		{"+14:00", "2024-03-31 23:30:00", "day >= UTC_DATE()", "where day [2024-03-31, inf)"},
		// Months: the day clamps to the month's end; back and forth across years.
		{"", "2024-01-31 12:00:00", "day >= CURDATE() + INTERVAL 1 MONTH", "where day [2024-02-29, inf)"},
		{"", "2023-01-31 12:00:00", "day >= DATE_ADD(CURDATE(), INTERVAL 1 MONTH)", "where day [2023-02-28, inf)"},
		{"", "2024-02-29 12:00:00", "day >= CURDATE() - INTERVAL 1 YEAR", "where day [2023-02-28, inf)"},
		{"", "2024-01-15 12:00:00", "day >= CURDATE() - INTERVAL 2 QUARTER", "where day [2023-07-15, inf)"},
		{"", "2024-01-15 12:00:00", "day >= ADDDATE(CURDATE(), -15)", "where day [2023-12-31, inf)"},
		{"", "2024-01-15 12:00:00", "at >= SUBDATE(NOW(3), INTERVAL 2 WEEK)", "where at [2024-01-01 12:00:00, inf)"},
		// Compound units, as MariaDB computes them: the numbers fill the
		// fields from the smallest, a leading '-' negates them all.
		{"", "2024-03-01 00:00:00", "at >= NOW() - INTERVAL '1 2' DAY_HOUR", "where at [2024-02-28 22:00:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() - INTERVAL 1 DAY_HOUR", "where at [2024-02-29 23:00:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '-1 2' DAY_HOUR", "where at [2024-02-28 22:00:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '1 -2' DAY_HOUR", "where at [2024-03-02 02:00:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= DATE_ADD(NOW(), INTERVAL 1.5 DAY_HOUR)", "where at [2024-03-02 05:00:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '1 2:3:4' DAY_SECOND", "where at [2024-03-02 02:03:04, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '2:3' DAY_SECOND", "where at [2024-03-01 00:02:03, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '1:30' HOUR_MINUTE", "where at [2024-03-01 01:30:00, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '1 99' DAY_HOUR", "where at [2024-03-06 03:00:00, inf)"},
		{"", "2024-01-31 12:00:00", "day >= CURDATE() + INTERVAL '1-1' YEAR_MONTH", "where day [2025-02-28, inf)"},
		// A date shifted by hours is a timestamp: midnight of the next day.
		{"", "2024-03-01 12:00:00", "day >= CURDATE() + INTERVAL '1 1' DAY_HOUR", "where day [2024-03-03, inf)"},
		{"", "2024-03-01 00:00:00", "at >= NOW() + INTERVAL '1 2 3' DAY_HOUR", "error: it takes one to 2 numbers"},
		// Beyond 292 years a time.Duration wraps around (to 1707 for these).
		{"", "2024-01-15 12:00:00", "day < DATE '2000-01-01' + INTERVAL 106752 DAY", "where day (-inf, 2292-04-11)"},
		{"", "2024-01-15 12:00:00", "at < TIMESTAMP '2000-01-01 00:00:00' + INTERVAL '106752 0' DAY_HOUR", "where at (-inf, 2292-04-11 00:00:00)"},
		{"", "2024-01-15 12:00:00", "day < DATE '2000-01-01' + INTERVAL 10000000 DAY", "error: outside the years 1000 to 9999"},
		{"server", "2024-01-15 12:00:00", "day >= CURDATE()", "error: backend.time_zone is server"},
		{"Mars/Olympus", "2024-01-15 12:00:00", "day >= CURDATE()", "error: backend.time_zone \"Mars/Olympus\" is not in the proxy's time zone database"},
	} {
		cat := &catalog.Config{Backend: catalog.Database{TimeZone: c.zone}, Tables: []catalog.Table{{Name: "events", Source: "events", Columns: []catalog.Column{
			dated(catalog.Date, "day", "2015-01-01", "2024-12-31"),
			dated(catalog.Timestamp, "at", "2015-01-01 00:00:00", "2024-12-31 23:59:59"),
		}}}}
		p := sqlrewrite.NewParser(cat)
		now := at(c.now)
		p.SetNow(func() time.Time { return now })
		st, err := p.Parse("SELECT COUNT(*) FROM events WHERE " + c.where)
		var got string
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = strings.TrimSpace(formatStatement(st))
			got = got[strings.Index(got, "where "):]
		}
		if w, isErr := strings.CutPrefix(c.want, "error: "); isErr && !strings.Contains(got, w) || !isErr && !strings.HasPrefix(got, c.want) {
			t.Errorf("time_zone %q at %s UTC: WHERE %s gives %q, want %q", c.zone, c.now, c.where, got, c.want)
		}
	}
}

// TestCompoundIntervalsAgreeWithMariaDB shifts 300 random timestamps by
// random compound intervals (one to four numbers, any separators, a
// leading '-' or not, every compound unit but the MICROSECOND ones) and
// checks that the bound dpproxy reads from WHERE at >= 'ts' + INTERVAL v
// unit is the timestamp MariaDB computes for the same expression, or that
// both refuse it (MariaDB's NULL).
func TestCompoundIntervalsAgreeWithMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "events", Source: "events", Columns: []catalog.Column{
		dated(catalog.Timestamp, "at", "1001-01-01 00:00:00", "9998-12-31 23:59:59"),
	}}}}
	p := sqlrewrite.NewParser(cat)
	units := []string{"YEAR_MONTH", "DAY_HOUR", "DAY_MINUTE", "DAY_SECOND", "HOUR_MINUTE", "HOUR_SECOND", "MINUTE_SECOND"}
	rng := rand.New(rand.NewPCG(5, 8))
	for range 300 {
		base := time.Date(1990+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(31), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC).Format(time.DateTime)
		unit := units[rng.IntN(len(units))]
		parts := make([]string, 1+rng.IntN(4))
		for i := range parts {
			parts[i] = strconv.Itoa(rng.IntN([]int{13, 70, 400}[rng.IntN(3)]))
		}
		v := parts[0]
		for _, part := range parts[1:] {
			v += []string{" ", ":", "-", ".", "  "}[rng.IntN(5)] + part
		}
		if rng.IntN(3) == 0 {
			v = "-" + v
		}
		op := []string{"+", "-"}[rng.IntN(2)]
		expr := fmt.Sprintf("'%s' %s INTERVAL '%s' %s", base, op, v, unit)
		var want sql.NullString
		if err := db.QueryRow("SELECT CAST(" + expr + " AS DATETIME)").Scan(&want); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		st, err := p.Parse("SELECT COUNT(*) FROM events WHERE at >= " + expr)
		switch {
		case err != nil && want.Valid:
			t.Errorf("%s: refused (%v), MariaDB computes %s", expr, err, want.String)
		case err == nil && !want.Valid:
			t.Errorf("%s: answered, MariaDB's value is NULL", expr)
		case err == nil:
			got := strings.TrimSpace(formatStatement(st))
			if w := "where at [" + want.String + ", inf)"; !strings.Contains(got, w) {
				t.Errorf("%s: %q, want %q", expr, got[strings.Index(got, "where "):], w)
			}
		}
	}
}

// TestRelativeDatesInTheSessionsZone checks that CURDATE(), NOW() and
// FROM_UNIXTIME read the session's time_zone when SET gave it one (an
// offset as MySQL takes it, a name with daylight saving time), the
// backend's with 'SYSTEM', and that a statement naming a column stored
// with a time zone (or of a type not known yet) is refused while the
// session's zone differs from the backend's, as is UNIX_TIMESTAMP(col)
// outside UTC, before anything is read.
func TestRelativeDatesInTheSessionsZone(t *testing.T) {
	now, err := time.Parse(time.DateTime, "2024-03-31 23:30:00")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		backend, session string
		zoned            bool // "at" has a time zone in the backend; "day" never has
		unknown          bool // the columns' backend types are not known
		where, want      string
	}{
		{"", "+05:00", false, false, "at >= NOW() - INTERVAL 3 HOUR", "where at [2024-04-01 01:30:00, inf)"},
		{"", "+05:00", false, false, "day >= CURDATE()", "where day [2024-04-01, inf)"},
		{"", "+5:30", false, false, "at < NOW()", "where at (-inf, 2024-04-01 05:00:00)"},
		{"", "-13:59", false, false, "at < NOW()", "where at (-inf, 2024-03-31 09:31:00)"},
		{"", "SYSTEM", false, false, "at < NOW()", "where at (-inf, 2024-03-31 23:30:00)"},
		{"", "system", false, false, "at < NOW()", "where at (-inf, 2024-03-31 23:30:00)"},
		{"+02:00", "SYSTEM", false, false, "at < LOCALTIMESTAMP", "where at (-inf, 2024-04-01 01:30:00)"},
		{"+02:00", "", false, false, "at < CURRENT_TIMESTAMP()", "where at (-inf, 2024-04-01 01:30:00)"},
		// New York is at UTC−4 on March 31st (daylight saving).
		{"", "America/New_York", false, false, "at < SYSDATE()", "where at (-inf, 2024-03-31 19:30:00)"},
		{"+02:00", "UTC", false, false, "day = CURRENT_DATE", "where day [2024-03-31, 2024-03-31]"},
		{"", "+05:00", false, false, "at >= FROM_UNIXTIME(1704067200)", "where at [2024-01-01 05:00:00, inf)"},
		{"", "+05:00", false, false, "day >= UTC_DATE() AND at < UTC_TIMESTAMP()", "where day [2024-03-31, inf)\nwhere at (-inf, 2024-03-31 23:30:00)"},
		// The session knows its zone where the backend's is the server's.
		{"server", "+01:00", false, false, "at < NOW()", "where at (-inf, 2024-04-01 00:30:00)"},
		{"server", "SYSTEM", false, false, "at < NOW()", "error: backend.time_zone is server"},
		{"", "+14:01", false, false, "at < NOW()", "error: the session's time_zone '+14:01' is no zone dpproxy knows"},
		{"", "Mars/Olympus", false, false, "day >= CURDATE()", "error: the session's time_zone 'Mars/Olympus' is no zone dpproxy knows"},
		// A column with a time zone is read in backend.time_zone: refused
		// in another session zone, whatever the statement compares it with.
		{"", "+05:00", true, false, "at >= NOW() - INTERVAL 3 HOUR", "error: not supported: column at, which the backend stores with a time zone"},
		{"", "+05:00", true, false, "at >= '2024-01-01'", "error: not supported: column at"},
		{"", "+05:00", false, true, "at >= '2024-01-01'", "error: not supported: column at, whose backend type dpproxy has not read yet"},
		{"Europe/Paris", "+01:00", true, false, "at >= NOW()", "error: not supported: column at"},
		{"server", "+00:00", true, false, "at >= NOW()", "error: not supported: column at"},
		// ... but not in the backend's zone however spelled, nor where the
		// statement names only columns without one.
		{"", "+00:00", true, false, "at >= NOW() - INTERVAL 3 HOUR", "where at [2024-03-31 20:30:00, inf)"},
		{"+05:00", "+05:00", true, false, "at >= NOW()", "where at [2024-04-01 04:30:00, inf)"},
		{"Europe/Paris", "Europe/Paris", true, true, "at >= NOW()", "where at [2024-04-01 01:30:00, inf)"},
		{"", "+05:00", true, false, "day >= CURDATE()", "where day [2024-04-01, inf)"},
		// UNIX_TIMESTAMP of a wall-clock value is read in the session's zone.
		{"", "+05:00", false, false, "UNIX_TIMESTAMP(at) DIV 86400 > 0", "error: not supported: UNIX_TIMESTAMP(at) with the session's time_zone '+05:00'"},
		{"", "+00:00", false, false, "UNIX_TIMESTAMP(at) DIV 86400 > 0", "where"},
	} {
		cat := &catalog.Config{Backend: catalog.Database{TimeZone: c.backend}, Tables: []catalog.Table{{Name: "events", Source: "events", Columns: []catalog.Column{
			dated(catalog.Date, "day", "2015-01-01", "2024-12-31"),
			dated(catalog.Timestamp, "at", "2015-01-01 00:00:00", "2024-12-31 23:59:59"),
		}}}}
		p := sqlrewrite.NewParser(cat)
		p.SetNow(func() time.Time { return now })
		p.SetSessionTimeZone(c.session)
		if !c.unknown {
			zones := &catalog.ColumnZones{}
			zones.Set("events", "day", false)
			zones.Set("events", "AT", c.zoned)
			p.SetColumnZones(zones)
		}
		st, err := p.Parse("SELECT COUNT(*) FROM events WHERE " + c.where)
		var got string
		if err != nil {
			if dperr.KindOf(err) != dperr.Unsupported {
				t.Errorf("backend %q, session %q: WHERE %s: %v is not a 1235 refusal", c.backend, c.session, c.where, err)
			}
			got = "error: " + err.Error()
		} else {
			got = strings.TrimSpace(formatStatement(st))
			got = got[strings.Index(got, "where "):]
		}
		if w, isErr := strings.CutPrefix(c.want, "error: "); isErr && !strings.Contains(got, w) || !isErr && !strings.HasPrefix(got, c.want) {
			t.Errorf("backend %q, session %q: WHERE %s gives %q, want %q", c.backend, c.session, c.where, got, c.want)
		}
	}
}
