package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// A stored number's class for TestInvalidNumbersReadAsNull: NULL itself, a
// value the reading rule reads as no number, and a number beyond the
// bounds.
const (
	numberNull    = "null"
	numberInvalid = "invalid"
	numberOutside = "outside"
)

// invalidNumberBackend is a backend, its column types for the real column
// x, the integer column a and the integer column u, and the hostile rows:
// class, then the x, a and u literals.
type invalidNumberBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	x, a, u      string
	rows         [][4]string
}

var invalidNumberBackends = []invalidNumberBackend{
	// u has no declared type, so no affinity: SQLite keeps text, numeric
	// text too ('12.5', '7'), as text, where REAL and INTEGER columns
	// convert it.
	{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "n.db") }, "REAL", "INTEGER", "", [][4]string{
		{numberNull, "NULL", "NULL", "NULL"},
		{numberInvalid, "'abc'", "'abc'", "'abc'"},
		{numberInvalid, "''", "''", "'12.5'"},
		{numberInvalid, "x'00ff'", "x'00ff'", "'7'"},
		{numberInvalid, "'1e'", "'12x'", "x'3132'"},
		{numberOutside, "1e300", "9223372036854775807", "-5"},
		{numberOutside, "9e999", "-9e999", "9e999"},
	}},
	{"postgres", "postgres", testdb.PostgresDSN, "DOUBLE PRECISION", "BIGINT", "NUMERIC", [][4]string{
		{numberNull, "NULL", "NULL", "NULL"},
		{numberOutside, "'NaN'", "9223372036854775807", "'NaN'"},
		{numberOutside, "'-Infinity'", "-5", "1e30"},
	}},
	{"mariadb", "mysql", testdb.MySQLDSN, "DOUBLE", "BIGINT", "DECIMAL(30,5)", [][4]string{
		{numberNull, "NULL", "NULL", "NULL"},
		{numberOutside, "1e300", "9223372036854775807", "99999"},
		{numberOutside, "-1e300", "-5", "-0.00001"},
	}},
}

// invalidNumberStatements are the statements probed on the numeric column
// col, %[1]s being the neighbour filter; classOnly marks those whose
// answer is too noisy to compare (sums, means and order statistics of the
// values): only their outcome class is compared. nullGroup marks those
// whose answer holds the NULL group, whose key is NULL (class "null").
func invalidNumberStatements(col string) []struct {
	sql                  string
	classOnly, nullGroup bool
} {
	type st = struct {
		sql                  string
		classOnly, nullGroup bool
	}
	r := strings.NewReplacer("{col}", col)
	statements := []string{
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IS NULL",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IS NOT NULL",
		"SELECT COUNT({col}), COUNT(DISTINCT {col}) FROM h WHERE %[1]s",
		"SELECT COUNT(*) - COUNT({col}), COUNT(CASE WHEN k >= 0 THEN {col} END) FROM h WHERE %[1]s",
		"SELECT SUM(CASE WHEN {col} IS NOT NULL THEN 1 ELSE 0 END), SUM({col} IS NULL), COUNT(CASE WHEN {col} IS NULL THEN 1 END) FROM h WHERE %[1]s",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} = 10",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} <> 10",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} <> 10 OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} < 25",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND NOT ({col} < 25)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND NOT ({col} < 25 OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} BETWEEN 25 AND 75",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} NOT BETWEEN 25 AND 75 OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IN (10, 20)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} NOT IN (10, 20) OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} IS NULL OR {col} >= 75)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND COALESCE({col}, 0) < 25",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IS NOT TRUE",
		// b·COUNT(col) of SUM(a·col + b): the count noise is 0.02 here,
		// one row 1.
		"SELECT ROUND(SUM({col} - 1000) / 1000) FROM h WHERE %[1]s",
		"SELECT AVG({col} IS NULL), AVG({col} < 25) FROM h WHERE %[1]s",
		"SELECT AVG(CASE WHEN {col} < 25 THEN 10 ELSE 0 END) FROM h WHERE %[1]s",
		"SELECT AVG({col} < 25 OR {col} >= 75) FROM h WHERE %[1]s",
		"SELECT FLOOR({col} / 25) * 25 AS b, COUNT(*) FROM h WHERE %[1]s GROUP BY b",
		"SELECT CASE WHEN {col} < 25 THEN 'low' ELSE 'high' END AS t, COUNT(*) FROM h WHERE %[1]s GROUP BY t",
	}
	var out []st
	for _, s := range statements {
		out = append(out, st{r.Replace(s), false, false})
	}
	if col == "a" { // g declares a's values, NULL a group
		out = append(out, st{"SELECT a, COUNT(*), COUNT(a), COUNT(DISTINCT a) FROM g WHERE %[1]s GROUP BY a", false, true})
	}
	for _, s := range []string{
		"SELECT SUM({col}), AVG({col}) FROM h WHERE %[1]s",
		"SELECT MIN({col}), MEDIAN({col}) FROM h WHERE %[1]s",
		"SELECT VARIANCE({col}) FROM h WHERE %[1]s",
	} {
		out = append(out, st{r.Replace(s), true, false})
	}
	return out
}

