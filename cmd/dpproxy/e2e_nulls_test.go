package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNullFiltersEndToEnd runs IS NULL, IS NOT NULL and BI tools' "is not"
// filter (col <> v OR col IS NULL) through the real proxy on SQLite,
// PostgreSQL and MariaDB over the demo rows plus 40 rows whose race and
// income are NULL (and on SQLite 10 more whose race is the text 'abc',
// unreadable, so counted as NULL). At ε = 40 a count's discrete Laplace
// noise Z has r = e^-40: P[|Z| ≥ 1] = 2r/(1+r) < 2e-17, so every count
// must be exact. On the old code every statement was refused. race
// declares NULL as a group (values: [1, ..., 6, null]): GROUP BY race
// answers 7 groups, the NULL one counting the unreadable values, and
// SELECT DISTINCT race lists NULL.
func TestNullFiltersEndToEnd(t *testing.T) {
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			dsn, config := groupedDeploymentOn(t, b.driver)
			// race declares NULL as a group of its domain.
			yaml, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			withNull := strings.Replace(string(yaml), "values: [1, 2, 3, 4, 5, 6]}", "values: [1, 2, 3, 4, 5, 6, null]}", 1)
			if withNull == string(yaml) {
				t.Fatal("fixture: no race domain in the deployment")
			}
			if err := os.WriteFile(config, []byte(withNull), 0o600); err != nil {
				t.Fatal(err)
			}
			direct := testdb.Open(t, b.driver, dsn)
			nullRace := 0
			for i := range 40 {
				if _, err := direct.Exec("INSERT INTO pums (age, sex, educ, race, income, married) VALUES (30, " + []string{"0", "1"}[i%2] + ", 9, NULL, NULL, 1)"); err != nil {
					t.Fatal(err)
				}
				nullRace++
			}
			if b.driver == "sqlite" {
				for range 10 {
					if _, err := direct.Exec("INSERT INTO pums (age, sex, educ, race, income, married) VALUES (30, 1, 9, 'abc', 1000, 1)"); err != nil {
						t.Fatal(err)
					}
					nullRace++
				}
			}
			var race1, raceReadableBySex [2]float64
			var byRace [8]float64 // index 7: the NULL group
			for _, r := range demo.PUMS() {
				if r.Race == 1 {
					race1[0]++
				}
				raceReadableBySex[r.Sex]++
				byRace[r.Race]++
			}
			byRace[7] = float64(nullRace)
			db := exactSession(t, config)
			total := float64(len(demo.PUMS()) + nullRace)
			for _, c := range []struct {
				sql  string
				want float64
			}{
				{"SELECT COUNT(*) FROM pums WHERE race IS NULL", float64(nullRace)},
				{"SELECT COUNT(*) FROM pums WHERE `pums`.`race` IS NOT NULL", total - float64(nullRace)},
				{"SELECT COUNT(*) FROM pums WHERE (race <> 1 OR race IS NULL)", total - race1[0]},
				{"SELECT COUNT(*) FROM pums WHERE race IS NULL OR NOT (race = 1)", total - race1[0]},
				{"SELECT COUNT(*) FROM pums WHERE race NOT IN (1) OR race IS NULL", total - race1[0]},
				{"SELECT COUNT(*) FROM pums WHERE NOT (income IS NULL)", float64(len(demo.PUMS())) + (float64(nullRace) - 40)},
			} {
				var got float64
				if err := db.QueryRow(c.sql).Scan(&got); err != nil {
					t.Fatalf("%s: %v", c.sql, err)
				}
				if math.Abs(got-c.want) > 0.5 {
					t.Errorf("%s = %g, want %g", c.sql, got, c.want)
				}
			}
			rows, err := db.Query("SELECT sex, COUNT(*) FROM pums WHERE race IS NOT NULL GROUP BY sex ORDER BY sex")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got [2]float64
			for rows.Next() {
				var sex int
				var n sql.NullFloat64
				if err := rows.Scan(&sex, &n); err != nil {
					t.Fatal(err)
				}
				got[sex] = n.Float64
			}
			if got != raceReadableBySex {
				t.Errorf("GROUP BY sex WHERE race IS NOT NULL: %v, want %v", got, raceReadableBySex)
			}
			groupedByRace(t, db, byRace)
		})
	}
}

