package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// hostile is a stored value and what the readable rule and clamp make of
// it: unreadable (NULL; on SQLite text or a blob), or the number v (NaN,
// which PostgreSQL orders above every number, as +Inf).
type hostile struct {
	sql        string
	v          float64
	unreadable bool
}

// TestRowExpressionsOnHostileValues computes row expressions of two
// columns (rowexpr.go) as derived columns on every backend over a table of
// hostile values in both operands and checks, against a model of the
// readable rule and the clamp: no fetch fails; COUNT of the readable
// expression values and their clamped SUM are those of SQL's semantics on
// the clamped operands (a NULL or unreadable operand makes the expression
// NULL; a WHEN on an unreadable value is not true); and every value the
// database computes (read through a window with bounds far wider than the
// derived ones) lies inside RowExpr.Bounds.
func TestRowExpressionsOnHostileValues(t *testing.T) {
	common := []hostile{{"NULL", 0, true}, {"0", 0, false}, {"3", 3, false}, {"7.5", 7.5, false},
		{"10", 10, false}, {"-5", -5, false}, {"1e300", 1e300, false}, {"1e-200", 1e-200, false}}
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		double  string
		extra   []hostile
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", []hostile{
			{"'abc'", 0, true}, {"x'00ff'", 0, true}, {"'8'", 8, false}, {"9e999", math.Inf(1), false}}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", []hostile{
			{"'NaN'", math.Inf(1), false}, {"'Infinity'", math.Inf(1), false}, {"'-Infinity'", math.Inf(-1), false}}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", []hostile{{"-1e300", -1e300, false}}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_rowx (x %s, y %s, s VARCHAR(20))", b.double, b.double)); err != nil {
				t.Fatal(err)
			}
			values := append(append([]hostile(nil), common...), b.extra...)
			type row struct {
				x, y hostile
				s    string // "" for NULL
			}
			var rows []row
			for i, x := range values {
				for j, y := range values {
					s, lit := []string{"CA", "NY", ""}[(i+j)%3], []string{"'CA'", "'NY'", "NULL"}[(i+j)%3]
					if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_rowx (x, y, s) VALUES (%s, %s, %s)", x.sql, y.sql, lit)); err != nil {
						t.Fatalf("insert %s, %s: %v", x.sql, y.sql, err)
					}
					rows = append(rows, row{x, y, s})
				}
			}
			col := func(name string, lo, hi float64) *sqlrewrite.RowExpr {
				return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: name, Lower: lo, Upper: hi}
			}
			op := func(o byte, a, b *sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
				return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: o, Args: []*sqlrewrite.RowExpr{a, b}}
			}
			num := func(v float64) *sqlrewrite.RowExpr { return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowConst, Num: v} }
			// clamp is Render's rule on one operand; ok is false when unreadable.
			clamp := func(h hostile, lo, hi float64) (float64, bool) {
				if h.unreadable {
					return 0, false
				}
				v := math.Max(lo, math.Min(hi, h.v))
				if math.Abs(v) < 0x1p-400 {
					v = 0
				}
				return v, true
			}
			x := func(r row) (float64, bool) { return clamp(r.x, 0, 10) }
			y := func(r row) (float64, bool) { return clamp(r.y, -50, 100) }
			both := func(r row, f func(a, b float64) float64) (float64, bool) {
				a, okA := x(r)
				c, okC := y(r)
				return f(a, c), okA && okC
			}
			cases := []struct {
				name  string
				expr  *sqlrewrite.RowExpr
				model func(row) (float64, bool)
			}{
				{"x + y", op('+', col("x", 0, 10), col("y", -50, 100)),
					func(r row) (float64, bool) { return both(r, func(a, b float64) float64 { return a + b }) }},
				{"y - 10 * x", op('-', col("y", -50, 100), op('*', num(10), col("x", 0, 10))),
					func(r row) (float64, bool) { return both(r, func(a, b float64) float64 { return b - 10*a }) }},
				{"x * y", op('*', col("x", 0, 10), col("y", -50, 100)),
					func(r row) (float64, bool) { return both(r, func(a, b float64) float64 { return a * b }) }},
				{"y / (x + 1)", op('/', col("y", -50, 100), op('+', col("x", 0, 10), num(1))),
					func(r row) (float64, bool) { return both(r, func(a, b float64) float64 { return b / (a + 1) }) }},
				{"CASE WHEN x > 5 THEN y ELSE 0 END", &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase,
					When: [][]sqlrewrite.Condition{{{Column: "x", Range: &sqlrewrite.Range{Lower: 5, HasLower: true, LowerOpen: true}}}},
					Args: []*sqlrewrite.RowExpr{col("y", -50, 100), num(0)}},
					func(r row) (float64, bool) {
						if !r.x.unreadable && r.x.v > 5 {
							return y(r)
						}
						return 0, true
					}},
				{"CASE WHEN s = 'CA' AND x <= 7.5 THEN x * y END", &sqlrewrite.RowExpr{Kind: sqlrewrite.RowCase,
					When: [][]sqlrewrite.Condition{{{Column: "s", In: []sqlrewrite.Value{{Str: "CA", IsText: true}}},
						{Column: "x", Range: &sqlrewrite.Range{Upper: 7.5, HasUpper: true}}}},
					Args: []*sqlrewrite.RowExpr{op('*', col("x", 0, 10), col("y", -50, 100)), nil}},
					func(r row) (float64, bool) {
						if r.s == "CA" && !r.x.unreadable && r.x.v <= 7.5 {
							return both(r, func(a, b float64) float64 { return a * b })
						}
						return 0, false
					}},
			}
			for _, c := range cases {
				lo, hi, err := c.expr.Bounds()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				derived := []sqlrewrite.DerivedColumn{{Name: "dpproxy_e0", Expr: c.expr}}
				f := sqlrewrite.Fetch{Table: "dp_rowx", Derived: derived, Summary: []sqlrewrite.SummaryTerm{
					{Kind: sqlrewrite.CountNumbers, Column: "dpproxy_e0"},
					{Kind: sqlrewrite.ClampedSum, Column: "dpproxy_e0", Lower: lo, Upper: hi}}}
				q, args, err := sqlrewrite.Render(f, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				var n int
				var sum float64
				if err := db.QueryRow(q, args...).Scan(&n, &sum); err != nil {
					t.Fatalf("%s: %s: %v", c.name, q, err)
				}
				wantN, wantSum := 0, 0.0
				var want []float64
				for _, r := range rows {
					if v, ok := c.model(r); ok {
						wantN++
						wantSum += v
						want = append(want, v)
					}
				}
				if n != wantN || math.Abs(sum-wantSum) > 1e-9*math.Max(1, math.Abs(wantSum)) {
					t.Errorf("%s: count %d, sum %g; want %d, %g", c.name, n, sum, wantN, wantSum)
				}
				// Every computed value, read unclamped, is inside the derived bounds.
				w := sqlrewrite.Fetch{Table: "dp_rowx", Derived: derived,
					Window: &sqlrewrite.Window{Column: "dpproxy_e0", Lower: -0x1p100, Upper: 0x1p100, Limit: int64(len(rows))}}
				q, args, err = sqlrewrite.Render(w, b.dialect)
				if err != nil {
					t.Fatal(err)
				}
				res, err := db.Query(q, args...)
				if err != nil {
					t.Fatalf("%s: %s: %v", c.name, q, err)
				}
				var got []float64
				for res.Next() {
					var v float64
					if err := res.Scan(&v); err != nil {
						t.Fatal(err)
					}
					if !(v >= lo && v <= hi) {
						t.Errorf("%s: computed %g outside the derived bounds [%g, %g]", c.name, v, lo, hi)
					}
					got = append(got, v)
				}
				if err := res.Err(); err != nil {
					t.Fatal(err)
				}
				res.Close()
				sort.Float64s(want)
				if !sort.Float64sAreSorted(got) || len(got) != len(want) {
					t.Fatalf("%s: window of %d values (sorted %v), want %d", c.name, len(got), sort.Float64sAreSorted(got), len(want))
				}
				for i := range got {
					if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
						t.Errorf("%s: value %d is %g, want %g", c.name, i, got[i], want[i])
					}
				}
			}
		})
	}
}
