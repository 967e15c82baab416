package sqlrewrite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestRenderPointRanges: on MariaDB, = and IN on a number column with a
// constant that is not written as an integer select the rows col = v
// selects for one of the constants, whether MariaDB reads the column's
// index or scans the table. MariaDB's own IN did not: BIGINT IN (5,
// 2^53e0) matched 2^53+1 as a double, and IN (5.5e0, 2^53e0) did so in
// a scan only, so the rows depended on the plan; Render and RenderVitess
// now write such lists as closed ranges, (col >= v AND col <= v) ORed.
// RenderVitess writes a single = so too, which vtgate does not route by
// the value: its hash vindex read 9.007199254740992e+15 as no integer
// and sent COUNT(*) … WHERE big = 9.007199254740992e+15 to one shard
// chosen at random, and the IN to none (an independent review).
// Integers keep = and IN, which vtgate routes.
func TestRenderPointRanges(t *testing.T) {
	db := testdb.MySQL(t)
	rows := "(9007199254740980, NULL, NULL), (9007199254740991, NULL, NULL), (9007199254740992, NULL, 9007199254740992e0)," +
		" (9007199254740993, NULL, NULL), (9007199254740994, NULL, NULL), (9007199254741010, NULL, NULL)," +
		" (5, 5.50, 5.5e0), (5, 5.00, 5e0), (-5, -4.50, -5.5e0), (1234567, 1234567.00, 1234567e0), (0, 0, 0), (NULL, NULL, NULL)"
	const total = 12
	for _, q := range []string{
		"CREATE TABLE pti (big BIGINT, m DECIMAL(12, 2), r DOUBLE, KEY (big), KEY (m), KEY (r))",
		"CREATE TABLE pts (big BIGINT, m DECIMAL(12, 2), r DOUBLE)",
		"INSERT INTO pti VALUES " + rows,
		"INSERT INTO pts VALUES " + rows,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	num := func(x float64) sqlrewrite.Value { return sqlrewrite.Value{Num: x} }
	dec := func(x float64, d string) sqlrewrite.Value { return sqlrewrite.Value{Num: x, Decimal: d} }
	for _, c := range []struct {
		col    string
		in     []sqlrewrite.Value
		routed bool // on Vitess, written as = or IN
		want   float64
	}{
		{"big", []sqlrewrite.Value{num(1 << 53)}, false, 1},
		{"big", []sqlrewrite.Value{num(9007199254740990), num(1 << 53)}, false, 1},
		{"big", []sqlrewrite.Value{num(5), num(1 << 53)}, false, 3},
		{"big", []sqlrewrite.Value{num(5.5), num(1 << 53)}, false, 1},
		{"big", []sqlrewrite.Value{num(9.00719925474101e15)}, false, 1},
		{"big", []sqlrewrite.Value{num(1234567)}, false, 1}, // 1.234567e+06
		{"big", []sqlrewrite.Value{dec(1234567, "1234567")}, true, 1},
		{"big", []sqlrewrite.Value{dec(9007199254740993, "9007199254740993"), num(-5)}, true, 2},
		{"big", []sqlrewrite.Value{num(5)}, true, 2},
		{"big", []sqlrewrite.Value{num(-5), num(0)}, true, 2},
		{"big", []sqlrewrite.Value{num(5.5)}, false, 0},
		{"big", []sqlrewrite.Value{num(-5.5), num(-5)}, false, 1},
		{"m", []sqlrewrite.Value{num(5.5), dec(-4.5, "-4.50")}, false, 2},
		{"m", []sqlrewrite.Value{num(5)}, true, 1},
		{"r", []sqlrewrite.Value{num(5.5), num(1234567)}, false, 2},
		{"r", []sqlrewrite.Value{num(1 << 53)}, false, 1},
		{"r", []sqlrewrite.Value{num(5)}, true, 1},
	} {
		for _, complement := range []bool{false, true} {
			want := c.want
			if complement {
				want = total - c.want // NOT (col IS NOT NULL AND …): NULLs too
			}
			for _, table := range []string{"pti", "pts"} {
				f := sqlrewrite.Fetch{Table: table, Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}},
					Filter: []sqlrewrite.Condition{{Column: c.col, In: c.in, Complement: complement}}}
				query, args, err := sqlrewrite.Render(f, sqlrewrite.MySQL)
				if err != nil {
					t.Fatal(err)
				}
				text, _, err := sqlrewrite.RenderVitess(f, sqlrewrite.MySQL)
				if err != nil {
					t.Fatal(err)
				}
				routed := strings.Contains(text, "`"+c.col+"` = ") || strings.Contains(text, "`"+c.col+"` IN (")
				if ranged := strings.Contains(text, "`"+c.col+"` >= "); routed != c.routed || ranged == c.routed {
					t.Errorf("%s IN %v: sent %q to Vitess, want it routed (= or IN): %v", c.col, c.in, text, c.routed)
				}
				for _, q := range []string{query, text} {
					got, err := runFetch(db, f, q, args)
					if err != nil {
						t.Fatalf("%q: %v", q, err)
					}
					if fmt.Sprint(got) != fmt.Sprint([]float64{want}) {
						t.Errorf("%q: %v rows, want %v", q, got, want)
					}
					args = nil
				}
			}
		}
	}
}