// groupedByRace checks GROUP BY race with the NULL group (want[7]) and the
// listing of race's domain.
func groupedByRace(t *testing.T, db *sql.DB, want [8]float64) {
	t.Helper()
	rows, err := db.Query("SELECT race, COUNT(*) AS n FROM pums GROUP BY race ORDER BY race")
	if err != nil {
		t.Fatal(err)
	}
	var got [8]float64
	var order []string
	for rows.Next() {
		var race sql.NullInt64
		var n float64
		if err := rows.Scan(&race, &n); err != nil {
			t.Fatal(err)
		}
		i := 7
		if race.Valid {
			i = int(race.Int64)
		}
		got[i] = n
		order = append(order, fmt.Sprint(race.Int64, race.Valid))
	}
	rows.Close()
	if len(order) != 7 {
		t.Errorf("GROUP BY race answered %d groups %v, want 7 (the NULL group included)", len(order), order)
	}
	if order[0] != "0 false" {
		t.Errorf("ORDER BY race puts %v first, want the NULL group first (MySQL's order)", order)
	}
	if got != want {
		t.Errorf("GROUP BY race: %v, want %v", got, want)
	}
	var listed int
	var nulls int
	list, err := db.Query("SELECT DISTINCT race FROM pums")
	if err != nil {
		t.Fatal(err)
	}
	defer list.Close()
	for list.Next() {
		var race sql.NullInt64
		if err := list.Scan(&race); err != nil {
			t.Fatal(err)
		}
		listed++
		if !race.Valid {
			nulls++
		}
	}
	if listed != 7 || nulls != 1 {
		t.Errorf("SELECT DISTINCT race lists %d values, %d of them NULL; want 7 and 1", listed, nulls)
	}
}

// TestAffineAggregatesEndToEnd: aggregates of a·col + b through the real
// proxy on SQLite, PostgreSQL and MariaDB at ε = 40 are near the exact
// values of the expressions (the tolerances are many noise scales wide:
// the check is that the rewrite computes the right quantity on every
// backend); the old code refused them.
func TestAffineAggregatesEndToEnd(t *testing.T) {
	var n, sumAge, sumIncome float64
	for _, r := range demo.PUMS() {
		n++
		sumAge += float64(r.Age)
		sumIncome += r.Income
	}
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			_, config := groupedDeploymentOn(t, b.driver)
			db := exactSession(t, config)
			for _, c := range []struct {
				sql       string
				want, tol float64
			}{
				{"SELECT AVG(income / 1000) FROM pums", sumIncome / n / 1000, 3},
				{"SELECT SUM(2 * age + 10) FROM pums", 2*sumAge + 10*n, 400},
				{"SELECT AVG(100 - age) FROM pums", 100 - sumAge/n, 1},
			} {
				var got float64
				if err := db.QueryRow(c.sql).Scan(&got); err != nil {
					t.Fatalf("%s: %v", c.sql, err)
				}
				if math.Abs(got-c.want) > c.tol {
					t.Errorf("%s = %g, want %g ± %g", c.sql, got, c.want, c.tol)
				}
			}
		})
	}
}

// TestTierKeysEndToEnd: GROUP BY a CASE of tiers through the real proxy on
// SQLite, PostgreSQL and MariaDB answers every tier, the empty one
// included, with counts exact at ε = 40 (P[|Z| ≥ 1] < 2e-17 per count);
// the old code refused the statement.
func TestTierKeysEndToEnd(t *testing.T) {
	want := map[string]float64{"low": 0, "mid": 0, "high": 0, "none": 0}
	for _, r := range demo.PUMS() {
		switch {
		case r.Income < 20000:
			want["low"]++
		case r.Income < 80000:
			want["mid"]++
		default:
			want["high"]++
		}
	}
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			_, config := groupedDeploymentOn(t, b.driver)
			db := exactSession(t, config)
			rows, err := db.Query("SELECT CASE WHEN income < 20000 THEN 'low' WHEN income < 80000 THEN 'mid' WHEN income < 1000000 THEN 'high' ELSE 'none' END AS tier, COUNT(*) FROM pums GROUP BY tier ORDER BY tier")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			got := map[string]float64{}
			var order []string
			for rows.Next() {
				var tier string
				var n float64
				if err := rows.Scan(&tier, &n); err != nil {
					t.Fatal(err)
				}
				got[tier] = n
				order = append(order, tier)
			}
			if fmt.Sprint(order) != "[high low mid none]" {
				t.Errorf("tiers %v, want [high low mid none] (every tier, ordered by label)", order)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("tier %s: %g rows, want %g", k, got[k], v)
				}
			}
		})
	}
}

