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
// holding the truth computed from the demo rows: SUM(age + income),
// AVG(income - 10 * age) and AVG(CASE WHEN age > 90 THEN income ELSE 0
// END). The interval is widened 3× about the released value, so that a
// correct release misses with probability about 1e-4 for Laplace noise,
// whose 95% half-width is b·ln 20. About the value, not the interval's
// midpoint: a mean whose noisy value fell below 0 is released as 0 with
// its interval clamped to [0, 60.67], whose midpoint is not the estimate
// (a clean-clone run failed so; 2 of 12,000 statements at ε = 30 do).
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
	released := map[string]sql.NullFloat64{"SUM(age+income)": a, "AVG(income-10*age)": b, "AVG(CASE WHEN age>90 THEN income ELSE 0 END)": c}
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
		v := released[m[1]]
		if !v.Valid {
			t.Errorf("%s: NULL released with an interval [%g, %g]", m[1], lo, hi)
			continue
		}
		half := 3 * math.Max(v.Float64-lo, hi-v.Float64)
		checked++
		if math.Abs(want-v.Float64) > half+1e-6 {
			t.Errorf("%s: truth %g outside 3× the stated interval [%g, %g] about the released %g", m[1], want, lo, hi, v.Float64)
		}
	}
	if checked != 3 {
		t.Errorf("%d of 3 row-expression releases had an interval in SHOW WARNINGS: %q", checked, warnings(t, conn))
	}
}
