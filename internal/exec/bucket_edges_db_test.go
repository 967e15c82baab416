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

// TestBucketKeysAsBackendFloor: on each backend, over a double column
// holding k/100 for k in -1000..1000, the planned buckets of FLOOR(x / w),
// FLOOR(x / w) * w and FLOOR((x - o) / w) * w + o, for widths that are no
// powers of two, hold each row the backend's own GROUP BY FLOOR((x - o) /
// w) puts in them: the grouped fetch's counts and each group's filter
// (which window fetches read) equal the backend's counts per bucket; a
// subnormal edge (of bucket 0 of width 2) reads as a literal on each.
// (With edges at the products k * w, -1.8 was in bucket -7 of width 0.3,
// where -1.8 / 0.3 is -6 in doubles; 7 of the 2001 rows were misplaced.)
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
			if _, err := db.Exec("CREATE TABLE t (x " + b.double + ")"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO t (x) VALUES " + strings.Join(rows, ", ")); err != nil {
				t.Fatal(err)
			}
			back := backend.New(db, b.d, nil)
			ctx := context.Background()
			for _, c := range []struct{ key, floor string }{
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
			} {
				qp := planGrouped(t, cat, "SELECT "+c.key+" AS b, COUNT(*) FROM t GROUP BY b", 1)
				key := qp.Query.Keys[0]
				q := "SELECT " + c.floor + ", COUNT(*) FROM t GROUP BY " + c.floor
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
								c.key, qp.Groups[g], key.First+float64(g), grouped[g][0], one[0], c.floor, want[g])
						}
					}
				}
				if wrong > 0 {
					t.Errorf("%s: %d of %d buckets differ from the backend's FLOOR", c.key, wrong, len(qp.Groups))
				}
				snap.Close()
			}
		})
	}
}
