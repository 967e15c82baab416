package main

import (
	"database/sql"
	"math"
	"path/filepath"
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
// must be exact. On the old code every statement was refused.
func TestNullFiltersEndToEnd(t *testing.T) {
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			var dsn string
			switch b.driver {
			case "sqlite":
				dsn = filepath.Join(t.TempDir(), "data.db")
			case "postgres":
				dsn = testdb.PostgresDSN(t)
			default:
				dsn = testdb.MySQLDSN(t)
			}
			ledgerDriver, ledgerDSN := b.driver, dsn
			if b.driver == "sqlite" {
				ledgerDSN = filepath.Join(t.TempDir(), "ledger.db")
			}
			config := groupedDeployment(t, b.driver, dsn, ledgerDriver, ledgerDSN)
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
			for _, r := range demo.PUMS() {
				if r.Race == 1 {
					race1[0]++
				}
				raceReadableBySex[r.Sex]++
			}
			p := startProxy(t, "", nil, "--config", config)
			db := p.connect(t, "gina", "gina-pw")
			db.SetMaxOpenConns(1)
			if _, err := db.Exec("SET @dp_epsilon = 40"); err != nil {
				t.Fatal(err)
			}
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
		})
	}
}
