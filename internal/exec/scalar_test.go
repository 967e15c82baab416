package exec

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// scalarCatalog declares t(k, x), k in {0..4} (bounds [0, 9]) and x in
// [0, 100], and u(y), y in [0, 10], a second table over its own relation.
func scalarCatalog() *catalog.Config {
	lo, hiK, hiX, hiY := 0.0, 9.0, 100.0, 10.0
	return &catalog.Config{Tables: []catalog.Table{
		{Name: "t", Source: "t", Columns: []catalog.Column{
			{Name: "k", Source: "k", Type: catalog.Integer, Lower: &lo, Upper: &hiK, Values: []string{"0", "1", "2", "3", "4"}},
			{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hiX},
		}},
		{Name: "u", Source: "u", Columns: []catalog.Column{
			{Name: "y", Source: "y", Type: catalog.Real, Lower: &lo, Upper: &hiY},
		}},
	}}
}

// scalarRows are the rows of t: k = i mod 5 and x = (37 i) mod 101 for i
// < 2000 (x over [0, 100] evenly), and of u: y = i mod 11 for i < 500.
func scalarRows() (t [][2]float64, u []float64) {
	for i := range 2000 {
		t = append(t, [2]float64{float64(i % 5), float64((37 * i) % 101)})
	}
	for i := range 500 {
		u = append(u, float64(i%11))
	}
	return t, u
}

// loadScalarTables creates and fills t and u on db.
func loadScalarTables(t *testing.T, exec func(string) error) {
	t.Helper()
	rowsT, rowsU := scalarRows()
	var vt, vu []string
	for _, r := range rowsT {
		vt = append(vt, fmt.Sprintf("(%g, %g)", r[0], r[1]))
	}
	for _, y := range rowsU {
		vu = append(vu, fmt.Sprintf("(%g)", y))
	}
	for _, s := range []string{
		"CREATE TABLE t (k INTEGER, x DOUBLE PRECISION)", "INSERT INTO t (k, x) VALUES " + strings.Join(vt, ", "),
		"CREATE TABLE u (y DOUBLE PRECISION)", "INSERT INTO u (y) VALUES " + strings.Join(vu, ", "),
	} {
		if err := exec(s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
}

// TestScalarSubqueriesTrackTheTruth runs statements with scalar
// subqueries in the select list, HAVING and beside GROUP BY on SQLite,
// PostgreSQL and MariaDB at a large ε: each answer is within a small
// tolerance of the truth, the analyst is charged the statement's ε
// exactly once, in one reservation, and each table the statement reads
// is charged too. It failed before scalar subqueries were answered (the
// parser refused them, 1235).
func TestScalarSubqueriesTrackTheTruth(t *testing.T) {
	cat := scalarCatalog()
	rowsT, rowsU := scalarRows()
	var n1, sumX, sumY float64
	sumK := map[float64]float64{}
	countK := map[float64]float64{}
	for _, r := range rowsT {
		if r[0] == 1 {
			n1++
		}
		sumX += r[1]
		sumK[r[0]] += r[1]
		countK[r[0]]++
	}
	for _, y := range rowsU {
		sumY += y
	}
	n := float64(len(rowsT))
	meanX, meanY := sumX/n, sumY/float64(len(rowsU))
	const eps = 100.0
	cases := []scalarCase{
		{"SELECT COUNT(*) / (SELECT COUNT(*) FROM t) FROM t WHERE k = 1", [][]float64{{n1 / n}}, 0.001, []string{"t"}},
		{"SELECT (SELECT AVG(x) FROM t)", [][]float64{{meanX}}, 0.05, []string{"t"}},
		{"SELECT (SELECT AVG(x) FROM t) - (SELECT AVG(y) FROM u) AS gap", [][]float64{{meanX - meanY}}, 0.05, []string{"t", "u"}},
		{"SELECT k, AVG(x) - (SELECT AVG(x) FROM t) FROM t GROUP BY k", [][]float64{
			{0, sumK[0]/countK[0] - meanX}, {1, sumK[1]/countK[1] - meanX}, {2, sumK[2]/countK[2] - meanX},
			{3, sumK[3]/countK[3] - meanX}, {4, sumK[4]/countK[4] - meanX}}, 0.1, []string{"t"}},
		{"SELECT k, COUNT(*) FROM t GROUP BY k HAVING COUNT(*) > (SELECT COUNT(*) / 10 FROM u) ORDER BY k LIMIT 2", [][]float64{{0, 400}, {1, 400}}, 1, []string{"t", "u"}},
		{"SELECT COUNT(*) + (SELECT COUNT(*) + (SELECT COUNT(*) FROM u) FROM t) FROM t WHERE k = 1", [][]float64{{n1 + n + float64(len(rowsU))}}, 1, []string{"t", "u"}},
		{"SELECT share * 2 FROM (SELECT COUNT(*) / (SELECT COUNT(*) FROM t) AS share FROM t WHERE k = 1) AS d", [][]float64{{2 * n1 / n}}, 0.002, []string{"t"}},
		// A subquery whose WHERE selects no row whatever the data is
		// NULL (AVG over no row), so is the sum; the COUNT is released
		// at the whole ε. NaN stands for NULL.
		{"SELECT COUNT(*), COUNT(*) + (SELECT AVG(y) FROM u WHERE y > 5 AND y < 3) FROM t", [][]float64{{n, math.NaN()}}, 1, []string{"t"}},
	}
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t)
			loadScalarTables(t, func(s string) error { _, err := db.Exec(s); return err })
			runScalarCases(t, newGroupedExecutor(t, backend.New(db, b.dialect, nil)), cat, eps, cases)
		})
	}
}

