package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// datesSeed is the seed of the visits table the date tests use.
const datesSeed = 29

// noteGroupCount reads a grouped COUNT(*)'s interval from SHOW WARNINGS:
// the group's label (a year, or a month in quotes) and the 95% interval.
var noteGroupCount = regexp.MustCompile(`^Note 1003 .+ = '?([0-9-]+)'?: COUNT\(\*\): .*95% interval \[([-0-9.e+]+), ([-0-9.e+]+)\]`)

// TestDateGroupsOnEveryBackend serves demo.Visits (visit dates drawn
// uniformly from 2019 to 2024) from SQLite (dates as text 'YYYY-MM-DD'),
// PostgreSQL and MariaDB (DATE) through the real proxy, with visit_date
// declared as a date column bounded by [2018-01-01, 2024-12-31], so that
// 2018 is a declared but empty year. At ε = 40 a year chart, a month
// histogram, Metabase's month spelling and a grouped query on the
// person-level table answer every declared group (2018 and its months
// included, never more), a date WHERE range the groups within it, each
// count within its stated 95% interval of the truth but for at most a few
// (the counts' intervals cover with probability at least 0.95 each), and
// the statement costs ε once.
func TestDateGroupsOnEveryBackend(t *testing.T) {
	rows := demo.Visits(datesSeed)
	perYear, perMonth := map[string]float64{}, map[string]float64{}
	perYearFiltered, perDayOfWeek := map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		perYear[r.VisitDate[:4]]++
		perMonth[r.VisitDate[:7]]++
		if r.VisitDate >= "2020-01-01" && r.VisitDate < "2022-01-01" {
			perYearFiltered[r.VisitDate[:4]]++
		}
		if r.VisitDate >= "2023-03-06" && r.VisitDate < "2023-03-13" {
			perDayOfWeek[r.VisitDate]++
		}
	}
	var years, months, monthStarts []string
	for y := 2018; y <= 2024; y++ {
		years = append(years, strconv.Itoa(y))
		for m := 1; m <= 12; m++ {
			months = append(months, fmt.Sprintf("%d-%02d", y, m))
			monthStarts = append(monthStarts, fmt.Sprintf("%d-%02d-01", y, m))
		}
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			conn, remaining := visitsSession(t, b, rows, visitDateTables(fmt.Sprintf("      - {name: spend, type: real, lower: 0, upper: %d}\n", demo.VisitsSpendUpper), ""))
			// SHOW WARNINGS lists every group's note (84 of them, past
			// the default max_error_count, 64).
			if _, err := conn.ExecContext(t.Context(), "SET max_error_count = 65535"); err != nil {
				t.Fatal(err)
			}
			// check runs q, wants the labels in order, and checks each
			// group's count against truth within its stated interval.
			check := func(q string, want []string, truth map[string]float64, labelOf func(string) string) {
				t.Helper()
				before := remaining()
				rs, err := conn.QueryContext(t.Context(), q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				var got []string
				for rs.Next() {
					var label string
					var n sql.NullFloat64
					if err := rs.Scan(&label, &n); err != nil {
						t.Fatal(err)
					}
					if len(label) > 10 { // a DATE the driver sends as a timestamp
						label = label[:10]
					}
					got = append(got, label)
				}
				rs.Close()
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("%s: groups %v, want every declared group %v", q, got, want)
				}
				checked, outside := 0, 0
				for _, w := range warnings(t, conn) {
					m := noteGroupCount.FindStringSubmatch(w)
					if m == nil {
						continue
					}
					lo, _ := strconv.ParseFloat(m[2], 64)
					hi, _ := strconv.ParseFloat(m[3], 64)
					truth := truth[labelOf(m[1])]
					checked++
					if truth < lo-1e-6 || truth > hi+1e-6 {
						outside++
						t.Logf("%s: group %s: truth %g outside [%g, %g]", q, m[1], truth, lo, hi)
					}
				}
				if checked != len(want) {
					t.Errorf("%s: %d counts with an interval in SHOW WARNINGS, want %d", q, checked, len(want))
				}
				if outside > 2+len(want)/10 {
					t.Errorf("%s: %d of %d counts outside their 95%% intervals", q, outside, checked)
				}
				if spent := before - remaining(); spent < 40-1e-9 || spent > 40+1e-9 {
					t.Errorf("%s spent ε = %g, want 40 once (parallel composition over the groups)", q, spent)
				}
			}
			same := func(s string) string { return s }
			check("SELECT YEAR(visit_date), COUNT(*) FROM visits GROUP BY 1", years, perYear, same)
			check("SELECT DATE_FORMAT(visit_date, '%Y-%m') AS month, COUNT(*) AS n FROM visits GROUP BY month ORDER BY month", months, perMonth, same)
			check("SELECT str_to_date(date_format(`visits`.`visit_date`, '%Y-%m-01'), '%Y-%m-%d') AS `visit_date`, count(*) AS `count` FROM `visits` "+
				"GROUP BY str_to_date(date_format(`visits`.`visit_date`, '%Y-%m-01'), '%Y-%m-%d') ORDER BY str_to_date(date_format(`visits`.`visit_date`, '%Y-%m-01'), '%Y-%m-%d') ASC",
				monthStarts, perMonth, func(s string) string { return s[:7] })
			// A WHERE range on the column narrows the key to the periods
			// it reaches: two years, and the seven days of one week.
			check("SELECT YEAR(visit_date) AS y, COUNT(*) FROM visits WHERE visit_date >= '2020-01-01' AND visit_date < DATE '2022-01-01' GROUP BY y ORDER BY y",
				[]string{"2020", "2021"}, perYearFiltered, same)
			check("SELECT DATE(visit_date) AS d, COUNT(*) FROM visits WHERE visit_date >= '2023-03-06' AND visit_date < '2023-03-13' GROUP BY d ORDER BY d",
				[]string{"2023-03-06", "2023-03-07", "2023-03-08", "2023-03-09", "2023-03-10", "2023-03-11", "2023-03-12"}, perDayOfWeek, same)
			// On the person-level table: every quarter answered, at ε / 4 per group.
			rs, err := conn.QueryContext(t.Context(), "SELECT QUARTER(visit_date) AS q, COUNT(*) FROM visits_units GROUP BY q ORDER BY q")
			if err != nil {
				t.Fatal(err)
			}
			var quarters []int
			for rs.Next() {
				var q int
				var n sql.NullFloat64
				if err := rs.Scan(&q, &n); err != nil {
					t.Fatal(err)
				}
				quarters = append(quarters, q)
			}
			rs.Close()
			if fmt.Sprint(quarters) != "[1 2 3 4]" {
				t.Errorf("quarters %v, want [1 2 3 4]", quarters)
			}
			ws := warnings(t, conn)
			if !strings.Contains(strings.Join(ws, "\n"), "protects each person_id at epsilon=40 across at most 4 groups") {
				t.Errorf("the person-level grouped query's warnings do not state its guarantee: %q", ws)
			}
		})
	}
}

