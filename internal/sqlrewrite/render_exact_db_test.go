package sqlrewrite_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestLiteralsBeyondDoublesCompareExactly parses WHERE conditions whose
// constants a double does not hold (9007199254740993 is 2^53 as a
// double, 9007199254740993.5 is 2^53+2) and counts the rows each keeps,
// and its NOT, on every backend: the backend compares the column with
// the constant the statement wrote, as MySQL compares a BIGINT with an
// integer or decimal literal, or MariaDB with a numeric string, exactly. Columns: big = 2^53 + i and
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
		// A numeric string, as drivers bind numbers, is compared exactly
		// too, as MariaDB compares a BIGINT with it (it was a double).
		{"big <= '9007199254740993'", 2},
		{"big < '9007199254740994.5'", 3},
		{"big = '9.007199254740993e15'", 1},
		{"big = ' 9007199254740993 '", 1},
		{"big IN ('9007199254740993', '9007199254740995')", 2},
		{"big BETWEEN '9007199254740993' AND '9007199254740995'", 3},
		{"neg >= '-9007199254740993'", 2},
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

// TestNumericStringsCompareAsMariaDB compares, on MariaDB, an INT, a
// DECIMAL and a DOUBLE column (the last two declared real) with numeric
// strings beyond double precision, and counts the rows each condition
// keeps, as MariaDB 10.11 does itself: exactly (as a DECIMAL) for the
// INT and the DECIMAL, as a double for the DOUBLE. Read as doubles, k =
// '3.0000000000000000001' kept the 3s and d >= '100.0000...0001' the 100.
// A string of more than 30 decimals is refused (1235), and so is a
// string item of a list of two or more on a real column that a double
// does not hold digit for digit.
func TestNumericStringsCompareAsMariaDB(t *testing.T) {
	lo, hi := -1e20, 1e20
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "dp_strings", Source: "dp_strings", Columns: []catalog.Column{
		{Name: "k", Source: "k", Type: catalog.Integer, Lower: &lo, Upper: &hi},
		{Name: "d", Source: "d", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "f", Source: "f", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	p := sqlrewrite.NewParser(cat)
	for _, b := range backendsForTests {
		if b.name != "mysql" {
			continue
		}
		db := b.open(t)
		for _, q := range []string{"CREATE TABLE dp_strings (k INT, d DECIMAL(40, 28), f DOUBLE)",
			"INSERT INTO dp_strings VALUES (3, 100.0000000000000000000000001, 0.1), (3, 100, 9007199254740993), (4, 100.0000000000000000000000002, 0.30000000000000004)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		for _, where := range []string{
			"k = '3.0000000000000000001'", "k = '3.0'", "k > '2.9999999999999999999'", "k IN ('3.0000000000000000001', '4')",
			"d >= '100.0000000000000000000000001'", "d = '100.0000000000000000000000001'", "d < '100.00000000000000000000000015'",
			"f = '0.1000000000000000000000001'", "f >= '9007199254740993'", "f > '9007199254740992.5'", "f = '0.30000000000000004'",
			"d IN ('100.0000000000000000000000001')", "d IN (100.0000000000000000000000001, '7')",
		} {
			var want int
			if err := db.QueryRow("SELECT COUNT(*) FROM dp_strings WHERE " + where).Scan(&want); err != nil {
				t.Fatal(err)
			}
			st, err := p.Parse("SELECT COUNT(*) FROM dp_strings WHERE " + where)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			base, ok := st.(*sqlrewrite.Select)
			if !ok {
				base = st.(*sqlrewrite.Query).Base
			}
			q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_strings", Filter: base.Where, Boolean: base.Boolean,
				Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}, b.dialect)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var n float64
			if err := db.QueryRow(q, args...).Scan(&n); err != nil {
				t.Fatalf("%s: %s %v: %v", where, q, args, err)
			}
			if int(n) != want {
				t.Errorf("%s keeps %d rows, MariaDB's %d", where, int(n), want)
			}
		}
		// In a list of two or more, MariaDB compares a DECIMAL with a
		// string item as doubles: d IN ('100.0000000000000000000000001',
		// 5) keeps the 100s, d = '100.0000000000000000000000001' one.
		for _, where := range []string{"k = '3.0000000000000000000000000000001'", "f < '1e100'",
			"d IN ('100.0000000000000000000000001', 5)", "d NOT IN ('3.0000000000000001', 1.5)", "f IN ('0.1000000000000000000000001', '2')"} {
			_, err := p.Parse("SELECT COUNT(*) FROM dp_strings WHERE " + where)
			var e *dperr.Error
			if !errors.As(err, &e) || e.Kind != dperr.Unsupported {
				t.Errorf("%s: %v, want refused (1235)", where, err)
			}
		}
	}
}
