package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestNumberCountsOnHostileValues stores numbers and values that are no
// number, each column in a table of its own, on every backend, and checks
// that COUNT(col) and COUNT(DISTINCT col) of a numeric column (the terms
// with SummaryTerm.Type) skip exactly the values col IS NULL holds for,
// NULL and on SQLite text and blobs (numeric text such as '12.5' in a
// column without affinity too, which SQLite keeps as text), and that
// col = v and its complement split the rows. A text column's counts count
// every non-NULL value. On SQLite COUNT(x) counted 'abc' in a REAL column,
// which x IS NULL reads as NULL: a row both NULL and not NULL.
func TestNumberCountsOnHostileValues(t *testing.T) {
	// A value and the number the reading rule reads from it, in a
	// canonical spelling (its distinct key), or "" (no number).
	type value struct{ sql, number string }
	type column struct {
		name, sqlTyp string
		typ          catalog.ColumnType
		vals         []value
	}
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		columns []column
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, []column{
			{"x", "REAL", catalog.Real, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"50.5", "50.5"}, {"-1e300", "-1e300"},
				{"9e999", "+Inf"}, {"'abc'", ""}, {"''", ""}, {"x'00ff'", ""}, {"'12x'", ""}, {"'1'", "1"}, {"'12.5'", "12.5"}}},
			{"a", "INTEGER", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"50.5", "50.5"},
				{"9223372036854775807", "9223372036854775807"}, {"'abc'", ""}, {"x'00ff'", ""}, {"'12'", "12"}, {"'1e3'", "1000"}}},
			// No declared type: no affinity, so text stays text.
			{"u", "", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1.0", "1"}, {"50.5", "50.5"},
				{"'abc'", ""}, {"'12'", ""}, {"'12.5'", ""}, {"' 7'", ""}, {"x'3132'", ""}}},
			{"s", "TEXT", catalog.Text, []value{{"NULL", ""}, {"'abc'", "abc"}, {"'abc'", "abc"}, {"''", ""}, {"1", "1"}, {"'1'", "1"}}},
		}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, []column{
			{"x", "DOUBLE PRECISION", catalog.Real, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"50.5", "50.5"}, {"-1e300", "-1e300"},
				{"'NaN'", "NaN"}, {"'Infinity'", "+Inf"}, {"'-Infinity'", "-Inf"}}},
			{"a", "BIGINT", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"9223372036854775807", "9223372036854775807"}}},
			{"u", "NUMERIC", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1.0", "1"}, {"'NaN'", "NaN"}}},
			{"s", "TEXT", catalog.Text, []value{{"NULL", ""}, {"'abc'", "abc"}, {"'abc'", "abc"}, {"''", ""}, {"'1'", "1"}}},
		}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, []column{
			{"x", "DOUBLE", catalog.Real, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"50.5", "50.5"}, {"-1e300", "-1e300"}}},
			{"a", "BIGINT", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1", "1"}, {"-9223372036854775808", "-9223372036854775808"}}},
			{"u", "DECIMAL(30,5)", catalog.Integer, []value{{"NULL", ""}, {"0", "0"}, {"1", "1"}, {"1.0", "1"}, {"99999", "99999"}}},
			{"s", "VARCHAR(20) COLLATE utf8mb4_bin", catalog.Text, []value{{"NULL", ""}, {"'abc'", "abc"}, {"'abc'", "abc"}, {"''", ""}, {"'1'", "1"}}},
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			for _, c := range b.columns {
				table := "dp_number_nulls_" + c.name
				if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (%s %s)", table, c.name, c.sqlTyp)); err != nil {
					t.Fatal(err)
				}
				// A text column's values are all read: only NULL is NULL
				// ('' is a value, keyed by itself).
				values, distinct := 0, map[string]bool{}
				for _, v := range c.vals {
					if _, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (%s)", table, v.sql)); err != nil {
						t.Fatalf("insert %s: %v", v.sql, err)
					}
					if v.number != "" || c.typ == catalog.Text && v.sql != "NULL" {
						values++
						distinct[v.number] = true
					}
				}
				total := len(c.vals)
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
				text := c.typ == catalog.Text
				isNull := sqlrewrite.Condition{Column: c.name, IsNull: true, Text: text}
				notNull := isNull
				notNull.Complement = true
				if n := count(isNull); n != total-values {
					t.Errorf("%s: %s IS NULL holds for %d rows, want the %d without a value", table, c.name, n, total-values)
				}
				if n := count(notNull); n != values {
					t.Errorf("%s: %s IS NOT NULL holds for %d rows, want the %d values", table, c.name, n, values)
				}
				v := sqlrewrite.Value{Num: 1}
				if text {
					v = sqlrewrite.Value{Str: "abc", IsText: true}
				}
				eq := sqlrewrite.Condition{Column: c.name, In: []sqlrewrite.Value{v}, Text: text}
				ne := eq
				ne.Complement = true // col <> v OR col IS NULL, as the parser folds it
				if n, m := count(eq), count(ne); n+m != total {
					t.Errorf("%s: %s = %v holds for %d rows and its complement for %d, want %d in all", table, c.name, v, n, m, total)
				}
				counts := query(sqlrewrite.Fetch{Summary: []sqlrewrite.SummaryTerm{
					{Kind: sqlrewrite.CountNonNull, Column: c.name, Type: c.typ},
					{Kind: sqlrewrite.CountDistinctValues, Column: c.name, Type: c.typ}}})
				if counts[0] != values || counts[1] != len(distinct) {
					t.Errorf("%s: COUNT(%s) %d and COUNT(DISTINCT %s) %d, want %d values, %d distinct", table, c.name, counts[0], c.name, counts[1], values, len(distinct))
				}
			}
		})
	}
}
