package main

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
)

// TestOuterAggregatesEndToEnd runs outer queries that aggregate the
// released rows of a grouped subquery through the real proxy on SQLite,
// PostgreSQL and MariaDB: Metabase's nested question (the average count
// per sex of the counts per sex and race), totals, COUNT and MAX of the
// groups, an outer WHERE on released values, a subquery with ORDER BY and
// LIMIT, and one with LIMIT 0 (no row: COUNT 0, SUM NULL, as SQL answers).
// At ε = 40 the counts are exact (P[|Z| ≥ 1] < 2e-17 for each), so every
// outer value must equal what Go computes from the demo rows; and each
// statement costs exactly its subquery's ε, the outer query being
// post-processing.
func TestOuterAggregatesEndToEnd(t *testing.T) {
	var bySexRace [2][7]float64
	for _, r := range demo.PUMS() {
		bySexRace[r.Sex][r.Race]++
	}
	total := float64(len(demo.PUMS()))
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			_, config := groupedDeploymentOn(t, b.driver)
			db := exactSession(t, config)
			remaining := func() float64 {
				var r float64
				if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
					t.Fatal(err)
				}
				return r
			}

			// Metabase's nested question: average of the counts per sex and race, by sex.
			before := remaining()
			rows, err := db.Query("SELECT `source`.`sex` AS `sex`, avg(`source`.`count`) AS `avg`, max(`source`.`count`) AS `max` FROM " +
				"(SELECT `pums`.`sex` AS `sex`, `pums`.`race` AS `race`, count(*) AS `count` FROM `pums` GROUP BY `pums`.`sex`, `pums`.`race` " +
				"ORDER BY `pums`.`sex` ASC, `pums`.`race` ASC) `source` GROUP BY `source`.`sex` ORDER BY `source`.`sex` ASC")
			if err != nil {
				t.Fatal(err)
			}
			var sexes []int
			for rows.Next() {
				var sex int
				var avg, mx float64
				if err := rows.Scan(&sex, &avg, &mx); err != nil {
					t.Fatal(err)
				}
				sexes = append(sexes, sex)
				counts := bySexRace[sex][1:]
				// MySQL's AVG of integers: a DECIMAL with four decimals.
				if want := math.Round(sum(counts)/6*1e4) / 1e4; avg != want {
					t.Errorf("sex %d: AVG of the counts per race = %g, want %g", sex, avg, want)
				}
				if want := slices.Max(counts); mx != want {
					t.Errorf("sex %d: MAX of the counts per race = %g, want %g", sex, mx, want)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if !slices.Equal(sexes, []int{0, 1}) {
				t.Errorf("outer groups %v, want [0 1]", sexes)
			}
			if spent := before - remaining(); spent < 40-1e-9 || spent > 40+1e-9 {
				t.Errorf("the nested question spent %g, want the subquery's 40", spent)
			}

			var groups, all float64
			var big sql.NullFloat64
			if err := db.QueryRow("SELECT COUNT(*), SUM(n), SUM(CASE WHEN n > 100 THEN n END) FROM (SELECT sex, race, COUNT(*) AS n FROM pums GROUP BY sex, race) t").Scan(&groups, &all, &big); err != nil {
				t.Fatal(err)
			}
			wantBig := 0.0
			for sex := range 2 {
				for _, n := range bySexRace[sex][1:] {
					if n > 100 {
						wantBig += n
					}
				}
			}
			if groups != 12 || all != total || big.Float64 != wantBig {
				t.Errorf("COUNT(*), SUM(n), SUM(n > 100) of the 12 groups = %g, %g, %v; want 12, %g, %g", groups, all, big, total, wantBig)
			}

			// An outer WHERE on released values, and the two largest races.
			var n, top2 float64
			if err := db.QueryRow("SELECT COUNT(*) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race) t WHERE n >= 50").Scan(&n); err != nil {
				t.Fatal(err)
			}
			perRace := make([]float64, 6)
			wantAtLeast50 := 0.0
			for race := 1; race <= 6; race++ {
				perRace[race-1] = bySexRace[0][race] + bySexRace[1][race]
				if perRace[race-1] >= 50 {
					wantAtLeast50++
				}
			}
			if n != wantAtLeast50 {
				t.Errorf("races with at least 50 rows: %g, want %g", n, wantAtLeast50)
			}
			if err := db.QueryRow("SELECT SUM(n) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race ORDER BY n DESC LIMIT 2) t").Scan(&top2); err != nil {
				t.Fatal(err)
			}
			slices.Sort(perRace)
			if want := perRace[5] + perRace[4]; top2 != want {
				t.Errorf("SUM of the two largest races = %g, want %g", top2, want)
			}

			// WITH ROLLUP: each sex's subtotal after its races, the total last.
			res, err := db.Query("SELECT sex, race, COUNT(*) FROM pums GROUP BY sex, race WITH ROLLUP")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for res.Next() {
				var sex, race sql.NullInt64
				var c float64
				if err := res.Scan(&sex, &race, &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%v/%v:%g", sex, race, c))
			}
			res.Close()
			var want []string
			for sex := range 2 {
				for race := 1; race <= 6; race++ {
					want = append(want, fmt.Sprintf("%v/%v:%g", sql.NullInt64{Int64: int64(sex), Valid: true}, sql.NullInt64{Int64: int64(race), Valid: true}, bySexRace[sex][race]))
				}
				want = append(want, fmt.Sprintf("%v/%v:%g", sql.NullInt64{Int64: int64(sex), Valid: true}, sql.NullInt64{}, sum(bySexRace[sex][1:])))
			}
			want = append(want, fmt.Sprintf("%v/%v:%g", sql.NullInt64{}, sql.NullInt64{}, total))
			if !slices.Equal(got, want) {
				t.Errorf("GROUP BY sex, race WITH ROLLUP:\n got %v\nwant %v", got, want)
			}

			// WITH ROLLUP of an AVG, and of a STDDEV_SAMP and a VAR_POP: the
			// subtotals and the total are derived from the added sums and
			// squares from both bounds of their groups, each AVG within 0.5 of
			// the mean of its rows and each standard deviation within 0.4 of
			// its rows' (their noise at ε = 40 is about 0.02 and 0.04);
			// TestRollupOfMeans and TestRollupOfVariances check the weighting
			// by hand, and a total that added one group's squares only would
			// miss sex 0's by 0.9.
			var ageSum, ageSquares, ageN [3][3]float64 // [sex or 2 for all][married or 2 for all]
			for _, r := range demo.PUMS() {
				for _, s := range []int{r.Sex, 2} {
					for _, m := range []int{r.Married, 2} {
						ageSum[s][m] += float64(r.Age)
						ageSquares[s][m] += float64(r.Age * r.Age)
						ageN[s][m]++
					}
				}
			}
			for _, stat := range []string{"AVG(age)", "STDDEV_SAMP(age), VAR_POP(age)"} {
				res, err = db.Query("SELECT sex, married, " + stat + " FROM pums GROUP BY sex, married WITH ROLLUP")
				if err != nil {
					t.Fatal(err)
				}
				var cells []string
				for res.Next() {
					var sex, married sql.NullInt64
					var v [2]float64
					dest := []any{&sex, &married, &v[0], &v[1]}
					if err := res.Scan(dest[:2+strings.Count(stat, ",")+1]...); err != nil {
						t.Fatal(err)
					}
					s, m := 2, 2
					if sex.Valid {
						s = int(sex.Int64)
					}
					if married.Valid {
						m = int(married.Int64)
					}
					cells = append(cells, fmt.Sprintf("%d/%d", s, m))
					n := ageN[s][m]
					mean := ageSum[s][m] / n
					pop := ageSquares[s][m]/n - mean*mean
					if stat == "AVG(age)" {
						if math.Abs(v[0]-mean) > 0.5 {
							t.Errorf("GROUP BY sex, married WITH ROLLUP: AVG(age) of %d/%d (2: all) = %g, want %g ± 0.5", s, m, v[0], mean)
						}
						continue
					}
					if want := math.Sqrt(pop * n / (n - 1)); math.Abs(v[0]-want) > 0.4 {
						t.Errorf("GROUP BY sex, married WITH ROLLUP: STDDEV_SAMP(age) of %d/%d (2: all) = %g, want %g ± 0.4", s, m, v[0], want)
					}
					if got, want := math.Sqrt(v[1]), math.Sqrt(pop); math.Abs(got-want) > 0.4 {
						t.Errorf("GROUP BY sex, married WITH ROLLUP: √VAR_POP(age) of %d/%d (2: all) = %g, want %g ± 0.4", s, m, got, want)
					}
				}
				res.Close()
				if want := []string{"0/0", "0/1", "0/2", "1/0", "1/1", "1/2", "2/2"}; !slices.Equal(cells, want) {
					t.Errorf("GROUP BY sex, married WITH ROLLUP of %s: rows %v, want %v", stat, cells, want)
				}
			}

			// DP_INTERVAL_LOW and DP_INTERVAL_HIGH: the released value inside
			// and, at ε = 40, the truth inside the interval widened threefold
			// around the value (a 95% interval misses the truth one time in
			// twenty; the Laplace noise of a sum leaves three half-widths with
			// probability 20^−3), per group, on WITH ROLLUP's total (the
			// interval of the sum of its groups' noises) and without GROUP
			// BY; the same
			// statement without them spends the same (they read the releases
			// of the statement's own aggregates). A count's interval at ε = 20
			// is the released count itself (its noise is 0 with probability
			// above 0.95), so it is checked to hold the value only.
			within := func(truth, v, lo, hi float64) bool { return v-3*(v-lo) <= truth && truth <= v+3*(hi-v) }
			var ageBySex [2][2]float64 // sum, count
			for _, r := range demo.PUMS() {
				ageBySex[r.Sex][0] += float64(r.Age)
				ageBySex[r.Sex][1]++
			}
			before = remaining()
			res, err = db.Query("SELECT sex, COUNT(*), DP_INTERVAL_LOW(COUNT(*)), DP_INTERVAL_HIGH(COUNT(*)), " +
				"AVG(age), DP_INTERVAL_LOW(AVG(age)), DP_INTERVAL_HIGH(AVG(age)) FROM pums GROUP BY sex WITH ROLLUP")
			if err != nil {
				t.Fatal(err)
			}
			intervalRows := 0
			for res.Next() {
				var sex sql.NullInt64
				var n, nLo, nHi, avg, avgLo, avgHi float64
				if err := res.Scan(&sex, &n, &nLo, &nHi, &avg, &avgLo, &avgHi); err != nil {
					t.Fatal(err)
				}
				intervalRows++
				truthN, truthSum := ageBySex[0][1]+ageBySex[1][1], ageBySex[0][0]+ageBySex[1][0]
				if sex.Valid {
					truthN, truthSum = ageBySex[sex.Int64][1], ageBySex[sex.Int64][0]
				}
				truthAvg := truthSum / truthN
				if !(nLo <= n && n <= nHi && math.Abs(n-truthN) <= 2) {
					t.Errorf("sex %v: COUNT(*) %g, interval [%g, %g], truth %g", sex, n, nLo, nHi, truthN)
				}
				if !(avgLo <= avg && avg <= avgHi && within(truthAvg, avg, avgLo, avgHi) && avgLo < avgHi) {
					t.Errorf("sex %v: AVG(age) %g, interval [%g, %g], truth %g", sex, avg, avgLo, avgHi, truthAvg)
				}
			}
			res.Close()
			if intervalRows != 3 {
				t.Errorf("GROUP BY sex WITH ROLLUP with intervals: %d rows, want the two groups and the total", intervalRows)
			}
			if spent := before - remaining(); spent < 40-1e-9 || spent > 40+1e-9 {
				t.Errorf("the statement with intervals spent %g, want its aggregates' 40", spent)
			}
			var sum, sumLo, sumHi float64
			if err := db.QueryRow("SELECT SUM(age), DP_INTERVAL_LOW(SUM(age)), DP_INTERVAL_HIGH(SUM(age)) FROM pums").Scan(&sum, &sumLo, &sumHi); err != nil {
				t.Fatal(err)
			}
			if truth := ageBySex[0][0] + ageBySex[1][0]; !(sumLo <= sum && sum <= sumHi && within(truth, sum, sumLo, sumHi) && sumLo < sumHi) {
				t.Errorf("SUM(age) %g, interval [%g, %g], truth %g", sum, sumLo, sumHi, truth)
			}

			// GROUP BY a CASE over declared values (Tableau's groups): each
			// group counts exactly the rows of the values the CASE maps to it.
			res, err = db.Query("SELECT CASE WHEN race IN (1, 2) THEN 'A' WHEN race = 3 THEN 'B' ELSE 'C' END AS grp, IF(sex = 1, 'M', 'F') AS s, COUNT(*) " +
				"FROM pums GROUP BY grp, s ORDER BY grp, s")
			if err != nil {
				t.Fatal(err)
			}
			var mapped []string
			for res.Next() {
				var grp, sx string
				var n float64
				if err := res.Scan(&grp, &sx, &n); err != nil {
					t.Fatal(err)
				}
				mapped = append(mapped, fmt.Sprintf("%s%s:%g", grp, sx, n))
			}
			res.Close()
			var wantMapped []string
			for _, g := range []struct {
				label string
				races []int
			}{{"A", []int{1, 2}}, {"B", []int{3}}, {"C", []int{4, 5, 6}}} {
				for _, sx := range []struct {
					label string
					sex   int
				}{{"F", 0}, {"M", 1}} {
					n := 0.0
					for _, race := range g.races {
						n += bySexRace[sx.sex][race]
					}
					wantMapped = append(wantMapped, fmt.Sprintf("%s%s:%g", g.label, sx.label, n))
				}
			}
			if !slices.Equal(mapped, wantMapped) {
				t.Errorf("GROUP BY a CASE of race and IF(sex = 1, 'M', 'F'):\n got %v\nwant %v", mapped, wantMapped)
			}

			// A subquery whose LIMIT keeps no row: one outer row, as SQL answers.
			var none float64
			var nothing sql.NullFloat64
			if err := db.QueryRow("SELECT COUNT(*), SUM(n) FROM (SELECT race, COUNT(*) AS n FROM pums GROUP BY race LIMIT 0) t").Scan(&none, &nothing); err != nil {
				t.Fatal(err)
			}
			if none != 0 || nothing.Valid {
				t.Errorf("COUNT(*), SUM(n) over no row = %g, %v; want 0, NULL", none, nothing)
			}

			// A plain projection of a subquery keeps its WITH ROLLUP total
			// and its window functions' values (they were dropped: the total
			// row was missing and a RANK failed after the charge).
			res, err = db.Query("SELECT * FROM (SELECT sex, COUNT(*) AS n FROM pums GROUP BY sex WITH ROLLUP) s")
			if err != nil {
				t.Fatal(err)
			}
			var projected []string
			for res.Next() {
				var sx sql.NullInt64
				var n float64
				if err := res.Scan(&sx, &n); err != nil {
					t.Fatal(err)
				}
				projected = append(projected, fmt.Sprintf("%v:%g", sx, n))
			}
			res.Close()
			var bySex [2]float64
			for sx := range bySex {
				for _, n := range bySexRace[sx] {
					bySex[sx] += n
				}
			}
			if want := []string{fmt.Sprintf("{0 true}:%g", bySex[0]), fmt.Sprintf("{1 true}:%g", bySex[1]), fmt.Sprintf("{0 false}:%g", total)}; !slices.Equal(projected, want) {
				t.Errorf("SELECT * FROM (... WITH ROLLUP) s:\n got %v\nwant %v", projected, want)
			}
			var ranked []string
			res, err = db.Query("SELECT sex, r FROM (SELECT sex, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC) AS r FROM pums GROUP BY sex) s ORDER BY sex")
			if err != nil {
				t.Fatal(err)
			}
			for res.Next() {
				var sx, r int
				if err := res.Scan(&sx, &r); err != nil {
					t.Fatal(err)
				}
				ranked = append(ranked, fmt.Sprintf("%d:%d", sx, r))
			}
			res.Close()
			wantRank := []string{"0:2", "1:1"}
			if bySex[0] > bySex[1] {
				wantRank = []string{"0:1", "1:2"}
			}
			if !slices.Equal(ranked, wantRank) {
				t.Errorf("RANK() inside a projected subquery: got %v, want %v", ranked, wantRank)
			}
			before = remaining()
			if _, err := db.Exec("SELECT n FROM (SELECT sex, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*)) AS r FROM pums GROUP BY sex) s WHERE r = 1"); err == nil || !strings.Contains(err.Error(), "1235") {
				t.Errorf("an outer WHERE over a subquery with window functions: %v, want 1235", err)
			}
			if spent := before - remaining(); spent != 0 {
				t.Errorf("the refused statement spent %g", spent)
			}
			// LIMIT 0 over a key chosen by partition selection: no row
			// whatever the data, so nothing is spent.
			before = remaining()
			res, err = db.Query("SELECT * FROM (SELECT age, COUNT(*) AS n FROM pums_keys GROUP BY age) s LIMIT 0")
			if err != nil {
				t.Fatal(err)
			}
			if res.Next() {
				t.Error("LIMIT 0 over a selected key returned a row")
			}
			res.Close()
			if spent := before - remaining(); spent != 0 {
				t.Errorf("LIMIT 0 over a selected key spent %g", spent)
			}
		})
	}
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// TestBooleanConditionalAggregatesEndToEnd: range counts and conditional
// aggregates whose own condition has OR or NOT (<>, NOT BETWEEN) are
// answered over the rows where it is true, on the three backends: the
// counts exactly at ε = 40 over three releases (a count's noise is 0 but
// with probability 3·10^−6), per group too, and the AVG within 2,000 of
// its rows' (noise of scale about 100). A condition on age, which has a
// histogram domain, is counted from a fresh release, not the synopsis
// (which is released for an AND of ranges); EXPLAIN names each part's
// condition.
func TestBooleanConditionalAggregatesEndToEnd(t *testing.T) {
	var outside, notWhite, notBoth [2]float64 // per sex
	var incomeSum, incomeN float64
	for _, r := range demo.PUMS() {
		if r.Age < 18 || r.Age > 65 {
			outside[r.Sex]++
		}
		if r.Race != 1 {
			notWhite[r.Sex]++
		}
		if !(r.Educ >= 9 && r.Educ <= 12) {
			notBoth[r.Sex]++
		}
		if r.Race != 1 || r.Age > 60 {
			incomeSum += r.Income
			incomeN++
		}
	}
	for _, b := range []struct{ name, driver string }{{"sqlite", "sqlite"}, {"postgres", "postgres"}, {"mariadb", "mysql"}} {
		t.Run(b.name, func(t *testing.T) {
			_, config := groupedDeploymentOn(t, b.driver)
			db := exactSession(t, config)
			var n1, n2, n3 float64
			if err := db.QueryRow("SELECT SUM(age < 18 OR age > 65), SUM(CASE WHEN race <> 1 THEN 1 ELSE 0 END), "+
				"COUNT(CASE WHEN educ NOT BETWEEN 9 AND 12 THEN 1 END) FROM pums").Scan(&n1, &n2, &n3); err != nil {
				t.Fatal(err)
			}
			if n1 != outside[0]+outside[1] || n2 != notWhite[0]+notWhite[1] || n3 != notBoth[0]+notBoth[1] {
				t.Errorf("counts with OR and NOT: %g, %g, %g; want %g, %g, %g", n1, n2, n3,
					outside[0]+outside[1], notWhite[0]+notWhite[1], notBoth[0]+notBoth[1])
			}
			res, err := db.Query("SELECT sex, SUM(age < 18 OR age > 65), COUNT(CASE WHEN NOT (race = 1) THEN 1 END) FROM pums GROUP BY sex")
			if err != nil {
				t.Fatal(err)
			}
			for res.Next() {
				var sex int
				var a, c float64
				if err := res.Scan(&sex, &a, &c); err != nil {
					t.Fatal(err)
				}
				if a != outside[sex] || c != notWhite[sex] {
					t.Errorf("sex %d: %g, %g; want %g, %g", sex, a, c, outside[sex], notWhite[sex])
				}
			}
			res.Close()
			var avg float64
			if err := db.QueryRow("SELECT AVG(CASE WHEN race <> 1 OR age > 60 THEN income END) FROM pums").Scan(&avg); err != nil {
				t.Fatal(err)
			}
			if want := incomeSum / incomeN; math.Abs(avg-want) > 2000 {
				t.Errorf("AVG(CASE WHEN race <> 1 OR age > 60 THEN income END) = %g, want %g ± 2000", avg, want)
			}
			// AVG of a condition with OR or NOT on one column: the share of
			// the rows where it holds, within 0.01 (noise about 10^−4).
			var not30, outsideShare, notWorking float64
			if err := db.QueryRow("SELECT AVG(age <> 30), AVG(age < 18 OR age > 65), AVG(NOT (age >= 18 AND age <= 65)) FROM pums").
				Scan(&not30, &outsideShare, &notWorking); err != nil {
				t.Fatal(err)
			}
			var n30 float64
			for _, r := range demo.PUMS() {
				if r.Age != 30 {
					n30++
				}
			}
			total := float64(len(demo.PUMS()))
			wantOutside := (outside[0] + outside[1]) / total
			if math.Abs(not30-n30/total) > 0.01 || math.Abs(outsideShare-wantOutside) > 0.01 || math.Abs(notWorking-wantOutside) > 0.01 {
				t.Errorf("AVG of conditions with OR and NOT: %g, %g, %g; want %g, %g, %g", not30, outsideShare, notWorking, n30/total, wantOutside, wantOutside)
			}

			// A pivot of measures on disjoint conditions: on PostgreSQL and
			// MariaDB each part spends the whole ε = 40 (parallel
			// composition; on SQLite, where a column of TEXT affinity compares
			// with numbers as text, they split it); the two counts are exact
			// (noise 0 but with probability 4·10^−9 at ε = 20) and the
			// statement spends 40 once.
			var remaining [2]float64
			var men, women float64
			if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&remaining[0]); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT COUNT(CASE WHEN sex = 1 THEN 1 END), COUNT(CASE WHEN sex = 0 THEN 1 END) FROM pums").Scan(&men, &women); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT dp_remaining_epsilon()").Scan(&remaining[1]); err != nil {
				t.Fatal(err)
			}
			var bySex [2]float64
			for _, r := range demo.PUMS() {
				bySex[r.Sex]++
			}
			if men != bySex[1] || women != bySex[0] {
				t.Errorf("COUNT per sex as two measures: %g, %g; want %g, %g", men, women, bySex[1], bySex[0])
			}
			if spent := remaining[0] - remaining[1]; math.Abs(spent-40) > 1e-9 {
				t.Errorf("the pivot of two disjoint measures spent %g, want 40", spent)
			}
			text := explainRows(t, db, "EXPLAIN SELECT COUNT(CASE WHEN sex = 1 THEN 1 END), COUNT(CASE WHEN sex = 0 THEN 1 END) FROM pums")
			composition := map[bool]string{true: "parallel", false: "basic"}[strings.Contains(text, "| parallel composition over 2 part(s)")]
			if want := map[bool]string{true: "basic", false: "parallel"}[b.driver == "sqlite"]; composition != want {
				t.Errorf("the pivot's parts: %s composition, want %s", composition, want)
			}
			text = explainRows(t, db, "EXPLAIN SELECT SUM(age < 18 OR age > 65), AVG(CASE WHEN race <> 1 OR age > 60 THEN income END) FROM pums")
			for _, want := range []string{"| part | #1: rows where ((age < 18) OR (age > 65)) |", "| part | #2: rows where (NOT (race IN (1)) OR (age > 60)) |"} {
				if !strings.Contains(text, want) {
					t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
				}
			}
		})
	}
}
