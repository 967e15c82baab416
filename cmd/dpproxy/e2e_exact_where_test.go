package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestWhereLiteralsBeyondDoublesOverTheWire sends COUNT(*)s whose WHERE
// compares a BIGINT with constants a double does not hold through the
// proxy on SQLite, PostgreSQL and MariaDB at ε = 100: big holds 2^53 +
// i, 200 rows each for i < 5, and the backend compares it with the
// constant written, exactly (big <= 9007199254740993 keeps 400 rows,
// not the 200 of 2^53, nor the 600 of 9007199254740993.5 read as
// 2^53 + 2), also with a prepared statement's integer parameter, which
// go-sql-driver sends as an integer. It failed before (≈200 and ≈600).
func TestWhereLiteralsBeyondDoublesOverTheWire(t *testing.T) {
	tables := `  - name: t
    columns:
      - {name: big, type: integer, lower: 9007199254740992, upper: 9007199254741000}
`
	var values []string
	for i := range 1000 {
		values = append(values, fmt.Sprintf("(%d)", 1<<53+i%5))
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			back := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"sqlite": "INTEGER"}[b.driver]
			if typ == "" {
				typ = "BIGINT"
			}
			for _, q := range []string{"CREATE TABLE t (big " + typ + ")", "INSERT INTO t (big) VALUES " + strings.Join(values, ", ")} {
				if _, err := back.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 1000}", "epsilon: 10000, delta: 1.0e-5", tables)
			if _, err := db.Exec("SET @dp_epsilon = 100"); err != nil {
				t.Fatal(err)
			}
			check := func(q string, want float64, got string, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("%s: %v", q, err)
					return
				}
				if n, perr := strconv.ParseFloat(got, 64); perr != nil || math.Abs(n-want) > 5 {
					t.Errorf("%s = %s, want %g ± 5", q, got, want)
				}
			}
			for _, c := range []struct {
				where string
				want  float64
			}{
				{"big <= 9007199254740993", 400},
				{"big <= 9007199254740993.0", 400},
				{"big <= 9007199254740993.5", 400},
				{"big > 9007199254740993.5", 600},
				{"big = 9007199254740993", 200},
				{"big <> 9007199254740993.5", 1000},
				{"big IN (9007199254740993, 9007199254740995)", 400},
				{"big BETWEEN 9007199254740993 AND 9007199254740995", 600},
				{"NOT (big < 9007199254740993)", 800},
			} {
				q := "SELECT COUNT(*) FROM t WHERE " + c.where
				rows, err := queryText(db, q)
				if err == nil && (len(rows) != 1 || len(rows[0]) != 1) {
					t.Errorf("%s: %v, want one count", q, rows)
					continue
				}
				got := ""
				if err == nil {
					got = rows[0][0]
				}
				check(q, c.want, got, err)
			}
			q := "SELECT COUNT(*) FROM t WHERE big <= ?"
			var got string
			err := db.QueryRow(q, int64(1<<53+1)).Scan(&got)
			check(q+" with 2^53+1", 400, got, err)
		})
	}
}
