package exec

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestTierKeysOnHostileValues groups by CASE tiers written with <=, >,
// >=, BETWEEN and AND on every backend over hostile values of the tiered
// column (NULL, values in the gaps between BETWEEN ranges and on their
// ends, outside the bounds; on SQLite text and a blob; on PostgreSQL NaN
// and ±Infinity): the grouped fetch puts each readable value in the tier
// of the first range that holds it, else in the ELSE tier, exactly as a
// model of SQL's CASE (an unreadable value in the ELSE tier too, as SQL's
// CASE puts NULL, on which every WHEN is UNKNOWN); and the per-group
// filters (which window fetches read) select exactly the grouped fetch's
// rows of each group.
func TestTierKeysOnHostileValues(t *testing.T) {
	type value struct {
		sql        string
		v          float64
		unreadable bool
	}
	common := []value{{"NULL", 0, true}, {"-3", -3, false}, {"0", 0, false}, {"17", 17, false}, {"17.5", 17.5, false},
		{"18", 18, false}, {"34", 34, false}, {"34.5", 34.5, false}, {"35", 35, false}, {"64", 64, false},
		{"64.5", 64.5, false}, {"65", 65, false}, {"100", 100, false}, {"150", 150, false}}
	inf := math.Inf(1)
	for _, b := range []struct {
		name    string
		dialect sqlrewrite.Dialect
		open    func(testing.TB) *sql.DB
		extra   []value
	}{
		{"sqlite", sqlrewrite.SQLite, testdb.SQLite, []value{{"'abc'", 0, true}, {"x'00ff'", 0, true}, {"'20'", 20, false}}},
		{"postgres", sqlrewrite.PostgreSQL, testdb.Postgres, []value{{"'NaN'", inf, false}, {"'Infinity'", inf, false}, {"'-Infinity'", -inf, false}}},
		{"mysql", sqlrewrite.MySQL, testdb.MySQL, nil},
	} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			double := map[sqlrewrite.Dialect]string{sqlrewrite.SQLite: "REAL", sqlrewrite.PostgreSQL: "DOUBLE PRECISION", sqlrewrite.MySQL: "DOUBLE"}[b.dialect]
			if _, err := db.Exec(fmt.Sprintf("CREATE TABLE t (k INTEGER, x %s, s VARCHAR(5))", double)); err != nil {
				t.Fatal(err)
			}
			values := append(append([]value(nil), common...), b.extra...)
			for i, v := range values {
				s := []string{"'a'", "'b'"}[i%2]
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO t (k, x, s) VALUES (1, %s, %s)", v.sql, s)); err != nil {
					t.Fatalf("insert %s: %v", v.sql, err)
				}
			}
			back := backend.New(db, b.dialect, nil)
			ctx := context.Background()
			for _, c := range []struct {
				tiers string
				model func(x float64) int
				// elseTier is the ELSE tier's index.
				elseTier int
			}{
				{"CASE WHEN x BETWEEN 18 AND 34 THEN 'a' WHEN x BETWEEN 35 AND 64 THEN 'b' ELSE 'c' END", func(x float64) int {
					switch {
					case x >= 18 && x <= 34:
						return 0
					case x >= 35 && x <= 64:
						return 1
					}
					return 2
				}, 2},
				{"CASE WHEN x > 64 THEN 'old' WHEN x >= 18 THEN 'adult' ELSE 'minor' END", func(x float64) int {
					switch {
					case x > 64:
						return 0
					case x >= 18:
						return 1
					}
					return 2
				}, 2},
				{"CASE WHEN x <= 17 THEN 1 WHEN x < 35 AND x > 20 THEN 2 WHEN 64 < x THEN 3 ELSE 4 END", func(x float64) int {
					switch {
					case x <= 17:
						return 0
					case x < 35 && x > 20:
						return 1
					case x > 64:
						return 2
					}
					return 3
				}, 3},
			} {
				qp := planGrouped(t, groupedCatalog(), "SELECT "+c.tiers+" AS tier, s, COUNT(*) FROM t GROUP BY tier, s", 1)
				snap, err := back.Snapshot(ctx, "")
				if err != nil {
					t.Fatal(err)
				}
				terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
				grouped, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "t", Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
				if err != nil {
					t.Fatal(err)
				}
				// The model: tier × s (3 values declared: a, b, c).
				want := make([]float64, len(qp.Groups))
				for i, v := range values {
					tier := c.elseTier
					if !v.unreadable {
						tier = c.model(v.v)
					}
					want[tier*3+i%2]++
				}
				for g := range qp.Groups {
					one, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Filter: qp.GroupFilters[g], Summary: terms})
					if err != nil {
						t.Fatal(err)
					}
					if grouped[g][0] != want[g] || one[0] != want[g] {
						t.Errorf("%s: group %v has %g rows in the grouped fetch and %g by its filter, want %g", c.tiers, qp.Groups[g], grouped[g][0], one[0], want[g])
					}
				}
				snap.Close()
			}
		})
	}
}
