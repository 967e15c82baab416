package sqlrewrite_test

import (
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestBucketKeysOnBackends runs, on each backend, cells fetches whose
// bucket keys (linear ladders up to eight buckets, binary searches above)
// cover random edges, keyed also by a row id so that every row's bucket
// is read back: every readable value gets the linear ladder's bucket
// (bucketOf), the edges themselves, the values one ulp on either side,
// ±0, the largest doubles, the infinities and NaN where the backend holds
// them included, in a double and an integer column; NULL, and on SQLite
// text and blobs, get none.
func TestBucketKeysOnBackends(t *testing.T) {
	for _, b := range []struct {
		name            string
		dialect         sqlrewrite.Dialect
		open            func(testing.TB) *sql.DB
		double, integer string
		extra           map[string]float64 // literals of the double column and the bucket value they hold; NaN for no key
		extraInt        map[string]float64 // the same for the integer column
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, "REAL", "INTEGER",
			map[string]float64{"9e999": math.Inf(1), "-9e999": math.Inf(-1), "'abc'": math.NaN(), "x'00ff'": math.NaN(), "NULL": math.NaN()},
			map[string]float64{"'abc'": math.NaN(), "NULL": math.NaN(), "9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, "DOUBLE PRECISION", "NUMERIC",
			map[string]float64{"'Infinity'": math.Inf(1), "'-Infinity'": math.Inf(-1), "'NaN'": math.Inf(1), "NULL": math.NaN()},
			map[string]float64{"'NaN'": math.Inf(1), "1e400": math.Inf(1), "-1e400": math.Inf(-1), "NULL": math.NaN()}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, "DOUBLE", "BIGINT",
			map[string]float64{"NULL": math.NaN()},
			map[string]float64{"NULL": math.NaN(), "9223372036854775807": math.MaxInt64, "-9223372036854775808": math.MinInt64}},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE dp_buckets (id INTEGER, x %s, a %s)", b.double, b.integer)); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, uint64(len(b.name))))
			for _, k := range []int{1, 2, 7, 8, 9, 10, 16, 17, 33, 100, 257, 600} {
				edges := randomEdges(rng, k)
				for _, col := range []string{"x", "a"} {
					literals, want := bucketRows(rng, edges, col == "a", b.dialect == sqlrewrite.MySQL)
					extra := b.extra
					if col == "a" {
						extra = b.extraInt
					}
					for lit, v := range extra {
						literals = append(literals, lit)
						want = append(want, -1)
						if !math.IsNaN(v) {
							want[len(want)-1] = bucketOf(edges, v)
						}
					}
					checkBuckets(t, db, b.dialect, col, edges, literals, want)
				}
			}
		})
	}
}

// bucketRows returns the values bucket keys over edges are checked on,
// as literals, and their buckets: ±0, the largest doubles, each of (up
// to 100 of) the edges and the values one ulp either side. In an integer
// column the values are the integers nearest to them of magnitude below
// 2^53 (held exactly by a double, so bucketOf compares them as the
// backend does); where noSubnormals, no nonzero magnitude below 2^-1022
// (MariaDB refuses them).
func bucketRows(rng *rand.Rand, edges []float64, integer, noSubnormals bool) (literals []string, want []int) {
	values := []float64{0, math.Copysign(0, -1), math.MaxFloat64, -math.MaxFloat64}
	for i := 0; i < 100 && i < len(edges); i++ {
		e := edges[rng.IntN(len(edges))]
		values = append(values, e, math.Nextafter(e, math.Inf(1)), math.Nextafter(e, math.Inf(-1)))
	}
	for _, v := range values {
		if integer {
			v = math.Max(-(1 << 53), math.Min(1<<53, math.Round(v)))
		}
		if noSubnormals && v != 0 && math.Abs(v) < 0x1p-1022 {
			continue
		}
		lit := strconv.FormatFloat(v, 'g', -1, 64)
		if integer {
			lit = strconv.FormatFloat(v, 'f', -1, 64)
		}
		literals = append(literals, lit)
		want = append(want, bucketOf(edges, v))
	}
	return literals, want
}

// checkBuckets stores the literals in column col of dp_buckets, one row
// each, and checks that the cells fetch keyed by row and by the buckets
// of edges puts row i in bucket want[i] (no cell for -1).
func checkBuckets(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, col string, edges []float64, literals []string, want []int) {
	t.Helper()
	if _, err := db.Exec("DELETE FROM dp_buckets"); err != nil {
		t.Fatal(err)
	}
	rows := make([]string, len(literals))
	ids := make([]sqlrewrite.Value, len(literals))
	for i, lit := range literals {
		rows[i] = fmt.Sprintf("(%d, %s)", i, lit)
		ids[i] = sqlrewrite.Value{Num: float64(i)}
	}
	if _, err := db.Exec("INSERT INTO dp_buckets (id, " + col + ") VALUES " + strings.Join(rows, ", ")); err != nil {
		t.Fatalf("insert %v: %v", literals, err)
	}
	q, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: "dp_buckets", Cells: &sqlrewrite.Cells{Dims: []sqlrewrite.CellDim{
		{Column: "id", Values: ids}, {Column: col, Edges: sqlrewrite.DoubleEdges(edges)}}}}, d)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%.300s: %v", q, err)
	}
	got := make([]int, len(literals))
	for i := range got {
		got[i] = -1
	}
	for _, r := range testdb.Strings(t, res, q) {
		id, err1 := strconv.Atoi(r[0])
		bucket, err2 := strconv.Atoi(r[1])
		if err1 != nil || err2 != nil || r[2] != "1" || id < 0 || id >= len(got) || got[id] != -1 {
			t.Fatalf("unexpected row %q", r)
		}
		got[id] = bucket
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%d buckets on %s, edges %v: %s in bucket %d, want %d", len(edges)-1, col, edges, literals[i], got[i], want[i])
		}
	}
}
