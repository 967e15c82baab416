package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
)

// TestResultTypesAreStatic runs statements through the real proxy on the
// SQLite demo, many times at several ε (so that the noise falls
// differently, IQR answers NULL (No Reply) at tiny ε, and IF takes either
// branch), in the text protocol and the binary one (a prepared
// statement), and checks through go-sql-driver that each column's
// DatabaseTypeName is the same in every run and is the type the statement
// gives it: grouped rows, a row without keys whose plan outputs differ
// from its columns, ROLLUP, window functions, a histogram from a
// synopsis (keys 0, 2.5, 5, ...) and an outer query over a derived table. Before static typing, an all-NULL column came out as
// NULL and an IF of a count and a fraction as BIGINT or DOUBLE.
func TestResultTypesAreStatic(t *testing.T) {
	var mean float64
	rows := demo.PUMS()
	for _, r := range rows {
		mean += r.Income / float64(len(rows))
	}
	// Near the true mean, the noisy AVG falls on either side of it.
	th := fmt.Sprintf("%.0f", mean)
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Each statement has %s where a WHERE goes: empty in the text
	// protocol, a condition with a parameter (a prepared statement) in
	// the binary one.
	statements := []struct{ sql, want string }{
		{"SELECT IQR(income) FROM pums%s", "DOUBLE"},
		// MIN and MAX of an integer column are integers, as in MySQL (the
		// released quantile rounded; a median is not).
		{"SELECT MIN(age), MAX(age), MEDIAN(age), MAX(age) - MIN(age) FROM pums%s", "BIGINT BIGINT DOUBLE BIGINT"},
		{"SELECT MEDIAN(LEAST(age, income)), IQR(income) FROM pums%s", "DOUBLE DOUBLE"},
		{"SELECT sex, IQR(income) FROM pums%s GROUP BY sex", "BIGINT DOUBLE"},
		{"SELECT sex, IQR(income) + 1 FROM pums%s GROUP BY sex", "BIGINT DOUBLE"},
		{"SELECT sex, IF(AVG(income) > " + th + ", COUNT(*), 1.5) FROM pums%s GROUP BY sex", "BIGINT DECIMAL"},
		{"SELECT sex, IF(AVG(income) > " + th + ", 'high', AVG(income)), CASE WHEN AVG(income) > " + th + " THEN COUNT(*) END FROM pums%s GROUP BY sex", "BIGINT VARCHAR BIGINT"},
		{"SELECT sex, married, COUNT(*), AVG(income) FROM pums%s GROUP BY sex, married WITH ROLLUP", "BIGINT BIGINT BIGINT DOUBLE"},
		{"SELECT race, AVG(income), RANK() OVER (ORDER BY AVG(income)), SUM(COUNT(*)) OVER (), MAX(AVG(income)) OVER () FROM pums%s GROUP BY race", "BIGINT DOUBLE BIGINT BIGINT DOUBLE"},
		{"SELECT FLOOR(age / 2.5) * 2.5 AS b, COUNT(*) FROM pums%s GROUP BY b", "DECIMAL BIGINT"}, // MariaDB's DECIMAL(23,1) of an integer age
		{"SELECT COUNT(*), AVG(m), MAX(m), SUM(n) FROM (SELECT race, COUNT(*) AS n, IQR(income) AS m FROM pums%s GROUP BY race) AS t", "BIGINT DOUBLE DOUBLE BIGINT"},
	}
	seen := make([]map[string]int, len(statements))
	nulls := 0
	for run := range 12 {
		eps := []string{"0.01", "0.1", "1"}[run%3]
		if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = "+eps); err != nil {
			t.Fatal(err)
		}
		binary := run%2 == 1
		for i, s := range statements {
			q, args := fmt.Sprintf(s.sql, ""), []any(nil)
			if binary {
				q, args = fmt.Sprintf(s.sql, " WHERE age >= ?"), []any{0}
			}
			rs, err := conn.QueryContext(t.Context(), q, args...)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			cts, err := rs.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ct := range cts {
				names = append(names, ct.DatabaseTypeName())
			}
			values := make([]any, len(cts))
			ptrs := make([]any, len(cts))
			for j := range values {
				ptrs[j] = &values[j]
			}
			for rs.Next() {
				if err := rs.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for _, v := range values {
					if v == nil {
						nulls++
					}
				}
			}
			if err := rs.Err(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			rs.Close()
			got := strings.Join(names, " ")
			if seen[i] == nil {
				seen[i] = map[string]int{}
			}
			seen[i][got]++
			if got != s.want {
				t.Errorf("%s (ε = %s, binary %t): column types %s, want %s", q, eps, binary, got, s.want)
			}
		}
	}
	for i, s := range statements {
		if len(seen[i]) != 1 {
			t.Errorf("%s: column types differ between runs: %v", s.sql, seen[i])
		}
	}
	// The runs at ε = 0.01 answer some IQRs No Reply: their NULLs were typed too.
	if nulls == 0 {
		t.Errorf("no NULL in any answer: the runs did not exercise a NULL column")
	}
}
