package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestBucketsAtTheUpperBound serves rows exactly at the bounds, on bucket
// edges and beyond the bounds (clamped into the end buckets) through the
// real proxy on PostgreSQL and MariaDB, to go-sql-driver at ε = 40 (max
// 50; identity synopses of 4 bins at ε = 50, so a rounded count is
// exact). Each histogram answers every bucket MySQL labels a value within
// the bounds, counts equal to the backend's own GROUP BY of the clamped
// column: the upper bound, on an edge, is a bucket of its own. A real
// column with a histogram domain counted its rows at the upper bound (and
// those clamped to it) in the bucket below, the synopsis holding them in
// its last bin, and left the bucket of the bound out (FLOOR(x / 5) * 5 over
// [0, 10] answered 0 and 5; 10 is MySQL's); x < 10 was refused for the
// same reason and is now exact.
func TestBucketsAtTheUpperBound(t *testing.T) {
	xs := []float64{0, 0, 2.5, 5, 5, 7, 9.99, 10, 10, 10, 12, -3}
	ns := []int{0, 5, 10, 10, 55, 90, 99, 100, 100, 100, 120, -4}
	gs := []float64{-10, -10, -7, -5, -0.5, 0, 3, 5, 10, 10, -12, 14}
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	offsets := []time.Duration{0, 299 * time.Second, 5 * time.Minute, 10 * time.Minute, 10 * time.Minute, 9 * time.Minute,
		time.Second, 10 * time.Minute, 7 * time.Minute, time.Minute, 11 * time.Minute, -time.Minute}
	for _, b := range visitsBackends[1:] {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			real, ts := map[string]string{"postgres": "DOUBLE PRECISION", "mysql": "DOUBLE"}[b.driver], map[string]string{"postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE t (x %s, y %s, n INTEGER, g %s, ts %s)", real, real, real, ts)); err != nil {
				t.Fatal(err)
			}
			var vals []string
			for i := range xs {
				vals = append(vals, fmt.Sprintf("(%g, %g, %d, %g, '%s')", xs[i], xs[i], ns[i], gs[i], base.Add(offsets[i]).Format(time.DateTime)))
			}
			if _, err := db.Exec("INSERT INTO t (x, y, n, g, ts) VALUES " + strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			conn, _ := doraSession(t, b, dsn, `
  - name: t
    epsilon: 1000
    columns:
      - {name: x, type: real, lower: 0, upper: 10, histogram: {epsilon: 50, bins: 4, mechanism: identity}}
      - {name: y, type: real, lower: 0, upper: 10}
      - {name: n, type: integer, lower: 0, upper: 100}
      - {name: g, type: real, lower: -10, upper: 10, histogram: {epsilon: 50, bins: 4, mechanism: identity}}
      - {name: ts, type: timestamp, lower: "2023-01-01 00:00:00", upper: "2023-01-01 00:10:00"}
`)
			// grouped runs a GROUP BY of a key and a count, on the proxy or
			// on the backend, as key → count in order.
			grouped := func(q string, rows interface {
				Next() bool
				Scan(...any) error
				Err() error
				Close() error
			}) ([]float64, map[float64]float64) {
				t.Helper()
				defer rows.Close()
				var keys []float64
				counts := map[float64]float64{}
				for rows.Next() {
					var k, n float64
					if err := rows.Scan(&k, &n); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					keys = append(keys, k)
					counts[k] = n
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return keys, counts
			}
			// check compares the proxy's buckets with keys and its counts
			// with truth.
			check := func(q string, keys []float64, truth map[float64]float64) {
				t.Helper()
				rows, err := conn.QueryContext(t.Context(), q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				got, counts := grouped(q, rows)
				if fmt.Sprint(got) != fmt.Sprint(keys) {
					t.Fatalf("%s: buckets %v, want %v", q, got, keys)
				}
				for _, k := range keys {
					if math.Abs(counts[k]-truth[k]) >= 0.5 {
						t.Errorf("%s: bucket %g counts %g, want %g", q, k, counts[k], truth[k])
					}
				}
			}
			// backend is the backend's own GROUP BY of FLOOR(c / w) * w,
			// c the column clamped to [lo, hi], over the rows where.
			backend := func(col string, lo, hi, w float64, where string) map[float64]float64 {
				t.Helper()
				q := fmt.Sprintf("SELECT FLOOR(LEAST(GREATEST(%s, %g), %g) / %g) * %g, COUNT(*) FROM t WHERE %s IS NOT NULL AND %s GROUP BY 1", col, lo, hi, w, w, col, where)
				rows, err := db.Query(q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				_, counts := grouped(q, rows)
				return counts
			}
			scaled := func(m map[float64]float64, f float64) map[float64]float64 {
				out := map[float64]float64{}
				for k, n := range m {
					out[k*f] = n
				}
				return out
			}
			fives := []float64{0, 5, 10}
			check("SELECT FLOOR(x / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", fives, backend("x", 0, 10, 5, "1 = 1"))
			check("SELECT x DIV 5 * 5 AS b, COUNT(*) FROM t GROUP BY b", fives, backend("x", 0, 10, 5, "1 = 1"))
			check("SELECT FLOOR(x / 5) AS b, COUNT(*) FROM t GROUP BY b", []float64{0, 1, 2}, scaled(backend("x", 0, 10, 5, "1 = 1"), 0.2))
			check("SELECT FLOOR(x / 5) * 5 AS b, COUNT(*) FROM t WHERE x >= 5 GROUP BY b", []float64{5, 10}, backend("x", 0, 10, 5, "x >= 5"))
			check("SELECT FLOOR(x / 5) * 5 AS b, COUNT(*) FROM t WHERE x < 10 GROUP BY b", []float64{0, 5}, backend("x", 0, 10, 5, "x < 10"))
			check("SELECT FLOOR(g / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", []float64{-10, -5, 0, 5, 10}, backend("g", -10, 10, 5, "1 = 1"))
			check("SELECT FLOOR(y / 5) * 5 AS b, COUNT(*) FROM t GROUP BY b", fives, backend("y", 0, 10, 5, "1 = 1"))
			check("SELECT y DIV 5 * 5 AS b, COUNT(*) FROM t GROUP BY b", fives, backend("y", 0, 10, 5, "1 = 1"))
			tens := []float64{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
			check("SELECT FLOOR(n / 10) * 10 AS b, COUNT(*) FROM t GROUP BY b", tens, backend("n", 0, 100, 10, "1 = 1"))
			check("SELECT n DIV 10 * 10 AS b, COUNT(*) FROM t GROUP BY b", tens, backend("n", 0, 100, 10, "1 = 1"))
			check("SELECT TRUNCATE(n, -1) AS b, COUNT(*) FROM t GROUP BY b", tens, backend("n", 0, 100, 10, "1 = 1"))
			// Five-minute buckets of the timestamps, clamped to the bounds
			// (their upper bound, 00:10, on an edge: a bucket of its own).
			lo := base.Unix()
			minutes := map[float64]float64{}
			for _, d := range offsets {
				s := min(max(base.Add(d).Unix(), lo), lo+600)
				minutes[float64(s/300*300)]++
			}
			check("SELECT UNIX_TIMESTAMP(ts) DIV 300 * 300 AS b, COUNT(*) FROM t GROUP BY b", []float64{float64(lo), float64(lo + 300), float64(lo + 600)}, minutes)
		})
	}
}
