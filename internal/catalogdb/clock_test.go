package catalogdb

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// With a system zone that is not UTC (dpproxy serve sets time.Local to
// backend.time_zone), every clock function reads the current time in the
// session's zone, whether SET named it or gave an offset: go-mysql-server's
// NOW() was off by the system zone's offset for a zone named ('UTC',
// 'America/New_York'), and CURDATE() read the system zone whatever the
// session's.
func TestClockFunctionsInSessionZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, system := range []*time.Location{berlin, time.FixedZone("+05:00", 5*3600)} {
		t.Run(system.String(), func(t *testing.T) {
			local := time.Local
			time.Local = system
			t.Cleanup(func() { time.Local = local })
			s := testEngine(t).Open("a", 1, nil)
			for _, c := range []struct {
				zone string
				loc  *time.Location
			}{
				{"'UTC'", time.UTC},
				{"'America/New_York'", newYork},
				{"'+00:00'", time.UTC},
				{"'-03:30'", time.FixedZone("", -(3*3600 + 1800))},
				{"'SYSTEM'", system},
			} {
				query(t, s, "SET time_zone = "+c.zone)
				before := time.Now()
				r := query(t, s, "SELECT NOW(), CURRENT_TIMESTAMP, LOCALTIME, LOCALTIMESTAMP(), SYSDATE(), NOW(6), CURDATE(), CURRENT_DATE, CURTIME(), CURTIME(3), UTC_TIMESTAMP(), UTC_DATE(), UTC_TIME(), "+
					"TIMEDIFF(NOW(), UTC_TIMESTAMP()), UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP(), UNIX_TIMESTAMP(NOW(6)) - UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) - TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW())")
				after := time.Now()
				row := make([]string, len(r.Rows[0]))
				for i, v := range r.Rows[0] {
					row[i] = fmt.Sprint(v)
					if tv, ok := v.(time.Time); ok {
						row[i] = tv.Format("2006-01-02 15:04:05.999999")
					}
				}
				wall := func(at time.Time, loc *time.Location) string { return at.In(loc).Format(time.DateTime) }
				for i, name := range []string{"NOW()", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP()", "SYSDATE()"} {
					if got := row[i]; got != wall(before, c.loc) && got != wall(after, c.loc) {
						t.Errorf("time_zone %s: %s = %s, want %s", c.zone, name, got, wall(after, c.loc))
					}
				}
				if !strings.HasPrefix(row[5], row[0]) {
					t.Errorf("time_zone %s: NOW(6) = %s, NOW() = %s", c.zone, row[5], row[0])
				}
				if got, want := row[6]+" "+row[7], row[0][:10]+" "+row[0][:10]; got != want {
					t.Errorf("time_zone %s: CURDATE(), CURRENT_DATE = %s, want %s", c.zone, got, want)
				}
				if got, want := row[8], row[0][11:]; got != want || !strings.HasPrefix(row[9], want+".") {
					t.Errorf("time_zone %s: CURTIME(), CURTIME(3) = %s, %s, want %s", c.zone, got, row[9], want)
				}
				if got := row[10]; got != wall(before, time.UTC) && got != wall(after, time.UTC) {
					t.Errorf("time_zone %s: UTC_TIMESTAMP() = %s, want %s", c.zone, got, wall(after, time.UTC))
				}
				if got, want := row[11]+" "+row[12], row[10]; got != want {
					t.Errorf("time_zone %s: UTC_DATE(), UTC_TIME() = %s, want %s", c.zone, got, want)
				}
				// 2024-07-03 09:46:40 UTC, in summer.
				summer := time.Unix(1720000000, 0).In(c.loc)
				r = query(t, s, "SELECT FROM_UNIXTIME(1720000000), FROM_UNIXTIME(1720000000, '%Y-%m-%d %H:%i:%s'), UNIX_TIMESTAMP(FROM_UNIXTIME(1720000000))")
				if got, want := fmt.Sprint(r.Rows[0][0], " ", r.Rows[0][1], " ", r.Rows[0][2]), summer.Format(time.DateTime)+" "+summer.Format(time.DateTime)+" 1720000000.000000"; got != want {
					t.Errorf("time_zone %s: FROM_UNIXTIME(1720000000), with a format, and its UNIX_TIMESTAMP = %s, want %s", c.zone, got, want)
				}
				_, offset := after.In(c.loc).Zone()
				sign := ""
				if offset < 0 {
					sign, offset = "-", -offset
				}
				if got, want := row[13], fmt.Sprintf("%s%02d:%02d:00", sign, offset/3600, offset%3600/60); got != want {
					t.Errorf("time_zone %s: TIMEDIFF(NOW(), UTC_TIMESTAMP()) = %s, want %s", c.zone, got, want)
				}
				if row[14] != "0" || row[15] != "0.000000" {
					t.Errorf("time_zone %s: UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP() = %s, UNIX_TIMESTAMP(NOW(6)) - UNIX_TIMESTAMP(UTC_TIMESTAMP(6)) - the offset = %s, want 0, 0.000000", c.zone, row[14], row[15])
				}
			}
		})
	}
}
