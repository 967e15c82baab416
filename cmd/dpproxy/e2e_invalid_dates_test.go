package main

import (
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/testdb"
)

// A stored date's class for TestInvalidDatesReadAsNull: NULL itself, a
// value the reading rule reads as no date, and a date outside the bounds.
const (
	dateNull    = "null"
	dateInvalid = "invalid"
	dateOutside = "outside"
)

// invalidDateBackend is a backend, its column types for d (date) and ts
// (timestamp), the statements that prepare its session for storing the
// hostile rows, and those rows: class, d literal, ts literal.
type invalidDateBackend struct {
	name, driver string
	dsn          func(testing.TB) string
	day, at      string
	setup        []string
	rows         [][3]string
}

var invalidDateBackends = []invalidDateBackend{
	{"sqlite", "sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "d.db") }, "DATE", "TIMESTAMP", nil, [][3]string{
		{dateNull, "NULL", "NULL"},
		{dateInvalid, "'not a date'", "'garbage'"},
		{dateInvalid, "'2021-02-30'", "'2021-02-30 10:00:00'"},
		{dateInvalid, "'2021-1-5'", "'2021-01-05T10:00:00'"},
		{dateInvalid, "'2021-01-05 10:00:00'", "'2021-01-05'"},
		{dateInvalid, "''", "'2021-01-05 24:00:00'"},
		{dateInvalid, "20210105", "1609841000"},
		{dateInvalid, "x'00ff'", "x'00ff'"},
		{dateOutside, "'1000-01-01'", "'1000-01-01 00:00:00'"},
	}},
	{"postgres", "postgres", testdb.PostgresDSN, "DATE", "TIMESTAMP", nil, [][3]string{
		{dateNull, "NULL", "NULL"},
		{dateOutside, "'infinity'", "'-infinity'"},
		{dateOutside, "'1000-01-01'", "'1000-01-01 00:00:00'"},
	}},
	{"mariadb", "mysql", testdb.MySQLDSN, "DATE", "DATETIME", []string{"SET SESSION sql_mode = 'ALLOW_INVALID_DATES'"}, [][3]string{
		{dateNull, "NULL", "NULL"},
		{dateInvalid, "'0000-00-00'", "'0000-00-00 00:00:00'"},
		{dateInvalid, "'2021-00-10'", "'2021-00-10 10:00:00'"},
		{dateInvalid, "'2021-05-00'", "'2021-05-00 10:00:00'"},
		{dateInvalid, "'2021-02-30'", "'2021-02-30 10:00:00'"},
		{dateOutside, "'1000-01-01'", "'1000-01-01 00:00:00'"},
	}},
}

// invalidDateStatements are the statements probed on the column col (d or
// ts), written with {col} and the constants {v} and {w} (a day or instant
// some ordinary rows hold) and {early} and {late} (range ends); %[1]s is
// the neighbour filter. classOnly marks those whose answer is noisy beyond
// comparison (DP order statistics) or a refusal: only their outcome class
// is compared.
func invalidDateStatements(col, v, w, early, late string) []struct {
	sql       string
	classOnly bool
} {
	type st = struct {
		sql       string
		classOnly bool
	}
	r := strings.NewReplacer("{col}", col, "{v}", v, "{w}", w, "{early}", early, "{late}", late)
	out := []st{}
	for _, s := range []string{
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IS NULL",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IS NOT NULL",
		"SELECT COUNT({col}), COUNT(DISTINCT {col}) FROM h WHERE %[1]s",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} = {v}",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} <> {v}",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} <> {v} OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} < {early}",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND NOT ({col} < {early})",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} BETWEEN {early} AND {late}",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} NOT BETWEEN {early} AND {late} OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND {col} IN ({v}, {w})",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} NOT IN ({v}, {w}) OR {col} IS NULL)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND ({col} IS NULL OR {col} >= {late})",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND YEAR({col}) = 2020",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND NOT (YEAR({col}) = 2020)",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND MONTH({col}) = 5",
		"SELECT SUM({col} IS NULL), COUNT(CASE WHEN {col} IS NULL THEN 1 END) FROM h WHERE %[1]s",
		"SELECT AVG({col} IS NULL), AVG({col} < {early}) FROM h WHERE %[1]s",
		"SELECT AVG(CASE WHEN {col} < {early} THEN 10 ELSE 0 END) FROM h WHERE %[1]s",
		"SELECT AVG({col} < {early} OR {col} >= {late}) FROM h WHERE %[1]s",
		"SELECT AVG(YEAR({col})), AVG(MONTH({col})) FROM h WHERE %[1]s",
		"SELECT YEAR({col}), COUNT(*) FROM h WHERE %[1]s GROUP BY 1",
		"SELECT DATE_FORMAT({col}, '%%Y-%%m'), COUNT(*) FROM h WHERE %[1]s AND {col} >= '2020-01-01' AND {col} < '2020-07-01' GROUP BY 1",
	} {
		out = append(out, st{r.Replace(s), false})
	}
	for _, s := range []string{
		"SELECT MIN({col}), MEDIAN({col}) FROM h WHERE %[1]s",
		"SELECT COALESCE(MAX({col}), '2000-01-01') FROM h WHERE %[1]s",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND COALESCE({col}, '2000-01-01') < {late}",
		"SELECT COUNT(*) FROM h WHERE %[1]s AND DATE_FORMAT({col}, '%%Y-%%m') = '2020-05'",
	} {
		out = append(out, st{r.Replace(s), true})
	}
	return out
}

