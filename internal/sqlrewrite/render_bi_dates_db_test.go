package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// biDateSpellings are BI tools' time buckets as they write them (c the
// column): Metabase's month and year (also CAST to datetime), week from
// Monday and week of the year; Superset's weeks from Monday and ending Saturday (and one labelled
// by the Saturday before); Looker's
// week.
var biDateSpellings = []string{
	"str_to_date(concat(date_format(`c`, '%Y-%m'), '-01'), '%Y-%m-%d')",
	"CAST(str_to_date(concat(date_format(`dp_bi`.`c`, '%Y-%m'), '-01'), '%Y-%m-%d') AS datetime)",
	"makedate(year(`c`), 1)",
	"CAST(makedate(year(`c`), 1) AS datetime)",
	"date_add(str_to_date(concat(yearweek(date_add(`c`, INTERVAL -1 day)), ' Sunday'), '%X%V %W'), INTERVAL 1 day)",
	"DATE(DATE_SUB(c, INTERVAL DAYOFWEEK(DATE_SUB(c, INTERVAL 1 DAY)) - 1 DAY))",
	"DATE(DATE_ADD(c, INTERVAL 7 - DAYOFWEEK(c) DAY))",
	"DATE(DATE_SUB(c, INTERVAL DAYOFWEEK(c) DAY))",
	"DATE_FORMAT(TIMESTAMP(DATE(DATE_ADD(c, INTERVAL (0 - MOD((DAYOFWEEK(c) - 1) - 1 + 7, 7)) day))), '%Y-%m-%d')",
	"week(`c`, 6) + 1",
	"1 + WEEK(c, 6)",
}

// biClockSpellings are Superset's (≤ 3.x) hour and minute.
var biClockSpellings = []string{
	"DATE_ADD(DATE(c), INTERVAL HOUR(c) HOUR)",
	"DATE_ADD(DATE(c), INTERVAL (HOUR(c)*60 + MINUTE(c)) MINUTE)",
}

// TestBIDateKeysMatchMariaDB parses each BI spelling over a date and a
// timestamp column, renders its Cells fetch on SQLite, PostgreSQL and
// MariaDB over a table of every day of 2010–2030 (the timestamp at a
// different hour and minute each day, NULLs beside), and checks each
// group's label and count against MariaDB's own GROUP BY of the same
// expression: every day, year boundaries and weeks spanning years
// included. The hour and minute spellings are checked the same way over
// every minute of five days across a year boundary.
func TestBIDateKeysMatchMariaDB(t *testing.T) {
	var days, minutes []string
	for d := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= 2030; d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(time.DateOnly))
	}
	start := time.Date(2024, 12, 29, 0, 0, 0, 0, time.UTC)
	for m := start; m.Before(start.AddDate(0, 0, 5)); m = m.Add(time.Minute) {
		minutes = append(minutes, m.Format(time.DateTime))
	}
	cat := &catalog.Config{Tables: []catalog.Table{
		{Name: "dp_bi", Source: "dp_bi", Columns: []catalog.Column{
			dated(catalog.Date, "d", "2010-01-01", "2030-12-31"),
			dated(catalog.Timestamp, "ts", "2010-01-01 00:00:00", "2030-12-31 23:59:59"),
		}},
		{Name: "dp_bi_clock", Source: "dp_bi_clock", Columns: []catalog.Column{
			dated(catalog.Date, "d", "2024-12-29", "2025-01-02"),
			dated(catalog.Timestamp, "ts", "2024-12-29 00:00:00", "2025-01-02 23:59:59"),
		}},
	}}
	dbs := map[string]*sql.DB{}
	for _, b := range dbBackends {
		db := b.open(t)
		for table, stamps := range map[string][]string{"dp_bi": days, "dp_bi_clock": minutes} {
			if _, err := db.Exec("CREATE TABLE " + table + " (d DATE, ts " + b.stamp + ")"); err != nil {
				t.Fatal(err)
			}
			vals := []string{"(NULL, NULL)"}
			for i, s := range stamps {
				ts := s
				if len(s) == 10 { // a day: its timestamp at one of the day's minutes
					ts = s + fmt.Sprintf(" %02d:%02d:%02d", i*7%24, i*13%60, i%60)
				}
				vals = append(vals, fmt.Sprintf("('%s', '%s')", s[:10], ts))
			}
			for from := 0; from < len(vals); from += 1000 {
				if _, err := db.Exec("INSERT INTO " + table + " (d, ts) VALUES " + strings.Join(vals[from:min(from+1000, len(vals))], ", ")); err != nil {
					t.Fatal(err)
				}
			}
		}
		dbs[b.name] = db
	}
	p := sqlrewrite.NewParser(cat)
	check := func(table, spelling string) {
		for _, column := range []string{"d", "ts"} {
			key := strings.ReplaceAll(strings.ReplaceAll(spelling, "`c`", "`"+column+"`"), "c)", column+")")
			key = strings.ReplaceAll(strings.ReplaceAll(key, "(c,", "("+column+","), "dp_bi`", table+"`")
			rows, err := dbs["mysql"].Query("SELECT " + key + ", COUNT(*) FROM " + table + " GROUP BY 1")
			if err != nil {
				t.Fatalf("MariaDB: %s: %v", key, err)
			}
			want := map[string]int{}
			for _, r := range testdb.Strings(t, rows, key) {
				var n int
				fmt.Sscan(r[1], &n)
				if r[0] != "NULL" {
					want[r[0]] = n
				}
			}
			st, err := p.Parse("SELECT " + key + ", COUNT(*) FROM " + table + " GROUP BY 1")
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			k := st.(*sqlrewrite.Query).Keys[0]
			for _, b := range dbBackends {
				got := map[string]int{}
				for i, n := range cellCounts(t, dbs[b.name], b.dialect, table, sqlrewrite.CellDim{Column: column, Date: &k.Date.Axis}) {
					if v := k.Values[i]; v.IsText {
						got[v.Str] = n
					} else {
						got[fmt.Sprint(v.Num)] = n
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s on %s: %d groups, want MariaDB's %d", key, b.name, len(got), len(want))
					for l, n := range want {
						if got[l] != n {
							t.Errorf("  %q: %d, want %d", l, got[l], n)
							break
						}
					}
					for l, n := range got {
						if _, ok := want[l]; !ok {
							t.Errorf("  %q: %d, not MariaDB's", l, n)
							break
						}
					}
				}
			}
		}
	}
	for _, s := range biDateSpellings {
		check("dp_bi", s)
	}
	for _, s := range biClockSpellings {
		check("dp_bi_clock", s)
	}
}
