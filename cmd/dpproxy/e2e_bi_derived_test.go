package main

import (
	"slices"
	"strings"
	"testing"
)

// TestDemoDerivedComputedColumns checks that derived tables with computed
// columns, as Superset's virtual datasets and Metabase's nested questions
// send them, are answered as their flat equivalents: one row per group,
// under the outer statement's labels.
func TestDemoDerivedComputedColumns(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	for _, c := range []struct {
		sql    string
		labels []string
		keys   []string
	}{
		{
			"SELECT age_group, COUNT(*) AS count FROM (SELECT *, CASE WHEN age < 30 THEN 'young' WHEN age < 60 THEN 'mid' ELSE 'old' END AS age_group FROM pums) AS virtual_table GROUP BY age_group",
			[]string{"age_group", "count"},
			[]string{"mid", "old", "young"},
		},
		{
			"SELECT `source`.`sex`, avg(`source`.`income_k`) FROM (SELECT `pums`.`sex` AS `sex`, (`pums`.`income` / 1000) AS `income_k` FROM `dpproxy`.`pums`) AS `source` GROUP BY `source`.`sex`",
			[]string{"sex", "avg(`source`.`income_k`)"},
			[]string{"0", "1"},
		},
	} {
		rows, err := db.Query(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		cols, _ := rows.Columns()
		var keys []string
		for rows.Next() {
			var k string
			var v float64
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		rows.Close()
		slices.Sort(keys)
		if strings.Join(cols, "|") != strings.Join(c.labels, "|") || strings.Join(keys, "|") != strings.Join(c.keys, "|") {
			t.Errorf("%s: got columns %q keys %q, want %q %q", c.sql, cols, keys, c.labels, c.keys)
		}
	}
}

// TestDemoFoundRows checks FOUND_ROWS() after a grouped answer: the number
// of rows the session sent (it used to be the catalog engine's 1), then 1
// after the one-row SELECT FOUND_ROWS() itself, as in MySQL; and that
// SQL_CALC_FOUND_ROWS, whose count the session does not keep, is refused.
func TestDemoFoundRows(t *testing.T) {
	p := startProxy(t, "", nil)
	db := p.connect(t, "demo", "demo")
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	foundRows := func() int64 {
		var n int64
		if err := conn.QueryRowContext(t.Context(), "SELECT FOUND_ROWS()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rows, err := conn.QueryContext(t.Context(), "SELECT race, COUNT(*) FROM pums GROUP BY race ORDER BY 2 DESC LIMIT 4")
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for rows.Next() {
		sent++
	}
	rows.Close()
	if sent != 4 {
		t.Fatalf("grouped query: %d rows, want 4", sent)
	}
	if n := foundRows(); n != 4 {
		t.Errorf("FOUND_ROWS() after 4 rows: got %d, want 4", n)
	}
	if n := foundRows(); n != 1 {
		t.Errorf("FOUND_ROWS() after SELECT FOUND_ROWS(): got %d, want 1", n)
	}
	rows, err = conn.QueryContext(t.Context(), "SELECT SQL_CALC_FOUND_ROWS race, COUNT(*) FROM pums GROUP BY race LIMIT 1")
	if err == nil {
		rows.Close()
	}
	if code := mysqlCode(err); code != 1235 {
		t.Errorf("SQL_CALC_FOUND_ROWS: got %v, want 1235", err)
	}
}
