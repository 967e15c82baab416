package exec

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// manyKeysTable creates, in db, the table big(city TEXT, income REAL,
// age REAL) of keys distinct cities ('city0', 'city1', ...) with
// rowsPerKey rows each (income and age vary within each city), and
// returns its catalog: city open to partition selection, income in
// [0, 100000], age in [0, 100].
func manyKeysTable(tb testing.TB, db *sql.DB, keys, rowsPerKey int) *catalog.Config {
	tb.Helper()
	for _, q := range []string{
		"CREATE TABLE big (city TEXT, income REAL, age REAL)",
		fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < %d)
			INSERT INTO big SELECT 'city' || (i %% %d), (i * 7919) %% 100000, i %% 97 FROM n`, keys*rowsPerKey, keys),
	} {
		if _, err := db.Exec(q); err != nil {
			tb.Fatal(err)
		}
	}
	lo, hiIncome, hiAge := 0.0, 100000.0, 100.0
	return &catalog.Config{Tables: []catalog.Table{{Name: "big", Source: "big", Columns: []catalog.Column{
		{Name: "city", Source: "city", Type: catalog.Text, PartitionSelection: true},
		{Name: "income", Source: "income", Type: catalog.Real, Lower: &lo, Upper: &hiIncome},
		{Name: "age", Source: "age", Type: catalog.Real, Lower: &lo, Upper: &hiAge},
	}}}}
}

// BenchmarkManySelectedGroups runs GROUP BY a partition-selected text key
// whose selection releases every one of keys values (8 rows each, far
// above the threshold at the selection's ε = 5), with COUNT, SUM, AVG and
// STDDEV per key, on SQLite: time and allocations per statement, the
// backend's fetches included, and result-B/op, the heap the answer holds
// (its rows and notes, which a session keeps until its next statement).
//
//	go test -run '^$' -bench ManySelectedGroups -benchmem -benchtime 2x ./internal/exec/
func BenchmarkManySelectedGroups(b *testing.B) {
	for _, keys := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			db := testdb.SQLite(b)
			cat := manyKeysTable(b, db, keys, 8)
			qp := planGrouped(b, cat, "SELECT city, COUNT(*), SUM(income), AVG(age), STDDEV(income) FROM big GROUP BY city", 10)
			e := newGroupedExecutor(b, backend.New(db, sqlrewrite.SQLite, nil))
			var held uint64
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(i)}))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				held += after.HeapAlloc - before.HeapAlloc
				b.ReportMetric(float64(len(res.Rows)), "rows")
				runtime.KeepAlive(res)
				b.StartTimer()
			}
			b.ReportMetric(float64(held)/float64(b.N), "result-B/op")
		})
	}
}
