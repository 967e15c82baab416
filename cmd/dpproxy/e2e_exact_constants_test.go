package main

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestConstantsAndSummedCountsAsMariaDB, on SQLite, PostgreSQL and
// MariaDB, against MariaDB's own answers over the same five rows:
//
//   - A WHERE or CASE of constants is decided only as MySQL decides it,
//     exactly: 0.1 + 0.2 = 0.4 keeps no row (free), while 0.1 + 0.2 = 0.3,
//     NOT (1 = 1.0000000000000001), 9007199254740993 <>
//     9007199254740992, 2/3 = 0.6667 and 1/3*3 - 1 are refused (1235),
//     as before the zero-row reading of constants. Read in float64 they
//     were answered as keeping no row (COUNT 0, SUM NULL, free) where
//     MariaDB keeps all five.
//   - d > 5 AND d < 5.0000000000000001 on a DECIMAL column is no
//     contradiction (MariaDB keeps the row 5.00000000000000000001): it
//     is a private count, charged, not a free 0.
//   - A count spelled SUM (SUM(r > 1), SUM(IF(r > 1, 1, 0)), SUM(CASE
//     WHEN r > 1 THEN 1 [ELSE 0] END), SUM(1)) over no row is NULL, as
//     MariaDB answers, where COUNT is 0: under a contradiction on a
//     column (the planner's no-row plan), beside MEDIAN under 1 = 0
//     (the planner's too) and under 1 = 0 (the catalog engine). They
//     were 0.
func TestConstantsAndSummedCountsAsMariaDB(t *testing.T) {
	load := func(db *sql.DB) {
		t.Helper()
		for _, q := range []string{
			"CREATE TABLE t (i INTEGER, r INTEGER, d DECIMAL(30, 20))",
			"INSERT INTO t (i, r, d) VALUES (1, 1, 1), (2, 2, 5.00000000000000000001), (3, 3, 3), (4, 3, 4), (5, 4, 5)",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := testdb.Open(t, "mysql", testdb.MySQLDSN(t))
	load(ref)
	mariadb := func(q string) string {
		t.Helper()
		return fmt.Sprint(textRows(t, ref, q))
	}
	// Constant conditions: MariaDB's answer exactly and free, or refused.
	constants := []struct {
		q      string
		refuse bool
	}{
		{"SELECT COUNT(*) FROM t WHERE 0.1 + 0.2 = 0.4", false},
		{"SELECT COUNT(*), SUM(r) FROM t WHERE 9007199254740993 = 9007199254740992", false},
		{"SELECT COUNT(*) FROM t WHERE 0.1 + 0.2 = 0.3", true},
		{"SELECT COUNT(*) FROM t WHERE 2/3 = 0.6667", true},
		{"SELECT SUM(CASE WHEN 0.1 + 0.2 = 0.3 THEN r END) FROM t", true},
		{"SELECT COUNT(*) FROM t WHERE NOT (1 = 1.0000000000000001)", true},
		{"SELECT COUNT(*) FROM t WHERE 9007199254740993 <> 9007199254740992", true},
		{"SELECT COUNT(*) FROM t WHERE 1/3*3 - 1", true},
	}
	// Counts spelled SUM over no row, through each no-row path; the
	// reference is the statement without MEDIAN, whose NULL follows.
	summed := []struct{ q, ref, tail string }{
		{q: "SELECT SUM(r > 1), SUM(IF(r > 1, 1, 0)), COUNT(*) FROM t WHERE i = 1 AND i = 2"},
		{q: "SELECT SUM(CASE WHEN r > 1 THEN 1 ELSE 0 END), SUM(CASE WHEN r > 1 THEN 1 END), COUNT(CASE WHEN r > 1 THEN 1 END), SUM(1) FROM t WHERE i = 1 AND i = 2"},
		{q: "SELECT SUM(r > 1) + 1, SUM(r) FROM t WHERE i < 2 AND i > 3"},
		{q: "SELECT SUM(r > 1), COUNT(*), MEDIAN(r) FROM t WHERE 1 = 0", ref: "SELECT SUM(r > 1), COUNT(*) FROM t WHERE 1 = 0", tail: " NULL"},
		{q: "SELECT SUM(r > 1), SUM(CASE WHEN r > 1 THEN 1 ELSE 0 END), COUNT(*) FROM t WHERE 1 = 0"},
		{q: "SELECT i, SUM(r > 1) FROM t WHERE r = 1 AND r = 2 GROUP BY i"},
	}
	tables := `  - name: t
    columns:
      - {name: i, type: integer, lower: 0, upper: 10, values: [1, 2, 3, 4, 5]}
      - {name: r, type: integer, lower: 0, upper: 10}
      - {name: d, type: real, lower: 0, upper: 10}
`
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			load(testdb.Open(t, b.driver, dsn))
			_, db := startCarolProxy(t, b.driver, dsn, "{default_epsilon: 1, max_epsilon: 50}", "epsilon: 1000, delta: 1.0e-5", tables)
			for _, c := range constants {
				got, err := printedRows(db, c.q)
				var me *mysql.MySQLError
				switch {
				case c.refuse && (!errors.As(err, &me) || me.Number != 1235):
					t.Errorf("%s: %s %v, want refused with 1235 (MariaDB: %s)", c.q, got, err, mariadb(c.q))
				case !c.refuse && (err != nil || got != mariadb(c.q)):
					t.Errorf("%s: %s %v, want MariaDB's %s", c.q, got, err, mariadb(c.q))
				}
				checkRemaining(t, db, 1000)
			}
			for _, c := range summed {
				ref := c.ref
				if ref == "" {
					ref = c.q
				}
				want := strings.TrimSuffix(mariadb(ref), "]]") + c.tail + "]]"
				if want == "[]"+c.tail+"]]" {
					want = "[]"
				}
				if got, err := printedRows(db, c.q); err != nil || got != want {
					t.Errorf("%s: %s %v, want MariaDB's %s", c.q, got, err, want)
				}
				checkRemaining(t, db, 1000)
			}
			// No contradiction over the reals: a private count, charged.
			q := "SELECT COUNT(*) FROM t WHERE d > 5 AND d < 5.0000000000000001"
			if want := mariadb(q); want != "[[1]]" {
				t.Fatalf("MariaDB: %s: %s, want [[1]]", q, want)
			}
			textRows(t, db, q)
			if w := strings.Join(sessionWarnings(t, db), " | "); strings.Contains(w, "selects no row") {
				t.Errorf("%s: answered as over no row (%q); MariaDB keeps a row", q, w)
			}
			checkRemaining(t, db, 999)
		})
	}
}

// printedRows is textRows of q, printed, or the error that stopped it.
func printedRows(db *sql.DB, q string) (string, error) {
	rows, err := queryText(db, q)
	return fmt.Sprint(rows), err
}
