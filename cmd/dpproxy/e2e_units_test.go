package main

import (
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// unitsSeed is the seed of the visits table the privacy-unit tests use.
const unitsSeed = 13

// visitsTruth is what the bounded queries can return on demo.Visits: the
// count of rows kept at k rows per person, the smallest and largest
// bounded sum of spend (each person's k smallest or largest visits), and
// the mean and median of persons' ages (age is a person's own, so one row
// per person reads each person's age once).
type visitsTruth struct {
	count            float64
	sumLow, sumHigh  float64
	meanAge, medAge  float64
	medLow, medHigh  float64 // the median of one visit's spend per person lies between these
	persons, allRows int
}

func computeVisitsTruth(rows []demo.VisitRow, k int) visitsTruth {
	per := map[int][]float64{}
	age := map[int]float64{}
	for _, r := range rows {
		per[r.PersonID] = append(per[r.PersonID], r.Spend)
		age[r.PersonID] = float64(r.Age)
	}
	tr := visitsTruth{persons: len(per), allRows: len(rows)}
	var ages, mins, maxs []float64
	for id, s := range per {
		slices.Sort(s)
		kept := min(k, len(s))
		tr.count += float64(kept)
		for _, v := range s[:kept] {
			tr.sumLow += v
		}
		for _, v := range s[len(s)-kept:] {
			tr.sumHigh += v
		}
		ages = append(ages, age[id])
		tr.meanAge += age[id] / float64(len(per))
		mins, maxs = append(mins, s[0]), append(maxs, s[len(s)-1])
	}
	median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	tr.medAge, tr.medLow, tr.medHigh = median(ages), median(mins), median(maxs)
	return tr
}

// TestPrivacyUnitsOnEveryBackend serves demo.Visits (the PUMS sample
// expanded to 1..50 rows per person, seeded) from SQLite, PostgreSQL and
// MariaDB as a table whose privacy unit is person_id with at most 5 rows
// per person, through the real proxy: every aggregate answers at a stated
// person-level ε, within what the bounded table allows (the count of
// min(m, 5) rows per person; a sum between the persons' 5 smallest and 5
// largest visits; one row per person for the adaptive mechanisms, so AVG
// and MEDIAN of age are the persons' own), every forced mechanism runs,
// EXPLAIN shows the unit, bounds and sensitivities, SHOW WARNINGS says
// whom each value protects, and the unit column cannot be read.
func TestPrivacyUnitsOnEveryBackend(t *testing.T) {
	rows := demo.Visits(unitsSeed)
	tr := computeVisitsTruth(rows, 5)
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.load(t, "visits", rows, "visits_rows")
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 10}
users:
  - {name: carol, password_hash: %q, epsilon: 100, delta: 1.0e-5}
tables:
  - name: visits
    privacy_unit: person_id
    max_rows_per_unit: 5
    max_groups_per_unit: 2
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: spend, type: real, lower: 0, upper: %d}
      - {name: site, type: text, partition_selection: true}
  - name: visits_rows
    columns:
      - {name: spend, type: real, lower: 0, upper: %d}
      - {name: site, type: text, partition_selection: true}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("carol-pw")), demo.VisitsSpendUpper, demo.VisitsSpendUpper)
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			db := p.connect(t, "carol", "carol-pw")
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			exec := func(q string) {
				t.Helper()
				if _, err := conn.ExecContext(t.Context(), q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			one := func(q string) []float64 {
				t.Helper()
				r := conn.QueryRowContext(t.Context(), q)
				n := strings.Count(q, ",") + 1
				vals := make([]sql.NullFloat64, n)
				dest := make([]any, n)
				for i := range vals {
					dest[i] = &vals[i]
				}
				if err := r.Scan(dest...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				out := make([]float64, n)
				for i, v := range vals {
					out[i] = math.NaN()
					if v.Valid {
						out[i] = v.Float64
					}
				}
				return out
			}
			// ε = 2 over four releases: 0.5 each, per person. Tolerances
			// are 15 noise scales (failure below 1e-6 each): the count's
			// scale is 5/0.5, the sum's 5·1000/0.5; the mean of 1,000
			// persons' ages and their median are far inside ±10 years.
			exec("SET @dp_epsilon = 2")
			got := one("SELECT COUNT(*), SUM(spend), AVG(age), MEDIAN(age) FROM visits")
			t.Logf("COUNT, SUM(spend), AVG(age), MEDIAN(age) at 0.5 each per person: %v; bounded count %v, sum in [%v, %v], persons' mean age %.2f, median %v; %d rows",
				got, tr.count, tr.sumLow, tr.sumHigh, tr.meanAge, tr.medAge, tr.allRows)
			if math.Abs(got[0]-tr.count) > 150 {
				t.Errorf("COUNT(*) = %v, want %v ± 150 (%d rows in all, %d persons)", got[0], tr.count, tr.allRows, tr.persons)
			}
			if got[1] < tr.sumLow-150000 || got[1] > tr.sumHigh+150000 {
				t.Errorf("SUM(spend) = %v, want in [%v, %v] ± 150000", got[1], tr.sumLow, tr.sumHigh)
			}
			if math.Abs(got[2]-tr.meanAge) > 10 || math.Abs(got[3]-tr.medAge) > 10 {
				t.Errorf("AVG(age), MEDIAN(age) = %v, %v, want %v, %v ± 10", got[2], got[3], tr.meanAge, tr.medAge)
			}
			ws := warnings(t, conn)
			if len(ws) != 4 {
				t.Fatalf("SHOW WARNINGS: %q", ws)
			}
			for _, w := range ws {
				if !strings.Contains(w, "protects each person_id at epsilon=2, the statement's (this value's releases: epsilon=0.5)") {
					t.Errorf("warning %q does not state the person-level ε", w)
				}
			}
			// The same rows (a copy: one relation has one unit) declared
			// without a unit are row-level, and say so.
			if n := one("SELECT COUNT(*) FROM visits_rows")[0]; math.Abs(n-float64(tr.allRows)) > 30 {
				t.Errorf("row-level COUNT(*) = %v, want %d ± 30", n, tr.allRows)
			}
			if ws := warnings(t, conn); len(ws) != 1 || !strings.Contains(ws[0], "protects each row at epsilon=2, the statement's (row-level table") {
				t.Errorf("row-level warnings %q", ws)
			}
			// MEDIAN(spend) reads one visit per person.
			if m := one("SELECT MEDIAN(spend) FROM visits")[0]; m < tr.medLow-100 || m > tr.medHigh+100 {
				t.Errorf("MEDIAN(spend) = %v, want in [%v, %v] ± 100", m, tr.medLow, tr.medHigh)
			}
			// EXPLAIN: the unit, the bounds and each release's sensitivity.
			text := explainRows(t, conn, "EXPLAIN SELECT COUNT(*), SUM(spend), AVG(age) FROM visits")
			for _, want := range []string{"privacy unit: each person_id (≤ 5 rows per aggregate, ≤ 2 groups)",
				"≤ 5 rows per person_id, sensitivity 5\n", "sensitivity 5·max(|L|,|U|) = 5000", "1 row per person_id chosen uniformly at random"} {
				if !strings.Contains(text+"\n", strings.TrimSuffix(want, "\n")) {
					t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
				}
			}
			// The unit column is never readable.
			for _, q := range []string{"SELECT COUNT(person_id) FROM visits", "SELECT COUNT(*) FROM visits WHERE person_id = 1",
				"SELECT MEDIAN(person_id) FROM visits"} {
				if _, err := conn.ExecContext(t.Context(), q); mysqlCode(err) != 1054 {
					t.Errorf("%s: got %v, want error 1054", q, err)
				}
			}
			// Every mechanism runs on the bounded rows of every backend.
			exec("SET @dp_epsilon = 1")
			exec("SET @dp_delta = 1e-6")
			for _, m := range []string{"laplace", "exponential", "permute-flip", "piecewise", "inverse", "smooth", "preprocess", "ptr"} {
				exec("SET @dp_mechanism = '" + m + "'")
				q := "SELECT MEDIAN(age), AVG(age) FROM visits"
				if m == "ptr" {
					q = "SELECT MEDIAN(age), IQR(age) FROM visits"
				}
				v := one(q)
				for i, x := range v {
					if !math.IsNaN(x) && (x < 0 || x > 100) {
						t.Errorf("mechanism %s, column %d: %v outside [0, 100]", m, i, x)
					}
				}
			}
			exec("SET @dp_mechanism = 'laplace'")
			if v := one("SELECT AVG(age), VARIANCE(age) FROM visits"); math.Abs(v[0]-tr.meanAge) > 10 || v[1] < 0 || v[1] > 2500 {
				t.Errorf("laplace AVG, VARIANCE at 5 rows per person: %v", v)
			}
			groupedOnUnits(t, conn, rows)
			privateKeyOnUnits(t, conn, rows)
		})
	}
}

