package catalogdb

import (
	"context"
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
				if got, want := fmt.Sprint(r.Rows[0][0], " ", r.Rows[0][1], " ", r.Rows[0][2]), summer.Format(time.DateTime)+" "+summer.Format(time.DateTime)+" 1720000000"; got != want {
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

// The clock functions announce and write the fraction of a second their
// precision asks for, as MariaDB 10.11 does: NOW(6), SYSDATE(6) and
// UTC_TIMESTAMP(6) always 26 characters (trailing zeros kept), NOW(2) two
// digits, CURTIME(3) and UTC_TIME(3) 11:42:21.252, each column's decimals
// the precision; FROM_UNIXTIME of an integer a DATETIME of no decimals;
// CAST(... AS DATETIME(6)) keeps its zeros. go-mysql-server dropped
// trailing zeros, announced 6 decimals for every DATETIME and none for a
// TIME, and wrote CURTIME(3) with 6 digits.
func TestClockFractionDigits(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	r := query(t, s, "SELECT NOW(6), SYSDATE(6), UTC_TIMESTAMP(6), NOW(2), NOW(3), NOW(), CURTIME(3), UTC_TIME(3), CURTIME(), FROM_UNIXTIME(1700000000), "+
		"CAST('2020-01-01 10:00:00.100000' AS DATETIME(6)), CAST('2020-01-01 10:00:00.1' AS DATETIME(3)), CAST('2020-01-01 10:00:00' AS DATETIME(2)), NOW() + INTERVAL 1 DAY, COALESCE(NOW(2), NULL)")
	for i, c := range []struct {
		name     string
		len      int
		decimals uint8
		typ      byte
	}{
		{"NOW(6)", 26, 6, 12}, {"SYSDATE(6)", 26, 6, 12}, {"UTC_TIMESTAMP(6)", 26, 6, 12}, {"NOW(2)", 22, 2, 12}, {"NOW(3)", 23, 3, 12}, {"NOW()", 19, 0, 12},
		{"CURTIME(3)", 12, 3, 11}, {"UTC_TIME(3)", 12, 3, 11}, {"CURTIME()", 8, 0, 11}, {"FROM_UNIXTIME(1700000000)", 19, 0, 12},
		{"CAST(... AS DATETIME(6))", 26, 6, 12}, {"CAST(... AS DATETIME(3))", 23, 3, 12}, {"CAST(... AS DATETIME(2))", 22, 2, 12},
		{"NOW() + INTERVAL 1 DAY", 19, 0, 12}, {"COALESCE(NOW(2), NULL)", 22, 2, 12},
	} {
		v, _ := r.Rows[0][i].(string)
		if len(v) != c.len || r.Columns[i].Decimals != c.decimals || r.Columns[i].Type != c.typ {
			t.Errorf("%s = %q (type %d, %d decimals), want %d characters, type %d, %d decimals", c.name, v, r.Columns[i].Type, r.Columns[i].Decimals, c.len, c.typ, c.decimals)
		}
	}
	for i, want := range map[int]string{9: "2023-11-14 22:13:20", 10: "2020-01-01 10:00:00.100000", 11: "2020-01-01 10:00:00.100", 12: "2020-01-01 10:00:00.00"} {
		if got := r.Rows[0][i]; got != want {
			t.Errorf("column %d = %v, want %s", i, got, want)
		}
	}
	if now6, now2, now := r.Rows[0][0].(string), r.Rows[0][3].(string), r.Rows[0][5].(string); !strings.HasPrefix(now6, now2) || !strings.HasPrefix(now6, now+".") {
		t.Errorf("NOW(6), NOW(2), NOW() = %s, %s, %s: not one reading", now6, now2, now)
	}
}

// A clock function's precision past 6 is MariaDB's 1426 (42000), naming
// the function as MariaDB does (go-mysql-server: 1105 "Too-big precision
// 7 for 'now'").
func TestClockPrecisionTooBig(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for q, name := range map[string]string{
		"SELECT NOW(7)": "current_timestamp", "SELECT LOCALTIME(7)": "current_timestamp", "SELECT CURRENT_TIMESTAMP(9)": "current_timestamp",
		"SELECT SYSDATE(7)": "sysdate", "SELECT CURTIME(9)": "curtime", "SELECT CURRENT_TIME(7)": "curtime", "SELECT UTC_TIME(7)": "utc_time",
		"SELECT UTC_TIMESTAMP(7)": "utc_timestamp",
	} {
		_, err := s.Query(context.Background(), q)
		want := &Error{Code: 1426, State: "42000", Msg: "Too big precision specified for '" + name + "'. Maximum is 6"}
		if e, ok := err.(*Error); !ok || *e != *want {
			t.Errorf("%s: %#v, want %#v", q, err, want)
		}
	}
}

// FROM_UNIXTIME(n) keeps n's fraction as MariaDB does, in the session's
// zone: a decimal's digits (at most 6, truncated), 6 for text or a float
// that has a fraction, none for an integer; go-mysql-server rounded n to
// whole seconds (FROM_UNIXTIME(1.5) was 00:00:02).
func TestFromUnixtimeFraction(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	query(t, s, "SET time_zone = '+01:00'")
	r := query(t, s, "SELECT FROM_UNIXTIME(1.5), FROM_UNIXTIME(1.50), FROM_UNIXTIME(1.999999999), FROM_UNIXTIME('1.5'), FROM_UNIXTIME('1'), FROM_UNIXTIME(1.5e0), FROM_UNIXTIME(1e0), FROM_UNIXTIME(1), FROM_UNIXTIME(-1.5), FROM_UNIXTIME(1.5, '%s.%f')")
	want := []any{"1970-01-01 01:00:01.5", "1970-01-01 01:00:01.50", "1970-01-01 01:00:01.999999", "1970-01-01 01:00:01.500000", "1970-01-01 01:00:01",
		"1970-01-01 01:00:01.500000", "1970-01-01 01:00:01", "1970-01-01 01:00:01", nil, "01.500000"}
	if got := r.Rows[0]; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("FROM_UNIXTIME: %q, want %q", got, want)
	}
	if got := fmt.Sprint(r.Columns[0].Decimals, r.Columns[1].Decimals, r.Columns[3].Decimals, r.Columns[7].Decimals); got != "1 2 6 0" {
		t.Errorf("decimals announced: %s, want 1 2 6 0", got)
	}
}

// FROM_UNIXTIME of text reads the number it starts with, as MariaDB reads
// a string as a DECIMAL ('5abc' is 5 and 'abc' 0, each with warning
// 1292; they failed with 1105 "number has no digits"), and past
// 2038-01-19 03:14:07.999999 UTC, MariaDB 10.11's last second, it is
// NULL (2147483648 was 2038-01-19 03:14:08), as are an exponent or a
// float far past it; each answer is MariaDB's.
func TestFromUnixtimeTextAndRange(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	query(t, s, "SET time_zone = '+00:00'")
	for _, c := range []struct {
		q        string
		want     []any
		warnings int
	}{
		{"SELECT FROM_UNIXTIME('abc'), FROM_UNIXTIME('5abc'), FROM_UNIXTIME('')", []any{"1970-01-01 00:00:00", "1970-01-01 00:00:05", "1970-01-01 00:00:00"}, 3},
		{"SELECT FROM_UNIXTIME(' 7'), FROM_UNIXTIME('1e3'), FROM_UNIXTIME('-1'), FROM_UNIXTIME('3.'), FROM_UNIXTIME('.5'), FROM_UNIXTIME('-.5')",
			[]any{"1970-01-01 00:00:07", "1970-01-01 00:16:40", nil, "1970-01-01 00:00:03", "1970-01-01 00:00:00.500000", nil}, 0},
		{"SELECT FROM_UNIXTIME('+2.5e1x'), FROM_UNIXTIME('1e-999999999'), FROM_UNIXTIME('1e999999999'), FROM_UNIXTIME('0e999999999')",
			[]any{"1970-01-01 00:00:25", "1970-01-01 00:00:00", nil, "1970-01-01 00:00:00"}, 1},
		{"SELECT FROM_UNIXTIME(2147483647), FROM_UNIXTIME(2147483648), FROM_UNIXTIME(2147483647.9999999), FROM_UNIXTIME('2147483647.999999'), FROM_UNIXTIME(2147483647.5e0)",
			[]any{"2038-01-19 03:14:07", nil, "2038-01-19 03:14:07.999999", "2038-01-19 03:14:07.999999", "2038-01-19 03:14:07.500000"}, 0},
		{"SELECT FROM_UNIXTIME(2147483648.5), FROM_UNIXTIME('2147483648'), FROM_UNIXTIME(1e300), FROM_UNIXTIME(99999999999999999999)", []any{nil, nil, nil, nil}, 0},
	} {
		r := query(t, s, c.q)
		if got := r.Rows[0]; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%s: %q, want %q", c.q, got, c.want)
		}
		n := 0
		for _, w := range r.Warnings {
			if w.Code == 1292 && strings.HasPrefix(w.Message, "Truncated incorrect DECIMAL value: '") {
				n++
			}
		}
		if n != c.warnings || len(r.Warnings) != c.warnings {
			t.Errorf("%s: warnings %v, want %d of 1292", c.q, r.Warnings, c.warnings)
		}
	}
}

