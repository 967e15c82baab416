package sqlrewrite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// BenchmarkDerivedColumnFetches runs, on MariaDB and PostgreSQL (the
// DPPROXY_TEST_*_DSN servers), the fetches of statements over row
// expressions: a sum of age + income, the same per race and sex (a
// count and a clamped sum: Summary, GroupedSummary), the exact grid sums
// of age + income alone and per race and sex (GridSums with SumOnly,
// FloatSum on MariaDB, as the proxy's SUM and AVG of a row expression
// read them first), and the cells of GROUP BY buckets of age + income /
// 1000 (in [0, 600]) of widths 10, 1 and 0.25, whose bucket keys (binary
// searches over the edges) read the derived column ⌊log2 k⌋ or ⌈log2 k⌉
// times for k buckets. The table has DPPROXY_BENCH_ROWS rows (default
// 1,024,000; 1,000 distinct rows doubled until there are at least that
// many). Each fetch is one statement of the backend, its rows read to
// the end. Where the server runs on this machine, each also reports the
// CPU time of the server thread (MariaDB) or process (PostgreSQL, its
// parallel workers left out) that ran it, server-cpu-s/op, which other
// load changes far less than the time:
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
		return &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{{Column: "dpproxy_e0", Edges: sqlrewrite.DoubleEdges(edges)}}}
	}
	byRaceAndSex := []sqlrewrite.CellDim{values("race", 1, 6), values("sex", 0, 1)}
	fetches := func(floatSum bool) []struct {
		name  string
		fetch sqlrewrite.Fetch
	} {
		grid := sqlrewrite.GridSums{Column: "dpproxy_e0", Upper: 500100, Unit: 0x1p-11, SumOnly: true, FloatSum: floatSum}
		return []struct {
			name  string
			fetch sqlrewrite.Fetch
		}{
			{"sum", sqlrewrite.Fetch{Derived: sum, Summary: terms}},
			{"sum by race and sex", sqlrewrite.Fetch{Derived: sum,
				Grouped: &sqlrewrite.GroupedSummary{Dims: byRaceAndSex, Terms: terms}}},
			{"grid sum", sqlrewrite.Fetch{Derived: sum, GridSums: &grid}},
			{"grid sum by race and sex", sqlrewrite.Fetch{Derived: sum,
				GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: byRaceAndSex, Grid: grid}}},
			{"60 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(10)}},
			{"600 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(1)}},
			{"2400 buckets", sqlrewrite.Fetch{Derived: scaled, Cells: buckets(0.25)}},
		}
	}
	for _, backend := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		double  string
		analyze string
		// serving is the id of the server thread (MariaDB) or process
		// (PostgreSQL) that runs the session's statements.
		serving string
	}{
		{"mariadb", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "ANALYZE TABLE dp_bench",
			"SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()"},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "ANALYZE dp_bench", "SELECT pg_backend_pid()"},
	} {
		b.Run(backend.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := backend.open(b).Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var serving int
			if err := db.QueryRowContext(ctx, backend.serving).Scan(&serving); err != nil {
				b.Fatal(err)
			}
			exec := func(q string) {
				if _, err := db.ExecContext(ctx, q); err != nil {
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
			for _, f := range fetches(backend.dialect == sqlrewrite.MySQL) {
				f.fetch.Table = "dp_bench"
				q, args, err := sqlrewrite.Render(f.fetch, backend.dialect)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(f.name, func(b *testing.B) {
					before, measured := serverCPU(serving)
					for range b.N {
						res, err := db.QueryContext(ctx, q, args...)
						if err != nil {
							b.Fatalf("%s: %v", f.name, err)
						}
						testdb.Strings(b, res, q)
					}
					if after, ok := serverCPU(serving); measured && ok {
						b.ReportMetric((after-before)/float64(b.N), "server-cpu-s/op")
					}
				})
			}
		})
	}
}

// serverCPU returns the CPU seconds (user and system) that thread or
// process id has run, from /proc/<id>/task/<id>/stat (the thread's own,
// where /proc/<id>/stat adds up its process's threads) in clock ticks of
// 1/100 s (Linux's USER_HZ), and false where that cannot be read (a
// server on another machine). Unlike the time of a statement, it hardly
// depends on what else the machine runs.
func serverCPU(id int) (float64, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", id, id))
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis, from state
	// (the third): utime and stime are the 14th and 15th.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	user, errU := strconv.ParseFloat(fields[11], 64)
	system, errS := strconv.ParseFloat(fields[12], 64)
	return (user + system) / 100, errU == nil && errS == nil
}
