package exec

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestUnixTimestampOfTimestampIsSeconds: on each backend, UNIX_TIMESTAMP
// of a timestamp column is its second from 1970 as a number, as MariaDB
// computes it in a UTC session: each row's value, which the fetches
// derive, sums to the backend's own exact sum of its seconds, and SUM,
// AVG, MEDIAN and MIN of it at a high ε are numbers (DOUBLE, MIN BIGINT,
// as of UNIX_TIMESTAMP of a date column), near the true ones, where they
// were timestamps (SUM clamped to the column's upper bound and written
// as a date).
func TestUnixTimestampOfTimestampIsSeconds(t *testing.T) {
	col := catalog.Column{Type: catalog.Timestamp}
	lo, _ := col.ParseTemporal("2024-01-01 00:00:00")
	hi, _ := col.ParseTemporal("2024-01-08 00:00:00")
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "ts", Source: "ts", Type: catalog.Timestamp, Lower: &lo, Upper: &hi},
	}}}}
	const n = 2000
	var rows []string
	var seconds []float64
	sum := 0.0
	for i := range n {
		s := lo + float64(i*7*86400/n) + float64(i%60)
		seconds = append(seconds, s)
		sum += s
		rows = append(rows, "('"+col.FormatTemporal(s)+"')")
	}
	for _, b := range []struct {
		name      string
		open      func(testing.TB) *sql.DB
		d         sqlrewrite.Dialect
		typ, secs string
	}{
		{"sqlite", testdb.SQLite, sqlrewrite.SQLite, "TEXT", "SELECT SUM(CAST(strftime('%s', ts) AS INTEGER)) FROM t"},
		{"postgres", testdb.Postgres, sqlrewrite.PostgreSQL, "TIMESTAMP", "SELECT SUM(EXTRACT(EPOCH FROM ts)) FROM t"},
		{"mysql", testdb.MySQL, sqlrewrite.MySQL, "DATETIME", "SET STATEMENT time_zone = '+00:00' FOR SELECT SUM(UNIX_TIMESTAMP(ts)) FROM t"},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec("CREATE TABLE t (ts " + b.typ + ")"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO t (ts) VALUES " + strings.Join(rows, ", ")); err != nil {
				t.Fatal(err)
			}
			var exact string
			if err := db.QueryRow(b.secs).Scan(&exact); err != nil {
				t.Fatal(err)
			}
			if got, err := strconv.ParseFloat(exact, 64); err != nil || got != sum {
				t.Fatalf("%s = %s, want %.0f", b.secs, exact, sum)
			}
			back := backend.New(db, b.d, nil)
			q := "SELECT SUM(UNIX_TIMESTAMP(ts)), AVG(UNIX_TIMESTAMP(ts)), MEDIAN(UNIX_TIMESTAMP(ts)), MIN(UNIX_TIMESTAMP(ts)) FROM t"
			qp := planGrouped(t, cat, q, 100)
			// The fetches' per-row values: the derived column's exact sum.
			plan := qp.Base
			if len(plan.Derived) != 1 {
				t.Fatalf("%s derives %d columns, want 1", q, len(plan.Derived))
			}
			ctx := context.Background()
			snap, err := back.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Derived: plan.Derived,
				Summary: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.ClampedSum, Column: plan.Derived[0].Name, Lower: lo, Upper: hi}}})
			snap.Close()
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != sum {
				t.Errorf("the derived UNIX_TIMESTAMP(ts) sums to %.0f, the backend's seconds to %.0f", got[0], sum)
			}
			e := newGroupedExecutor(t, back)
			res, err := e.RunQuery(ctx, "a", qp, rand.NewChaCha8([32]byte{7}))
			if err != nil {
				t.Fatal(err)
			}
			wantTypes := []planner.ResultType{planner.ResultDouble, planner.ResultDouble, planner.ResultDouble, planner.ResultBigint}
			if fmt.Sprint(res.Types) != fmt.Sprint(wantTypes) {
				t.Errorf("types %v, want %v", res.Types, wantTypes)
			}
			row := res.Rows[0]
			want := []float64{sum, sum / n, seconds[n/2], seconds[0]}
			// ε = 100 over the releases: the sum's noise is about its
			// sensitivity, the upper bound (1.7e9), over ε; the others' a
			// few seconds to an hour (of a week of values).
			tol := []float64{hi, 3600, 3600, 3600}
			for i, c := range row {
				var v float64
				switch c := c.(type) {
				case float64:
					v = c
				case int64:
					v = float64(c)
				default:
					t.Fatalf("column %d is %T %v, want a number", i, c, c)
				}
				if math.Abs(v-want[i]) > tol[i] {
					t.Errorf("column %d = %.0f, want %.0f ± %g", i, v, want[i], tol[i])
				}
			}
		})
	}
}
