package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// BenchmarkDerivedColumnFetches runs, on MariaDB and PostgreSQL (the
// DPPROXY_TEST_*_DSN servers), the fetches of statements over row
// expressions: a sum of age + income, the same per race and sex, and
// the cells of GROUP BY buckets of age + income / 1000 (in [0, 600]) of
// widths 10, 1 and 0.25, whose bucket keys (binary searches over the
// edges) read the derived column ⌊log2 k⌋ or ⌈log2 k⌉ times for k buckets.
// The table has DPPROXY_BENCH_ROWS rows (default 1,024,000; 1,000
// distinct rows doubled until there are at least that many). Each fetch is one statement of the backend, its
// rows read to the end:
//
//	go test -run '^$' -bench DerivedColumnFetches -benchtime 3x ./internal/sqlrewrite/
func BenchmarkDerivedColumnFetches(b *testing.B) {
	rows := 1_024_000
	if s := os.Getenv("DPPROXY_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("DPPROXY_BENCH_ROWS=%q: want a positive integer", s)
		}
		rows = n
	}
	col := func(name string, lo, hi float64) *sqlrewrite.RowExpr {
		return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowColumn, Column: name, Lower: lo, Upper: hi}
	}
	op := func(o byte, a, c *sqlrewrite.RowExpr) *sqlrewrite.RowExpr {
		return &sqlrewrite.RowExpr{Kind: sqlrewrite.RowOp, Op: o, Args: []*sqlrewrite.RowExpr{a, c}}
	}
	age, income := col("age", 0, 100), col("income", 0, 500000)
	sum := []sqlrewrite.DerivedColumn{{Name: "dpproxy_e0", Expr: op('+', age, income)}}
	scaled := []sqlrewrite.DerivedColumn{{Name: "dpproxy_e0", Expr: op('+', age, op('/', income, &sqlrewrite.RowExpr{Kind: sqlrewrite.RowConst, Num: 1000}))}}
	terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountNumbers, Column: "dpproxy_e0"},
		{Kind: sqlrewrite.ClampedSum, Column: "dpproxy_e0", Lower: 0, Upper: 500100}}
	values := func(name string, lo, hi int) sqlrewrite.CellDim {
		d := sqlrewrite.CellDim{Column: name}
		for v := lo; v <= hi; v++ {
			d.Values = append(d.Values, sqlrewrite.Value{Num: float64(v)})
		}
		return d
	}
	buckets := func(width float64) *sqlrewrite.Cells {
		var edges []float64
		for i := 0; float64(i)*width <= 600; i++ {
			edges = append(edges, float64(i)*width)
		}
		return &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: "dpproxy_e0", Edges: edges}}}
	}
	fetches := []struct {
		name  string
		fetch sqlrewrite.Fetch
	}{
		{"sum", sqlrewrite.Fetch{Derived: sum, Summary: terms}},
		{"sum by race and sex", sqlrewrite.Fetch{Derived: sum,
			Grouped: &sqlrewrite.GroupedSummary{Dims: []sqlrewrite.CellDim{values("race", 1, 6), values("sex", 0, 1)}, Terms: terms}}},
		{"60 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(10)}},
		{"600 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(1)}},
		{"2400 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(0.25)}},
	}
	for _, backend := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		double  string
		analyze string
	}{
		{"mariadb", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "ANALYZE TABLE dp_bench"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "ANALYZE dp_bench"},
	} {
		b.Run(backend.name, func(b *testing.B) {
			db := backend.open(b)
			exec := func(q string) {
				if _, err := db.Exec(q); err != nil {
					b.Fatalf("%.80s: %v", q, err)
				}
			}
			exec("CREATE TABLE dp_bench (age INT, sex INT, race INT, income " + backend.double + ")")
			for i := range 1000 {
				exec(fmt.Sprintf("INSERT INTO dp_bench VALUES (%d, %d, %d, %d.25)", i*37%101, i%2, 1+i*7%6, i*104729%500000))
			}
			for n := 1000; n < rows; n *= 2 {
				exec("INSERT INTO dp_bench SELECT * FROM dp_bench")
			}
			exec(backend.analyze)
			for _, f := range fetches {
				f.fetch.Table = "dp_bench"
				q, args, err := sqlrewrite.Render(f.fetch, backend.dialect)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(f.name, func(b *testing.B) {
					for range b.N {
						res, err := db.Query(q, args...)
						if err != nil {
							b.Fatalf("%s: %v", f.name, err)
						}
						testdb.Strings(b, res, q)
					}
				})
			}
		})
	}
}