// scalarCase is a statement with scalar subqueries: its true rows (NaN
// for NULL), the tolerance of each number, and the tables it reads.
type scalarCase struct {
	sql    string
	want   [][]float64
	tol    float64
	tables []string
}

// runScalarCases runs each case on e at ε = eps and checks that the
// analyst was charged eps once, in one reservation, that every table the
// case reads was charged eps, and its rows.
func runScalarCases(t *testing.T, e *Executor, cat *catalog.Config, eps float64, cases []scalarCase) {
	t.Helper()
	ctx := context.Background()
	for i, c := range cases {
		qp := planScalar(t, cat, c.sql, eps, 0)
		before := remainingOf(t, e, "user:a")
		tables := map[string]budget.Cost{}
		for _, name := range c.tables {
			tables[name] = remainingTable(t, e, name)
		}
		history := len(historyOf(t, e, "user:a"))
		res, err := e.RunQuery(ctx, "a", qp, rand.NewChaCha8([32]byte{byte(i)}))
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if spent := before.Epsilon - remainingOf(t, e, "user:a").Epsilon; math.Abs(spent-eps) > 1e-9 {
			t.Errorf("%s: the analyst was charged ε = %g, want the statement's %g", c.sql, spent, eps)
		}
		if got := len(historyOf(t, e, "user:a")); got != history+1 {
			t.Errorf("%s: %d reservations, want one", c.sql, got-history)
		}
		for name, b := range tables {
			if spent := b.Epsilon - remainingTable(t, e, name).Epsilon; math.Abs(spent-eps) > 1e-9 {
				t.Errorf("%s: table %s was charged ε = %g, want the statement's %g", c.sql, name, spent, eps)
			}
		}
		if len(res.Rows) != len(c.want) {
			t.Fatalf("%s: %d rows %v, want %d", c.sql, len(res.Rows), res.Rows, len(c.want))
		}
		for r, row := range res.Rows {
			for j, v := range row {
				if math.IsNaN(c.want[r][j]) {
					if v != nil {
						t.Errorf("%s: row %d column %d is %v, want NULL", c.sql, r, j, v)
					}
					continue
				}
				got, ok := number(v)
				if !ok || math.Abs(got-c.want[r][j]) > c.tol {
					t.Errorf("%s: row %d column %d is %v, want %g ± %g", c.sql, r, j, v, c.want[r][j], c.tol)
				}
			}
		}
	}
}

// planScalar parses and plans a statement with scalar subqueries.
func planScalar(t testing.TB, cat *catalog.Config, sql string, eps, delta float64) *planner.QueryPlan {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	q, ok := st.(*sqlrewrite.Query)
	if !ok || len(q.Scalars) == 0 {
		t.Fatalf("%s: parsed as %T, not a Query with scalar subqueries", sql, st)
	}
	qp, err := planner.New(cat).PlanQuery(q, planner.Settings{Epsilon: eps, Delta: delta, Mechanism: "auto"})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return qp
}

func remainingOf(t testing.TB, e *Executor, account string) budget.Cost {
	t.Helper()
	c, err := e.ledger.Remaining(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// remainingTable is what the ledger has left of a table's account,
// under a limit of 10^6, so that what a statement spends shows.
func remainingTable(t testing.TB, e *Executor, table string) budget.Cost {
	t.Helper()
	c, err := e.ledger.RemainingUnder(context.Background(), catalog.TableAccount(table), budget.Cost{Epsilon: 1e6, Delta: 1})
	if err != nil {
		return budget.Cost{Epsilon: 1e6, Delta: 1} // not charged yet
	}
	return c
}

func historyOf(t testing.TB, e *Executor, account string) []budget.Entry {
	t.Helper()
	h, err := e.ledger.History(context.Background(), account, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// number reads a result cell as a float64.
func number(v any) (float64, bool) {
	if s, ok := v.(interface{ MySQLText() string }); ok {
		v = s.MySQLText()
	}
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case string:
		var f float64
		_, err := fmt.Sscan(v, &f)
		return f, err == nil
	case nil:
		return 0, false
	}
	var f float64
	_, err := fmt.Sscan(fmt.Sprint(v), &f) // a planner.Decimal
	return f, err == nil
}

// TestNestedScalarNotesNameTheirPath: the notes of nested subqueries name
// each by its path (#1.1 is the first subquery of the first) with its
// text once, cut short, so that their size grows with the number of
// subqueries, not with the statement's length times its nesting. Before,
// each level prefixed every inner note with its own whole text: a
// statement 800 levels deep grew the proxy past 14 GB.
func TestNestedScalarNotesNameTheirPath(t *testing.T) {
	cat := scalarCatalog()
	db := testdb.SQLite(t)
	loadScalarTables(t, func(s string) error { _, err := db.Exec(s); return err })
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	const depth = 8
	sql := strings.Repeat("SELECT COUNT(*) + (", depth) + "SELECT COUNT(*) FROM t WHERE x > 1" + strings.Repeat(") FROM t WHERE x > 1", depth)
	qp := planScalar(t, cat, sql, 10, 0)
	res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{}))
	if err != nil {
		t.Fatal(err)
	}
	innermost := "subquery #1" + strings.Repeat(".1", depth-1) + " (SELECT COUNT(*) FROM t WHERE x > 1): "
	var found bool
	for _, w := range res.Warnings {
		if strings.HasPrefix(w.Message, innermost) {
			found = true
		}
		if strings.Count(w.Message, "subquery #") > 1 || len(w.Message) > 1000 {
			t.Errorf("a note repeats enclosing subqueries (%d bytes): %.300s", len(w.Message), w.Message)
		}
	}
	if !found {
		t.Errorf("no note starts with %q: %v", innermost, res.Warnings)
	}
}
