package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestBIBucketsMatchMariaDB serves orders (created_at a timestamp, one
// every 97 minutes from 2023-12-20 to 2024-01-20, order_date its day, and
// a row of NULLs) declared from 2023-12-25 to 2024-01-14 (a year boundary
// and weeks spanning it), through the real proxy on PostgreSQL and
// MariaDB at ε = 40 (a rounded count is exact), and runs Metabase's,
// Superset's and Looker's time buckets as they write them. Each answers
// every period of the declared bounds, in order, and each group's label
// and count are those of MariaDB's own GROUP BY of the same expression
// over the rows within the bounds (zero for a period it does not list).
func TestBIBucketsMatchMariaDB(t *testing.T) {
	first := time.Date(2023, 12, 20, 0, 0, 0, 0, time.UTC)
	var at []time.Time
	for x := first; x.Before(time.Date(2024, 1, 20, 0, 0, 0, 0, time.UTC)); x = x.Add(97 * time.Minute) {
		at = append(at, x)
	}
	const lo, hi = "2023-12-25 00:00:00", "2024-01-14 23:59:59"
	create := func(t *testing.T, driver, dsn string) {
		db := testdb.Open(t, driver, dsn)
		typ := map[string]string{"postgres": "TIMESTAMP", "mysql": "DATETIME"}[driver]
		if _, err := db.Exec(fmt.Sprintf("CREATE TABLE orders (created_at %s, order_date DATE)", typ)); err != nil {
			t.Fatal(err)
		}
		vals := []string{"(NULL, NULL)"}
		for _, x := range at {
			vals = append(vals, fmt.Sprintf("('%s', '%s')", x.Format(time.DateTime), x.Format(time.DateOnly)))
		}
		if _, err := db.Exec("INSERT INTO orders (created_at, order_date) VALUES " + strings.Join(vals, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	mariadb := visitsBackends[2]
	truthDSN := mariadb.dsn(t)
	create(t, mariadb.driver, truthDSN)
	truthDB := testdb.Open(t, mariadb.driver, truthDSN)
	forms := []string{
		"CAST(str_to_date(concat(date_format(`orders`.`%[1]s`, '%%Y-%%m'), '-01'), '%%Y-%%m-%%d') AS datetime)",
		"str_to_date(concat(date_format(`orders`.`%[1]s`, '%%Y-%%m'), '-01'), '%%Y-%%m-%%d')",
		"makedate(year(`orders`.`%[1]s`), 1)",
		"CAST(makedate(year(`orders`.`%[1]s`), 1) AS datetime)",
		"date_add(str_to_date(concat(yearweek(date_add(`orders`.`%[1]s`, INTERVAL -1 day)), ' Sunday'), '%%X%%V %%W'), INTERVAL 1 day)",
		"DATE(DATE_SUB(%[1]s, INTERVAL DAYOFWEEK(DATE_SUB(%[1]s, INTERVAL 1 DAY)) - 1 DAY))",
		"DATE(DATE_ADD(%[1]s, INTERVAL 7 - DAYOFWEEK(%[1]s) DAY))",
		"DATE_FORMAT(TIMESTAMP(DATE(DATE_ADD(orders.%[1]s, INTERVAL (0 - MOD((DAYOFWEEK(orders.%[1]s) - 1) - 1 + 7, 7)) day))), '%%Y-%%m-%%d')",
		"DATE_ADD(DATE(%[1]s), INTERVAL HOUR(%[1]s) HOUR)",
		"week(`orders`.`%[1]s`, 6) + 1",
	}
	for _, b := range visitsBackends[1:] {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			create(t, b.driver, dsn)
			conn, _ := doraSession(t, b, dsn, `
  - name: orders
    columns:
      - {name: created_at, type: timestamp, lower: "`+lo+`", upper: "`+hi+`"}
      - {name: order_date, type: date, lower: "`+lo[:10]+`", upper: "`+hi[:10]+`"}
`)
			for _, form := range forms {
				for _, col := range []string{"created_at", "order_date"} {
					key := fmt.Sprintf(form, col)
					bounds := fmt.Sprintf("%s BETWEEN '%s' AND '%s'", col, lo, hi)
					if col == "order_date" {
						bounds = fmt.Sprintf("%s BETWEEN '%s' AND '%s'", col, lo[:10], hi[:10])
					}
					truth := map[string]int{}
					rows, err := truthDB.Query("SELECT " + key + ", COUNT(*) FROM orders WHERE " + bounds + " GROUP BY 1")
					if err != nil {
						t.Fatalf("MariaDB: %s: %v", key, err)
					}
					for _, r := range testdb.Strings(t, rows, key) {
						var n int
						fmt.Sscan(r[1], &n)
						truth[r[0]] = n
					}
					q := "SELECT " + key + " AS `bucket`, count(*) AS `count` FROM `orders` GROUP BY " + key + " ORDER BY 1 ASC"
					rs, err := conn.QueryContext(t.Context(), q)
					if err != nil {
						t.Errorf("%s: %v", q, err)
						continue
					}
					seen, prev := 0, ""
					for rs.Next() {
						var label string
						var n float64
						if err := rs.Scan(&label, &n); err != nil {
							t.Fatal(err)
						}
						if a, errA := strconv.Atoi(label); errA == nil && prev != "" {
							if b, errB := strconv.Atoi(prev); errB == nil && a <= b {
								t.Errorf("%s: %q after %q", key, label, prev)
							}
						} else if label <= prev {
							t.Errorf("%s: %q after %q", key, label, prev)
						}
						prev = label
						if want, ok := truth[label]; ok {
							seen++
							if math.Abs(n-float64(want)) >= 0.5 {
								t.Errorf("%s: %q counts %g, MariaDB %d", key, label, n, want)
							}
						} else if math.Abs(n) >= 0.5 {
							t.Errorf("%s: %q counts %g, not a group of MariaDB's", key, label, n)
						}
					}
					if err := rs.Err(); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					if seen != len(truth) {
						t.Errorf("%s: %d of MariaDB's %d groups answered: %v", key, seen, len(truth), truth)
					}
				}
			}
		})
	}
}
