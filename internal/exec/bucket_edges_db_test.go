package exec

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// bucketCase is a GROUP BY bucket key and the backend's own expression of
// its bucket number.
type bucketCase struct{ key, number string }

// checkBucketsAsBackend plans SELECT key AS b, COUNT(*) FROM t GROUP BY b
// for each case and checks on db that the grouped fetch's count of each
// bucket, and the count of its filter (which window fetches read), equal
// the rows the backend's own GROUP BY of the bucket number puts in it.
func checkBucketsAsBackend(t *testing.T, db *sql.DB, d sqlrewrite.Dialect, cat *catalog.Config, cases []bucketCase) {
	t.Helper()
	back := backend.New(db, d, nil)
	ctx := context.Background()
	for _, c := range cases {
		qp := planGrouped(t, cat, "SELECT "+c.key+" AS b, COUNT(*) FROM t GROUP BY b", 1)
		key := qp.Query.Keys[0]
		q := "SELECT " + c.number + ", COUNT(*) FROM t GROUP BY " + c.number
		res, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, len(qp.Groups))
		for _, r := range testdb.Strings(t, res, q) {
			k, err1 := strconv.ParseFloat(r[0], 64)
			n, err2 := strconv.ParseFloat(r[1], 64)
			i := int(k - key.First)
			if err1 != nil || err2 != nil || i < 0 || i >= len(want) {
				t.Fatalf("%s: row %v is no bucket of the plan's %d from %g", q, r, len(want), key.First)
			}
			want[i] = n
		}
		snap, err := back.Snapshot(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
		grouped, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "t", Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
		if err != nil {
			t.Fatal(err)
		}
		wrong := 0
		for g := range qp.Groups {
			one, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Filter: qp.GroupFilters[g], Summary: terms})
			if err != nil {
				t.Fatal(err)
			}
			if grouped[g][0] != want[g] || one[0] != want[g] {
				if wrong++; wrong <= 5 {
					t.Errorf("%s: bucket %v (%g) has %g rows in the grouped fetch and %g by its filter; the backend's %s has %g",
						c.key, qp.Groups[g], key.First+float64(g), grouped[g][0], one[0], c.number, want[g])
				}
			}
		}
		if wrong > 0 {
			t.Errorf("%s: %d of %d buckets differ from the backend's %s", c.key, wrong, len(qp.Groups), c.number)
		}
		snap.Close()
	}
}

// bucketTable creates t with the columns cols (SQL definitions) and the
// rows values, each a parenthesised list.
func bucketTable(t *testing.T, db *sql.DB, cols string, values []string) {
	t.Helper()
	if _, err := db.Exec("CREATE TABLE t (" + cols + ")"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
}

// TestBucketKeysAsBackendFloor: on each backend, over a double column
// holding k/100 for k in -1000..1000, the planned buckets of FLOOR(x / w),
// FLOOR(x / w) * w and FLOOR((x - o) / w) * w + o, for widths that are no
// powers of two, hold each row the backend's own GROUP BY FLOOR((x - o) /
// w) puts in them (checkBucketsAsBackend); a subnormal edge (of bucket 0
// of width 2) reads as a literal on each. (With edges at the products k *
// w, -1.8 was in bucket -7 of width 0.3, where -1.8 / 0.3 is -6 in
// doubles; 7 of the 2001 rows were misplaced.)
func TestBucketKeysAsBackendFloor(t *testing.T) {
	lo, hi := -10.0, 10.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	var rows []string
	for k := -1000; k <= 1000; k++ {
		rows = append(rows, "("+strconv.FormatFloat(float64(k)/100, 'g', -1, 64)+")")
	}
	for _, b := range []struct {
		name   string
		open   func(testing.TB) *sql.DB
		double string
		d      sqlrewrite.Dialect
	}{
		{"sqlite", testdb.SQLite, "REAL", sqlrewrite.SQLite},
		{"postgres", testdb.Postgres, "DOUBLE PRECISION", sqlrewrite.PostgreSQL},
		{"mysql", testdb.MySQL, "DOUBLE", sqlrewrite.MySQL},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			bucketTable(t, db, "x "+b.double, rows)
			checkBucketsAsBackend(t, db, b.d, cat, []bucketCase{
				{"FLOOR(x / 0.3)", "FLOOR(x / 0.3)"},
				{"FLOOR(x / 0.3) * 0.3", "FLOOR(x / 0.3)"},
				{"FLOOR(x / 0.1) * 0.1", "FLOOR(x / 0.1)"},
				{"FLOOR(x / 0.7) * 0.7", "FLOOR(x / 0.7)"},
				{"FLOOR(x / 0.05)", "FLOOR(x / 0.05)"},
				{"FLOOR(x / 0.01) * 0.01", "FLOOR(x / 0.01)"},
				{"FLOOR((x - 0.15) / 0.3) * 0.3 + 0.15", "FLOOR((x - 0.15) / 0.3)"},
				{"FLOOR((x - 1.3) / 0.7) * 0.7 + 1.3", "FLOOR((x - 1.3) / 0.7)"},
				// The edge of bucket 0 is -5e-324 (-5e-324 / 2 is -0).
				{"FLOOR(x / 2) * 2", "FLOOR(x / 2)"},
			})
		})
	}
}

