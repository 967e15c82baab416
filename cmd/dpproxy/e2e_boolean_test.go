package main

import (
	"database/sql"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// booleanRow is a row of the test's pums table; a NULL race or income is
// absent (ok false).
type booleanRow struct {
	age, sex, married int
	race              int
	raceOK            bool
	income            float64
	incomeOK          bool
}

// TestBooleanWhereEndToEnd runs WHERE clauses with OR and NOT through the
// real proxy on SQLite, PostgreSQL and MariaDB, on a table without an
// interactive domain (they were refused before): counts, a range count,
// GROUP BY declared keys, GROUP BY a key chosen by partition selection,
// AVG and MEDIAN, over the demo rows plus 40 rows whose race and income
// are NULL, so that SQL's three-valued logic decides (NOT (race = 1)
// keeps no NULL race; NOT (race = 1 AND age > 50) keeps them, since NULL
// AND FALSE is FALSE). At ε = 40 a count's discrete Laplace noise Z has
// P[|Z| ≥ 1] < 2e-17, so counts must be exact; a mean of n ≥ 100 rows in
// [0, 100] errs by less than 0.5 with probability above 1 − 1e-6, and the
// median of integer ages is the true one or a neighbour. Comparisons of two
// expressions of columns (income > 1000 * age) are their difference
// compared with 0; IFNULL(income, 0) reads a missing income as 0.
func TestBooleanWhereEndToEnd(t *testing.T) {
	rows := booleanRows()
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			dsn, config := groupedDeploymentOn(t, b.driver)
			direct := testdb.Open(t, b.driver, dsn)
			for i := range 40 {
				if _, err := direct.Exec("INSERT INTO pums (age, sex, educ, race, income, married) VALUES (30, " + []string{"0", "1"}[i%2] + ", 9, NULL, NULL, 1)"); err != nil {
					t.Fatal(err)
				}
			}
			db := exactSession(t, config)
			for _, c := range []struct {
				sql  string
				keep func(booleanRow) bool
			}{
				{"SELECT COUNT(*) FROM pums WHERE race = 1 OR income > 100000",
					func(r booleanRow) bool { return r.raceOK && r.race == 1 || r.incomeOK && r.income > 100000 }},
				{"SELECT COUNT(*) FROM pums WHERE NOT (race = 1)", func(r booleanRow) bool { return r.raceOK && r.race != 1 }},
				{"SELECT COUNT(*) FROM pums WHERE NOT (race = 1 AND age > 50)",
					func(r booleanRow) bool { return !(r.age > 50 && (!r.raceOK || r.race == 1)) }},
				{"SELECT COUNT(*) FROM pums WHERE race <> 2 OR age < 20", func(r booleanRow) bool { return r.raceOK && r.race != 2 || r.age < 20 }},
				{"SELECT COUNT(*) FROM pums WHERE NOT NOT (sex = 1 OR married = 0)", func(r booleanRow) bool { return r.sex == 1 || r.married == 0 }},
				{"SELECT COUNT(*) FROM pums WHERE income > 1000 * age OR age <= married * 20",
					func(r booleanRow) bool { return r.incomeOK && r.income > 1000*float64(r.age) || r.age <= r.married*20 }},
				{"SELECT SUM(age > 40 + 10 * sex) FROM pums", func(r booleanRow) bool { return r.age > 40+10*r.sex }},
				{"SELECT COUNT(*) FROM pums WHERE COALESCE(income, 0) < 1000", func(r booleanRow) bool { return !r.incomeOK || r.income < 1000 }},
				{"SELECT SUM(CASE WHEN age >= 65 THEN 1 ELSE 0 END) FROM pums WHERE race = 1 OR race = 2",
					func(r booleanRow) bool { return r.age >= 65 && r.raceOK && (r.race == 1 || r.race == 2) }},
			} {
				var got float64
				if err := db.QueryRow(c.sql).Scan(&got); err != nil {
					t.Fatalf("%s: %v", c.sql, err)
				}
				if want := float64(countRows(rows, c.keep)); got != want {
					t.Errorf("%s = %g, want %g", c.sql, got, want)
				}
			}

			notFemaleOrMarried := func(r booleanRow) bool { return !(r.sex == 1 || r.married == 1) }
			var avg, median float64
			if err := db.QueryRow("SELECT AVG(age), MEDIAN(age) FROM pums WHERE NOT (sex = 1 OR married = 1)").Scan(&avg, &median); err != nil {
				t.Fatal(err)
			}
			ages := selectAges(rows, notFemaleOrMarried)
			if want := meanOf(ages); math.Abs(avg-want) > 0.5 {
				t.Errorf("AVG(age) WHERE NOT (sex = 1 OR married = 1) = %g, want %g ± 0.5", avg, want)
			}
			if lo, hi := medianNeighbours(ages); median < lo || median > hi {
				t.Errorf("MEDIAN(age) WHERE NOT (sex = 1 OR married = 1) = %g, want in [%g, %g]", median, lo, hi)
			}

			// IFNULL(income, 0): the missing incomes count as 0 in the mean
			// (scale about 500000 / (1040 · 40) ≈ 12: 100 is 8 scales).
			var zn float64
			if err := db.QueryRow("SELECT AVG(IFNULL(income, 0)) FROM pums").Scan(&zn); err != nil {
				t.Fatal(err)
			}
			total := 0.0
			for _, r := range rows {
				total += r.income // 0 where missing
			}
			if want := total / float64(len(rows)); math.Abs(zn-want) > 100 {
				t.Errorf("AVG(IFNULL(income, 0)) = %g, want %g ± 100", zn, want)
			}

			bySex := func(q string, keep func(booleanRow) bool) {
				t.Helper()
				got := map[int]float64{}
				res, err := db.Query(q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer res.Close()
				for res.Next() {
					var key int
					var n sql.NullFloat64
					if err := res.Scan(&key, &n); err != nil {
						t.Fatal(err)
					}
					got[key] = n.Float64
				}
				if err := res.Err(); err != nil {
					t.Fatal(err)
				}
				want := map[int]float64{}
				for _, r := range rows {
					if keep(r) {
						want[r.sex]++
					}
				}
				for sex := range 2 {
					if got[sex] != want[sex] {
						t.Errorf("%s: sex %d counts %g, want %g", q, sex, got[sex], want[sex])
					}
				}
			}
			bySex("SELECT sex, COUNT(*) FROM pums WHERE race = 1 OR married = 0 GROUP BY sex ORDER BY sex",
				func(r booleanRow) bool { return r.raceOK && r.race == 1 || r.married == 0 })
			bySex("SELECT sex, COUNT(*) FROM pums WHERE NOT (race IN (1, 2) OR age >= 40) GROUP BY sex",
				func(r booleanRow) bool { return r.raceOK && r.race != 1 && r.race != 2 && r.age < 40 })

			// Tiers of a row expression: NULL incomes are in the ELSE
			// tier, as SQL's CASE puts them (the WHEN is UNKNOWN there).
			tiers := map[string]float64{}
			res0, err := db.Query("SELECT CASE WHEN income > 1000 * age THEN 'rich' ELSE 'other' END AS c, COUNT(*) FROM pums GROUP BY c")
			if err != nil {
				t.Fatal(err)
			}
			for res0.Next() {
				var c string
				var n float64
				if err := res0.Scan(&c, &n); err != nil {
					t.Fatal(err)
				}
				tiers[c] = n
			}
			res0.Close()
			rich := float64(countRows(rows, func(r booleanRow) bool { return r.incomeOK && r.income > 1000*float64(r.age) }))
			other := float64(countRows(rows, func(r booleanRow) bool { return !(r.incomeOK && r.income > 1000*float64(r.age)) }))
			if tiers["rich"] != rich || tiers["other"] != other || len(tiers) != 2 {
				t.Errorf("tiers of income > 1000 * age: %v, want rich %g, other %g", tiers, rich, other)
			}

			// pums_keys: age is a key chosen by partition selection, over the
			// rows the WHERE keeps: at ε = 40 no other age is released (the
			// ages 30 to 70 have rows, none kept), each with its exact count.
			if _, err := db.Exec("SET @dp_delta = 1e-6"); err != nil {
				t.Fatal(err)
			}
			keep := func(r booleanRow) bool { return r.age < 30 || r.age > 70 }
			want := map[int]float64{}
			for _, r := range rows {
				if keep(r) {
					want[r.age]++
				}
			}
			res, err := db.Query("SELECT age, COUNT(*) FROM pums_keys WHERE age < 30 OR age > 70 GROUP BY age")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			released := 0
			for res.Next() {
				var age int
				var n float64
				if err := res.Scan(&age, &n); err != nil {
					t.Fatal(err)
				}
				released++
				if want[age] == 0 {
					t.Errorf("pums_keys: age %d released, which no row the WHERE keeps has", age)
				}
				if n != want[age] {
					t.Errorf("pums_keys age %d: count %g, want %g", age, n, want[age])
				}
			}
			if err := res.Err(); err != nil {
				t.Fatal(err)
			}
			if released == 0 {
				t.Errorf("pums_keys: no age released")
			}

			// A condition on a row expression beside partition selection.
			if _, err := db.Exec("SELECT age, COUNT(*) FROM pums_keys WHERE income - 1000 * age > 0 OR sex = 1 GROUP BY age"); err != nil {
				t.Errorf("partition selection WHERE income - 1000 * age > 0 OR sex = 1: %v", err)
			}
			// Each released age counts exactly its rows where the expression
			// holds (the key counts read the derived column too: on SQLite a
			// missing one read as the string "dpproxy_e0" kept every row).
			richer := map[int]float64{}
			for _, r := range rows {
				if r.incomeOK && r.income-1000*float64(r.age) > 0 {
					richer[r.age]++
				}
			}
			res2, err := db.Query("SELECT age, COUNT(*) FROM pums_keys WHERE income - 1000 * age > 0 GROUP BY age")
			if err != nil {
				t.Fatalf("partition selection WHERE income - 1000 * age > 0: %v", err)
			}
			for res2.Next() {
				var age int
				var n float64
				if err := res2.Scan(&age, &n); err != nil {
					t.Fatal(err)
				}
				if n != richer[age] || richer[age] == 0 {
					t.Errorf("WHERE income - 1000 * age > 0 GROUP BY age (partition selection): age %d released, counts %g, want %g", age, n, richer[age])
				}
			}
			res2.Close()

			// Too deep a nesting is refused before anything is spent.
			var before, after float64
			if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&before); err != nil {
				t.Fatal(err)
			}
			deep := "SELECT COUNT(*) FROM pums WHERE " + strings.Repeat("(age < 50 OR (age > 60 AND ", 60) + "age = 1" + strings.Repeat(")", 120)
			if _, err := db.Exec(deep); err == nil || !strings.Contains(err.Error(), "1235") {
				t.Errorf("a predicate nested 120 deep: %v, want error 1235", err)
			}
			if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&after); err != nil {
				t.Fatal(err)
			}
			if after != before {
				t.Errorf("the refused statement spent %g", before-after)
			}
		})
	}
}

// booleanRows are the demo rows plus the test's 40 rows with NULL race and
// income.
func booleanRows() []booleanRow {
	var rows []booleanRow
	for _, r := range demo.PUMS() {
		rows = append(rows, booleanRow{age: r.Age, sex: r.Sex, married: r.Married, race: r.Race, raceOK: true, income: r.Income, incomeOK: true})
	}
	for i := range 40 {
		rows = append(rows, booleanRow{age: 30, sex: i % 2, married: 1})
	}
	return rows
}

func countRows(rows []booleanRow, keep func(booleanRow) bool) int {
	n := 0
	for _, r := range rows {
		if keep(r) {
			n++
		}
	}
	return n
}

func selectAges(rows []booleanRow, keep func(booleanRow) bool) []float64 {
	var ages []float64
	for _, r := range rows {
		if keep(r) {
			ages = append(ages, float64(r.age))
		}
	}
	slices.Sort(ages)
	return ages
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// medianNeighbours is the range from the integer below the sorted values'
// median to the one above it.
func medianNeighbours(sorted []float64) (lo, hi float64) {
	n := len(sorted)
	m := (sorted[(n-1)/2] + sorted[n/2]) / 2
	return math.Floor(m) - 1, math.Ceil(m) + 1
}
