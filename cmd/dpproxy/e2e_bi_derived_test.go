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
