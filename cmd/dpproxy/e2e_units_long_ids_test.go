package main

import (
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestLongUnitIDsOnMariaDB: on MariaDB a person whose id is a VARCHAR
// longer than the sort key (max_sort_length, 16 KiB) is one person, not
// many. Two persons, 400 rows each, whose latin1 ids share their first
// 17,000 characters had their rows interleaved in the window functions'
// sort, and each change of id started a new partition: each was bounded
// as about 200 persons, COUNT(*) answered 594 where the bounded truth is
// 202, and GROUP BY site released the key only person A holds (found by
// an independent review). Rows whose id's sort key is longer than 16 KiB
// are now read by no fetch: COUNT(*) counts the 200 short ids, and the
// one-person key is released with probability 1.9e-7 at ε = 1, δ = 1e-6.
func TestLongUnitIDsOnMariaDB(t *testing.T) {
	dsn := testdb.MySQLDSN(t)
	direct := testdb.Open(t, "mysql", dsn)
	for _, q := range []string{
		"CREATE TABLE lv (pid VARCHAR(60000) CHARACTER SET latin1, site VARCHAR(40), cat INT, amt INT) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
		"INSERT INTO lv SELECT CONCAT(REPEAT('x', 17000), IF(seq % 2 = 0, 'A', 'B')), IF(seq % 2 = 0, 'secretA', 'otherB'), 1 + seq % 3, seq % 100 FROM seq_1_to_800",
		"INSERT INTO lv SELECT CONCAT('c', seq), 'common', 1 + seq % 3, seq % 100 FROM seq_1_to_200",
	} {
		if _, err := direct.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// Ids of 7,000 three-byte characters: 21,001 bytes, a weight string
	// of 14,002 under utf8mb4_general_ci.
	testdb.LongCJKUnitIDs(t, direct)
	_, db := startCarolProxy(t, "mysql", dsn, "{default_epsilon: 1, max_epsilon: 50, default_delta: 1.0e-6}", "epsilon: 1000, delta: 1.0e-3", `  - name: lv
    privacy_unit: pid
    max_rows_per_unit: 1
    max_groups_per_unit: 1
    columns:
      - {name: site, type: text, partition_selection: true}
      - {name: cat, type: integer, lower: 1, upper: 3, values: [1, 2, 3]}
      - {name: amt, type: integer, lower: 0, upper: 100}
  - name: lv3
    privacy_unit: pid
    max_rows_per_unit: 1
    columns:
      - {name: amt, type: integer, lower: 0, upper: 100}
`)
	setEpsilon := func(e string) {
		t.Helper()
		if _, err := db.Exec("SET @dp_epsilon = " + e); err != nil {
			t.Fatal(err)
		}
	}
	// At ε = 10 a count's noise is below 3 with probability 1 − 1e-13.
	setEpsilon("10")
	var count float64
	if err := db.QueryRow("SELECT COUNT(*) FROM lv").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if math.Abs(count-200) > 3 {
		t.Errorf("COUNT(*) = %g, want 200 (the short ids; the two long ones are read by no fetch)", count)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM lv3").Scan(&count); err != nil {
		t.Fatal(err)
	} else if math.Abs(count-200) > 3 {
		t.Errorf("COUNT(*) of lv3 = %g, want 200 (the two ids of 21,001 bytes are read by no fetch)", count)
	}
	if n := groupTotal(t, db, "SELECT cat, COUNT(*) FROM lv GROUP BY cat"); math.Abs(n-200) > 5 {
		t.Errorf("GROUP BY cat totals %g, want 200", n)
	}
	setEpsilon("1")
	for range 10 {
		rows, err := db.Query("SELECT site, COUNT(*) FROM lv GROUP BY site")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var site string
			var n float64
			if err := rows.Scan(&site, &n); err != nil {
				t.Fatal(err)
			}
			if site != "common" {
				t.Errorf("GROUP BY site released %q (%g), a key of at most one person", site, n)
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// groupTotal runs the grouped statement q, whose rows are (key, count),
// and returns the sum of its counts.
func groupTotal(t *testing.T, db *sql.DB, q string) float64 {
	t.Helper()
	sum := 0.0
	for _, n := range groupCounts(t, db, q) {
		sum += n
	}
	return sum
}

// TestUnitSpellingsKeepGroupsEndToEnd: on a case-insensitive id column
// (MariaDB's utf8mb4_general_ci, a nondeterministic ICU collation on
// PostgreSQL, SQLite's NOCASE) a person whose rows spell its id several
// ways keeps max_groups_per_unit of its groups. The group choice hashed
// each row's own spelling, so a group took one rank per spelling, and a
// person of two groups spelt twice each (max_groups_per_unit 2) kept on
// average one of them (an independent review): GROUP BY cat totalled
// about half the persons' groups. At ε = 10 the two counts' noise is
// below 4 with probability 1 − 1e-8.
func TestUnitSpellingsKeepGroupsEndToEnd(t *testing.T) {
	const persons = 30
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			direct := testdb.Open(t, b.driver, dsn)
			create, spell := "CREATE TABLE spelt (pid TEXT COLLATE NOCASE, cat INTEGER)", "('bob%d', 1), ('BOB%d', 1), ('Bob%d', 2), ('bOB%d', 2)"
			switch b.name {
			case "postgres":
				if _, err := direct.Exec("CREATE COLLATION IF NOT EXISTS dpproxy_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"); err != nil {
					t.Fatal(err)
				}
				create = "CREATE TABLE spelt (pid TEXT COLLATE dpproxy_ci, cat INTEGER)"
			case "mariadb":
				create, spell = "CREATE TABLE spelt (pid VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, cat INT)", "('bob%d', 1), ('BOB%d', 1), ('bob%d ', 2), ('Böb%d', 2)"
			}
			var values []string
			for i := range persons {
				values = append(values, fmt.Sprintf(spell, i, i, i, i))
			}
			for _, q := range []string{create, "INSERT INTO spelt VALUES " + strings.Join(values, ", ")} {
				if _, err := direct.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 10, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", `  - name: spelt
    privacy_unit: pid
    max_rows_per_unit: 1
    max_groups_per_unit: 2
    columns:
      - {name: cat, type: integer, lower: 1, upper: 2, values: [1, 2]}
`)
			if n := groupTotal(t, db, "SELECT cat, COUNT(*) FROM spelt GROUP BY cat"); math.Abs(n-2*persons) > 4 {
				t.Errorf("GROUP BY cat totals %g, want %d (each person in both its groups)", n, 2*persons)
			}
		})
	}
}