// TestInvalidDatesReadAsNull loads, into SQLite, PostgreSQL and MariaDB,
// a table of 600 ordinary rows (k = 0) with a date d and a timestamp ts,
// and one row per hostile value (k = 1, 2, …): NULL, values that hold no
// date by the reading rule (SQLite text that spells no day, numbers and
// blobs; MariaDB zero dates and impossible days), and dates outside the
// bounds. Every statement of invalidDateStatements, on d and on ts, runs
// through the proxy on the ordinary rows and on each neighbour (the
// ordinary rows and one hostile row):
//
//   - its outcome (answer, NULL, error) is the same on every neighbour;
//   - a value that is no date gives the answer NULL gives (the README's
//     reading rule: such a value is read as NULL everywhere). On SQLite
//     'not a date' was not NULL to d IS NULL, so WHERE d IS NULL counted 1
//     of it and a NULL, and d <> v OR d IS NULL missed it;
//   - the answers with the NULL row are the same on the three backends
//     (AVG(d < '2020-01-01') and AVG(CASE WHEN d < … THEN 10 ELSE 0 END)
//     read no SQLite date as a date at all).
func TestInvalidDatesReadAsNull(t *testing.T) {
	type answers map[string][][]string // statement -> rows, on the NULL neighbour
	got := make([]answers, len(invalidDateBackends))
	t.Run("backends", func(t *testing.T) {
		for bi, b := range invalidDateBackends {
			t.Run(b.name, func(t *testing.T) {
				t.Parallel()
				got[bi] = invalidDatesOn(t, b)
			})
		}
	})
	var statements []string
	for _, c := range [][5]string{invalidDateColumn("d"), invalidDateColumn("ts")} {
		for _, s := range invalidDateStatements(c[0], c[1], c[2], c[3], c[4]) {
			if !s.classOnly {
				statements = append(statements, s.sql)
			}
		}
	}
	for _, s := range statements {
		for bi := 1; bi < len(invalidDateBackends); bi++ {
			if got[0] == nil || got[bi] == nil {
				continue
			}
			if a, b := got[0][s], got[bi][s]; !sameAnswer(a, b) {
				t.Errorf("%s with the NULL row: %v on %s, %v on %s", fmt.Sprintf(s, "k IN (0, 1)"), a, invalidDateBackends[0].name, b, invalidDateBackends[bi].name)
			}
		}
	}
}

// invalidDateColumn returns the column and its constants for
// invalidDateStatements: the values two groups of ordinary rows hold, and
// two range ends.
func invalidDateColumn(col string) [5]string {
	if col == "ts" {
		return [5]string{"ts", "'2020-05-01 10:00:00'", "'2019-03-03 08:30:00'", "'2020-01-01 00:00:00'", "'2022-01-01 00:00:00'"}
	}
	return [5]string{"d", "'2020-05-01'", "'2019-03-03'", "'2020-01-01'", "'2022-01-01'"}
}

