package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDashboardTimeBuckets serves a table of three days of orders (one
// every 7 minutes and some seconds, and one at midnight ending the
// dashboard's day) declared over the year 2023, through the real proxy on
// PostgreSQL and MariaDB, to go-sql-driver at ε = 40 (noise scale 0.025,
// so a rounded count is exact). Grafana's five-minute $__timeGroup over
// its $__timeFilter of one day answers exactly that day's buckets (289:
// BETWEEN's upper end is the next midnight), each count the backend's;
// the hours of that day times a text key answer their 50 groups (those of
// the year, 17520, would be refused); and older Metabase's GROUP BY
// CAST(col AS DATE) answers the days of a timestamp column within its
// filter and of a date column over its bounds, labelled as DATE(col).
func TestDashboardTimeBuckets(t *testing.T) {
	start := time.Date(2023, 1, 31, 0, 0, 0, 0, time.UTC)
	var at []time.Time
	for k := 0; ; k++ {
		x := start.Add(time.Duration(k)*7*time.Minute + time.Duration(k%3)*13*time.Second)
		if !x.Before(start.AddDate(0, 0, 3)) {
			break
		}
		at = append(at, x)
	}
	at = append(at, time.Unix(1675296000, 0).UTC()) // 2023-02-02 00:00:00, a second time
	region := func(i int) string { return []string{"EU", "US"}[i%2] }
	for _, b := range visitsBackends[1:] {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE orders (created_at %s, day DATE, region VARCHAR(8))", typ)); err != nil {
				t.Fatal(err)
			}
			var vals []string
			for i, x := range at {
				vals = append(vals, fmt.Sprintf("('%s', '%s', '%s')", x.Format(time.DateTime), x.Format(time.DateOnly), region(i)))
			}
			if _, err := db.Exec("INSERT INTO orders (created_at, day, region) VALUES " + strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			conn, _ := doraSession(t, b, dsn, `
  - name: orders
    columns:
      - {name: created_at, type: timestamp, lower: "2023-01-01 00:00:00", upper: "2023-12-31 23:59:59"}
      - {name: day, type: date, lower: 2023-01-01, upper: 2023-12-31}
      - {name: region, type: text, values: [EU, US]}
`)
			type row struct {
				key   string
				count float64
			}
			query := func(q string) []row {
				t.Helper()
				rows, err := conn.QueryContext(t.Context(), q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer rows.Close()
				cols, err := rows.Columns()
				if err != nil {
					t.Fatal(err)
				}
				var out []row
				for rows.Next() {
					keys := make([]string, len(cols)-1)
					dest := make([]any, len(cols))
					for i := range keys {
						dest[i] = &keys[i]
					}
					var r row
					dest[len(cols)-1] = &r.count
					if err := rows.Scan(dest...); err != nil {
						t.Fatal(err)
					}
					r.key = strings.Join(keys, " ")
					out = append(out, r)
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return out
			}
			// check compares the rows with the truth, key by key in order.
			check := func(q string, keys []string, truth map[string]int) {
				t.Helper()
				got := query(q)
				if len(got) != len(keys) {
					t.Fatalf("%s: %d rows, want %d", q, len(got), len(keys))
				}
				for i, r := range got {
					if r.key != keys[i] {
						t.Fatalf("%s: row %d is %q, want %q", q, i, r.key, keys[i])
					}
					if math.Abs(r.count-float64(truth[r.key])) >= 0.5 {
						t.Errorf("%s: %q counts %g, want %d", q, r.key, r.count, truth[r.key])
					}
				}
			}
			lo, hi := int64(1675209600), int64(1675296000) // 2023-02-01, the next midnight
			fiveMinutes, fiveTruth := []string(nil), map[string]int{}
			for s := lo; s <= hi; s += 300 {
				fiveMinutes = append(fiveMinutes, fmt.Sprint(s))
			}
			hours, hourTruth := []string(nil), map[string]int{}
			for s := lo; s <= hi; s += 3600 {
				hours = append(hours, fmt.Sprint(s)+" EU", fmt.Sprint(s)+" US")
			}
			timestampDays, dayTruth := []string{"2023-01-31", "2023-02-01", "2023-02-02"}, map[string]int{}
			for i, x := range at {
				if s := x.Unix(); s >= lo && s <= hi {
					fiveTruth[fmt.Sprint(s/300*300)]++
					hourTruth[fmt.Sprintf("%d %s", s/3600*3600, region(i))]++
				}
				dayTruth[x.Format(time.DateOnly)]++
			}
			if len(fiveMinutes) != 289 || fiveTruth[fmt.Sprint(hi)] != 1 {
				t.Fatalf("the test's own buckets: %d, %d rows at the upper end", len(fiveMinutes), fiveTruth[fmt.Sprint(hi)])
			}
			check(`SELECT UNIX_TIMESTAMP(created_at) DIV 300 * 300 AS "time", count(*) AS "orders" FROM orders WHERE created_at BETWEEN FROM_UNIXTIME(1675209600) AND FROM_UNIXTIME(1675296000) GROUP BY 1 ORDER BY 1`, fiveMinutes, fiveTruth)
			check(`SELECT UNIX_TIMESTAMP(created_at) DIV 3600 * 3600 AS "time", region, count(*) FROM orders WHERE created_at BETWEEN FROM_UNIXTIME(1675209600) AND FROM_UNIXTIME(1675296000) GROUP BY 1, 2 ORDER BY 1, 2`, hours, hourTruth)
			check(`SELECT CAST(created_at AS DATE) AS d, COUNT(*) FROM orders WHERE created_at >= '2023-01-31' AND created_at < '2023-02-03' GROUP BY CAST(created_at AS DATE) ORDER BY 1`, timestampDays, dayTruth)
			var allDays []string
			for d := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2023; d = d.AddDate(0, 0, 1) {
				allDays = append(allDays, d.Format(time.DateOnly))
			}
			check(`SELECT CAST(day AS DATE), COUNT(*) FROM orders GROUP BY CAST(day AS DATE) ORDER BY 1`, allDays, dayTruth)
		})
	}
}