// TestExactBucketKeysAsBackend: where MySQL divides exactly, in DECIMAL,
// the planned buckets hold the rows its FLOOR and DIV put in them: an
// integer column (MySQL's BIGINT; PostgreSQL's integer by a numeric
// literal too) by a decimal width, where doubles differ (33 / 1.1 is
// 29.999999999999996, 7 / 0.07 is 99.99999999999999), and on MariaDB x
// DIV w of a DOUBLE x, which MySQL converts to DECIMAL (3.3 DIV 0.1 is
// 33, FLOOR(3.3 / 0.1) 32). SQLite divides an integer by a real in
// doubles, unlike MySQL, so it has no reference here.
func TestExactBucketKeysAsBackend(t *testing.T) {
	nLo, nHi, mLo, mHi, xLo, xHi := -500.0, 500.0, 0.0, 200.0, 0.0, 10.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "n", Source: "n", Type: catalog.Integer, Lower: &nLo, Upper: &nHi},
		{Name: "m", Source: "m", Type: catalog.Integer, Lower: &mLo, Upper: &mHi},
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &xLo, Upper: &xHi},
	}}}}
	var rows []string
	for k := -500; k <= 500; k++ {
		m := k + 500
		rows = append(rows, "("+strconv.Itoa(k)+", "+strconv.Itoa(m/5)+", "+strconv.FormatFloat(float64(m)/100, 'g', -1, 64)+")")
	}
	integers := []bucketCase{
		{"FLOOR(n / 1.1)", "FLOOR(n / 1.1)"},
		{"FLOOR(n / 0.7) * 0.7", "FLOOR(n / 0.7)"},
		{"FLOOR((n - 0.35) / 1.1) * 1.1 + 0.35", "FLOOR((n - 0.35) / 1.1)"},
		{"FLOOR(m / 0.07)", "FLOOR(m / 0.07)"},
	}
	t.Run("postgres", func(t *testing.T) {
		db := testdb.Postgres(t)
		bucketTable(t, db, "n INTEGER, m BIGINT, x DOUBLE PRECISION", rows)
		checkBucketsAsBackend(t, db, sqlrewrite.PostgreSQL, cat, integers)
	})
	t.Run("mysql", func(t *testing.T) {
		db := testdb.MySQL(t)
		bucketTable(t, db, "n INT, m BIGINT, x DOUBLE", rows)
		checkBucketsAsBackend(t, db, sqlrewrite.MySQL, cat, append(integers,
			bucketCase{"m DIV 1.1 * 1.1", "m DIV 1.1"},
			bucketCase{"x DIV 0.1", "x DIV 0.1"},
			bucketCase{"x DIV 0.3 * 0.3", "x DIV 0.3"},
			bucketCase{"x DIV 1e-1", "x DIV 1e-1"},
		))
	})
}

