package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestLikeEndToEnd counts rows of BI tools' text filters written with LIKE
// ("starts with", "contains", "does not contain" = NOT LIKE OR IS NULL,
// Tableau's and Superset's "ends with") through the real proxy on SQLite,
// PostgreSQL and MariaDB, over names holding the pattern characters %, _,
// !, a backslash and a quote, mixed case and NULLs, at ε = 20 (every count
// exact: P[|Z| ≥ 1] < 5e-9). The truth is Go's regular expression of each
// pattern, case-insensitive on MariaDB and SQLite (their default
// collations; the names are ASCII) and case-sensitive on PostgreSQL, as
// each database's LIKE matches; a LIKE the proxy rendered with the wrong
// escape (a literal % or _ read as a wildcard, a ! or backslash lost)
// changes a count. LOWER(col) LIKE (Metabase's case-insensitive
// "contains") and UPPER(col) match without case everywhere; LOCATE('s',
// col) > 0 and INSTR(col, 's') = 0 (Tableau's and Power BI's contains),
// LEFT(col, n), SUBSTRING(col, 1, n), RIGHT(col, n) and LOWER(col) = 's'
// compare as the backend computes them: without case on MariaDB (its
// collation), with case on SQLite (its substr and instr, not its LIKE)
// and PostgreSQL (LIKE in the "C" collation). Also per group.
func TestLikeEndToEnd(t *testing.T) {
	names := []string{"alice", "Alice", "ALINE", "bob", "50% off", "50%", "500 off", "a_b", "axb", "a!b", "wow!", `back\slash`, `back/slash`,
		"o'neil", "oneil", "smith", "Smithers", "blacksmith", "x%y_z!", "xay", "", "%", "_"}
	type row struct {
		name   *string
		group  int
		amount int
	}
	var rows []row
	for i := range 400 {
		r := row{group: i % 3, amount: i % 97}
		if i%13 != 0 {
			n := names[i%len(names)]
			r.name = &n
		}
		rows = append(rows, r)
	}
	filters := []struct {
		where string
		re    string // Go regexp of the matched names; "" for NULL-aware forms below
		not   bool   // NOT LIKE: names that do not match, NULLs excluded
		null  bool   // ... OR name IS NULL: NULLs included
		// function marks a function of the column compared with a
		// string, which SQLite computes with case (its LIKE has none).
		function bool
	}{
		{where: "name LIKE 'ali%'", re: `^ali.*$`},
		{where: "name LIKE '%smith%'", re: `^.*smith.*$`},
		{where: "name LIKE '%50\\%%'", re: `^.*50%.*$`},
		{where: "name LIKE '%!%'", re: `^.*!.*$`},
		{where: "name LIKE 'a_b'", re: `^a.b$`},
		{where: "name LIKE 'a\\_b'", re: `^a_b$`},
		{where: "name LIKE '%\\\\\\\\%'", re: `^.*\\.*$`}, // the literal '%\\\\%' is %\\%: an escaped backslash
		{where: "name LIKE '%\\\\%'", re: `^.*%$`},        // '%\\%' is %\%, ending with an escaped %, as MySQL reads it
		{where: "name LIKE '%''%'", re: `^.*'.*$`},
		{where: "name LIKE 'x#%y#_z!' ESCAPE '#'", re: `^x%y_z!$`},
		{where: "name LIKE ''", re: `^$`},
		{where: "name LIKE '%'", re: `^.*$`},
		{where: "name NOT LIKE '%smith%'", re: `^.*smith.*$`, not: true},
		{where: "(name NOT LIKE '%smith%' OR name IS NULL)", re: `^.*smith.*$`, not: true, null: true},
		{where: "name LIKE 'ali%' OR name LIKE '%off'", re: `^(ali.*|.*off)$`},
		{where: "LOWER(name) LIKE '%smith%'", re: `(?i)^.*smith.*$`},
		{where: "UPPER(`people`.`name`) NOT LIKE 'ALI%'", re: `(?i)^ali.*$`, not: true},
		// Functions of the column compared with a string.
		{where: "LOCATE('50%', name) > 0", re: `^.*50%.*$`, function: true},
		{where: "INSTR(name, 'smith') = 0", re: `^.*smith.*$`, not: true, function: true},
		{where: "LEFT(name, 3) = 'ali'", re: `^ali.*$`, function: true},
		{where: "SUBSTRING(name, 1, 3) = '50%'", re: `^50%.*$`, function: true},
		{where: "RIGHT(name, 3) = 'off'", re: `^.*off$`, function: true},
		{where: "LEFT(name, 10) = 'wow!'", re: `^wow!$`, function: true},
		{where: "LOWER(name) = 'alice'", re: `(?i)^alice$`, function: true},
		{where: "LEFT(name, 3) <> 'ali'", re: `^ali.*$`, not: true, function: true},
		// Equalities on a text column, and BI tools' "is not" (on SQLite
		// its NULL test read every text as unreadable: every row counted).
		{where: "name <> 'bob'", re: `^bob$`, not: true},
		{where: "(name <> 'bob' OR name IS NULL)", re: `^bob$`, not: true, null: true},
		{where: "(name NOT IN ('bob', 'smith') OR name IS NULL)", re: `^(bob|smith)$`, not: true, null: true},
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			if _, err := db.Exec("CREATE TABLE people (name VARCHAR(32), grp INTEGER, amount INTEGER)"); err != nil {
				t.Fatal(err)
			}
			var vals []string
			for _, r := range rows {
				name := "NULL"
				if r.name != nil {
					name = "'" + strings.ReplaceAll(*r.name, "'", "''") + "'"
					if b.driver == "mysql" {
						name = "'" + strings.ReplaceAll(strings.ReplaceAll(*r.name, `\`, `\\`), "'", "''") + "'"
					}
				}
				vals = append(vals, fmt.Sprintf("(%s, %d, %d)", name, r.group, r.amount))
			}
			if _, err := db.Exec("INSERT INTO people (name, grp, amount) VALUES " + strings.Join(vals, ", ")); err != nil {
				t.Fatal(err)
			}
			conn, _ := doraSession(t, b, dsn, `
  - name: people
    columns:
      - {name: name, type: text}
      - {name: grp, type: integer, lower: 0, upper: 2, values: [0, 1, 2]}
      - {name: amount, type: integer, lower: 0, upper: 100}
`)
			// At ε = 20 a count's noise is 0 but with probability 4·10^−9.
			if _, err := conn.ExecContext(t.Context(), "SET @dp_epsilon = 20"); err != nil {
				t.Fatal(err)
			}
			caseless := b.driver != "postgres"
			for i, f := range filters {
				expr := f.re
				if caseless && !(f.function && b.driver == "sqlite") {
					expr = "(?i)" + expr
				}
				re := regexp.MustCompile(expr)
				var want [3]float64
				for _, r := range rows {
					keep := r.name != nil && re.MatchString(*r.name)
					if f.not {
						keep = r.name != nil && !re.MatchString(*r.name) || f.null && r.name == nil
					}
					if keep {
						want[r.group]++
					}
				}
				var got float64
				if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM people WHERE "+f.where).Scan(&got); err != nil {
					t.Fatalf("WHERE %s: %v", f.where, err)
				}
				if total := want[0] + want[1] + want[2]; got != total {
					t.Errorf("WHERE %s: COUNT(*) = %g, want %g", f.where, got, total)
				}
				if i%4 != 0 {
					continue // the budget of doraSession holds 50 statements at ε = 20
				}
				res, err := conn.QueryContext(t.Context(), "SELECT grp, COUNT(*) FROM people WHERE "+f.where+" GROUP BY grp ORDER BY grp")
				if err != nil {
					t.Fatalf("GROUP BY grp WHERE %s: %v", f.where, err)
				}
				for res.Next() {
					var g int
					var n float64
					if err := res.Scan(&g, &n); err != nil {
						t.Fatal(err)
					}
					if n != want[g] {
						t.Errorf("GROUP BY grp WHERE %s: group %d counts %g, want %g", f.where, g, n, want[g])
					}
				}
				res.Close()
			}

			// AVG of a condition with OR and NOT over NULLs, in SQL's
			// three-valued logic: NULL OR TRUE is TRUE (the row counts as 1),
			// NOT (NULL IS NULL OR ...) is FALSE (0), NULL NOT LIKE is NULL
			// (skipped); within 0.01 of the shares.
			ali := regexp.MustCompile(map[bool]string{true: `(?i)^ali.*$`, false: `^ali.*$`}[caseless])
			bob := regexp.MustCompile(map[bool]string{true: `(?i)^bob$`, false: `^bob$`}[caseless])
			var wantShares [5][2]float64 // sum, rows counted
			for _, r := range rows {
				isNull := r.name == nil
				match := !isNull && ali.MatchString(*r.name)
				if !isNull {
					isBob := bob.MatchString(*r.name)
					wantShares[3][0] += map[bool]float64{true: 1}[!isBob]
					wantShares[3][1]++
					wantShares[4][0] += map[bool]float64{true: 1}[isBob || match]
					wantShares[4][1]++
				}
				wantShares[0][0] += map[bool]float64{true: 1}[isNull || match]
				wantShares[0][1]++
				wantShares[1][0] += map[bool]float64{true: 1}[!(isNull || match)]
				wantShares[1][1]++
				if !isNull {
					wantShares[2][0] += map[bool]float64{true: 1}[!match]
					wantShares[2][1]++
				}
			}
			// Equalities on a text column on SQLite: its test for NULL once
			// read every text as unreadable (shares 0 or 1).
			var shares [5]float64
			if err := conn.QueryRowContext(t.Context(), "SELECT AVG(name IS NULL OR name LIKE 'ali%'), AVG(NOT (name IS NULL OR name LIKE 'ali%')), "+
				"AVG(name NOT LIKE 'ali%'), AVG(name <> 'bob'), AVG(name = 'bob' OR name LIKE 'ali%') FROM people").Scan(&shares[0], &shares[1], &shares[2], &shares[3], &shares[4]); err != nil {
				t.Fatal(err)
			}
			for i, w := range wantShares {
				if math.Abs(shares[i]-w[0]/w[1]) > 0.01 {
					t.Errorf("share %d with NULLs: %g, want %g", i, shares[i], w[0]/w[1])
				}
			}

			// Sums under different LIKE conditions in one statement are
			// different releases (a row CASE's conditions identify its
			// derived column): each within 330 of its own sum (Laplace noise
			// of scale 100/(20/4) = 20 each: 330 is 16.5 scales, exceeded
			// with probability e^−16.5 < 10^−7 per sum), and all different,
			// where one release for all answered the first's value four
			// times (independent noises on a grid of 2^−20 or finer agree
			// with probability below 10^−6).
			cases := []struct{ cond, re string }{{"name LIKE 'ali%'", `^ali.*$`}, {"name LIKE '%smith%'", `^.*smith.*$`},
				{"LEFT(name, 3) = '50%'", `^50%.*$`}, {"LOWER(name) LIKE '%o%'", `(?i)^.*o.*$`}}
			var items []string
			want := make([]float64, len(cases))
			for i, c := range cases {
				items = append(items, "SUM(CASE WHEN "+c.cond+" THEN amount + 0 END)")
				expr := c.re
				if caseless {
					expr = "(?i)" + expr
				}
				re := regexp.MustCompile(expr)
				for _, r := range rows {
					if r.name != nil && re.MatchString(*r.name) {
						want[i] += float64(r.amount)
					}
				}
			}
			got := make([]float64, len(cases))
			dest := make([]any, len(cases))
			for i := range got {
				dest[i] = &got[i]
			}
			if err := conn.QueryRowContext(t.Context(), "SELECT "+strings.Join(items, ", ")+" FROM people").Scan(dest...); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				for j := range i {
					if got[i] == got[j] {
						t.Errorf("SUMs under %s and %s both answered %g: one release for both", cases[i].cond, cases[j].cond, got[i])
					}
				}
			}
			for i := range cases {
				if math.Abs(got[i]-want[i]) > 330 {
					t.Errorf("SUM(CASE WHEN %s THEN amount + 0 END) = %g, want %g ± 330", cases[i].cond, got[i], want[i])
				}
			}
		})
	}
}

// TestSelectedTextKeysAreSpellings: partition selection counts, selects
// and releases each spelling of a text key on its own, on every backend:
// MariaDB's collation equates 'PARIS' and 'paris', and grouped in it, the
// key released for their class was the spelling its scan met first, so
// one row (a single 'PARIS' inserted first) changed the released text
// with probability 1. Here 'PARIS' is a key of one row, below the
// threshold, and the 500 rows of 'paris' are counted under 'paris' alone.
func TestSelectedTextKeysAreSpellings(t *testing.T) {
	vals := []string{"('PARIS')"}
	for range 500 {
		vals = append(vals, "('paris')", "('london')")
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			conn := loadedSession(t, b, "cities (city VARCHAR(20))", vals, `
  - name: cities
    columns:
      - {name: city, type: text, partition_selection: true}
`)
			if _, err := conn.ExecContext(t.Context(), "SET @dp_delta = 1e-6"); err != nil {
				t.Fatal(err)
			}
			res, err := conn.QueryContext(t.Context(), "SELECT city, COUNT(*) FROM cities GROUP BY city ORDER BY city")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for res.Next() {
				var city string
				var n float64
				if err := res.Scan(&city, &n); err != nil {
					t.Fatal(err)
				}
				if math.Abs(n-500) > 2 {
					t.Errorf("%q counts %g rows, want 500 ± 2", city, n)
				}
				got = append(got, city)
			}
			res.Close()
			if fmt.Sprint(got) != "[london paris]" {
				t.Errorf("released keys %q, want [london paris]", got)
			}
			// COUNT(DISTINCT) of a text column, as the backend counts it
			// (MariaDB's collation makes 'PARIS' and 'paris' one value);
			// it was refused for the column's missing numeric bounds.
			var distinct float64
			if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(DISTINCT city) FROM cities").Scan(&distinct); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]float64{true: 2, false: 3}[b.driver == "mysql"]; distinct != want {
				t.Errorf("COUNT(DISTINCT city) = %g, want %g", distinct, want)
			}
		})
	}
}

// TestSelectedTextKeysInCaseInsensitiveColumns: a column whose own
// collation equates 'CA' and 'ca' (SQLite's COLLATE NOCASE, a
// nondeterministic ICU collation on PostgreSQL, MariaDB's default) still
// has one key per spelling: grouped in it, the database named the class by
// the spelling its scan met first, so one 'ca' row inserted first changed
// the released text from "CA" to "ca".
func TestSelectedTextKeysInCaseInsensitiveColumns(t *testing.T) {
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			ddl := map[string][]string{
				"sqlite":   {"CREATE TABLE states (st TEXT COLLATE NOCASE)"},
				"postgres": {"CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)", "CREATE TABLE states (st VARCHAR(8) COLLATE ci)"},
				"mysql":    {"CREATE TABLE states (st VARCHAR(8))"},
			}[b.driver]
			vals := []string{"('ca')"}
			for range 300 {
				vals = append(vals, "('CA')", "('NY')")
			}
			for _, q := range append(ddl, "INSERT INTO states (st) VALUES "+strings.Join(vals, ", ")) {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			var equal int
			if err := db.QueryRow("SELECT COUNT(*) FROM states WHERE st = 'ca'").Scan(&equal); err != nil || equal != 301 {
				t.Fatalf("the column does not equate 'ca' and 'CA' (%d rows equal 'ca', %v): the test proves nothing", equal, err)
			}
			conn, _ := doraSession(t, b, dsn, `
  - name: states
    columns:
      - {name: st, type: text, partition_selection: true}
`)
			if _, err := conn.ExecContext(t.Context(), "SET @dp_delta = 1e-6"); err != nil {
				t.Fatal(err)
			}
			res, err := conn.QueryContext(t.Context(), "SELECT st, COUNT(*) FROM states GROUP BY st ORDER BY st")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for res.Next() {
				var st string
				var n float64
				if err := res.Scan(&st, &n); err != nil {
					t.Fatal(err)
				}
				if math.Abs(n-300) > 2 {
					t.Errorf("%q counts %g rows, want 300 ± 2", st, n)
				}
				got = append(got, st)
			}
			res.Close()
			if fmt.Sprint(got) != "[CA NY]" {
				t.Errorf("released keys %q, want [CA NY]", got)
			}
		})
	}
}

// TestLikeOutcomeDoesNotDependOnRows: whether a LIKE statement answers
// must not depend on whether some row reaches the LIKE. Two tables, D and
// D plus one row (37, 'zed'), none of D's rows aged 37, through the real
// proxy on every backend:
//   - PostgreSQL refuses LIKE under a nondeterministic (ICU
//     case-insensitive) collation, but only when a row reaches it: the
//     statements below answered on D and failed with 1105 on D + 1 (an
//     independent review's finding) until the proxy compared the operand
//     in the "C" collation;
//   - SQLite fails a LIKE pattern above 50,000 bytes, again only when a
//     row reaches it: patterns above sqlrewrite.MaxLikePattern bytes are
//     refused with 1235 before anything is read, on every backend, and
//     one at the limit answers on both tables.
func TestLikeOutcomeDoesNotDependOnRows(t *testing.T) {
	long := strings.Repeat("a", sqlrewrite.MaxLikePattern)
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			db := testdb.Open(t, b.driver, dsn)
			column := map[string]string{"sqlite": "TEXT", "postgres": "VARCHAR(16) COLLATE ci", "mysql": "VARCHAR(16)"}[b.driver]
			var ddl []string
			if b.driver == "postgres" {
				ddl = append(ddl, "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)")
			}
			var vals []string
			for i := range 500 {
				vals = append(vals, fmt.Sprintf("(%d, 'name%d')", 20+i%15, i%7))
			}
			for _, table := range []string{"people", "people_plus"} {
				ddl = append(ddl, "CREATE TABLE "+table+" (age INT, name "+column+")", "INSERT INTO "+table+" (age, name) VALUES "+strings.Join(vals, ", "))
			}
			ddl = append(ddl, "INSERT INTO people_plus (age, name) VALUES (37, 'zed')")
			if b.driver == "postgres" {
				ddl = append(ddl, "ANALYZE people", "ANALYZE people_plus")
			}
			for _, q := range ddl {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			conn, _ := doraSession(t, b, dsn, `
  - name: people
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: name, type: text}
  - name: people_plus
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: name, type: text}
`)
			for _, where := range []string{
				"name LIKE 'z%'", "LOWER(name) LIKE 'z%'", "UPPER(name) NOT LIKE 'Z%'", "LOWER(name) = 'zed'",
				"LOCATE('e', name) > 0", "INSTR(name, 'e') = 0", "LEFT(name, 1) = 'z'", "RIGHT(name, 2) = 'ed'",
				"name LIKE '" + long + "'", "name LIKE '%" + long[1:] + "'",
			} {
				for _, table := range []string{"people", "people_plus"} {
					q := "SELECT COUNT(*) FROM " + table + " WHERE age = 37 AND " + where
					var n float64
					if err := conn.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
						t.Errorf("%s on %s: %v", where[:min(len(where), 40)], table, err)
					}
				}
			}
			for _, where := range []string{"name LIKE '" + long + "a'", "LOCATE('" + long + "', name) > 0", "LOWER(name) = '" + long + "a'"} {
				for _, table := range []string{"people", "people_plus"} {
					q := "SELECT COUNT(*) FROM " + table + " WHERE age = 37 AND " + where
					var n float64
					err := conn.QueryRowContext(t.Context(), q).Scan(&n)
					if me, ok := errors.AsType[*mysql.MySQLError](err); !ok || me.Number != 1235 {
						t.Errorf("%s… on %s: got %v, want error 1235", where[:30], table, err)
					}
				}
			}
		})
	}
}