// groupedOnUnits runs grouped queries on the visits table (5 rows per
// person per group, 2 groups per person): COUNT per spend bucket, whose
// total must lie between the least and the most the bounding can keep
// (each person's 2 groups with the fewest or the most kept rows, at most 5
// each); a per-group MEDIAN (the per-group fetch reads one group of the
// bounded rows); the warnings and EXPLAIN state ε / 2 per group; a
// post-processed query without keys; and a key without a declared domain
// is refused.
func groupedOnUnits(t *testing.T, conn *sql.Conn, rows []demo.VisitRow) {
	t.Helper()
	const k, g, width = 5, 2, 250
	perBucket := map[int]map[int]int{} // person → bucket → rows
	for _, r := range rows {
		if r.Spend >= 1000 {
			continue
		}
		if perBucket[r.PersonID] == nil {
			perBucket[r.PersonID] = map[int]int{}
		}
		perBucket[r.PersonID][int(r.Spend/width)]++
	}
	var low, high float64
	for _, buckets := range perBucket {
		var kept []int
		for _, n := range buckets {
			kept = append(kept, min(k, n))
		}
		slices.Sort(kept)
		m := min(g, len(kept))
		for i := range m {
			low += float64(kept[i])
			high += float64(kept[len(kept)-1-i])
		}
	}
	for _, q := range []string{"SET @dp_epsilon = 1", "SET @dp_mechanism = 'auto'"} {
		if _, err := conn.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := conn.QueryContext(t.Context(), "SELECT FLOOR(spend / 250) * 250 AS bucket, COUNT(*) AS n FROM visits WHERE spend < 1000 GROUP BY bucket ORDER BY bucket")
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	var groups int
	for res.Next() {
		var bucket, n float64
		if err := res.Scan(&bucket, &n); err != nil {
			t.Fatal(err)
		}
		total += n
		groups++
	}
	res.Close()
	// Each group's count has discrete Laplace noise of scale k/(ε/g) = 10;
	// 15 scales per group bound the total's noise (failure below 1e-6).
	t.Logf("grouped COUNT over %d buckets: total %v, bounded total in [%v, %v]", groups, total, low, high)
	if groups < 4 || total < low-float64(groups)*150 || total > high+float64(groups)*150 {
		t.Errorf("grouped COUNT: %d groups, total %v, want in [%v, %v] ± %d", groups, total, low, high, groups*150)
	}
	ws := warnings(t, conn)
	// OR in WHERE selects the rows before they are bounded: the middle
	// buckets keep no row, so their counts are noise alone (15 scales).
	res, err = conn.QueryContext(t.Context(), "SELECT FLOOR(spend / 250) * 250 AS bucket, COUNT(*) AS n FROM visits WHERE spend < 250 OR spend >= 750 AND spend < 1000 GROUP BY bucket ORDER BY bucket")
	if err != nil {
		t.Fatal(err)
	}
	outer := 0.0
	for res.Next() {
		var bucket, n float64
		if err := res.Scan(&bucket, &n); err != nil {
			t.Fatal(err)
		}
		switch {
		case (bucket == 250 || bucket == 500) && math.Abs(n) > 150:
			t.Errorf("WHERE spend < 250 OR spend >= 750: bucket %v counts %v, want 0 ± 150", bucket, n)
		case bucket == 0 || bucket == 750:
			outer += n
		}
	}
	res.Close()
	if outer < 150 {
		t.Errorf("WHERE spend < 250 OR spend >= 750: buckets 0 and 750 count %v in all", outer)
	}
	if len(ws) == 0 || !slices.ContainsFunc(ws, func(w string) bool {
		return strings.Contains(w, "epsilon=0.5 delta=0") && strings.Contains(w, "protects each person_id at epsilon=1 across at most 2 groups")
	}) {
		t.Errorf("grouped warnings do not state ε / 2 per group: %q", ws)
	}
	text := explainRows(t, conn, "EXPLAIN SELECT FLOOR(spend / 250) * 250 AS bucket, COUNT(*) FROM visits GROUP BY bucket")
	if !strings.Contains(text, "protects each person_id at epsilon = 1 across at most 2 groups") {
		t.Errorf("EXPLAIN does not state the per-group split:\n%s", text)
	}
	// A per-group instance-adaptive release reads one group of the bounded rows.
	res, err = conn.QueryContext(t.Context(), "SELECT FLOOR(age / 50) * 50 AS a, MEDIAN(spend) FROM visits GROUP BY a")
	if err != nil {
		t.Fatal(err)
	}
	medians := 0
	for res.Next() {
		medians++
		var a float64
		var m sql.NullFloat64
		if err := res.Scan(&a, &m); err != nil {
			t.Fatal(err)
		}
		if m.Valid && (m.Float64 < 0 || m.Float64 > 1000) {
			t.Errorf("MEDIAN(spend) of age group %v = %v outside [0, 1000]", a, m.Float64)
		}
	}
	res.Close()
	if medians < 2 {
		t.Errorf("grouped MEDIAN returned %d groups", medians)
	}
	// Post-processing without keys: one group, the plain unit bounding.
	var doubled float64
	if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) * 2 AS c FROM visits HAVING c > -1e9 ORDER BY c LIMIT 1").Scan(&doubled); err != nil {
		t.Errorf("post-processed COUNT on a unit table: %v", err)
	}
	// A key without a declared domain and not opened to partition selection.
	if _, err := conn.ExecContext(t.Context(), "SELECT age, COUNT(*) FROM visits GROUP BY age"); mysqlCode(err) != 1235 {
		t.Errorf("GROUP BY an undeclared key on a unit table: got %v, want error 1235", err)
	}
}

