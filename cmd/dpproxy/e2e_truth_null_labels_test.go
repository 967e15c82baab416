package main

import (
	"database/sql"
	"math"
	"strconv"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTruthValuesAndNullLabels: BI tools' truth values and NULL labels
// answer as the backend itself answers them, NULL rows included, through
// go-sql-driver on PostgreSQL and MariaDB. A numeric column is a
// condition as MySQL reads it (WHERE is_paid is is_paid <> 0, and NOT
// is_paid is_paid = 0, neither keeping a NULL row), IS [NOT] TRUE and IS
// [NOT] FALSE are never UNKNOWN (is_paid IS NOT TRUE keeps the NULL rows),
// also in an aggregate's condition and in AVG, and a PostgreSQL boolean
// declared integer is such a column; GROUP BY IFNULL(col, 'Unknown'),
// COALESCE(col, '(null)') and CASE WHEN col IS NULL THEN ... ELSE col END
// of a column with declared values put the NULL rows in the literal's
// group (merged with a declared value's group when it is one), null
// declared or not; DATEDIFF(CURDATE(), col) and DATEDIFF(NOW(), col)
// answer in a condition, a range count and AVG. Each expected answer is the backend's own, from the
// same statement sent to it directly (on PostgreSQL, the same condition in
// its dialect). The table holds 120 rows; at ε = 40 a count's noise is
// below 0.5 with probability above 1 − 1e-8, so counts must be exact after
// rounding; the average of days from dates within the bounds 2020–2030
// to today (a range of 4,017 days, about 100 non-NULL rows) has noise of
// scale a few days, far below the tolerance of 40.
func TestTruthValuesAndNullLabels(t *testing.T) {
	for _, b := range []struct {
		name, driver    string
		dsn             func(testing.TB) string
		create, ordered string
	}{
		{"postgres", "postgres", testdb.PostgresDSN,
			"CREATE TABLE orders (id INTEGER, is_paid BOOLEAN, amount INTEGER, discount DOUBLE PRECISION, category TEXT, tier INTEGER, ordered DATE)",
			"DATE '2024-01-01' + id * 5"},
		{"mariadb", "mysql", testdb.MySQLDSN,
			"CREATE TABLE orders (id INTEGER, is_paid TINYINT, amount INTEGER, discount DOUBLE, category VARCHAR(10), tier INTEGER, ordered DATE)",
			"DATE '2024-01-01' + INTERVAL id * 5 DAY"},
	} {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			paid := "CASE WHEN id < 70 THEN 1 WHEN id < 100 THEN 0 END"
			if b.name == "postgres" {
				paid = "CASE WHEN id < 70 THEN TRUE WHEN id < 100 THEN FALSE END"
			}
			if _, err := direct.Exec(b.create); err != nil {
				t.Fatal(err)
			}
			// Ids 0-119: paid 0-69, unpaid 70-99, NULL 100-119; discount 0,
			// 0.25 or NULL; category A, B, C or NULL; tier 1-3 or NULL;
			// ordered every fifth day from 2024-01-01, NULL for every
			// seventh id.
			for i := range 120 {
				if _, err := direct.Exec("INSERT INTO orders VALUES (" + strconv.Itoa(i) + ", NULL, 0, NULL, NULL, NULL, NULL)"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := direct.Exec("UPDATE orders SET is_paid = " + paid + ", amount = id % 10 * 10, " +
				"discount = CASE WHEN id % 3 = 0 THEN 0 WHEN id % 3 = 1 THEN 0.25 END, " +
				"category = CASE id % 4 WHEN 0 THEN 'A' WHEN 1 THEN 'B' WHEN 2 THEN 'C' END, " +
				"tier = CASE WHEN id % 5 = 0 THEN NULL WHEN id % 5 <= 3 THEN id % 5 ELSE 3 END, " +
				"ordered = CASE WHEN id % 7 <> 0 THEN " + b.ordered + " END"); err != nil {
				t.Fatal(err)
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 100000, delta: 1.0e-5", `  - name: orders
    columns:
      - {name: is_paid, type: integer, lower: 0, upper: 1, values: [0, 1]}
      - {name: amount, type: integer, lower: 0, upper: 100}
      - {name: discount, type: real, lower: 0, upper: 1}
      - {name: category, type: text, values: [A, B, C]}
      - {name: tier, type: integer, lower: 1, upper: 3, values: [1, 2, 3]}
      - {name: ordered, type: date, lower: 2020-01-01, upper: 2030-12-31}
`)
			if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
				t.Fatal(err)
			}
			// Each statement, its PostgreSQL form where that differs (an
			// integer is no condition there), and a tolerance (0: a count,
			// exact after rounding).
			for _, c := range []struct {
				sql, my, pg string
				tol         float64
			}{
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid"},
				{sql: "SELECT COUNT(*) FROM orders WHERE NOT is_paid"},
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IS TRUE"},
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IS FALSE"},
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IS NOT TRUE"},
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IS NOT FALSE"},
				{sql: "SELECT COUNT(*) FROM orders WHERE NOT (is_paid IS TRUE)"},
				{sql: "SELECT COUNT(*) FROM orders WHERE NOT (is_paid IS NOT FALSE)"},
				{sql: "SELECT COUNT(*) FROM orders WHERE is_paid AND amount >= 50 OR is_paid IS NULL"},
				{sql: "SELECT COUNT(*) FROM orders WHERE discount", pg: "SELECT COUNT(*) FROM orders WHERE discount <> 0"},
				{sql: "SELECT COUNT(*) FROM orders WHERE NOT discount", pg: "SELECT COUNT(*) FROM orders WHERE NOT discount <> 0"},
				{sql: "SELECT COUNT(*) FROM orders WHERE discount IS NOT TRUE", pg: "SELECT COUNT(*) FROM orders WHERE (discount <> 0) IS NOT TRUE"},
				{sql: "SELECT COUNT(*) FROM orders WHERE tier IS NOT FALSE", pg: "SELECT COUNT(*) FROM orders WHERE (tier <> 0) IS NOT FALSE"},
				{sql: "SELECT COUNT(CASE WHEN is_paid IS TRUE THEN 1 END) FROM orders"},
				{sql: "SELECT SUM(is_paid IS NOT TRUE) FROM orders", pg: "SELECT SUM(CASE WHEN is_paid IS NOT TRUE THEN 1 ELSE 0 END) FROM orders"},
				{sql: "SELECT SUM(CASE WHEN is_paid THEN amount END) FROM orders", tol: 30},
				{sql: "SELECT AVG(is_paid IS TRUE) FROM orders", pg: "SELECT AVG(CASE WHEN is_paid IS TRUE THEN 1 ELSE 0 END) FROM orders", tol: 0.05},
				{sql: "SELECT AVG(is_paid IS NOT FALSE) FROM orders", pg: "SELECT AVG(CASE WHEN is_paid IS NOT FALSE THEN 1 ELSE 0 END) FROM orders", tol: 0.05},
				// The proxy reads CURDATE() and NOW() in backend.time_zone,
				// UTC; the backend's own answer reads UTC too.
				{sql: "SELECT COUNT(*) FROM orders WHERE DATEDIFF(CURDATE(), ordered) > 700",
					my: "SELECT COUNT(*) FROM orders WHERE DATEDIFF(UTC_DATE(), ordered) > 700",
					pg: "SELECT COUNT(*) FROM orders WHERE CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS DATE) - ordered > 700"},
				{sql: "SELECT COUNT(CASE WHEN DATEDIFF(NOW(), ordered) <= 700 THEN 1 END) FROM orders",
					my: "SELECT COUNT(CASE WHEN DATEDIFF(UTC_TIMESTAMP(), ordered) <= 700 THEN 1 END) FROM orders",
					pg: "SELECT COUNT(CASE WHEN CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS DATE) - ordered <= 700 THEN 1 END) FROM orders"},
				{sql: "SELECT AVG(DATEDIFF(NOW(), ordered)) FROM orders",
					my: "SELECT AVG(DATEDIFF(UTC_TIMESTAMP(), ordered)) FROM orders",
					pg: "SELECT AVG(CAST(CURRENT_TIMESTAMP AT TIME ZONE 'UTC' AS DATE) - ordered) FROM orders", tol: 40},
			} {
				ref := c.sql
				if c.my != "" {
					ref = c.my
				}
				want := scalar(t, direct, ref, c.pg, b.name)
				got := scalar(t, db, c.sql, "", "")
				if c.tol == 0 && math.Round(got) != want || c.tol > 0 && math.Abs(got-want) > c.tol {
					t.Errorf("%s = %g, want %g (the backend's)", c.sql, got, want)
				}
			}
			for _, c := range []struct{ sql, pg string }{
				{sql: "SELECT IFNULL(category, 'Unknown') AS c, COUNT(*) FROM orders GROUP BY c",
					pg: "SELECT COALESCE(category, 'Unknown') AS c, COUNT(*) FROM orders GROUP BY c"},
				{sql: "SELECT COALESCE(category, '(null)'), COUNT(*) FROM orders GROUP BY 1"},
				{sql: "SELECT CASE WHEN category IS NULL THEN 'Unknown' ELSE category END AS c, COUNT(*) FROM orders GROUP BY c"},
				{sql: "SELECT IFNULL(category, 'A') AS c, COUNT(*) FROM orders GROUP BY c",
					pg: "SELECT COALESCE(category, 'A') AS c, COUNT(*) FROM orders GROUP BY c"},
				{sql: "SELECT IFNULL(tier, 0) AS t, COUNT(*) FROM orders GROUP BY t",
					pg: "SELECT COALESCE(tier, 0) AS t, COUNT(*) FROM orders GROUP BY t"},
				{sql: "SELECT IFNULL(tier, 'Unknown') AS t, COUNT(*) FROM orders GROUP BY t",
					pg: "SELECT COALESCE(CAST(tier AS TEXT), 'Unknown') AS t, COUNT(*) FROM orders GROUP BY t"},
				{sql: "SELECT IFNULL(is_paid, 0) AS p, COUNT(*) FROM orders GROUP BY p",
					pg: "SELECT COALESCE(CASE WHEN is_paid THEN 1 WHEN NOT is_paid THEN 0 END, 0) AS p, COUNT(*) FROM orders GROUP BY p"},
				{sql: "SELECT is_paid IS NOT TRUE AS p, COUNT(*) FROM orders GROUP BY p",
					pg: "SELECT CASE WHEN is_paid IS NOT TRUE THEN 1 ELSE 0 END AS p, COUNT(*) FROM orders GROUP BY p"},
				{sql: "SELECT is_paid IS NOT FALSE AS p, COUNT(*) FROM orders GROUP BY p",
					pg: "SELECT CASE WHEN is_paid IS NOT FALSE THEN 1 ELSE 0 END AS p, COUNT(*) FROM orders GROUP BY p"},
				{sql: "SELECT is_paid IS FALSE AS p, COUNT(*) FROM orders GROUP BY p",
					pg: "SELECT CASE WHEN is_paid IS FALSE THEN 1 ELSE 0 END AS p, COUNT(*) FROM orders GROUP BY p"},
				{sql: "SELECT CASE WHEN is_paid IS NOT FALSE THEN 'yes' ELSE 'no' END AS p, COUNT(*) FROM orders GROUP BY p"},
			} {
				ref := c.sql
				if b.name == "postgres" && c.pg != "" {
					ref = c.pg
				}
				want := groupCounts(t, direct, ref)
				got := groupCounts(t, db, c.sql)
				if len(got) != len(want) {
					t.Errorf("%s: groups %v, want %v (the backend's)", c.sql, got, want)
					continue
				}
				for k, n := range want {
					if g, ok := got[k]; !ok || math.Round(g) != n {
						t.Errorf("%s: groups %v, want %v (the backend's)", c.sql, got, want)
						break
					}
				}
			}
		})
	}
}

// scalar runs a one-value query on db (pg in its place when backend is
// "postgres" and pg is set) and returns the value as a number; an error
// or NULL fails the test.
func scalar(t *testing.T, db *sql.DB, query, pg, backend string) float64 {
	t.Helper()
	if backend == "postgres" && pg != "" {
		query = pg
	}
	var v sql.NullFloat64
	if err := db.QueryRow(query).Scan(&v); err != nil || !v.Valid {
		t.Fatalf("%s: %v (valid %t)", query, err, v.Valid)
	}
	return v.Float64
}

// groupCounts runs a query of a key and a count on db and returns the
// count of each key, NULL as "NULL".
func groupCounts(t *testing.T, db *sql.DB, query string) map[string]float64 {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out := map[string]float64{}
	for _, r := range testdb.Strings(t, rows, query) {
		n, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatalf("%s: count %q: %v", query, r[1], err)
		}
		out[r[0]] = n
	}
	return out
}
