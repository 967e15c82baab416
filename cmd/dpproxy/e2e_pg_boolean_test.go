package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestPostgresBooleanAsInteger: a PostgreSQL boolean column declared
// integer with bounds [0, 1] (values [0, 1]) is read as MySQL reads a
// BOOLEAN, the number 1 for true and 0 for false: the proxy starts (it
// refused the column as no number), and through go-sql-driver TRUE, 1, IN
// (1), IS NULL, a server-side prepared statement's bool argument, SUM,
// AVG, MEDIAN, GROUP BY the column over its declared values and
// conditional sums (Metabase's sum(CASE WHEN is_paid = 1 THEN 1 ELSE 0
// END)) answer as over 0 and 1. TRUE also compares with another numeric
// column as 1. The table holds 70 paid, 30 unpaid and 20 NULL rows; at
// ε = 40 a count's or a [0, 1] sum's noise is below 0.5 with probability
// above 1 − 1e-8, so they must be exact after rounding; a sum of amounts
// in [0, 100] errs by less than 30 with probability above 1 − 1e-5.
func TestPostgresBooleanAsInteger(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	direct := testdb.Open(t, "postgres", dsn)
	for _, q := range []string{
		"CREATE TABLE orders (id INTEGER, is_paid BOOLEAN, amount INTEGER)",
		// Rows 0-69 paid, 70-99 unpaid, 100-119 NULL; amount = id % 10 * 10.
		`INSERT INTO orders SELECT i, CASE WHEN i < 70 THEN TRUE WHEN i < 100 THEN FALSE END, i % 10 * 10 FROM generate_series(0, 119) AS i`,
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, db := startCarolProxy(t, "postgres", dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 100000, delta: 1.0e-5", `  - name: orders
    columns:
      - {name: is_paid, type: integer, lower: 0, upper: 1, values: [0, 1]}
      - {name: amount, type: integer, lower: 0, upper: 100}
  - name: order_amounts
    source: orders
    columns:
      - {name: amount, type: integer, lower: 0, upper: 100}
  - name: order_flags
    source: orders
    columns:
      - {name: is_paid, type: text}
`)
	if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
		t.Fatal(err)
	}
	// Sum of amounts of the paid rows (ids 0-69): 7 × (0 + 10 + … + 90).
	const paidAmount = 7 * 450
	for _, c := range []struct {
		sql  string
		args []any
		want float64
		tol  float64 // 0: exact after rounding
	}{
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid = TRUE", want: 70},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid = FALSE", want: 30},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid = 1", want: 70},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IN (1)", want: 70},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid <> 1", want: 30},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid IS NULL", want: 20},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid = ?", args: []any{true}, want: 70},
		{sql: "SELECT COUNT(*) FROM orders WHERE is_paid = ?", args: []any{false}, want: 30},
		{sql: "SELECT COUNT(is_paid) FROM orders", want: 100},
		{sql: "SELECT SUM(is_paid) FROM orders", want: 70},
		{sql: "SELECT AVG(is_paid) FROM orders", want: 0.7, tol: 0.05},
		{sql: "SELECT MEDIAN(is_paid) FROM orders", want: 1, tol: 0.25},
		{sql: "SELECT SUM(CASE WHEN is_paid = 1 THEN 1 ELSE 0 END) FROM orders", want: 70},
		{sql: "SELECT SUM(CASE WHEN is_paid = 1 THEN amount END) FROM orders", want: paidAmount, tol: 30},
		{sql: "SELECT COUNT(*) FROM orders WHERE amount >= TRUE AND is_paid = TRUE", want: 63},
	} {
		var got float64
		if err := db.QueryRow(c.sql, c.args...).Scan(&got); err != nil {
			t.Errorf("%s %v: %v", c.sql, c.args, err)
			continue
		}
		if c.tol == 0 && math.Round(got) != c.want || c.tol > 0 && math.Abs(got-c.want) > c.tol {
			t.Errorf("%s %v = %g, want %g", c.sql, c.args, got, c.want)
		}
	}
	// Two more configured tables read orders, one not declaring is_paid,
	// one declaring it text (PostgreSQL's 't'): each reads the column as
	// it declares it, and orders still reads it as 1 and 0 after them.
	for _, c := range []struct {
		sql  string
		want float64
	}{
		{"SELECT COUNT(*) FROM order_amounts WHERE amount >= 50", 60},
		{"SELECT COUNT(*) FROM order_flags WHERE is_paid = 'true'", 70},
		{"SELECT SUM(is_paid) FROM orders", 70},
		{"SELECT COUNT(*) FROM orders WHERE is_paid = 1", 70},
	} {
		var got float64
		if err := db.QueryRow(c.sql).Scan(&got); err != nil {
			t.Errorf("%s: %v", c.sql, err)
		} else if math.Round(got) != c.want {
			t.Errorf("%s = %g, want %g", c.sql, got, c.want)
		}
	}
	rows, err := db.Query("SELECT is_paid, COUNT(*) FROM orders GROUP BY is_paid ORDER BY is_paid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var groups []string
	for rows.Next() {
		var key int64
		var n float64
		if err := rows.Scan(&key, &n); err != nil {
			t.Fatal(err)
		}
		groups = append(groups, fmt.Sprintf("%d:%g", key, math.Round(n)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(groups, " "); got != "0:30 1:70" {
		t.Errorf("GROUP BY is_paid: %s, want 0:30 1:70", got)
	}
}
