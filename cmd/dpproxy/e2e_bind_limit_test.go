package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestLongInListRefusedUncharged: a text IN list of 70,000 values makes
// more bind arguments than any backend accepts in one query (PostgreSQL
// and MariaDB 65,535, SQLite 32,766). It used to be planned, reserved and
// charged, and then refused by the backend (1105); it is refused with
// 1235 before anything is reserved, dp_remaining_epsilon() unchanged,
// while 1,000 values answer. On SQLite 40,000 are refused too.
func TestLongInListRefusedUncharged(t *testing.T) {
	in := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("'v%d'", i)
		}
		return "(" + strings.Join(vs, ", ") + ")"
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			for _, q := range []string{"CREATE TABLE tn (name VARCHAR(20), age INTEGER)",
				"INSERT INTO tn VALUES ('v1', 30), ('v2', 40), ('v999', 50), ('other', 60)"} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 100, delta: 1.0e-5", `  - name: tn
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: name, type: text}
`)
			remaining := func() float64 {
				t.Helper()
				var r float64
				if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
					t.Fatal(err)
				}
				return r
			}
			refused := []int{70000}
			if b.driver == "sqlite" {
				refused = append(refused, 40000)
			}
			for _, n := range refused {
				before := remaining()
				for _, q := range []string{"SELECT COUNT(*) FROM tn WHERE name IN " + in(n), "SELECT AVG(age), MEDIAN(age) FROM tn WHERE name IN " + in(n)} {
					var x float64
					err := db.QueryRow(q).Scan(&x)
					if code := mysqlCode(err); code != 1235 || !strings.Contains(err.Error(), "use fewer IN values") {
						t.Errorf("%d values: got %v, want error 1235 naming the limit", n, err)
					}
				}
				if after := remaining(); after != before {
					t.Errorf("%d values: dp_remaining_epsilon() went from %g to %g", n, before, after)
				}
			}
			before := remaining()
			var count float64
			if err := db.QueryRow("SELECT COUNT(*) FROM tn WHERE name IN " + in(1000)).Scan(&count); err != nil {
				t.Fatalf("1000 values: %v", err)
			}
			if after := remaining(); after >= before {
				t.Errorf("1000 values answered %g without spending (%g, %g)", count, before, after)
			}
		})
	}
}