// privateKeyOnUnits groups the visits by site, a text key without a
// declared domain (partition selection), at ε = 2 and δ = 1e-6 per
// statement: half selects the sites by their number of distinct persons
// (each person counted toward at most 2 sites, each site at ε = 0.5, δ =
// 2.5e-7: T = 32), half answers COUNT(*) and AVG(spend) of every released
// site (each person ≤ 5 rows in ≤ 2 released sites: ε = 0.25 per release).
// The two most visited sites (525 and 265 persons) are released, every
// released key is a site of the data (quotes, accents and CJK byte-exact),
// the hermit's site (one person, 47 rows) is not, while the row-level
// table, which counts rows, releases it. Counts lie between what the
// bounding must and may keep; AVG(spend) of Oslo near the mean of one
// visit per person. SHOW WARNINGS and EXPLAIN state the person-level ε,
// the selection's share per site and the chance that a site of one person
// is released.
func privateKeyOnUnits(t *testing.T, conn *sql.Conn, rows []demo.VisitRow) {
	t.Helper()
	const k, g = 5, 2
	for _, q := range []string{"SET @dp_epsilon = 2", "SET @dp_delta = 1e-6", "SET @dp_mechanism = 'auto'"} {
		if _, err := conn.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := conn.QueryContext(t.Context(), "SELECT site, COUNT(*) AS n, AVG(spend) AS a FROM visits GROUP BY site ORDER BY site")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	var order []string
	for res.Next() {
		var site string
		var n float64
		var a sql.NullFloat64
		if err := res.Scan(&site, &n, &a); err != nil {
			t.Fatal(err)
		}
		got[site] = [2]float64{n, a.Float64}
		order = append(order, site)
		if !a.Valid || a.Float64 < 0 || a.Float64 > demo.VisitsSpendUpper {
			t.Errorf("AVG(spend) of %q = %v outside [0, %d]", site, a, demo.VisitsSpendUpper)
		}
	}
	res.Close()
	t.Logf("released sites (person-level partition selection): %v", got)
	for _, site := range order {
		if !slices.Contains(demo.VisitSites, site) {
			t.Errorf("released key %q is not a site of the data (hermit %q)", site, demo.VisitsHermitSite)
		}
	}
	if _, ok := got["Oslo"]; !ok {
		t.Errorf("Oslo (525 persons) not released: %v", order)
	}
	if _, ok := got["Lyon"]; !ok {
		t.Errorf("Lyon (265 persons) not released: %v", order)
	}
	// Counts: a person keeps ≤ 5 rows of ≤ 2 of their released sites; one
	// with at most 2 released sites keeps all of them. The count's noise
	// scale is k/0.25 = 20: 15 scales (failure below 1e-6 per key).
	released := map[string]bool{}
	for _, s := range order {
		released[s] = true
	}
	perPerson := map[int]map[string]int{}
	oslo := map[int][]float64{} // each person's visits at Oslo
	for _, r := range rows {
		if !released[r.Site] {
			continue
		}
		if perPerson[r.PersonID] == nil {
			perPerson[r.PersonID] = map[string]int{}
		}
		perPerson[r.PersonID][r.Site]++
		if r.Site == "Oslo" {
			oslo[r.PersonID] = append(oslo[r.PersonID], r.Spend)
		}
	}
	for site, v := range got {
		var low, high float64
		for _, sites := range perPerson {
			n, ok := sites[site]
			if !ok {
				continue
			}
			high += float64(min(k, n))
			if len(sites) <= g {
				low += float64(min(k, n))
			}
		}
		if v[0] < low-300 || v[0] > high+300 {
			t.Errorf("COUNT(*) of %q = %v, want in [%v, %v] ± 300", site, v[0], low, high)
		}
	}
	// AVG(spend) at Oslo reads one kept visit per person: between the mean
	// of the persons' cheapest and dearest visits there, ± 250.
	var lowMean, highMean float64
	for _, s := range oslo {
		slices.Sort(s)
		lowMean += s[0] / float64(len(oslo))
		highMean += s[len(s)-1] / float64(len(oslo))
	}
	if a := got["Oslo"][1]; a < lowMean-250 || a > highMean+250 {
		t.Errorf("AVG(spend) at Oslo = %v, want in [%v, %v] ± 250", a, lowMean, highMean)
	}
	ws := warnings(t, conn)
	if !slices.ContainsFunc(ws, func(w string) bool {
		return strings.Contains(w, "partition selection over distinct person_id") && strings.Contains(w, "each person_id counts toward at most 2 values") &&
			strings.Contains(w, "protects each person_id at epsilon=2")
	}) {
		t.Errorf("warnings do not state the person-level selection: %q", ws)
	}
	text := explainRows(t, conn, "EXPLAIN SELECT site, COUNT(*), AVG(spend) FROM visits GROUP BY site")
	for _, want := range []string{"(epsilon, delta)-DP per person_id: each person_id counts once toward at most g = 2 values of site",
		"each value's selection uses epsilon = 0.5 and delta = 2.5e-07", "(a value contributed by one person_id: probability"} {
		if !strings.Contains(text, want) {
			t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
		}
	}
	// Five statements: the hermit's site (one person, 47 rows) is never
	// released (each time with probability ≤ 2.5e-7).
	for range 5 {
		res, err := conn.QueryContext(t.Context(), "SELECT site, COUNT(*) FROM visits GROUP BY site")
		if err != nil {
			t.Fatal(err)
		}
		for res.Next() {
			var site string
			var n float64
			if err := res.Scan(&site, &n); err != nil {
				t.Fatal(err)
			}
			if site == demo.VisitsHermitSite {
				t.Errorf("the hermit's site (one person) was released")
			}
		}
		res.Close()
	}
	// Counting rows, the row-level table releases it: 47 rows against T =
	// 17 at its ε = 1, δ = 5e-7 (kept with probability above 1 - 1e-12).
	res, err = conn.QueryContext(t.Context(), "SELECT site, COUNT(*) FROM visits_rows GROUP BY site")
	if err != nil {
		t.Fatal(err)
	}
	hermit := false
	for res.Next() {
		var site string
		var n float64
		if err := res.Scan(&site, &n); err != nil {
			t.Fatal(err)
		}
		hermit = hermit || site == demo.VisitsHermitSite
	}
	res.Close()
	if !hermit {
		t.Errorf("the row-level table did not release the hermit's site (47 rows)")
	}
	keysOnlyOnUnits(t, conn)
}

// keysOnlyOnUnits asks for the sites alone, by GROUP BY and by DISTINCT,
// at ε = 2 and δ = 1e-6: the whole statement selects the sites by their
// number of distinct persons, each person counted toward at most 2 sites
// as with aggregates (each site at ε = 1, δ = 5e-7). Oslo and Lyon are
// released and the hermit's site (one person) is not; each statement is
// charged ε = 2 and δ = 1e-6 once.
func keysOnlyOnUnits(t *testing.T, conn *sql.Conn) {
	t.Helper()
	remaining := func() (eps, delta float64) {
		if err := conn.QueryRowContext(t.Context(), "SELECT dp_remaining_epsilon(), dp_remaining_delta()").Scan(&eps, &delta); err != nil {
			t.Fatal(err)
		}
		return eps, delta
	}
	for _, q := range []string{"SELECT site FROM visits GROUP BY site ORDER BY site", "SELECT DISTINCT site FROM visits"} {
		eps, delta := remaining()
		res, err := conn.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var sites []string
		for res.Next() {
			var site string
			if err := res.Scan(&site); err != nil {
				t.Fatal(err)
			}
			sites = append(sites, site)
		}
		res.Close()
		if !slices.Contains(sites, "Oslo") || !slices.Contains(sites, "Lyon") || slices.Contains(sites, demo.VisitsHermitSite) {
			t.Errorf("%s released %q, want Oslo and Lyon and not the hermit's site", q, sites)
		}
		e, d := remaining()
		if math.Abs(eps-e-2) > 1e-9 || math.Abs(delta-d-1e-6) > 1e-15 {
			t.Errorf("%s charged ε %g and δ %g, want 2 and 1e-6 once", q, eps-e, delta-d)
		}
	}
	text := explainRows(t, conn, "EXPLAIN SELECT site FROM visits GROUP BY site")
	if want := "each value's selection uses epsilon = 1 and delta = 5e-07"; !strings.Contains(text, want) {
		t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
	}
}
