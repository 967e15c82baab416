package main

import (
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRangeConditionKeyNullGroup: GROUP BY a range condition of a numeric
// column (age > 30, age BETWEEN 15 AND 45) answers as MariaDB does, on
// PostgreSQL and MariaDB: 1 where it holds, 0 where it does not, and a
// NULL group of the rows whose age is NULL, where SQL computes NULL; the
// CASE and IF of the same condition count those rows in 0, as SQL's CASE
// and IF(NULL, 1, 0) do. The group keys {1, 0, NULL} follow from the
// expression, so all three are released whatever the data, as a CASE's
// tiers are; here every group has rows, so the answer is MariaDB's. At
// ε = 40 a count's Laplace noise (scale 1/40) rounds away (it reaches 0.5
// with probability e⁻²⁰).
func TestRangeConditionKeyNullGroup(t *testing.T) {
	setup := []string{
		"CREATE TABLE cq (age INTEGER, k INTEGER)",
		"INSERT INTO cq VALUES (10, 1), (20, 1), (40, 2), (50, 1), (60, 2), (NULL, 1), (NULL, 2), (25, 2)",
	}
	config := `
  - name: cq
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: k, type: integer, lower: 1, upper: 2, values: [1, 2]}
`
	cases := []struct {
		query, want string
		// empty: the answer has an empty group, which the proxy releases
		// (its groups are public) and MariaDB has not.
		empty bool
	}{
		{query: "SELECT age > 30 AS o, COUNT(*) FROM cq GROUP BY o ORDER BY o", want: "[NULL 2 ; 0 3 ; 1 3 ;] warnings []"},
		{query: "SELECT COUNT(*), age BETWEEN 15 AND 45 FROM cq GROUP BY age BETWEEN 15 AND 45 ORDER BY 2", want: "[2 NULL ; 3 0 ; 3 1 ;] warnings []"},
		{query: "SELECT age <= 30 AND age > 10 AS o, k, COUNT(*) FROM cq GROUP BY o, k ORDER BY o, k", want: "[NULL 1 1 ; NULL 2 1 ; 0 1 2 ; 0 2 2 ; 1 1 1 ; 1 2 1 ;] warnings []"},
		{query: "SELECT CASE WHEN age > 30 THEN 1 ELSE 0 END AS o, COUNT(*) FROM cq GROUP BY o ORDER BY o", want: "[0 5 ; 1 3 ;] warnings []"},
		{query: "SELECT IF(age > 30, 1, 0) AS o, COUNT(*) FROM cq GROUP BY o ORDER BY o", want: "[0 5 ; 1 3 ;] warnings []"},
		{query: "SELECT age > 30 AS o, COUNT(*) FROM cq WHERE k = 2 AND age < 40 GROUP BY o ORDER BY o", want: "[NULL 0 ; 0 1 ; 1 0 ;] warnings []", empty: true},
	}
	t.Run("postgres", func(t *testing.T) {
		dsn := testdb.PostgresDSN(t)
		db := testdb.Open(t, "postgres", dsn)
		for _, s := range setup {
			if _, err := db.Exec(s); err != nil {
				t.Fatal(err)
			}
		}
		conn, _ := doraSession(t, visitsBackend{"postgres", "postgres", testdb.PostgresDSN}, dsn, config)
		for _, c := range cases {
			if got := runCompared(t.Context(), conn, c.query); got != c.want {
				t.Errorf("%s:\n got  %s\n want %s", c.query, got, c.want)
			}
		}
	})
	t.Run("mariadb", func(t *testing.T) {
		conn, ref, _ := besideMariaDBTable(t, setup, config)
		for _, c := range cases {
			got, maria := runCompared(t.Context(), conn, c.query), runCompared(t.Context(), ref, c.query)
			if got != c.want || maria != c.want && !c.empty {
				t.Errorf("%s:\n proxy   %s\n MariaDB %s\n want    %s", c.query, got, maria, c.want)
			}
		}
	})
}
