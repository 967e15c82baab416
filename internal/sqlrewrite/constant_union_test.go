package sqlrewrite_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestODBCTypeInfoIsAConstantUnion: the statement MariaDB Connector/ODBC
// 3.1 sends for SQLGetTypeInfo(SQL_ALL_TYPES), 43 SELECTs of literals
// joined by UNION (captured from the wire), is answered at parse with its
// 43 rows, named and typed as MySQL answers it; it was refused with 1235
// by the limit of 8 SELECTs that keeps the catalog engine's exponential
// planning away.
func TestODBCTypeInfoIsAConstantUnion(t *testing.T) {
	sql, err := os.ReadFile("../../testdata/clients/mariadb_odbc_typeinfo.sql")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlrewrite.NewParser(testCatalog()).Parse(strings.TrimSpace(string(sql)))
	if err != nil {
		t.Fatalf("SQLGetTypeInfo: %v", err)
	}
	u, ok := st.(*sqlrewrite.ConstantUnion)
	if !ok {
		t.Fatalf("SQLGetTypeInfo: %T, want a ConstantUnion", st)
	}
	if len(u.Rows) != 43 || len(u.Columns) != 19 || u.CatalogMay {
		t.Fatalf("SQLGetTypeInfo: %d rows, %d columns, catalog engine may: %t; want 43, 19, false", len(u.Rows), len(u.Columns), u.CatalogMay)
	}
	want := []sqlrewrite.UnionColumn{
		{Name: "TYPE_NAME", Type: sqlrewrite.UnionText, Width: 18},
		{Name: "DATA_TYPE", Type: sqlrewrite.UnionInt, Width: 3},
		{Name: "COLUMN_SIZE", Type: sqlrewrite.UnionInt, Width: 11},
		{Name: "CREATE_PARAMS", Type: sqlrewrite.UnionText, Width: 15, Nullable: true},
		{Name: "INTERVAL_PRECISION", Type: sqlrewrite.UnionNull, Nullable: true},
	}
	for _, w := range want {
		found := false
		for _, c := range u.Columns {
			if c.Name == w.Name {
				found = true
				if c != w {
					t.Errorf("column %+v, want %+v", c, w)
				}
			}
		}
		if !found {
			t.Errorf("no column %s", w.Name)
		}
	}
	if got := fmt.Sprint(u.Rows[0]); got != "[BIT -7 1   <nil> 1 1 3 0 0 0 BIT 0 0 0 0 10 <nil>]" {
		t.Errorf("first row %s", got)
	}
	if got := fmt.Sprint(u.Rows[42][:3]); got != "[LONG VARCHAR -10 16777215]" {
		t.Errorf("last row %s", got)
	}
}

// TestConstantUnionBounds: a UNION of literal rows is answered up to
// 4,096 SELECTs and 1 MiB of text, in time linear in its size; past
// either bound it is an ordinary set operation, refused past 8 SELECTs.
func TestConstantUnionBounds(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	union := func(n int, value string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("SELECT %d AS a, '%s' AS b, NULL AS c", i, value)
		}
		return strings.Join(parts, " UNION ")
	}
	start := time.Now()
	st, err := p.Parse(union(4096, "x"))
	if u, ok := st.(*sqlrewrite.ConstantUnion); err != nil || !ok || len(u.Rows) != 4096 {
		t.Fatalf("4,096 SELECTs: %T %v", st, err)
	}
	t.Logf("4,096 SELECTs parsed and answered in %v (BenchmarkConstantUnion measures it)", time.Since(start))
	long := strings.Repeat("y", 260)
	if sql := union(3500, long); len(sql) <= 1<<20 {
		t.Fatalf("test statement of %d bytes, want over 1 MiB", len(sql))
	}
	for name, sql := range map[string]string{"4,097 SELECTs": union(4097, "x"), "over 1 MiB": union(3500, long)} {
		if _, err := p.Parse(sql); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "more than 8 SELECTs") {
			t.Errorf("%s: %v, want 1235 naming the limit", name, err)
		}
	}
}

