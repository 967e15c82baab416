package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestDateNullTestsOnHostileValues stores dates and timestamps, valid and
// hostile, on every backend (on MariaDB in NULL and in NOT NULL columns)
// and checks that a value that is no date by the reading rule (dates.go)
// is read as NULL by col IS NULL, col IS NOT NULL, BI tools' col <> v OR
// col IS NULL, COUNT(col) and COUNT(DISTINCT col), as it is by every date
// comparison and key: IS NULL holds for NULL and for it, IS NOT NULL for
// the dates (outside the bounds too), col = v and its complement split
// the rows, and the counts count the dates. On SQLite 'garbage' was not
// NULL to col IS NULL, and on MariaDB a zero date in a NOT NULL column was
// both NULL and NOT NULL (MariaDB finds the zero date with col IS NULL
// there, and keeps it with col IS NOT NULL).
func TestDateNullTestsOnHostileValues(t *testing.T) {
	// A value and whether the rule reads a date: its text, or "" (no date).
	type value struct{ sql, date string }
	type column struct {
		name   string
		typ    catalog.ColumnType
		sqlTyp string
		vals   []value
		eq     string // a date some rows hold
	}
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		setup   []string
		day, at column
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, nil,
			column{"d", catalog.Date, "DATE", []value{{"NULL", ""}, {"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}, {"'2020-02-29'", "2020-02-29"},
				{"'1000-01-01'", "1000-01-01"}, {"'garbage'", ""}, {"'2021-02-30'", ""}, {"'2021-1-5'", ""}, {"'2021-01-05 10:00:00'", ""}, {"''", ""},
				{"20210105", ""}, {"2459220.5", ""}, {"x'323032312d30312d3035'", ""}}, "2019-07-14"},
			column{"ts", catalog.Timestamp, "TIMESTAMP", []value{{"NULL", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"},
				{"'1000-01-01 00:00:00'", "1000-01-01 00:00:00"}, {"'garbage'", ""}, {"'2020-06-15T10:00:00'", ""}, {"'2020-06-15 10:00:00.5'", ""},
				{"'2020-06-15'", ""}, {"'2020-06-15 24:00:00'", ""}, {"1592215200", ""}, {"x'00ff'", ""}}, "2020-06-15 10:00:00"}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, nil,
			column{"d", catalog.Date, "DATE", []value{{"NULL", ""}, {"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}, {"'infinity'", "infinity"},
				{"'-infinity'", "-infinity"}, {"'0044-03-15 BC'", "0044-03-15 BC"}}, "2019-07-14"},
			column{"ts", catalog.Timestamp, "TIMESTAMP", []value{{"NULL", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"},
				{"'infinity'", "infinity"}, {"'1000-01-01 00:00:00'", "1000-01-01 00:00:00"}}, "2020-06-15 10:00:00"}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, []string{"SET SESSION sql_mode = 'ALLOW_INVALID_DATES'"},
			column{"d", catalog.Date, "DATE", []value{{"NULL", ""}, {"'2019-07-14'", "2019-07-14"}, {"'2019-07-14'", "2019-07-14"}, {"'1000-01-01'", "1000-01-01"},
				{"'0000-00-00'", ""}, {"'2021-00-10'", ""}, {"'2021-05-00'", ""}, {"'2021-02-30'", ""}}, "2019-07-14"},
			column{"ts", catalog.Timestamp, "DATETIME", []value{{"NULL", ""}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"}, {"'2020-06-15 10:00:00'", "2020-06-15 10:00:00"},
				{"'0000-00-00 00:00:00'", ""}, {"'2021-00-10 10:00:00'", ""}, {"'2021-02-30 10:00:00'", ""}}, "2020-06-15 10:00:00"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			db.SetMaxOpenConns(1) // the session settings hold for every statement
			for _, s := range b.setup {
				if _, err := db.Exec(s); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
			}
			nullities := []string{"NULL"}
			if b.dialect == sqlrewrite.MySQL {
				nullities = append(nullities, "NOT NULL")
			}
			for _, c := range []column{b.day, b.at} {
				for _, nullity := range nullities {
					table := "dp_date_nulls_" + c.name
					if nullity == "NOT NULL" {
						table += "_nn"
					}
					if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (%s %s %s)", table, c.name, c.sqlTyp, nullity)); err != nil {
						t.Fatal(err)
					}
					dates, distinct := 0, map[string]bool{}
					for _, v := range c.vals {
						if nullity == "NOT NULL" && v.sql == "NULL" {
							continue
						}
						if _, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (%s)", table, v.sql)); err != nil {
							t.Fatalf("insert %s: %v", v.sql, err)
						}
						if v.date != "" {
							dates++
							distinct[v.date] = true
						}
					}
					total := len(c.vals)
					if nullity == "NOT NULL" {
						total--
					}
					query := func(f sqlrewrite.Fetch) []int {
						t.Helper()
						f.Table = table
						q, args, err := sqlrewrite.Render(f, b.dialect)
						if err != nil {
							t.Fatal(err)
						}
						out := make([]int, len(f.Summary))
						dest := make([]any, len(out))
						for i := range out {
							dest[i] = &out[i]
						}
						if err := db.QueryRow(q, args...).Scan(dest...); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
						return out
					}
					count := func(where sqlrewrite.Condition) int {
						t.Helper()
						return query(sqlrewrite.Fetch{Filter: []sqlrewrite.Condition{where}, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}})[0]
					}
					isNull := sqlrewrite.Condition{Column: c.name, IsNull: true, Text: true, Temporal: c.typ}
					notNull := isNull
					notNull.Complement = true
					if n := count(isNull); n != total-dates {
						t.Errorf("%s %s: %s IS NULL holds for %d rows, want the %d that are NULL or no date", table, nullity, c.name, n, total-dates)
					}
					if n := count(notNull); n != dates {
						t.Errorf("%s %s: %s IS NOT NULL holds for %d rows, want the %d dates", table, nullity, c.name, n, dates)
					}
					x, err := (&catalog.Column{Type: c.typ}).ParseTemporal(c.eq)
					if err != nil {
						t.Fatal(err)
					}
					eq := sqlrewrite.Condition{Column: c.name, Temporal: c.typ, Range: &sqlrewrite.Range{Lower: x, Upper: x, HasLower: true, HasUpper: true}}
					ne := eq
					ne.Complement, ne.Text = true, true // col <> v OR col IS NULL, as the parser folds it
					if n, m := count(eq), count(ne); n+m != total {
						t.Errorf("%s %s: %s = '%s' holds for %d rows and its complement for %d, want %d in all", table, nullity, c.name, c.eq, n, m, total)
					}
					counts := query(sqlrewrite.Fetch{Summary: []sqlrewrite.SummaryTerm{
						{Kind: sqlrewrite.CountNonNull, Column: c.name, Type: c.typ},
						{Kind: sqlrewrite.CountDistinctValues, Column: c.name, Type: c.typ}}})
					if counts[0] != dates || counts[1] != len(distinct) {
						t.Errorf("%s %s: COUNT(%s) %d and COUNT(DISTINCT %s) %d, want %d dates, %d distinct", table, nullity, c.name, counts[0], c.name, counts[1], dates, len(distinct))
					}
				}
			}
		})
	}
}
