package main

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/wire"
)

// TestUnitSynopsesOnEveryBackend serves demo.Visits from SQLite,
// PostgreSQL and MariaDB as a table whose privacy unit is person_id (at
// most 5 rows per person) with a DAWA histogram synopsis on age, through
// the real proxy: range counts are answered from a synopsis built once at
// ε = 5 per person over the bounded histogram (each person keeps at most 5
// rows; age is a person's own, so a person in the range contributes
// min(m, 5) rows), later range counts and a FLOOR histogram are free, and
// EXPLAIN and SHOW WARNINGS state the unit, k and the L1 sensitivity.
// Interactive counts (unitInteractive) run on the same bounded rows.
func TestUnitSynopsesOnEveryBackend(t *testing.T) {
	rows := demo.Visits(unitsSeed)
	const k = 5
	perPerson := map[int]int{}
	age := map[int]int{}
	for _, r := range rows {
		perPerson[r.PersonID]++
		age[r.PersonID] = r.Age
	}
	bounded := func(lo, hi int) float64 {
		n := 0
		for id, m := range perPerson {
			if age[id] >= lo && age[id] <= hi {
				n += min(m, k)
			}
		}
		return float64(n)
	}
	for _, b := range visitsBackends {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.load(t, "visits_unit_syn", rows)
			dir := t.TempDir()
			config := filepath.Join(dir, "dpproxy.yaml")
			yaml := fmt.Sprintf(`
backend: {driver: %s, dsn: %q}
ledger: {driver: sqlite, dsn: %q}
privacy: {default_epsilon: 1, max_epsilon: 10}
users:
  - {name: carol, password_hash: %q, epsilon: 100, delta: 1.0e-5}
tables:
  - name: visits
    source: visits_unit_syn
    epsilon: 50
    privacy_unit: person_id
    max_rows_per_unit: %d
    columns:
      - {name: age, type: integer, lower: 0, upper: 100, histogram: {epsilon: 5, mechanism: dawa}}
      - {name: spend, type: real, lower: 0, upper: %d}
  - name: visits_i
    source: visits_unit_syn
    epsilon: 50
    privacy_unit: person_id
    max_rows_per_unit: %d
    columns: [{name: age, type: integer, lower: 0, upper: 100}]
    interactive: {columns: [{name: age, edges: [0, 18, 30, 45, 65, 101]}], epsilon: 1, alpha: 0.05}
  - name: visits_mm
    source: visits_unit_syn
    epsilon: 50
    privacy_unit: person_id
    max_rows_per_unit: %d
    columns: [{name: age, type: integer, lower: 0, upper: 100}]
    interactive: {columns: [{name: age, edges: [0, 18, 30, 45, 65, 101]}], epsilon: 5, alpha: 0.3, mechanism: median}
`, b.driver, dsn, filepath.Join(dir, "ledger.db"), wire.FormatNativePasswordHash(wire.NativePasswordHash("carol-pw")), k, demo.VisitsSpendUpper, k, k)
			if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startProxy(t, dir, nil, "--config", config)
			db := p.connect(t, "carol", "carol-pw")
			conn, err := db.Conn(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			count := func(q string) float64 {
				t.Helper()
				var v float64
				if err := conn.QueryRowContext(t.Context(), q).Scan(&v); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				return v
			}
			// EXPLAIN before the build: the unit, k and the sensitivity.
			text := explainRows(t, conn, "EXPLAIN SELECT COUNT(*) FROM visits WHERE age BETWEEN 30 AND 50")
			for _, want := range []string{"protects each person_id at epsilon = 5", "≤ 5 rows per person_id", "L1 sensitivity 5", "built at epsilon/5 per row"} {
				if !strings.Contains(text, want) {
					t.Errorf("EXPLAIN lacks %q:\n%s", want, text)
				}
			}
			// The first range count builds the synopsis at ε = 5 per person:
			// DAWA at 1 per row (stage 2 at 0.75 per row). The whole domain
			// is the tree's root total (noise of scale about 2·7/0.75 ≈ 19
			// in each of few nodes): within ±300 of the bounded count,
			// which is far from the unbounded one (all rows).
			all := count("SELECT COUNT(*) FROM visits WHERE age BETWEEN 0 AND 100")
			ws := warnings(t, conn)
			t.Logf("whole-domain count from the synopsis: %v; bounded %v, all rows %d; warnings %q", all, bounded(0, 100), len(rows), ws)
			if math.Abs(all-bounded(0, 100)) > 300 {
				t.Errorf("whole-domain count %v, want the bounded count %v ± 300 (all rows: %d)", all, bounded(0, 100), len(rows))
			}
			if len(ws) == 0 || !strings.Contains(ws[0], "epsilon=5 delta=0 spent by this statement") ||
				!strings.Contains(ws[0], "protects each person_id at epsilon=5") || !strings.Contains(ws[0], "L1 sensitivity 5") {
				t.Errorf("warnings of the build do not state the unit, k and ε: %q", ws)
			}
			// Later range counts are free; DAWA's partition may spread a
			// bucket's total over the range's ends, hence the wider margin.
			mid := count("SELECT COUNT(*) FROM visits WHERE age BETWEEN 30 AND 50")
			ws = warnings(t, conn)
			t.Logf("ages 30..50: %v; bounded %v", mid, bounded(30, 50))
			if math.Abs(mid-bounded(30, 50)) > 500 {
				t.Errorf("range count %v, want %v ± 500", mid, bounded(30, 50))
			}
			if len(ws) == 0 || !strings.Contains(ws[0], "epsilon=0 delta=0 spent by this statement") || !strings.Contains(ws[0], "no budget spent") {
				t.Errorf("a later range count spent budget: %q", ws)
			}
			res, err := conn.QueryContext(t.Context(), "SELECT FLOOR(age / 25) * 25 AS b, COUNT(*) FROM visits GROUP BY b ORDER BY b")
			if err != nil {
				t.Fatal(err)
			}
			var total float64
			for res.Next() {
				var bucket, n float64
				if err := res.Scan(&bucket, &n); err != nil {
					t.Fatal(err)
				}
				total += n
			}
			res.Close()
			if math.Abs(total-bounded(0, 100)) > 600 {
				t.Errorf("histogram total %v, want %v ± 600", total, bounded(0, 100))
			}
			unitInteractive(t, conn, count, bounded)
		})
	}
}

