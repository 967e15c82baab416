package main

import (
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNullArguments binds NULL to parameters as clients do (Connector/J's
// setNull, mysql2's and PyMySQL's null, go-sql-driver's nil), through
// go-sql-driver's server-side prepared statements and its
// interpolateParams=true text, on SQLite, PostgreSQL and MariaDB. A
// comparison with NULL is UNKNOWN for every row, so it keeps none, nor
// does its NOT; the optional filter (? IS NULL OR col = ?) keeps every
// row with NULL bound and the rows of the value otherwise. Each count is
// at ε = 40, charged as usual (discrete Laplace noise with P[|Z| ≥ 1] <
// 2e-17: a rounded count is exact). On the old code every statement with
// a NULL argument was refused with 1235.
func TestNullArguments(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			typ := map[string]string{"sqlite": "TEXT", "postgres": "TIMESTAMP", "mysql": "DATETIME"}[b.driver]
			for _, q := range []string{
				fmt.Sprintf("CREATE TABLE items (category VARCHAR(10), qty INTEGER, created_at %s)", typ),
				`INSERT INTO items (category, qty, created_at) VALUES ('x', 1, '2024-01-01 10:00:00'), ('x', 2, '2024-01-02 10:00:00'),
					('x', 3, '2024-01-03 10:00:00'), ('y', 4, '2024-01-04 10:00:00'), ('y', 5, '2024-01-05 10:00:00'), (NULL, NULL, NULL)`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			p, prepared := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `
  - name: items
    columns:
      - {name: category, type: text}
      - {name: qty, type: integer, lower: 0, upper: 10}
      - {name: created_at, type: timestamp, lower: "2023-01-01 00:00:00", upper: "2025-01-01 00:00:00"}
`)
			interpolated, err := sql.Open("mysql", fmt.Sprintf("carol:carol-pw@tcp(%s)/dpproxy?timeout=10s&interpolateParams=true", p.addr))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { interpolated.Close() })
			interpolated.SetMaxOpenConns(1)
			for name, conn := range map[string]*sql.DB{"prepared": prepared, "interpolated": interpolated} {
				if _, err := conn.Exec("SET @dp_epsilon = 40"); err != nil {
					t.Fatal(err)
				}
				remaining := func() float64 {
					var r float64
					if err := conn.QueryRow("SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
						t.Fatal(err)
					}
					return r
				}
				for _, c := range []struct {
					q    string
					args []any
					want int
				}{
					{"SELECT COUNT(*) FROM items WHERE category = ?", []any{nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE qty = ?", []any{nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE created_at >= ?", []any{nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE NOT (category = ?)", []any{nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE category <> ?", []any{nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR category = ?)", []any{nil, nil}, 6},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR category = ?)", []any{"x", "x"}, 3},
					{"SELECT COUNT(*) FROM items WHERE (? IS NULL OR qty >= ?) AND (? IS NULL OR category = ?)", []any{nil, nil, "y", "y"}, 2},
					{"SELECT COUNT(*) FROM items WHERE category IN (?, ?)", []any{"y", nil}, 2},
					{"SELECT COUNT(*) FROM items WHERE category NOT IN (?, ?)", []any{"y", nil}, 0},
					{"SELECT COUNT(*) FROM items WHERE qty NOT BETWEEN ? AND ?", []any{nil, 3}, 2},
					{"SELECT SUM(CASE WHEN category = ? THEN 1 ELSE 0 END) FROM items", []any{nil}, 0},
				} {
					before := remaining()
					var n float64
					if err := conn.QueryRow(c.q, c.args...).Scan(&n); err != nil {
						t.Errorf("%s: %s %v: %v", name, c.q, c.args, err)
						continue
					}
					if got := int(math.Round(n)); got != c.want {
						t.Errorf("%s: %s %v: %d rows, want %d", name, c.q, c.args, got, c.want)
					}
					if spent := before - remaining(); math.Abs(spent-40) > 1e-9 {
						t.Errorf("%s: %s %v spent ε = %g, want 40", name, c.q, c.args, spent)
					}
				}
			}
		})
	}
}