// TestInvalidNumbersReadAsNull loads, into SQLite, PostgreSQL and
// MariaDB, a table of 600 ordinary rows (k = 0) with a real x and integers
// a and u, and one row per hostile value (k = 1, 2, …): NULL, on SQLite
// values that are no number by the reading rule (text, numeric text in the
// column without affinity, blobs), and numbers beyond the bounds. Every
// statement of invalidNumberStatements, on x, a and u, runs through the
// proxy on the ordinary rows and on each neighbour (the ordinary rows and
// one hostile row):
//
//   - its outcome (answer, NULL, error) is the same on every neighbour;
//   - a value that is no number gives the answer NULL gives (the README's
//     reading rule: on SQLite text and blobs in a numeric column count as
//     NULL). COUNT(x) and COUNT(DISTINCT x) counted 'abc', which x IS NULL
//     holds for, so a row was both NULL and not NULL, and SUM(2 * x - 100),
//     which adds -100·COUNT(x), read it as 0;
//   - the answers with the NULL row are the same on the three backends.
func TestInvalidNumbersReadAsNull(t *testing.T) {
	got := make([]map[string][][]string, len(invalidNumberBackends))
	t.Run("backends", func(t *testing.T) {
		for bi, b := range invalidNumberBackends {
			t.Run(b.name, func(t *testing.T) {
				t.Parallel()
				got[bi] = invalidNumbersOn(t, b)
			})
		}
	})
	for _, col := range []string{"x", "a", "u"} {
		for _, s := range invalidNumberStatements(col) {
			if s.classOnly {
				continue
			}
			for bi := 1; bi < len(invalidNumberBackends); bi++ {
				if got[0] == nil || got[bi] == nil {
					continue
				}
				if a, b := got[0][s.sql], got[bi][s.sql]; !sameAnswer(a, b) {
					t.Errorf("%s with the NULL row: %v on %s, %v on %s", fmt.Sprintf(s.sql, "k IN (0, 1)"), a, invalidNumberBackends[0].name, b, invalidNumberBackends[bi].name)
				}
			}
		}
	}
}

// invalidNumbersOn runs TestInvalidNumbersReadAsNull on one backend and
// returns the answers with the NULL row.
func invalidNumbersOn(t *testing.T, b invalidNumberBackend) map[string][][]string {
	dsn := b.dsn(t)
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{fmt.Sprintf("CREATE TABLE h (k INTEGER, x %s, a %s, u %s)", b.x, b.a, b.u)}
	var sb strings.Builder
	sb.WriteString("INSERT INTO h (k, x, a, u) VALUES ")
	for i := range 600 {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(0, %g, %d, %d)", float64(i*37%200)/2, i*37%100, i*37%100)
	}
	stmts = append(stmts, sb.String())
	for i, r := range b.rows {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO h (k, x, a, u) VALUES (%d, %s, %s, %s)", i+1, r[1], r[2], r[3]))
	}
	execAll(t, db, stmts)
	conn := connectAtHighEpsilon(t, b.driver, dsn, `  - name: h
    columns:
      - {name: k, type: integer, lower: 0, upper: 100}
      - {name: x, type: real, lower: 0, upper: 100}
      - {name: a, type: integer, lower: 0, upper: 100}
      - {name: u, type: integer, lower: 0, upper: 100}
  - name: g
    source: h
    columns:
      - {name: k, type: integer, lower: 0, upper: 100}
      - {name: a, type: integer, lower: 0, upper: 100, values: [0, 10, 20, null]}
`)
	withNull := map[string][][]string{}
	for _, col := range []string{"x", "a", "u"} {
		for _, s := range invalidNumberStatements(col) {
			baseClass, _ := outcomeRows(conn, fmt.Sprintf(s.sql, "k = 0"))
			want := "answer"
			if s.nullGroup {
				want = "null"
			}
			if baseClass != want {
				t.Errorf("%s on the ordinary rows: %s, want %s", fmt.Sprintf(s.sql, "k = 0"), baseClass, want)
			}
			var nullRows [][]string
			for i, r := range b.rows {
				q := fmt.Sprintf(s.sql, fmt.Sprintf("k IN (0, %d)", i+1))
				class, rows := outcomeRows(conn, q)
				if class != baseClass {
					t.Errorf("%s: %s with the %s row %s, %s on the ordinary rows", q, class, r[0], r[1+strings.Index("xau", col)], baseClass)
					continue
				}
				switch r[0] {
				case numberNull:
					nullRows, withNull[s.sql] = rows, rows
				case numberInvalid:
					if !s.classOnly && !sameAnswer(rows, nullRows) {
						t.Errorf("%s: %v with the row %s, %v with NULL (a value that is no number reads as NULL)", q, rows, r[1+strings.Index("xau", col)], nullRows)
					}
				}
			}
		}
	}
	return withNull
}