// TestBucketKeysBeyond2p53AsBackend: over a BIGINT column holding the
// 1,226 integers from 2^53 on, where only every other one is a double,
// the planned buckets hold the rows the backend's own bucket numbers put
// in them: exactly (MySQL's DECIMAL) for integer and decimal widths and
// DIV, and in double arithmetic for a float literal width (MySQL converts
// the BIGINT to DOUBLE). Each backend computes the number its own way
// with MySQL's meaning: PostgreSQL and SQLite divide integers by an
// integer in integers (truncating, the floor of these positive values),
// PostgreSQL a numeric exactly and a float8 in doubles, SQLite a REAL in
// doubles (it has no exact decimal, so only the integer and double cases
// are its reference). With each edge the least double of its bucket
// (9007199254741006 for bucket 1801439850948201 of width 5, which holds
// 9007199254741005), 246 of the 2003 buckets of width 5 differed on each
// backend, and 88 to 246 of each other key's.
func TestBucketKeysBeyond2p53AsBackend(t *testing.T) {
	lo, hi := float64(1<<53), float64(1<<53+10008)
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "n", Source: "n", Type: catalog.Integer, Lower: &lo, Upper: &hi},
	}}}}
	var rows []string
	for i := 0; i < 1226; i++ {
		rows = append(rows, "("+strconv.FormatInt(1<<53+int64(i), 10)+")")
	}
	t.Run("mysql", func(t *testing.T) {
		db := testdb.MySQL(t)
		bucketTable(t, db, "n BIGINT", rows)
		checkBucketsAsBackend(t, db, sqlrewrite.MySQL, cat, []bucketCase{
			{"FLOOR(n / 5)", "FLOOR(n / 5)"},
			{"FLOOR(n / 5) * 5", "FLOOR(n / 5)"},
			{"n DIV 5", "n DIV 5"},
			{"n DIV 5 * 5", "n DIV 5"},
			{"FLOOR(n / 3.5) * 3.5", "FLOOR(n / 3.5)"},
			{"FLOOR(n / 4.5)", "FLOOR(n / 4.5)"},
			{"FLOOR(n / 7) * 7", "FLOOR(n / 7)"},
			{"FLOOR((n - 0.5) / 3.5) * 3.5 + 0.5", "FLOOR((n - 0.5) / 3.5)"},
			{"FLOOR(n / 7e0) * 7e0", "FLOOR(n / 7e0)"},
			{"FLOOR(n / 3e0)", "FLOOR(n / 3e0)"},
		})
	})
	t.Run("postgres", func(t *testing.T) {
		db := testdb.Postgres(t)
		bucketTable(t, db, "n BIGINT", rows)
		checkBucketsAsBackend(t, db, sqlrewrite.PostgreSQL, cat, []bucketCase{
			{"FLOOR(n / 5)", "n / 5"},
			{"FLOOR(n / 5) * 5", "n / 5"},
			{"n DIV 5", "n / 5"},
			{"FLOOR(n / 3.5) * 3.5", "FLOOR(n / 3.5)"},
			{"FLOOR(n / 4.5)", "FLOOR(n / 4.5)"},
			{"FLOOR(n / 7) * 7", "n / 7"},
			{"FLOOR((n - 0.5) / 3.5) * 3.5 + 0.5", "FLOOR((n - 0.5) / 3.5)"},
			{"FLOOR(n / 7e0) * 7e0", "FLOOR(CAST(n AS DOUBLE PRECISION) / 7)"},
			{"FLOOR(n / 3e0)", "FLOOR(CAST(n AS DOUBLE PRECISION) / 3)"},
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		db := testdb.SQLite(t)
		bucketTable(t, db, "n INTEGER", rows)
		checkBucketsAsBackend(t, db, sqlrewrite.SQLite, cat, []bucketCase{
			{"FLOOR(n / 5)", "n / 5"},
			{"FLOOR(n / 5) * 5", "n / 5"},
			{"n DIV 5", "n / 5"},
			{"FLOOR(n / 7) * 7", "n / 7"},
			{"FLOOR(n / 7e0) * 7e0", "CAST(n / 7e0 AS INTEGER)"},
			{"FLOOR(n / 3e0)", "CAST(n / 3e0 AS INTEGER)"},
		})
	})
}
