package sqlrewrite_test

import (
	"database/sql"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// unitGroupDims group the unit rows by f (cells 0, 1, 2) and by a bucket
// of x (units 1-9, 10-19, 20-40: constant within a unit), so a unit's
// groups are its distinct f values.
var unitGroupDims = []sqlrewrite.CellDim{
	{Column: "f", Values: []sqlrewrite.Value{{Num: 0}, {Num: 1}, {Num: 2}}},
	{Column: "x", Edges: sqlrewrite.DoubleEdges([]float64{0, 1000, 2000, 5000})},
}

func groupedUnitBound(k, g int64, salt int) *sqlrewrite.UnitBound {
	u := unitBound(k, salt)
	u.Groups, u.MaxGroups = unitGroupDims, g
	return u
}

// TestGroupedUnitBoundingOnDatabases checks on SQLite, PostgreSQL and
// MariaDB that the grouped bounding keeps of every unit at most g of its
// groups, exactly min(g, its groups), and in each kept group exactly
// min(k, its rows there); that removing one unit leaves every other unit's
// kept rows as they were; that Within reads one group of the same bounded
// rows; and that the grouped summary counts agree with those rows.
func TestGroupedUnitBoundingOnDatabases(t *testing.T) {
	for _, b := range doubleBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			rows := unitRows()
			loadUnitRows(t, db, b.dialect, b.double, "dp_gunits", rows)
			var without []unitRow
			for _, r := range rows {
				if r.u != 7 {
					without = append(without, r)
				}
			}
			loadUnitRows(t, db, b.dialect, b.double, "dp_gunits_neighbour", without)
			type cell struct{ unit, f int64 }
			for _, filter := range [][]sqlrewrite.Condition{nil, {{Column: "x", Range: &sqlrewrite.Range{HasLower: true, Lower: 300}}}} {
				available := map[cell]int64{}
				groupsOf := map[int64]map[int64]bool{}
				for _, r := range rows {
					if r.u == 0 || len(filter) > 0 && r.x < 300 {
						continue
					}
					available[cell{r.u, int64(r.f)}]++
					if groupsOf[r.u] == nil {
						groupsOf[r.u] = map[int64]bool{}
					}
					groupsOf[r.u][int64(r.f)] = true
				}
				for _, k := range []int64{1, 2, 30} {
					for _, g := range []int64{1, 2, 3} {
						for salt := range 2 {
							u := groupedUnitBound(k, g, salt)
							kept := keptValues(t, db, b.dialect, "dp_gunits", filter, u)
							perCell := map[cell]int64{}
							keptGroups := map[int64]map[int64]bool{}
							for _, x := range kept {
								unit, f := int64(x)/100, int64(x)%100%3
								if x < 0 {
									t.Fatalf("kept a row with a NULL unit (%v)", x)
								}
								perCell[cell{unit, f}]++
								if keptGroups[unit] == nil {
									keptGroups[unit] = map[int64]bool{}
								}
								keptGroups[unit][f] = true
							}
							for unit, groups := range groupsOf {
								if int64(len(keptGroups[unit])) != min(g, int64(len(groups))) {
									t.Errorf("k=%d g=%d salt %d: unit %d kept %d of its %d groups", k, g, salt, unit, len(keptGroups[unit]), len(groups))
								}
							}
							for c, n := range perCell {
								if n != min(k, available[c]) {
									t.Errorf("k=%d g=%d salt %d: unit %d group f=%d kept %d of %d rows", k, g, salt, c.unit, c.f, n, available[c])
								}
							}
							// Removing unit 7 changes nothing else.
							neighbour := keptValues(t, db, b.dialect, "dp_gunits_neighbour", filter, u)
							rest := slices.DeleteFunc(slices.Clone(kept), func(x float64) bool { return int64(x)/100 == 7 })
							if !slices.Equal(rest, neighbour) {
								t.Errorf("k=%d g=%d salt %d: removing unit 7 changed other units' rows", k, g, salt)
							}
							// Within reads one group of the same bounded rows.
							one := *u
							one.Within = []sqlrewrite.Condition{{Column: "f", In: []sqlrewrite.Value{{Num: 1}}}}
							got := keptValues(t, db, b.dialect, "dp_gunits", filter, &one)
							want := slices.DeleteFunc(slices.Clone(kept), func(x float64) bool { return int64(x)%100%3 != 1 })
							if !slices.Equal(got, want) {
								t.Errorf("k=%d g=%d salt %d: Within f=1 read %d rows, the bound keeps %d there", k, g, salt, len(got), len(want))
							}
							// The grouped summary counts the same rows per cell.
							gf := sqlrewrite.Fetch{Table: "dp_gunits", Filter: filter, Unit: u, Grouped: &sqlrewrite.GroupedSummary{
								Dims: unitGroupDims, Terms: []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}}}
							q, args, err := sqlrewrite.Render(gf, b.dialect)
							if err != nil {
								t.Fatal(err)
							}
							total := groupedCountTotal(t, db, q, args)
							if total != int64(len(kept)) {
								t.Errorf("k=%d g=%d salt %d: grouped summary counts %d rows, the bound keeps %d", k, g, salt, total, len(kept))
							}
						}
					}
				}
			}
		})
	}
}

// groupedCountTotal runs a grouped count fetch (k0, k1, count) and returns
// the total count.
func groupedCountTotal(t *testing.T, db *sql.DB, q string, args []any) int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var k0, k1, n int64
		if err := rows.Scan(&k0, &k1, &n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