// TestConstantUnionOrderByRepeats: an ORDER BY item naming a column an
// earlier item named (by name in any case, or by position) changes
// nothing, as in MySQL: ORDER BY b DESC, B, 2, a orders by b descending,
// then a.
func TestConstantUnionOrderByRepeats(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	st, err := p.Parse("SELECT 2 AS a, 'x' AS b UNION ALL SELECT 1, 'y' UNION ALL SELECT 3, 'y' UNION ALL SELECT 0, 'x' ORDER BY b DESC, B, 2, a")
	u, ok := st.(*sqlrewrite.ConstantUnion)
	if err != nil || !ok {
		t.Fatalf("%T %v", st, err)
	}
	if got := fmt.Sprint(u.Rows); got != "[[1 y] [3 y] [0 x] [2 x]]" {
		t.Errorf("rows %s, want [[1 y] [3 y] [0 x] [2 x]]", got)
	}
}

// BenchmarkConstantUnion parses and answers 4,096 literal SELECTs ordered
// by an ORDER BY that names their one column 100,000 times (a hostile
// statement of about 300 KB; each repeat once cost a comparison of every
// pair of rows the sort compared).
func BenchmarkConstantUnion(b *testing.B) {
	p := sqlrewrite.NewParser(testCatalog())
	sql := strings.Repeat("SELECT 1 AS a UNION ALL ", 4095) + "SELECT 1 ORDER BY 1" + strings.Repeat(", 1", 100000)
	for b.Loop() {
		if _, err := p.Parse(sql); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConstantUnionParenthesized: parenthesized parts of a UNION of
// literal rows are answered at parse, each with its own ORDER BY and
// LIMIT, the last ORDER BY over the whole (TestConstantUnionsAsMariaDB
// checks the answers against MariaDB's); the catalog engine, which put
// (SELECT 1) UNION (SELECT 2) ORDER BY 1 DESC in the order 1, 2, may not
// answer them. Other set operations with parenthesized parts, and literal
// ones of more than 64 parts, are refused with 1235.
func TestConstantUnionParenthesized(t *testing.T) {
	p := sqlrewrite.NewParser(testCatalog())
	for sql, want := range map[string]string{
		"(SELECT 1) UNION (SELECT 2) ORDER BY 1 DESC":                             "[[2] [1]]",
		"SELECT 3 UNION ALL (SELECT 1 UNION SELECT 2 ORDER BY 1 DESC LIMIT 1)":    "[[3] [2]]",
		"(SELECT 1 UNION SELECT 10 ORDER BY 1 DESC LIMIT 1) UNION SELECT 'a'":     "[[10] [a]]",
		"(SELECT 1) UNION ALL (SELECT 1) UNION ALL ((SELECT 1) UNION (SELECT 1))": "[[1] [1] [1]]",
	} {
		st, err := p.Parse(sql)
		u, ok := st.(*sqlrewrite.ConstantUnion)
		if err != nil || !ok {
			t.Errorf("%s: %T %v", sql, st, err)
			continue
		}
		if got := fmt.Sprint(u.Rows); got != want || u.CatalogMay {
			t.Errorf("%s: rows %s, catalog engine may: %t; want %s, false", sql, got, u.CatalogMay, want)
		}
	}
	parts := "(SELECT 0)" + strings.Repeat(" UNION (SELECT 1)", 64)
	for _, sql := range []string{"(SELECT 1.5) UNION (SELECT 2) ORDER BY 1 DESC", "SELECT 1 UNION (SELECT 2 ORDER BY 1 + 0 LIMIT 1)"} {
		if _, err := p.Parse(sql); dperr.KindOf(err) != dperr.Unsupported || !strings.Contains(err.Error(), "parenthesized") {
			t.Errorf("%s: %v, want 1235 naming the parentheses", sql, err)
		}
	}
	if _, err := p.Parse(parts); dperr.KindOf(err) != dperr.Unsupported {
		t.Errorf("65 parts: %v, want 1235", err)
	}
	if st, err := p.Parse(parts[:len(parts)-len(" UNION (SELECT 1)")]); err != nil {
		t.Errorf("64 parts: %T %v", st, err)
	} else if _, ok := st.(*sqlrewrite.ConstantUnion); !ok {
		t.Errorf("64 parts: %T, want a ConstantUnion", st)
	}
}
