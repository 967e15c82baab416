package planner

import (
	"cmp"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestGeneralCIAsMariaDB checks utf8mb4_general_ci's weight of every code
// point (U+0000 to U+10FFFF, surrogates left out) against the server's
// WEIGHT_STRING in utf8mb4_general_ci: two characters weigh the same
// exactly when the server's weights are equal, and order as they do.
func TestGeneralCIAsMariaDB(t *testing.T) {
	db := testdb.MySQL(t)
	if _, err := db.Exec("SET SESSION max_recursive_iterations = 2000000"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 1114111)
		SELECT n, WEIGHT_STRING(CONVERT(CHAR(n USING utf32) USING utf8mb4) COLLATE utf8mb4_general_ci) FROM s WHERE n < 55296 OR n > 57343`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type weighed struct {
		r      rune
		server string
	}
	var all []weighed
	for rows.Next() {
		var w weighed
		if err := rows.Scan(&w.r, &w.server); err != nil {
			t.Fatal(err)
		}
		all = append(all, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(all) != 0x110000-0x800 {
		t.Fatalf("%d code points, want %d", len(all), 0x110000-0x800)
	}
	slices.SortStableFunc(all, func(a, b weighed) int { return cmp.Compare(a.server, b.server) })
	bad := 0
	for i := 1; i < len(all) && bad < 20; i++ {
		a, b := all[i-1], all[i]
		ours := cmp.Compare(collationGeneralCI.weight(a.r), collationGeneralCI.weight(b.r))
		if server := cmp.Compare(a.server, b.server); ours != server {
			t.Errorf("%U, %U: the server's weights compare %d, ours %d", a.r, b.r, server, ours)
			bad++
		}
	}
}