// A DATETIME(p) of p > 0 in arithmetic with a number is the DECIMAL
// YYYYMMDDhhmmss.f of p digits, as in MariaDB (FROM_UNIXTIME(1.5) + 0 was
// 19700101000001, the fraction dropped); each answer is MariaDB's, and
// d + INTERVAL n DAY stays date arithmetic.
func TestFractionalDatetimeAsNumber(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	query(t, s, "SET time_zone = '+00:00'")
	r := query(t, s, "SELECT FROM_UNIXTIME(1.5) + 0, FROM_UNIXTIME('1.5') + 0, FROM_UNIXTIME(1.5e0) + 0, 0 + FROM_UNIXTIME(1.25), FROM_UNIXTIME(1.5) * 2, FROM_UNIXTIME(1.5) - 1.25, "+
		"CAST('1970-01-01 00:00:01.5' AS DATETIME(1)) + 0, FROM_UNIXTIME(1) + 0, (FROM_UNIXTIME(1.5) + 0) / 2, FROM_UNIXTIME(1.5) + INTERVAL 1 DAY > '1970-01-02'")
	want := []any{"19700101000001.5", "19700101000001.500000", "19700101000001.500000", "19700101000001.25", "39400202000003.0", "19700101000000.25",
		"19700101000001.5", "19700101000001", "9850050500000.75000", "1"}
	if got := r.Rows[0]; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// A DATETIME, DATE or TIME of any precision used as a number (unary
// minus, + - * / DIV % with a number, a cast to SIGNED, UNSIGNED,
// DECIMAL or DOUBLE) reads as MariaDB's YYYYMMDDhhmmss.f, YYYYMMDD and
// hhmmss.f; go-mysql-server read each as 0 (-NOW(), a TIME in
// arithmetic), its Unix seconds (CAST(d AS SIGNED)) or dropped the
// fraction (/). Each answer is MariaDB 10.11's.
func TestTemporalAsNumber(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	query(t, s, "SET time_zone = '+00:00'")
	for _, c := range []struct {
		q    string
		want []any
	}{
		{"SELECT -CAST('2020-01-01 00:00:00' AS DATETIME), -FROM_UNIXTIME(1.5), -CAST('2020-01-01' AS DATE)", []any{"-20200101000000", "-19700101000001.5", "-20200101"}},
		{"SELECT -NOW() < 0", []any{"1"}},
		{"SELECT CAST('10:00:00' AS TIME) + 0, CAST('10:00:00' AS TIME) * 2, CAST('10:00:00' AS TIME) - 1, -CAST('10:00:00' AS TIME)", []any{"100000", "200000", "99999", "-100000"}},
		{"SELECT CAST('10:00:00.5' AS TIME(1)) + 0, CAST('-10:00:00.5' AS TIME(1)) + 0, -CAST('-10:00:00' AS TIME), CAST('838:59:59' AS TIME) + 0", []any{"100000.5", "-100000.5", "100000", "8385959"}},
		{"SELECT CAST(CAST('2020-01-01' AS DATETIME) AS SIGNED), CAST(FROM_UNIXTIME(1.5) AS DECIMAL(20,2)), CAST(CAST('10:00:00' AS TIME) AS SIGNED), CAST(CAST('-10:00:00' AS TIME) AS SIGNED)", []any{"20200101000000", "19700101000001.50", "100000", "-100000"}},
		{"SELECT CAST(FROM_UNIXTIME(1.5) AS SIGNED), CAST(FROM_UNIXTIME(1.5) AS DOUBLE) = 19700101000001.5, CAST(CAST('2020-01-01' AS DATE) AS UNSIGNED)", []any{"19700101000001", "1", "20200101"}},
		{"SELECT FROM_UNIXTIME(1.5) / 1, CAST('2020-01-01' AS DATE) / 1, FROM_UNIXTIME(1.5) DIV 1, FROM_UNIXTIME(1.5) % 1, CAST('10:00:00' AS TIME) DIV 7, CAST('10:00:00' AS TIME) % 7", []any{"19700101000001.50000", "20200101.0000", "19700101000001", "0.5", "14285", "5"}},
	} {
		r := query(t, s, c.q)
		if got := r.Rows[0]; fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%s: %q, want %q", c.q, got, c.want)
		}
	}
}

// A comparison of a date or time with a number is refused (1235), not
// answered 0 as go-mysql-server did (MariaDB's CAST('10:00' AS TIME) > 5
// is 1); the quoted form it names is answered.
func TestTemporalComparedWithNumberRefused(t *testing.T) {
	s := testEngine(t).Open("a", 1, nil)
	for _, q := range []string{"SELECT CAST('10:00' AS TIME) > 5", "SELECT 20200101 = CAST('2020-01-01' AS DATE)", "SELECT NOW() > 20200101000000"} {
		_, err := s.Query(context.Background(), q)
		if e, ok := err.(*Error); !ok || e.Code != 1235 || !strings.Contains(e.Msg, "x > '00:00:05'") {
			t.Errorf("%s: %v, want 1235", q, err)
		}
	}
	if r := query(t, s, "SELECT CAST('10:00' AS TIME) > '00:00:05', CAST('10:00' AS TIME) + 0 > 5"); fmt.Sprintf("%q", r.Rows[0]) != `["1" "1"]` {
		t.Errorf("%q, want 1 1", r.Rows[0])
	}
}
