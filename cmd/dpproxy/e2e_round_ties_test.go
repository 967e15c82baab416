package main

import (
	"database/sql"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRoundTiesAsMySQL: ROUND of values exactly on halves answers as
// MySQL rounds their declared type on every backend, away from zero for
// an integer column (ROUND(25, -1) is 30) and to even for a real one
// (ROUND(2.5e0) is 2), not by the backend's own rule (PostgreSQL and
// MariaDB rounded the integer's double to even, SQLite the real's away
// from zero): as a GROUP BY key, inside an aggregate's argument and in a
// WHERE condition, each count compared with MariaDB's own answer on the
// same rows (ε = 40: the rounded counts are exact).
func TestRoundTiesAsMySQL(t *testing.T) {
	const copies = 50
	var values []string
	for i, n := range []int{5, 15, -5, 25} {
		x := []string{"0.5", "1.5", "2.5", "-2.5"}[i]
		for range copies {
			values = append(values, fmt.Sprintf("(%d, %s)", n, x))
		}
	}
	load := func(db *sql.DB) {
		t.Helper()
		if _, err := db.Exec("CREATE TABLE halves (n INTEGER, x DOUBLE PRECISION)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO halves (n, x) VALUES " + strings.Join(values, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	statements := []string{
		"SELECT ROUND(n, -1), COUNT(*) FROM halves GROUP BY ROUND(n, -1)",
		"SELECT ROUND(x), COUNT(*) FROM halves GROUP BY ROUND(x)",
		"SELECT TRUNCATE(n, -1), COUNT(*) FROM halves GROUP BY TRUNCATE(n, -1)",
		"SELECT FLOOR(x), COUNT(*) FROM halves GROUP BY FLOOR(x)",
		"SELECT CEIL(x), COUNT(*) FROM halves GROUP BY CEIL(x)",
		"SELECT COUNT(*) FROM halves WHERE ROUND(n, -1) = 30 OR ROUND(n, -1) = -10",
		"SELECT COUNT(*) FROM halves WHERE ROUND(x) = 2",
		"SELECT SUM(ROUND(n, -1) = 20), SUM(ROUND(x) = 0) FROM halves",
	}
	ref := testdb.Open(t, "mysql", testdb.MySQLDSN(t))
	load(ref)
	want := map[string]map[string]string{}
	for _, q := range statements {
		want[q] = roundTieCounts(t, ref, q)
	}
	if got := want[statements[0]]; got["30"] != strconv.Itoa(copies) || got["0"] != "" {
		t.Fatalf("MariaDB's ROUND(n, -1): %v, want 25 in 30", got)
	}
	if got := want[statements[1]]; got["2"] != strconv.Itoa(2*copies) {
		t.Fatalf("MariaDB's ROUND(x): %v, want 1.5 and 2.5 in 2", got)
	}
	tables := `  - name: halves
    columns:
      - {name: n, type: integer, lower: -50, upper: 50}
      - {name: x, type: real, lower: -10, upper: 10}
`
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			load(testdb.Open(t, b.driver, dsn))
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 40, max_epsilon: 50}", "epsilon: 10000, delta: 1.0e-5", tables)
			for _, q := range statements {
				if got := roundTieCounts(t, db, q); !maps.Equal(got, want[q]) {
					t.Errorf("%s: %v, want MariaDB's %v", q, got, want[q])
				}
			}
		})
	}
}

// roundTieCounts runs q and maps each row's leading columns to its last
// column, a count (rows counting 0 left out, as the proxy answers the
// empty buckets of a GROUP BY key), each number as %g writes it.
func roundTieCounts(t *testing.T, db *sql.DB, q string) map[string]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		cells := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range cells {
			ptrs[i] = &cells[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		nums := make([]string, len(cells))
		for i, c := range cells {
			v, err := strconv.ParseFloat(c.String, 64)
			if err != nil {
				t.Fatalf("%s: %q is no number", q, c.String)
			}
			nums[i] = fmt.Sprintf("%g", v+0) // -0 as 0
			if v == 0 {
				nums[i] = "0"
			}
		}
		if last := nums[len(nums)-1]; last != "0" || len(nums) == 1 {
			out[strings.Join(nums[:len(nums)-1], ",")] = last
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
