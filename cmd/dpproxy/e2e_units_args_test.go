package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestUnitGroupsWithTextConditionsEndToEnd: on a unit table with one row
// per unit and group and at most one group per unit, a statement grouped
// by a text key whose aggregate tests a text condition (a derived column
// with a bind argument) counts each unit once, in one group, on every
// backend. On MySQL and SQLite (positional ?) the derived column's string
// was bound to the group key and the key's strings to the CASE, so every
// unit was counted in both groups and the CASE matched nothing (an
// independent review). At ε = 40 per statement a count's noise is below
// 1 with probability 1 − 1e-8.
func TestUnitGroupsWithTextConditionsEndToEnd(t *testing.T) {
	const units = 100
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			var values []string
			for p := range units {
				values = append(values, fmt.Sprintf("(%d, 'Rome', 'zz1', 30), (%d, 'Berlin', 'zz1', 40)", p, p))
			}
			for _, q := range []string{"CREATE TABLE tu (pid INTEGER, city VARCHAR(20), name VARCHAR(20), age INTEGER)",
				"INSERT INTO tu VALUES " + strings.Join(values, ", ")} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `  - name: tu
    privacy_unit: pid
    max_rows_per_unit: 1
    max_groups_per_unit: 1
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: city, type: text, values: [Rome, Berlin]}
      - {name: name, type: text}
`)
			if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				"SELECT city, COUNT(*), SUM(CASE WHEN name = 'zz1' THEN 1 ELSE 0 END) FROM tu GROUP BY city",
				"SELECT city, COUNT(*), SUM(CASE WHEN name = 'zz1' THEN age ELSE 0 END) / 35 FROM tu WHERE name <> 'other' GROUP BY city",
			} {
				rows, err := db.Query(q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var count, matched float64
				groups := 0
				for rows.Next() {
					var city string
					var n, m float64
					if err := rows.Scan(&city, &n, &m); err != nil {
						t.Fatal(err)
					}
					count, matched, groups = count+n, matched+m, groups+1
				}
				if err := rows.Close(); err != nil {
					t.Fatal(err)
				}
				if groups != 2 {
					t.Errorf("%s: %d groups, want 2", q, groups)
				}
				// The CASE's sum: each unit's kept row, age 30 or 40, at
				// most 100/35 times the count's error in each group.
				if math.Abs(count-units) > 2 || math.Abs(matched-units) > 0.2*units {
					t.Errorf("%s: the groups count %g units and the CASE matches %g, want %d each (each unit in one group)", q, count, matched, units)
				}
			}
		})
	}
}
