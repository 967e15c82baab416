package exec

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestUnitTableManyReleasedKeys groups a unit table by a private text key
// whose selection releases 25,000 values, on every backend: the first
// planner.MaxGroups of them are answered (the cut is post-processing of
// the released set), their fetches bounded by the key itself
// (groupedScope), not by a CASE of the values (rendered three times with
// a placeholder each, the CASE of every released value needed 75,000
// placeholders before the cap, beyond the backends' 65,535, and the
// statement failed after it was charged). Each value is held by units
// units of two rows each (one row per unit is read): every value is
// released (each is 20 noise scales above the threshold) with a count of
// about units, and the answered counts add up to their units, within the
// noise.
func TestUnitTableManyReleasedKeys(t *testing.T) {
	const keys = 25000
	for _, c := range []struct {
		name    string
		open    func(t *testing.T) *sql.DB
		dialect sqlrewrite.Dialect
	}{
		{"sqlite", func(t *testing.T) *sql.DB { return testdb.SQLite(t) }, sqlrewrite.SQLite},
		{"postgres", func(t *testing.T) *sql.DB { return testdb.Postgres(t) }, sqlrewrite.PostgreSQL},
		{"mariadb", func(t *testing.T) *sql.DB { return testdb.MySQL(t) }, sqlrewrite.MySQL},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := c.open(t)
			lo, hi := 0.0, 100.0
			cat := &catalog.Config{Tables: []catalog.Table{{Name: "p", Source: "p", PrivacyUnit: "person", MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1,
				Columns: []catalog.Column{
					{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
					{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi},
				}}}}
			qp := planGrouped(t, cat, "SELECT name, COUNT(*) FROM p GROUP BY name", 40)
			units := int(qp.Selection.Threshold) + int(math.Ceil(20*qp.Selection.Scale()))
			textType, realType := "TEXT", "DOUBLE PRECISION"
			if c.dialect == sqlrewrite.MySQL {
				textType, realType = "VARCHAR(20)", "DOUBLE"
			}
			if _, err := db.Exec("CREATE TABLE p (person BIGINT, name " + textType + ", v " + realType + ")"); err != nil {
				t.Fatal(err)
			}
			// Unit u = k·units + j holds two rows at key k.
			var rows []string
			flush := func() {
				if _, err := db.Exec("INSERT INTO p (person, name, v) VALUES " + strings.Join(rows, ", ")); err != nil {
					t.Fatal(err)
				}
				rows = rows[:0]
			}
			for k := range keys {
				for j := range units {
					u := k*units + j
					rows = append(rows, fmt.Sprintf("(%d, 'key%05d', %d)", u, k, u%100), fmt.Sprintf("(%d, 'key%05d', %d)", u, k, (u+1)%100))
				}
				if len(rows) >= 4000 {
					flush()
				}
			}
			if len(rows) > 0 {
				flush()
			}
			e := newGroupedExecutor(t, backend.New(db, c.dialect, nil))
			res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{25}))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != planner.MaxGroups {
				t.Fatalf("answered %d keys, want the first %d of the %d released", len(res.Rows), planner.MaxGroups, keys)
			}
			var total float64
			for _, row := range res.Rows {
				n, ok := row[1].(float64)
				if !ok {
					if i, isInt := row[1].(int64); isInt {
						n, ok = float64(i), true
					}
				}
				if !ok || math.Abs(n-float64(units)) > 20*qp.Selection.Scale()+1 {
					t.Fatalf("row %v: count not a number near %d", row, units)
				}
				total += n
			}
			want := float64(planner.MaxGroups * units) // every unit keeps one of its two rows
			if math.Abs(total-want) > 0.02*want {
				t.Errorf("counts add up to %g, want %g (within 2%%)", total, want)
			}
		})
	}
}
