package sqlrewrite_test

import (
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLiteralsBeyondDoublesCompareExactly parses WHERE conditions whose
// constants a double does not hold (9007199254740993 is 2^53 as a
// double, 9007199254740993.5 is 2^53+2) and counts the rows each keeps,
// and its NOT, on every backend: the backend compares the column with
// the constant the statement wrote, as MySQL compares a BIGINT with an
// integer or decimal literal, exactly. Columns: big = 2^53 + i and
// neg = -2^53 - i for i < 5, and a row of NULLs (kept by neither).
func TestLiteralsBeyondDoublesCompareExactly(t *testing.T) {
	const two53 = 1 << 53
	lo, hi := -float64(1<<60), float64(1<<60)
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "dp_exact", Source: "dp_exact", Columns: []catalog.Column{
		{Name: "big", Source: "big", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "neg", Source: "neg", Type: catalog.Integer, Lower: &lo, Upper: &hi},
	}}}}
	p := sqlrewrite.NewParser(cat)
	cases := []struct {
		cond string
		want int // of 5; NOT (cond) keeps 5 - want
	}{
		{"big <= 9007199254740993", 2},
		{"big <= 9007199254740993.0", 2},
		{"big <= 9007199254740993.5", 2},
		{"big < 9007199254740993", 1},
		{"big < 9007199254740993.5", 2},
		{"big > 9007199254740993", 3},
		{"big > 9007199254740993.5", 3},
		{"big >= 9007199254740993.5", 3},
		{"big >= 9007199254740993.0000", 4},
		{"9007199254740993 >= big", 2},
		{"9007199254740993.5 < big", 3},
		{"big = 9007199254740993", 1},
		{"big = 9007199254740993.0", 1},
		{"big = 9007199254740993.5", 0},
		{"big <> 9007199254740993", 4},
		{"big <> 9007199254740993.5", 5},
		{"big IN (9007199254740993, 9007199254740995)", 2},
		{"big IN (9007199254740993.5, 9007199254740994)", 1},
		{"big IN (9007199254740993.5)", 0},
		{"big NOT IN (9007199254740993, 9007199254740995)", 3},
		{"big BETWEEN 9007199254740993 AND 9007199254740995", 3},
		{"big BETWEEN 9007199254740992.5 AND 9007199254740993.5", 1},
		{"big NOT BETWEEN 9007199254740993 AND 9007199254740995", 2},
		{"big <= 9007199254740992 + 1", 2},
		{"big > 9007199254740993 AND big < 9007199254740995", 1},
		{"big >= 9007199254740993 AND big <= 9007199254740993.9", 1},
		{"big < 9007199254740993 OR big > 9007199254740995", 2},
		{"neg >= -9007199254740993", 2},
		{"neg > -9007199254740993.5", 2},
		{"neg < -9007199254740993", 3},
		{"neg <= -9007199254740993.5", 3},
		{"neg = -9007199254740994", 1},
		{"neg BETWEEN -9007199254740995 AND -9007199254740993", 3},
	}
	for _, b := range backendsForTests {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			typ := map[string]string{"sqlite": "INTEGER"}[b.name]
			if typ == "" {
				typ = "BIGINT"
			}
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_exact (big %s, neg %s)", typ, typ)); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO dp_exact (big, neg) VALUES (%d, %d)", two53+i, -two53-i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Exec("INSERT INTO dp_exact (big, neg) VALUES (NULL, NULL)"); err != nil {
				t.Fatal(err)
			}
			count := func(where string) int {
				t.Helper()
				st, err := p.Parse("SELECT COUNT(*) FROM dp_exact WHERE " + where)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				base, ok := st.(*sqlrewrite.Select)
				if !ok {
					base = st.(*sqlrewrite.Query).Base
				}
				f := sqlrewrite.Fetch{Table: "dp_exact", Filter: base.Where, Boolean: base.Boolean,
					Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}
				q, args, err := sqlrewrite.Render(f, b.dialect)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				var n float64
				if err := db.QueryRow(q, args...).Scan(&n); err != nil {
					t.Fatalf("%s: %s %v: %v", where, q, args, err)
				}
				return int(n)
			}
			for _, c := range cases {
				if n := count(c.cond); n != c.want {
					t.Errorf("%s keeps %d rows, want %d", c.cond, n, c.want)
				}
				if n := count("NOT (" + c.cond + ")"); n != 5-c.want {
					t.Errorf("NOT (%s) keeps %d rows, want %d", c.cond, n, 5-c.want)
				}
			}
		})
	}
}