// unitInteractive runs interactive counts on the unit tables visits_i
// (the rule's choice at ε = 1 per person: the noisy histogram over X) and
// visits_mm (the Median Mechanism, forced, at ε = 5 per person and
// α = 0.3): both count the rows bounded to 5 per person, which the
// whole-domain count tells apart from all rows (2650 against 5657 on
// seed 13), EXPLAIN and the warnings state the unit, k and the
// sensitivity, and a repeated count is free.
func unitInteractive(t *testing.T, conn *sql.Conn, count func(string) float64, bounded func(lo, hi int) float64) {
	t.Helper()
	for _, tc := range []struct {
		table, mechanism string
		eps              string
		margin           float64
	}{
		// visits_i: 5 cells of discrete Laplace noise of scale 1/0.194 ≈ 5.2
		// (ε' = 0.97 per person over k = 5): ±150 is about 13 scales of
		// their sum. visits_mm: n̂ has noise of scale 1/0.03 ≈ 33 (ε_n per
		// row) and an easy answer is within α·n̂ ≈ 800 of the count: ±1500
		// still tells the bounded count from all rows.
		{"visits_i", "noisy-histogram", "1", 150},
		{"visits_mm", "median-mechanism", "5", 1500},
	} {
		text := explainRows(t, conn, "EXPLAIN SELECT COUNT(*) FROM "+tc.table+" WHERE age < 18 OR age >= 65")
		for _, want := range []string{"protects each person_id at epsilon = " + tc.eps, "keeps ≤ 5 rows per person_id", "sensitivity 5", "epsilon/5 = "} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: EXPLAIN lacks %q:\n%s", tc.table, want, text)
			}
		}
		all := count("SELECT COUNT(*) FROM " + tc.table + " WHERE age < 45 OR age >= 45")
		ws := warnings(t, conn)
		t.Logf("%s: whole-domain interactive count %v (bounded %v); warnings %q", tc.table, all, bounded(0, 100), ws)
		if math.Abs(all-bounded(0, 100)) > tc.margin {
			t.Errorf("%s: whole-domain count %v, want the bounded %v ± %v", tc.table, all, bounded(0, 100), tc.margin)
		}
		if len(ws) == 0 || !strings.Contains(ws[0], "mechanism="+tc.mechanism) || !strings.Contains(ws[0], "epsilon="+tc.eps+" delta=0 spent by this statement to create") ||
			!strings.Contains(ws[0], "protects each person_id at epsilon="+tc.eps) || !strings.Contains(ws[0], "sensitivity 5 per count") {
			t.Errorf("%s: warnings %q", tc.table, ws)
		}
		tails := count("SELECT COUNT(*) FROM " + tc.table + " WHERE age < 18 OR age >= 65")
		if want := bounded(0, 17) + bounded(65, 100); math.Abs(tails-want) > tc.margin {
			t.Errorf("%s: count of ages < 18 or ≥ 65 %v, want %v ± %v", tc.table, tails, want, tc.margin)
		}
		if again := count("SELECT COUNT(*) FROM " + tc.table + " WHERE age < 18 OR age >= 65"); again != tails {
			t.Errorf("%s: a repeated count %v differs from %v", tc.table, again, tails)
		}
		if ws := warnings(t, conn); len(ws) == 0 || !strings.Contains(ws[0], "epsilon=0 delta=0 spent by this statement") {
			t.Errorf("%s: a repeated count spent budget: %q", tc.table, ws)
		}
	}
}

// explainRows returns the rows of an EXPLAIN statement, cells joined by
// " | ", run on a connection or a pool.
func explainRows(t *testing.T, conn interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) string {
	t.Helper()
	res, err := conn.QueryContext(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer res.Close()
	var text strings.Builder
	cols, _ := res.Columns()
	for res.Next() {
		cells := make([]sql.NullString, len(cols))
		dest := make([]any, len(cols))
		for i := range cells {
			dest[i] = &cells[i]
		}
		if err := res.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, c := range cells {
			text.WriteString(c.String + " | ")
		}
		text.WriteString("\n")
	}
	return text.String()
}