// visitDateTables declares, under tables:, visits with visit_date (a
// date column over 2018 to 2024) and the YAML column lines visitsColumns,
// and visits_units, a copy of the same rows (one relation has one unit)
// protecting each person_id (at most 5 rows and 4 groups a person) with
// visit_date and unitsColumns.
func visitDateTables(visitsColumns, unitsColumns string) string {
	const visitDate = "      - {name: visit_date, type: date, lower: 2018-01-01, upper: 2024-12-31}\n"
	return "\n  - name: visits\n    columns:\n" + visitsColumns + visitDate +
		"  - name: visits_units\n    privacy_unit: person_id\n    max_rows_per_unit: 5\n    max_groups_per_unit: 4\n    columns:\n" +
		visitDate + unitsColumns
}

// visitsSession loads rows into b as tables visits and visits_units,
// serves the YAML lines tables (under tables:, visitDateTables) through a
// real proxy for the analyst dora (a budget of ε = 1000), and returns a
// connection of hers with @dp_epsilon = 40 and a function reading her
// remaining ε on it.
func visitsSession(t *testing.T, b visitsBackend, rows []demo.VisitRow, tables string) (*sql.Conn, func() float64) {
	t.Helper()
	return doraSession(t, b, b.load(t, "visits", rows, "visits_units"), tables)
}

// doraSession is visitsSession on the database dsn of b, already loaded.
func doraSession(t *testing.T, b visitsBackend, dsn, tables string) (*sql.Conn, func() float64) {
	t.Helper()
	p := doraProxy(t, b, dsn, tables)
	conn, err := p.connect(t, "dora", "dora-pw").Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 40"); err != nil {
		t.Fatal(err)
	}
	return conn, func() float64 {
		var r float64
		if err := conn.QueryRowContext(t.Context(), "SELECT dp_remaining_epsilon()").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// doraProxy is a real proxy serving the YAML lines tables (under tables:)
// of the database dsn of b to the analyst dora (password dora-pw, a
// budget of ε = 1000, a default of ε = 1 a statement).
func doraProxy(t *testing.T, b visitsBackend, dsn, tables string) *proxyProcess {
	t.Helper()
	dir := t.TempDir()
	config := filepath.Join(dir, "dpproxy.yaml")
	yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 50}
users:
  - {name: dora, password_hash: %q, epsilon: 1000, delta: 1.0e-5}
tables:%s`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("dora-pw")), tables)
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProxy(t, dir, nil, "--config", config)
}
