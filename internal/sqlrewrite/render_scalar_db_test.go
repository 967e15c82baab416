package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestScalarComparisonsBindTheReleasedValueExactly resolves comparisons
// with a scalar subquery's released value (ResolveScalars) and counts the
// rows each keeps on every backend: the value reaches the backend as a
// typed bind argument, never in the text, and compares as MySQL compares
// the column with a value of its type. A DECIMAL with a fractional part
// against an integer column is not truncated (k >= 2.5000 keeps 3 and 4,
// not 2), an exact integer beyond 2⁵³ is not rounded to a double (on
// SQLite, which stores no DECIMAL, only an integer one), a date against a
// datetime compares as MySQL compares them (a date is its midnight), and
// a released NULL makes the comparison and its NOT UNKNOWN for every row.
func TestScalarComparisonsBindTheReleasedValueExactly(t *testing.T) {
	const big = 1 << 53
	for _, b := range []struct {
		name                              string
		dialect                           sqlrewrite.Dialect
		open                              func(testing.TB) *sql.DB
		integer, double, date, stamp, ins string
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "INTEGER", "REAL", "TEXT", "TEXT", "?"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "BIGINT", "DOUBLE PRECISION", "DATE", "TIMESTAMP", "$%d"},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "BIGINT", "DOUBLE", "DATE", "DATETIME", "?"},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_scalar (k %s, big %s, x %s, d %s, ts %s)", b.integer, b.integer, b.double, b.date, b.stamp)); err != nil {
				t.Fatal(err)
			}
			// k = i, big = 2⁵³ + i, x = i / 2, d = 2024-03-0(i+1), ts =
			// 2024-03-01 0i:00:00 for i < 5, and a row of NULLs.
			for i := range 5 {
				var marks []string
				for j := 1; j <= 5; j++ {
					marks = append(marks, strings.ReplaceAll(b.ins, "%d", fmt.Sprint(j)))
				}
				_, err := db.Exec("INSERT INTO dp_scalar (k, big, x, d, ts) VALUES ("+strings.Join(marks, ", ")+")",
					int64(i), int64(big+i), float64(i)/2, fmt.Sprintf("2024-03-0%d", i+1), fmt.Sprintf("2024-03-01 0%d:00:00", i))
				if err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Exec("INSERT INTO dp_scalar (k) VALUES (NULL)"); err != nil {
				t.Fatal(err)
			}
			count := func(p *sqlrewrite.Predicate, text string) int {
				t.Helper()
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_scalar", Boolean: p, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect)
				if err != nil {
					t.Fatalf("%s: %v", text, err)
				}
				var n float64
				if err := db.QueryRow(q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %s %v: %v", text, q, args, err)
				}
				return int(n)
			}
			exact := func(s string) sqlrewrite.ScalarValue { return sqlrewrite.ScalarValue{Exact: s} }
			double := func(f float64) sqlrewrite.ScalarValue { return sqlrewrite.ScalarValue{Num: f} }
			date := func(s string) sqlrewrite.ScalarValue {
				return sqlrewrite.ScalarValue{IsText: true, Text: s, Temporal: catalog.Date}
			}
			stamp := func(s string) sqlrewrite.ScalarValue {
				return sqlrewrite.ScalarValue{IsText: true, Text: s, Temporal: catalog.Timestamp}
			}
			null := sqlrewrite.ScalarValue{Null: true}
			cases := []struct {
				col      string
				temporal catalog.ColumnType
				op       string
				v        sqlrewrite.ScalarValue
				// want and wantNot are the rows col op v and NOT (col op v)
				// keep (the NULL row neither).
				want, wantNot int
				skip          string
			}{
				{"k", "", ">=", exact("2.5000"), 2, 3, ""},
				{"k", "", ">", exact("2.5000"), 2, 3, ""},
				{"k", "", "<", exact("2.5"), 3, 2, ""},
				{"k", "", "=", exact("2.5000"), 0, 5, ""},
				{"k", "", "=", exact("2"), 1, 4, ""},
				{"k", "", "<=", exact("-0.5"), 0, 5, ""},
				{"big", "", ">=", exact("9007199254740993"), 4, 1, ""},
				// A whole number with a fraction of zeros (AVG of integers)
				// is exact on SQLite too.
				{"big", "", ">=", exact("9007199254740993.0000"), 4, 1, ""},
				{"big", "", "<=", exact("9007199254740993.0"), 2, 3, ""},
				{"big", "", ">", exact("9007199254740993.5"), 3, 2, "sqlite"},
				{"x", "", ">", double(1.25), 2, 3, ""},
				{"x", "", "=", double(1.5), 1, 4, ""},
				{"k", "", ">", null, 0, 0, ""},
				{"k", "", "=", null, 0, 0, ""},
				{"d", catalog.Date, ">=", date("2024-03-03"), 3, 2, ""},
				{"d", catalog.Date, ">", stamp("2024-03-03 12:00:00"), 2, 3, ""},
				{"d", catalog.Date, "<=", stamp("2024-03-03 12:00:00"), 3, 2, ""},
				{"d", catalog.Date, "=", stamp("2024-03-03 12:00:00"), 0, 5, ""},
				{"d", catalog.Date, "=", stamp("2024-03-03 00:00:00"), 1, 4, ""},
				{"d", catalog.Date, "<", null, 0, 0, ""},
				{"ts", catalog.Timestamp, "<", stamp("2024-03-01 02:30:00"), 3, 2, ""},
				{"ts", catalog.Timestamp, ">=", date("2024-03-01"), 5, 0, ""},
				{"ts", catalog.Timestamp, "=", stamp("2024-03-01 03:00:00"), 1, 4, ""},
			}
			for _, c := range cases {
				text := fmt.Sprintf("%s %s %+v", c.col, c.op, c.v)
				if c.skip == b.name {
					continue
				}
				bound, sub := &sqlrewrite.ScalarBound{}, &sqlrewrite.Expr{Kind: sqlrewrite.ExprScalar}
				switch c.op {
				case ">", ">=":
					bound.Range.HasLower, bound.Range.LowerOpen, bound.Lower = true, c.op == ">", sub
				case "<", "<=":
					bound.Range.HasUpper, bound.Range.UpperOpen, bound.Upper = true, c.op == "<", sub
				default:
					bound.Range.HasLower, bound.Range.HasUpper, bound.Lower, bound.Upper = true, true, sub, sub
				}
				cond := sqlrewrite.Condition{Column: c.col, Temporal: c.temporal, Scalar: bound}
				leaf := &sqlrewrite.Predicate{Op: sqlrewrite.Leaf, Leaf: &cond}
				not := &sqlrewrite.Predicate{Op: sqlrewrite.Not, Args: []*sqlrewrite.Predicate{leaf}}
				if _, _, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_scalar", Boolean: leaf, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect); err == nil {
					t.Errorf("%s: an unresolved comparison rendered", text)
				}
				_, resolved, err := sqlrewrite.ResolveScalars(nil, not, func(*sqlrewrite.Expr) (sqlrewrite.ScalarValue, error) { return c.v, nil })
				if err != nil {
					t.Fatalf("%s: %v", text, err)
				}
				q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_scalar", Boolean: resolved, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect)
				if err != nil {
					t.Fatalf("%s: %v", text, err)
				}
				if value := c.v.Exact + c.v.Text; len(value) > 2 && !c.v.Null && strings.Contains(q, value) {
					t.Errorf("%s: the value is in the text: %s", text, q)
				}
				if !c.v.Null && len(args) == 0 {
					t.Errorf("%s: no bind argument: %s", text, q)
				}
				if b.dialect != sqlrewrite.SQLite && c.v.Exact != "" && !slices.Contains(args, any(c.v.Exact)) {
					t.Errorf("%s: the arguments %v do not bind %q exactly: %s", text, args, c.v.Exact, q)
				}
				if n := count(resolved.Args[0], text); n != c.want {
					t.Errorf("%s keeps %d rows, want %d", text, n, c.want)
				}
				if n := count(resolved, "NOT "+text); n != c.wantNot {
					t.Errorf("NOT (%s) keeps %d rows, want %d", text, n, c.wantNot)
				}
			}
		})
	}
}