// invalidDatesOn runs TestInvalidDatesReadAsNull on one backend and
// returns the answers with the NULL row.
func invalidDatesOn(t *testing.T, b invalidDateBackend) map[string][][]string {
	dsn := b.dsn(t)
	db, err := sql.Open(b.driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // the setup holds for the inserts
	stmts := append(slices.Clone(b.setup), fmt.Sprintf("CREATE TABLE h (k INTEGER, d %s, ts %s)", b.day, b.at))
	start := time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)
	var sb strings.Builder
	sb.WriteString("INSERT INTO h (k, d, ts) VALUES ")
	for i := range 600 {
		at := start.AddDate(0, 0, i*53%2900).Add(time.Duration(i*7%24)*time.Hour + time.Duration(i*13%60)*time.Minute)
		switch i % 10 {
		case 0:
			at = time.Date(2020, 5, 1, 10, 0, 0, 0, time.UTC)
		case 5:
			at = time.Date(2019, 3, 3, 8, 30, 0, 0, time.UTC)
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(0, '%s', '%s')", at.Format(time.DateOnly), at.Format(time.DateTime))
	}
	stmts = append(stmts, sb.String())
	for i, r := range b.rows {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO h (k, d, ts) VALUES (%d, %s, %s)", i+1, r[1], r[2]))
	}
	execAll(t, db, stmts)
	conn := connectAtHighEpsilon(t, b.driver, dsn, `  - name: h
    columns:
      - {name: k, type: integer, lower: 0, upper: 100}
      - {name: d, type: date, lower: 2015-01-01, upper: 2024-12-31}
      - {name: ts, type: timestamp, lower: 2015-01-01, upper: "2024-12-31 23:59:59"}
`)
	withNull := map[string][][]string{}
	for _, c := range [][5]string{invalidDateColumn("d"), invalidDateColumn("ts")} {
		for _, s := range invalidDateStatements(c[0], c[1], c[2], c[3], c[4]) {
			baseClass, _ := outcomeRows(conn, fmt.Sprintf(s.sql, "k = 0"))
			if !s.classOnly && baseClass != "answer" {
				t.Errorf("%s on the ordinary rows: %s", fmt.Sprintf(s.sql, "k = 0"), baseClass)
			}
			var nullRows [][]string
			for i, r := range b.rows {
				q := fmt.Sprintf(s.sql, fmt.Sprintf("k IN (0, %d)", i+1))
				class, rows := outcomeRows(conn, q)
				if class != baseClass {
					t.Errorf("%s: %s with the %s row %s, %s on the ordinary rows", q, class, r[0], r[1], baseClass)
					continue
				}
				switch r[0] {
				case dateNull:
					nullRows, withNull[s.sql] = rows, rows
				case dateInvalid:
					if !s.classOnly && !sameAnswer(rows, nullRows) {
						t.Errorf("%s: %v with the row %s / %s, %v with NULL (a value that is no date reads as NULL)", q, rows, r[1], r[2], nullRows)
					}
				}
			}
		}
	}
	return withNull
}

// outcomeRows runs q and returns its outcome class ("answer",
// "null" when a value is NULL, or "error N") and its rows as text.
func outcomeRows(db *sql.DB, q string) (string, [][]string) {
	rows, err := db.Query(q)
	if err != nil {
		return fmt.Sprintf("error %d", mysqlCode(err)), nil
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	class := "answer"
	var out [][]string
	for rows.Next() {
		raw := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Sprintf("error %d", mysqlCode(err)), nil
		}
		row := make([]string, len(raw))
		for i, r := range raw {
			row[i] = r.String
			if !r.Valid {
				class, row[i] = "null", "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return fmt.Sprintf("error %d", mysqlCode(err)), nil
	}
	return class, out
}

// sameAnswer reports whether two answers have the same rows, numbers
// within 0.01 of each other and other values equal. At ε = 100 a count
// rounds to the truth, and the noise of a mean over 600 rows of values
// within a span of 11 has a scale below 0.0004.
func sameAnswer(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, errX := strconv.ParseFloat(a[i][j], 64)
			y, errY := strconv.ParseFloat(b[i][j], 64)
			switch {
			case errX == nil && errY == nil:
				if math.Abs(x-y) > 0.01 {
					return false
				}
			case a[i][j] != b[i][j]:
				return false
			}
		}
	}
	return true
}