// TestTierElseHoldsNullsEndToEnd: a row whose tiered column is NULL is in
// the ELSE tier of GROUP BY CASE WHEN ... ELSE ... END, where SQL's CASE
// puts it (every WHEN is UNKNOWN on NULL), and in the NULL group of a
// CASE without ELSE, on SQLite, PostgreSQL and MariaDB: at ε = 40 every
// count equals the backend's own GROUP BY of the same statement (40 rows
// with a NULL income and age 99 added to the demo's). The ELSE tier's
// other reads (MEDIAN, by the group's filter) hold them too. A range
// condition (GROUP BY income >= 80000), which SQL computes as NULL there,
// puts them in its NULL group, as the backend does. Before, the NULL rows
// were in no tier: the ELSE tiers lacked 40 rows, and a CASE without ELSE
// was refused; later the range condition still left them in no group.
func TestTierElseHoldsNullsEndToEnd(t *testing.T) {
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			dsn, config := groupedDeploymentOn(t, b.driver)
			direct := testdb.Open(t, b.driver, dsn)
			for i := range 40 {
				if _, err := direct.Exec(fmt.Sprintf("INSERT INTO pums (age, sex, educ, race, income, married) VALUES (99, %d, 9, 1, NULL, 1)", i%2)); err != nil {
					t.Fatal(err)
				}
			}
			db := exactSession(t, config)
			counts := func(db *sql.DB, q string) map[string]float64 {
				t.Helper()
				rows, err := db.Query(q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer rows.Close()
				out := map[string]float64{}
				for rows.Next() {
					var label sql.NullString
					var n float64
					if err := rows.Scan(&label, &n); err != nil {
						t.Fatal(err)
					}
					key := "NULL"
					if label.Valid {
						key = label.String
					}
					out[key] = n
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return out
			}
			for _, c := range []struct {
				q     string
				else_ string
			}{
				{"SELECT CASE WHEN income < 20000 THEN 'low' WHEN income < 80000 THEN 'mid' ELSE 'high' END AS tier, COUNT(*) FROM pums GROUP BY tier", "high"},
				{"SELECT CASE WHEN income < 20000 THEN 'low' WHEN income < 80000 THEN 'mid' END AS tier, COUNT(*) FROM pums GROUP BY tier", "NULL"},
				{"SELECT CASE WHEN income < 20000 THEN 'low' ELSE NULL END AS tier, COUNT(*) FROM pums GROUP BY tier", "NULL"},
				{"SELECT CASE WHEN income > 1000 * age THEN 'rich' ELSE 'other' END AS tier, COUNT(*) FROM pums GROUP BY tier", "other"},
			} {
				got, want := counts(db, c.q), counts(direct, c.q)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s: proxy %v, backend %v", c.q, got, want)
				}
				if n := countNullIncome(t, direct); want[c.else_] < n {
					t.Fatalf("fixture: the backend's %s tier has %g rows, fewer than the %g NULL incomes", c.else_, want[c.else_], n)
				}
			}
			// A range condition is NULL on NULL: SQL's NULL group, as the
			// backend's. (PostgreSQL's booleans spelled as MySQL's numbers.)
			q := "SELECT income >= 80000 AS rich, COUNT(*) FROM pums GROUP BY rich"
			got, want := counts(db, q), counts(direct, "SELECT CASE WHEN income >= 80000 THEN 1 WHEN income < 80000 THEN 0 END AS rich, COUNT(*) FROM pums GROUP BY rich")
			if fmt.Sprint(got) != fmt.Sprint(want) || want["NULL"] != 40 {
				t.Errorf("%s: proxy %v, backend %v (40 in the NULL group)", q, got, want)
			}
			// The ELSE tier's MEDIAN reads its rows by the group's filter:
			// only the 40 NULL incomes, of age 99, are there.
			var tier string
			var n, median float64
			if err := db.QueryRow("SELECT CASE WHEN income < 1000000 THEN 'any' ELSE 'none' END AS tier, COUNT(*), MEDIAN(age) FROM pums GROUP BY tier HAVING tier = 'none'").Scan(&tier, &n, &median); err != nil {
				t.Fatal(err)
			}
			if n != 40 || math.Abs(median-99) > 2 {
				t.Errorf("the ELSE tier of NULL incomes: %g rows, median age %g; want 40 and 99", n, median)
			}
		})
	}
}

// countNullIncome is the number of the backend's pums rows whose income
// is NULL.
func countNullIncome(t *testing.T, direct *sql.DB) float64 {
	t.Helper()
	var n float64
	if err := direct.QueryRow("SELECT COUNT(*) FROM pums WHERE income IS NULL").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
