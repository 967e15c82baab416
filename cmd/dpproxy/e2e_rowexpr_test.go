package main

import (
	"database/sql"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
)

var noteAnyInterval = regexp.MustCompile(`^Note 1003 (.*?): .*95% interval \[([-0-9.e+]+), ([-0-9.e+]+)\]`)

// rowExprScenario: aggregates of row expressions of two columns answer
// through the real proxy, each released value's stated 95% interval
// (widened 3× about its midpoint, so that a correct release misses with
// probability about 1e-4 for Laplace noise, whose 95% half-width is
// b·ln 20) holding the truth computed from the demo rows: SUM(age +
// income), AVG(income - 10 * age) and AVG(CASE WHEN age > 90 THEN income
// ELSE 0 END).
func rowExprScenario(t *testing.T, db *sql.DB) {
	var sum, diff, old float64
	rows := demo.PUMS()
	for _, r := range rows {
		age, income := math.Min(100, math.Max(0, float64(r.Age))), math.Min(500000, math.Max(0, r.Income))
		sum += age + income
		diff += income - 10*age
		if r.Age > 90 {
			old += income
		}
	}
	n := float64(len(rows))
	truth := map[string]float64{
		"SUM(age+income)":                              sum,
		"AVG(income-10*age)":                           diff / n,
		"AVG(CASE WHEN age>90 THEN income ELSE 0 END)": old / n,
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 30"); err != nil {
		t.Fatal(err)
	}
	var a, b, c sql.NullFloat64
	if err := conn.QueryRowContext(t.Context(), "SELECT SUM(age + income), AVG(income - 10 * age), AVG(CASE WHEN age > 90 THEN income ELSE 0 END) FROM pums").Scan(&a, &b, &c); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, w := range warnings(t, conn) {
		m := noteAnyInterval.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		want, ok := truth[m[1]]
		if !ok {
			continue
		}
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		mid, half := (lo+hi)/2, 3*(hi-lo)/2
		checked++
		if math.Abs(want-mid) > half+1e-6 {
			t.Errorf("%s: truth %g outside 3× the stated interval [%g, %g]", m[1], want, lo, hi)
		}
	}
	if checked != 3 {
		t.Errorf("%d of 3 row-expression releases had an interval in SHOW WARNINGS: %q", checked, warnings(t, conn))
	}
}
