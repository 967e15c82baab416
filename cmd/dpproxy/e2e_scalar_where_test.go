package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestScalarSubqueriesInWhereOverTheWire sends statements whose WHERE
// compares a column with a scalar subquery through the proxy on SQLite,
// PostgreSQL and MariaDB at ε = 100: the subquery is released first and
// its value bound as a typed constant of the statement's fetches. w has
// 1000 rows, k = i mod 5 and d = 2024-01-01 + (i mod 100) days, so
// COUNT(*) / 400 is the DECIMAL 2.5000, which k compares with exactly
// (k >= 2.5 keeps 400 rows, truncated to 2 it would keep 600); MEDIAN(d)
// and MIN(d) are dates that d compares with as dates (d > 2024-04-01
// keeps 80 rows); an AVG over no row
// is NULL, which keeps no row. Arithmetic of subqueries and constants is
// computed as MariaDB computes it (exact DECIMAL, DIV, a NULL division by
// zero, DATE - INTERVAL) and answered as MariaDB answers the statement
// over the same rows. Each statement costs exactly its ε and
// says in SHOW WARNINGS how it is split. A comparison with a value of
// another kind, IN (subquery) and a correlated subquery are refused
// (1235) and free, as are a column or a function inside the compared
// value. It failed before (1235: a subquery in WHERE; arithmetic of
// subqueries, a subquery inside an expression).
func TestScalarSubqueriesInWhereOverTheWire(t *testing.T) {
	tables := `  - name: w
    columns:
      - {name: k, type: integer, lower: 0, upper: 9}
      - {name: d, type: date, lower: "2024-01-01", upper: "2024-12-31"}
`
	day0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var values []string
	for i := range 1000 {
		values = append(values, fmt.Sprintf("(%d, '%s')", i%5, day0.AddDate(0, 0, i%100).Format(time.DateOnly)))
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			back := testdb.Open(t, b.driver, dsn)
			dateType := map[string]string{"sqlite": "TEXT"}[b.driver]
			if dateType == "" {
				dateType = "DATE"
			}
			for _, q := range []string{"CREATE TABLE w (k INTEGER, d " + dateType + ")", "INSERT INTO w (k, d) VALUES " + strings.Join(values, ", ")} {
				if _, err := back.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 1000}", "epsilon: 10000, delta: 1.0e-5", tables)
			if _, err := db.Exec("SET @dp_epsilon = 100"); err != nil {
				t.Fatal(err)
			}
			remaining := 10000.0
			for _, c := range []struct {
				sql       string
				want, tol float64
			}{
				{"SELECT COUNT(*) FROM w WHERE k >= (SELECT COUNT(*) / 400 FROM w)", 400, 3},
				{"SELECT COUNT(*) FROM w WHERE k = (SELECT COUNT(*) / 400 FROM w)", 0, 3},
				{"SELECT COUNT(*) FROM w WHERE k BETWEEN (SELECT COUNT(*) / 400 FROM w) AND 3", 200, 3},
				{"SELECT COUNT(*) FROM w WHERE NOT (k < (SELECT COUNT(*) / 400 FROM w))", 400, 3},
				{"SELECT COUNT(*) FROM w WHERE d >= (SELECT MEDIAN(d) FROM w)", 505, 30},
				{"SELECT COUNT(*) FROM w WHERE d < (SELECT MIN(d) FROM w) OR d > '2024-04-01'", 80, 30},
				{"SELECT COUNT(*) FROM w WHERE k > (SELECT AVG(k) FROM w WHERE k > 5 AND k < 3)", 0, 3},
			} {
				rows, err := queryText(db, c.sql)
				if err == nil && len(rows) == 1 && len(rows[0]) == 1 {
					got, perr := strconv.ParseFloat(rows[0][0], 64)
					if perr != nil || math.Abs(got-c.want) > c.tol {
						t.Errorf("%s = %v, want %g ± %g", c.sql, rows, c.want, c.tol)
					}
				} else {
					t.Errorf("%s: %v %v, want one count", c.sql, rows, err)
					continue
				}
				if w := strings.Join(sessionWarnings(t, db), " | "); !strings.Contains(w, "split over all its releases") || !strings.Contains(w, "public constant of the releases after it") {
					t.Errorf("%s: warnings %q, want the split of ε and how the WHERE reads the value", c.sql, w)
				}
				remaining -= 100
				checkRemaining(t, db, remaining)
			}
			// Arithmetic of subqueries and constants, MariaDB's own answer
			// over w (checked on MariaDB): 0.1000 * 3 * 10 is the DECIMAL
			// 3.000000 (k >= 3: 400 rows; in DOUBLE 3.0000000000000004,
			// 200); [2.5 - 1, 2.5 + 0.5] keeps k = 2, 3; 2.5 + 1 keeps
			// k = 4; x / 0 is NULL; -1000 DIV 300 is -3; MAX(d) is
			// 2024-04-09, 7 days before it 2024-04-02, which keeps 80
			// rows (the released MAX within a day or two).
			for _, c := range []struct {
				sql       string
				want, tol float64
			}{
				{"SELECT COUNT(*) FROM w WHERE k >= (SELECT COUNT(*) / 10000 FROM w) * 3 * 10", 400, 3},
				{"SELECT COUNT(*) FROM w WHERE k BETWEEN (SELECT COUNT(*) / 400 FROM w) - 1 AND (SELECT COUNT(*) / 400 FROM w) + 0.5", 400, 3},
				{"SELECT COUNT(*) FROM w WHERE k > (SELECT COUNT(*) / 400 FROM w) + (SELECT COUNT(*) / 1000 FROM w)", 200, 3},
				{"SELECT COUNT(*) FROM w WHERE k < (SELECT COUNT(*) FROM w) / 0 + 1", 0, 3},
				{"SELECT COUNT(*) FROM w WHERE k <= -(SELECT COUNT(*) FROM w) DIV 300 + 5", 600, 3},
				{"SELECT COUNT(*) FROM w WHERE d >= (SELECT MAX(d) FROM w) - INTERVAL 7 DAY", 80, 25},
			} {
				if b.name == "mariadb" {
					var own float64
					if err := back.QueryRow(c.sql).Scan(&own); err != nil || own != c.want {
						t.Errorf("MariaDB answers %s with %g (%v), the test wants %g", c.sql, own, err, c.want)
					}
				}
				rows, err := queryText(db, c.sql)
				if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
					t.Errorf("%s: %v %v, want one count", c.sql, rows, err)
					continue
				}
				if got, perr := strconv.ParseFloat(rows[0][0], 64); perr != nil || math.Abs(got-c.want) > c.tol {
					t.Errorf("%s = %v, want %g ± %g", c.sql, rows, c.want, c.tol)
				}
				remaining -= 100
				checkRemaining(t, db, remaining)
			}
			var plan []string
			rows, err := queryText(db, "EXPLAIN SELECT COUNT(*) FROM w WHERE k > 2 * (SELECT AVG(k) FROM w)")
			for _, r := range rows {
				plan = append(plan, strings.Join(r, " | "))
			}
			if err != nil || !strings.Contains(strings.Join(plan, "\n"), "k > 2 * subquery #1") {
				t.Errorf("EXPLAIN of k > 2 * (SELECT AVG(k) FROM w): %v %v, want the comparison k > 2 * subquery #1", plan, err)
			}
			checkRemaining(t, db, remaining)
			for _, q := range []string{
				"SELECT COUNT(*) FROM w WHERE d > (SELECT COUNT(*) FROM w)",
				"SELECT COUNT(*) FROM w WHERE k > (SELECT MEDIAN(d) FROM w)",
				"SELECT COUNT(*) FROM w WHERE k IN (SELECT MEDIAN(k) FROM w)",
				"SELECT COUNT(*) FROM w a WHERE k > (SELECT AVG(k) FROM w b WHERE b.d = a.d)",
				"SELECT COUNT(*) FROM w WHERE d > (SELECT MIN(d) FROM w) - 7",
				"SELECT COUNT(*) FROM w WHERE k > (SELECT AVG(k) FROM w) + k",
				"SELECT COUNT(*) FROM w WHERE k > ABS((SELECT AVG(k) FROM w))",
			} {
				_, err := queryText(db, q)
				var me *mysql.MySQLError
				if !errors.As(err, &me) || me.Number != 1235 {
					t.Errorf("%s: %v, want refused with 1235", q, err)
				}
				checkRemaining(t, db, remaining)
			}
		})
	}
}
