package main

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// demoTruth reads the demo's rows (internal/demo/pums.csv) by column name.
func demoTruth(t *testing.T) []map[string]float64 {
	t.Helper()
	f, err := os.Open("../../internal/demo/pums.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]float64
	for _, r := range records[1:] {
		row := map[string]float64{}
		for i, name := range records[0] {
			v, err := strconv.ParseFloat(r[i], 64)
			if err != nil {
				t.Fatal(err)
			}
			row[name] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// TestScalarSubqueriesOnTheDemo sends the statements of the issue that
// read scalar subqueries through the wire at ε = 10: each answer is near
// the truth of the demo's rows, the statement's warnings say how its ε
// is split, and dp_remaining_epsilon() drops by exactly the statement's
// ε. The forms that stay refused are refused with 1235 and cost nothing.
// It failed before scalar subqueries were answered (1235 "subqueries").
func TestScalarSubqueriesOnTheDemo(t *testing.T) {
	rows := demoTruth(t)
	var n, married, sumIncome float64
	for _, r := range rows {
		n++
		married += r["married"]
		sumIncome += r["income"]
	}
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 10"); err != nil {
		t.Fatal(err)
	}
	remaining := func() float64 {
		var r float64
		if err := conn.QueryRowContext(t.Context(), "SELECT dp_remaining_epsilon() LIMIT 1").Scan(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		sql       string
		want, tol float64
	}{
		{"SELECT COUNT(*) / (SELECT COUNT(*) FROM pums) FROM pums WHERE married = 1", married / n, 0.01},
		{"SELECT (SELECT COUNT(*) FROM pums)", n, 5},
		{"SELECT (SELECT AVG(income) FROM pums) / 1000", sumIncome / n / 1000, 1},
	} {
		before := remaining()
		var got float64
		if err := conn.QueryRowContext(t.Context(), c.sql).Scan(&got); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if math.Abs(got-c.want) > c.tol {
			t.Errorf("%s = %g, want %g ± %g", c.sql, got, c.want, c.tol)
		}
		ws := warnings(t, conn)
		if len(ws) == 0 || !strings.Contains(ws[0], "split over all its releases") {
			t.Errorf("%s: warnings %q, want the split of ε first", c.sql, ws)
		}
		if spent := before - remaining(); math.Abs(spent-10) > 1e-9 {
			t.Errorf("%s: spent ε = %g, want the statement's 10", c.sql, spent)
		}
	}
	for _, sql := range []string{
		"SELECT COUNT(*) + (SELECT AVG(income) FROM pums p WHERE p.age = q.age) FROM pums q",
		"SELECT (SELECT COUNT(*), AVG(age) FROM pums)",
		"SELECT (SELECT COUNT(*) FROM pums GROUP BY sex)",
		"SELECT COUNT(*) FROM pums WHERE age IN (SELECT MEDIAN(age) FROM pums)",
		"SELECT COUNT(*) FROM pums WHERE EXISTS (SELECT COUNT(*) FROM pums)",
		"SELECT COUNT(*) FROM pums HAVING COUNT(*) > ALL (SELECT COUNT(*) FROM pums)",
		"SELECT (SELECT COUNT(*) FROM pums) FROM pums",
	} {
		before := remaining()
		rows, err := conn.QueryContext(t.Context(), sql)
		if err == nil {
			rows.Close()
			t.Errorf("%s: answered, want 1235", sql)
			continue
		}
		if code := mysqlCode(err); code != 1235 {
			t.Errorf("%s: %v, want 1235", sql, err)
		}
		if after := remaining(); after != before {
			t.Errorf("%s: refused, yet charged ε = %g", sql, before-after)
		}
	}
}
