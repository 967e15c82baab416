package exec

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// groupedRow is one row of the grouped fixture's table t(k, x, s); nil
// fields are NULL.
type groupedRow struct {
	k, x *float64
	s    *string
}

func (r groupedRow) sql() string {
	cell := func(v *float64) string {
		if v == nil {
			return "NULL"
		}
		return fmt.Sprint(*v)
	}
	s := "NULL"
	if r.s != nil {
		s = "'" + *r.s + "'"
	}
	return fmt.Sprintf("(%s, %s, %s)", cell(r.k), cell(r.x), s)
}

// randomGroupedRow draws a row with NULLs, undeclared values (k = 7, s =
// 'z') and values outside the bounds (x < 0, x > 100).
func randomGroupedRow(r *rand.Rand) groupedRow {
	var row groupedRow
	if r.IntN(8) > 0 {
		k := float64(r.IntN(8))
		row.k = &k
	}
	if r.IntN(8) > 0 {
		x := float64(r.IntN(140)) - 20
		row.x = &x
	}
	if r.IntN(8) > 0 {
		s := []string{"a", "b", "z"}[r.IntN(3)]
		row.s = &s
	}
	return row
}

// groupedCatalog declares k in {0..4} (bounds [0, 9]), x in [0, 100] and
// s in {a, b, c}: no row ever has s = 'c', so its groups are empty.
func groupedCatalog() *catalog.Config {
	lo, hiK, hiX := 0.0, 9.0, 100.0
	return &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "k", Source: "k", Type: catalog.Integer, Lower: &lo, Upper: &hiK, Values: []string{"0", "1", "2", "3", "4"}},
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hiX},
		{Name: "s", Source: "s", Type: catalog.Text, Values: []string{"a", "b", "c"}},
	}}}}
}

// loadGrouped replaces the rows of t.
func loadGrouped(t *testing.T, back *backend.Backend, rows []groupedRow) {
	t.Helper()
	db := back.DB()
	if _, err := db.Exec("DROP TABLE IF EXISTS t"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (k INTEGER, x REAL, s TEXT)"); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		return
	}
	values := make([]string, len(rows))
	for i, r := range rows {
		values[i] = r.sql()
	}
	if _, err := db.Exec("INSERT INTO t (k, x, s) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
}

func planGrouped(t testing.TB, cat *catalog.Config, q string, eps float64) *planner.QueryPlan {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	query, ok := st.(*sqlrewrite.Query)
	if !ok {
		t.Fatalf("%s: parsed as %T, not a Query", q, st)
	}
	qp, err := planner.New(cat).PlanQuery(query, planner.Settings{Epsilon: eps, Delta: 1e-6, Mechanism: "auto"})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return qp
}

func newGroupedExecutor(t testing.TB, back *backend.Backend) *Executor {
	t.Helper()
	l, err := budget.Open(context.Background(), testdb.SQLite(t), budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(context.Background(), "user:a", budget.Cost{Epsilon: 1000, Delta: 0.5}); err != nil {
		t.Fatal(err)
	}
	e := New(back, l, nil)
	t.Cleanup(e.Wait) // before the ledger closes: commits are asynchronous
	return e
}

// TestGroupedOutputGroupsNeverDependOnData runs one grouped statement on
// a random table and on an empty one: both answer every declared group
// (5 values of k × 3 of s, bucket keys of x over its bounds), in the same
// order, the groups of s = 'c' (no row has it) included; the budget is
// charged the statement's ε once, not once per group. Every aggregate is
// asked, so that no mechanism may fail on an empty group (a failure would
// depend on the data). It failed before
// GROUP BY over declared domains existed (the statement was refused).
func TestGroupedOutputGroupsNeverDependOnData(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	r := rand.New(rand.NewChaCha8([32]byte{3}))
	var rows []groupedRow
	for range 300 {
		rows = append(rows, randomGroupedRow(r))
	}
	const q = "SELECT s, k, FLOOR(x / 50) * 50 AS b, COUNT(*), COUNT(x), SUM(x), AVG(x), VARIANCE(x), STDDEV_SAMP(x), " +
		"MEDIAN(x), PERCENTILE_CONT(x, 0.9), IQR(x), MIN(x), MAX(x) FROM t GROUP BY s, k, b"
	var keys [2][][]any
	for i, data := range [][]groupedRow{rows, nil} {
		loadGrouped(t, back, data)
		qp := planGrouped(t, cat, q, 1)
		before, err := e.ledger.Remaining(context.Background(), "user:a")
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(i)}))
		if err != nil {
			t.Fatal(err, errors.Unwrap(err))
		}
		after, err := e.ledger.Remaining(context.Background(), "user:a")
		if err != nil {
			t.Fatal(err)
		}
		if spent := before.Epsilon - after.Epsilon; math.Abs(spent-1) > 1e-9 {
			t.Errorf("dataset %d: spent ε = %g, want the statement's 1 once", i, spent)
		}
		if len(res.Rows) != 3*5*3 {
			t.Fatalf("dataset %d: %d rows, want 45 (3 values of s × 5 of k × 3 buckets of x)", i, len(res.Rows))
		}
		for _, row := range res.Rows {
			keys[i] = append(keys[i], row[:3])
		}
	}
	if fmt.Sprint(keys[0]) != fmt.Sprint(keys[1]) {
		t.Errorf("the groups depend on the data:\n%v\n%v", keys[0], keys[1])
	}
	if !slices.ContainsFunc(keys[0], func(k []any) bool { return k[0] == "c" }) {
		t.Errorf("the empty declared group s = 'c' is missing")
	}
}

// TestGroupFiltersSelectTheGroupedFetchRows checks that the per-group
// filters (used by window fetches) select exactly the rows the grouped
// summary fetch puts in each group, NULLs, undeclared values and values
// outside the bounds included.
func TestGroupFiltersSelectTheGroupedFetchRows(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	r := rand.New(rand.NewChaCha8([32]byte{4}))
	var rows []groupedRow
	for range 400 {
		rows = append(rows, randomGroupedRow(r))
	}
	loadGrouped(t, back, rows)
	qp := planGrouped(t, cat, "SELECT s, FLOOR(x / 30) * 30 AS b, k, COUNT(*) FROM t WHERE k < 4 GROUP BY s, b, k", 1)
	ctx := context.Background()
	snap, err := back.Snapshot(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	grouped, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "t", Filter: qp.Base.Filter,
		Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for g := range qp.Groups {
		filter := append(append([]sqlrewrite.Condition(nil), qp.Base.Filter...), qp.GroupFilters[g]...)
		one, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Filter: filter, Summary: terms})
		if err != nil {
			t.Fatal(err)
		}
		if one[0] != grouped[g][0] {
			t.Errorf("group %v: filter counts %g rows, the grouped fetch %g", qp.Groups[g], one[0], grouped[g][0])
		}
		total += one[0]
	}
	if total == 0 {
		t.Fatal("no row in any group: the test has no power")
	}
}

// TestGroupedCountsAreParallelComposition is the exact privacy check of
// the grouped counts (rows, non-NULL values, distinct values). The release
// of group g is n_g + Z_g, Z_g discrete
// Laplace of scale β_g, independently, so the joint law's worst log-ratio
// between neighbours is exactly Σ_g |n_g - n'_g| / β_g (attained at
// outputs beyond both centres). For every neighbour of a random table
// (each row removed, and 200 random rows added, NULLs, undeclared values
// and out-of-bounds values included) it computes the counts of every
// group with the real grouped fetch and asserts the worst log-ratio is at
// most the statement's ε. Each β is that of the noise the planned release
// draws (releasedScale), so a release that draws less noise than its ε
// asks fails the check. Mutation: with every β cut by 25% the check must
// fail on some pair (and it does with ε·4/3 handed to the count's noise
// by the planner's laplace mechanism, for COUNT(DISTINCT x) alone too).
func TestGroupedCountsAreParallelComposition(t *testing.T) {
	const eps = 0.7
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	r := rand.New(rand.NewChaCha8([32]byte{5}))
	var rows []groupedRow
	for range 60 {
		rows = append(rows, randomGroupedRow(r))
	}
	qp := planGrouped(t, cat, "SELECT s, k, FLOOR(x / 25) * 25 AS b, COUNT(*), COUNT(x), COUNT(DISTINCT x) FROM t GROUP BY s, k, b", eps)
	var betas []float64
	for _, rel := range qp.Base.Releases {
		if rel.Stat.Kind != planner.StatCount && rel.Stat.Kind != planner.StatCountDistinct || rel.Mechanism.Name() != "laplace" {
			t.Fatalf("release %s by %s: the check covers Laplace counts only", rel.Stat, rel.Mechanism.Name())
		}
		betas = append(betas, releasedScale(t, rel))
	}
	byRows, where := summaryTerms(qp.Base)
	if len(byRows) != 1 {
		t.Fatalf("a row-level plan reads %d numbers of rows per unit", len(byRows))
	}
	var terms []sqlrewrite.SummaryTerm
	for _, terms = range byRows {
	}
	counts := func(data []groupedRow) [][]float64 {
		loadGrouped(t, back, data)
		snap, err := back.Snapshot(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		v, err := snap.GroupedSummary(context.Background(), sqlrewrite.Fetch{Table: "t",
			Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	worst := func(a, b [][]float64, cut float64) float64 {
		var sum float64
		for g := range a {
			for i, idx := range where {
				sum += math.Abs(a[g][idx[0]]-b[g][idx[0]]) / (betas[i] * cut)
			}
		}
		return sum
	}
	base := counts(rows)
	var neighbours [][]groupedRow
	for i := range rows {
		neighbours = append(neighbours, slices.Delete(slices.Clone(rows), i, i+1))
	}
	for range 200 {
		neighbours = append(neighbours, append(slices.Clone(rows), randomGroupedRow(r)))
	}
	var max, mutantMax float64
	for _, nb := range neighbours {
		other := counts(nb)
		max = math.Max(max, worst(base, other, 1))
		mutantMax = math.Max(mutantMax, worst(base, other, 0.75))
	}
	if max > eps*(1+1e-12) {
		t.Errorf("worst log-ratio %g > ε = %g", max, eps)
	}
	if max < eps*(1-1e-9) {
		t.Errorf("worst log-ratio %g < ε = %g: no neighbour pair reached a group, the check has no power", max, eps)
	}
	if !(mutantMax > eps) {
		t.Errorf("mutation: with the noise scale cut by 25%% the worst log-ratio %g should exceed ε = %g", mutantMax, eps)
	}
}

// releasedScale returns the scale of the discrete Laplace noise the count
// release rel draws, from one run of its mechanism on a count of 0.
func releasedScale(t *testing.T, rel *planner.Release) float64 {
	t.Helper()
	src := rand.NewChaCha8([32]byte{6})
	step, err := rel.Mechanism.Start(src, rel, []float64{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, done, est, err := step.Advance(context.Background(), src, nil)
	if err != nil || !done || est.Primitive == nil {
		t.Fatalf("release %s: done %v, primitive %v, %v", rel.Stat, done, est.Primitive, err)
	}
	return est.Primitive.Scale()
}

// TestPartitionSelectionReleasesOnlyFrequentKeys groups a table by a
// text column without a declared domain that allows partition selection:
// names with 1, 2 and 3 rows and names far above the threshold. Over 200
// seeded runs the rare names (released with probability at most δ each)
// never appear, the frequent ones always do (each fails with probability
// below e^-20), the output holds nothing but released keys in sorted
// order, and each run costs the statement's ε and δ once.
func TestPartitionSelectionReleasesOnlyFrequentKeys(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE p (name TEXT, v REAL)"); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{"rare1": 1, "rare2": 2, "rare3": 3, "ann": 400, "bob": 250, "cy": 300}
	var values []string
	for name, n := range counts {
		for i := range n {
			values = append(values, fmt.Sprintf("('%s', %d)", name, i%50))
		}
	}
	values = append(values, "(NULL, 1)")
	if _, err := db.Exec("INSERT INTO p (name, v) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "p", Source: "p", Columns: []catalog.Column{
		{Name: "name", Source: "name", Type: catalog.Text, PartitionSelection: true},
		{Name: "v", Source: "v", Type: catalog.Real, Lower: &lo, Upper: &hi},
	}}}}
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	qp := planGrouped(t, cat, "SELECT name, COUNT(*), AVG(v) FROM p GROUP BY name", 2)
	sel := qp.Selection
	if sel == nil {
		t.Fatal("not planned with partition selection")
	}
	// The frequent names are at least 20 noise scales above the threshold.
	if float64(sel.Threshold)+20*sel.Scale() > 250 {
		t.Fatalf("threshold %d, scale %g: the fixture's frequent names are too close to it", sel.Threshold, sel.Scale())
	}
	for run := range 200 {
		before, _ := e.ledger.Remaining(context.Background(), "user:a")
		res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{byte(run), byte(run >> 8), 9}))
		if err != nil {
			t.Fatal(err)
		}
		after, _ := e.ledger.Remaining(context.Background(), "user:a")
		if math.Abs(before.Epsilon-after.Epsilon-2) > 1e-9 || math.Abs(before.Delta-after.Delta-qp.Cost.Delta) > 1e-15 {
			t.Fatalf("run %d spent (%g, %g), want (2, %g)", run, before.Epsilon-after.Epsilon, before.Delta-after.Delta, qp.Cost.Delta)
		}
		var names []string
		for _, row := range res.Rows {
			names = append(names, row[0].(string))
		}
		if fmt.Sprint(names) != "[ann bob cy]" {
			t.Fatalf("run %d released %v, want [ann bob cy]", run, names)
		}
	}
}

// TestPartitionSelectionSkipsHostileKeys groups by an integer column that
// holds text and NaN-like junk in some rows (SQLite stores what it is
// given): those rows are in no group and the statement still answers,
// so an error never reveals them. It failed before the key-count fetch
// skipped such values (the statement errored).
func TestPartitionSelectionSkipsHostileKeys(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec("CREATE TABLE h (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	var values []string
	for range 300 {
		values = append(values, "(7)", "('abc')", "(X'00ff')")
	}
	if _, err := db.Exec("INSERT INTO h (id) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	lo, hi := 0.0, 10.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "h", Source: "h", Columns: []catalog.Column{
		{Name: "id", Source: "id", Type: catalog.Integer, Lower: &lo, Upper: &hi, PartitionSelection: true},
	}}}}
	e := newGroupedExecutor(t, backend.New(db, sqlrewrite.SQLite, nil))
	res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, "SELECT id, COUNT(*) FROM h GROUP BY id", 2), rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatalf("hostile keys turned into an error: %v", err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != int64(7) {
		t.Errorf("rows %v, want the one key 7", res.Rows)
	}
}

// TestConditionalAggregatesPerGroup answers aggregates with their own
// conditions per group (one part per condition, sharing ε) at a large ε
// and compares them with the exact values of the fixture: AVG(CASE WHEN
// k = 1 THEN x END), a range count on x (no histogram domain) and
// COUNT(*), for every declared s, the empty s = 'c' included; the
// statement costs its ε once.
func TestConditionalAggregatesPerGroup(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	r := rand.New(rand.NewChaCha8([32]byte{6}))
	var rows []groupedRow
	for range 2000 {
		rows = append(rows, randomGroupedRow(r))
	}
	loadGrouped(t, back, rows)
	qp := planGrouped(t, cat, "SELECT s, AVG(CASE WHEN k = 1 THEN x END) AS a, SUM(CASE WHEN x > 50 THEN 1 ELSE 0 END) AS hi, COUNT(*) AS n FROM t GROUP BY s", 90)
	if len(qp.Parts) != 3 {
		t.Fatalf("%d parts, want 3 (k = 1, x > 50, all rows)", len(qp.Parts))
	}
	before, _ := e.ledger.Remaining(context.Background(), "user:a")
	res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{2}))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := e.ledger.Remaining(context.Background(), "user:a")
	if spent := before.Epsilon - after.Epsilon; math.Abs(spent-90) > 1e-9 {
		t.Errorf("spent ε = %g, want 90 once", spent)
	}
	type truth struct{ sumX, nX, hi, n float64 }
	want := map[string]*truth{"a": {}, "b": {}, "c": {}}
	for _, row := range rows {
		if row.s == nil || want[*row.s] == nil {
			continue
		}
		w := want[*row.s]
		w.n++
		if row.x != nil && *row.x > 50 {
			w.hi++
		}
		if row.k != nil && *row.k == 1 && row.x != nil {
			w.sumX += math.Min(math.Max(*row.x, 0), 100)
			w.nX++
		}
	}
	if len(res.Rows) != 3 {
		t.Fatalf("rows %v, want one per declared s", res.Rows)
	}
	for _, row := range res.Rows {
		w := want[row[0].(string)]
		if got := float64(row[3].(int64)); math.Abs(got-w.n) > 2 {
			t.Errorf("s = %v: COUNT(*) %g, want %g", row[0], got, w.n)
		}
		if got := float64(row[2].(int64)); math.Abs(got-w.hi) > 2 {
			t.Errorf("s = %v: range count %g, want %g", row[0], got, w.hi)
		}
		if w.nX > 0 {
			if got, _ := row[1].(float64); math.Abs(got-w.sumX/w.nX) > 5 {
				t.Errorf("s = %v: conditional mean %v, want %g", row[0], row[1], w.sumX/w.nX)
			}
		}
	}
}

// TestResultColumnsHaveOneType checks that every output column holds one
// Go type across rows, that of its declared type (Result.Types): bucket
// keys of a fractional width (0, 0.5, 1, …), GREATEST of a noisy mean and
// an integer constant, and CASE of a string and a number. It failed when
// a column mixed int64 and float64.
func TestResultColumnsHaveOneType(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	r := rand.New(rand.NewChaCha8([32]byte{8}))
	var rows []groupedRow
	for range 200 {
		rows = append(rows, randomGroupedRow(r))
	}
	loadGrouped(t, back, rows)
	qp := planGrouped(t, cat, "SELECT FLOOR(x / 12.5) * 12.5 AS b, GREATEST(AVG(x), 30), CASE WHEN COUNT(*) > 5 THEN 'many' ELSE COUNT(*) END FROM t GROUP BY b", 1)
	res, err := e.RunQuery(context.Background(), "a", qp, rand.NewChaCha8([32]byte{3}))
	if err != nil {
		t.Fatal(err)
	}
	// The bucket of a real x is MariaDB's DOUBLE of 1 decimal.
	if got := fmt.Sprint(res.Types); got != "[DOUBLE(decimals=1) DOUBLE VARCHAR(21)]" {
		t.Errorf("column types %s, want [DOUBLE(decimals=1) DOUBLE VARCHAR(21)]", got)
	}
	for j := range res.Columns {
		types := map[string]bool{}
		for _, row := range res.Rows {
			if row[j] != nil {
				types[fmt.Sprintf("%T", row[j])] = true
			}
		}
		if len(types) > 1 {
			t.Errorf("column %s mixes %v", res.Columns[j], types)
		}
	}
}

// TestDeclaredTextGroupsUnderEquatingCollations: on columns whose
// collation equates the declared values 'a' and 'A' (SQLite's NOCASE, a
// nondeterministic ICU collation on PostgreSQL, MariaDB's default _ci),
// each group's filter selects exactly the rows the grouped fetch puts in
// its group (the first declared value that matches), so no row is read by
// two groups' releases, each of which spends the whole ε.
func TestDeclaredTextGroupsUnderEquatingCollations(t *testing.T) {
	lo, hi := 0.0, 100.0
	cat := &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: "t", Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Real, Lower: &lo, Upper: &hi},
		{Name: "s", Source: "s", Type: catalog.Text, Values: []string{"a", "A", "b"}},
	}}}}
	cases := []struct {
		name   string
		open   func(t *testing.T) (*backend.Backend, string)
		driver string
	}{
		{"sqlite NOCASE", func(t *testing.T) (*backend.Backend, string) {
			return backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil), "CREATE TABLE t (x REAL, s TEXT COLLATE NOCASE)"
		}, catalog.DriverSQLite},
		{"postgres ICU", func(t *testing.T) (*backend.Backend, string) {
			db := testdb.Postgres(t)
			if _, err := db.Exec("CREATE COLLATION IF NOT EXISTS dpproxy_test_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)"); err != nil {
				t.Fatal(err)
			}
			return backend.New(db, sqlrewrite.PostgreSQL, nil), "CREATE TABLE t (x DOUBLE PRECISION, s TEXT COLLATE dpproxy_test_ci)"
		}, catalog.DriverPostgres},
		{"mariadb _ci", func(t *testing.T) (*backend.Backend, string) {
			return backend.New(testdb.MySQL(t), sqlrewrite.MySQL, nil), "CREATE TABLE t (x DOUBLE, s VARCHAR(10) COLLATE utf8mb4_general_ci)"
		}, catalog.DriverMySQL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			back, create := c.open(t)
			db := back.DB()
			for _, s := range []string{create, "INSERT INTO t VALUES (10, 'a'), (20, 'a'), (30, 'A'), (40, 'b'), (50, 'B'), (60, 'c'), (70, NULL)"} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			cat := *cat
			cat.Backend.Driver = c.driver
			qp := planGrouped(t, &cat, "SELECT s, COUNT(*), MEDIAN(x) FROM t GROUP BY s", 1)
			ctx := context.Background()
			snap, err := back.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			terms := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
			grouped, err := snap.GroupedSummary(ctx, sqlrewrite.Fetch{Table: "t", Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
			if err != nil {
				t.Fatal(err)
			}
			total := 0.0
			for g := range qp.Groups {
				one, err := snap.Summary(ctx, sqlrewrite.Fetch{Table: "t", Filter: qp.GroupFilters[g], Summary: terms})
				if err != nil {
					t.Fatal(err)
				}
				if one[0] != grouped[g][0] {
					t.Errorf("group %v: its filter selects %g rows, the grouped fetch puts %g there", qp.Groups[g], one[0], grouped[g][0])
				}
				total += one[0]
			}
			// 'a', 'a', 'A' in the first group and 'b', 'B' in the third:
			// five rows, each in one group.
			if total != 5 {
				t.Errorf("the groups' filters select %g rows in all; want 5, each once", total)
			}
		})
	}
}

// TestGroupedGridSumsMatchPerGroupFetches: the exact grid sums of every
// group fetched at once (one GroupedGridSums query) equal each group's
// own GridSums fetch with its filter, NULLs, undeclared keys and values
// beyond the bounds included, on every backend; and a GROUP BY of AVG and
// VARIANCE then reads the data a constant number of times, not once per
// group.
func TestGroupedGridSumsMatchPerGroupFetches(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(testing.TB) *sql.DB
		d    sqlrewrite.Dialect
	}{
		{"sqlite", testdb.SQLite, sqlrewrite.SQLite},
		{"postgres", testdb.Postgres, sqlrewrite.PostgreSQL},
		{"mariadb", testdb.MySQL, sqlrewrite.MySQL},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter := &queryCounter{}
			back := backend.New(c.open(t), c.d, slog.New(counter))
			r := rand.New(rand.NewChaCha8([32]byte{8}))
			var rows []groupedRow
			for range 400 {
				rows = append(rows, randomGroupedRow(r))
			}
			loadGrouped(t, back, rows)
			cat := groupedCatalog()
			// A text filter beside the text key: both bind arguments, which
			// must follow the text order of their placeholders.
			qp := planGrouped(t, cat, "SELECT s, k, AVG(x), VARIANCE(x) FROM t WHERE s IN ('a', 'b') GROUP BY s, k", 1)
			grids := map[sqlrewrite.GridSums]bool{}
			for _, r := range qp.Base.Releases {
				if g, ok := planner.GridSumsRead(r); ok {
					grids[*g] = true
				}
			}
			if len(grids) != 2 {
				t.Fatalf("grids read %v, want AVG's (sums only) and VARIANCE's", grids)
			}
			ctx := context.Background()
			snap, err := back.Snapshot(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			for g := range grids {
				all, err := snap.GroupedGridSums(ctx, sqlrewrite.Fetch{Table: "t", Filter: qp.Base.Filter, GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: qp.Dims, Grid: g}})
				if err != nil {
					t.Fatal(err)
				}
				for i := range qp.Groups {
					one, err := snap.GridSums(ctx, sqlrewrite.Fetch{Table: "t", Filter: append(slices.Clone(qp.Base.Filter), qp.GroupFilters[i]...), GridSums: &g})
					if err != nil {
						t.Fatal(err)
					}
					a := all[i]
					if a.Count != one.Count || a.Sum.Cmp(one.Sum) != 0 || (a.SumSquares == nil) != (one.SumSquares == nil) ||
						a.SumSquares != nil && a.SumSquares.Cmp(one.SumSquares) != 0 {
						t.Errorf("grid %+v, group %v: all at once %d %v %v, alone %d %v %v", g, qp.Groups[i], a.Count, a.Sum, a.SumSquares, one.Count, one.Sum, one.SumSquares)
					}
				}
			}
			e := newGroupedExecutor(t, back)
			before := counter.n.Load()
			if _, err := e.RunQuery(ctx, "a", qp, rand.NewChaCha8([32]byte{9})); err != nil {
				t.Fatal(err)
			}
			if n := counter.n.Load() - before; n > 3 || len(qp.Groups) < 10 {
				t.Errorf("%d fetches for %d groups, want at most 3 (one per grid and the summary)", n, len(qp.Groups))
			}
		})
	}
}

// TestRollupOffsetKeepsTheTotal: WITH ROLLUP's total row is a row the
// LIMIT counts. GROUP BY k (5 declared values) WITH ROLLUP has 6 rows,
// so LIMIT 5, 10 returns the total, released at the statement's ε and
// charged once, and LIMIT 6, 10 returns no row and charges nothing,
// whatever the data. The shortcut that answers no row compared the
// OFFSET with the 5 groups alone, and LIMIT 5, 10 answered nothing.
func TestRollupOffsetKeepsTheTotal(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	var rows []groupedRow
	for i := range 500 {
		k, x := float64(i%5), float64(i%100)
		rows = append(rows, groupedRow{k: &k, x: &x})
	}
	loadGrouped(t, back, rows)
	for _, c := range []struct {
		offset int
		rows   int
		spent  float64
	}{{5, 1, 2}, {6, 0, 0}} {
		q := fmt.Sprintf("SELECT k, COUNT(*) FROM t GROUP BY k WITH ROLLUP LIMIT %d, 10", c.offset)
		before, err := e.ledger.Remaining(context.Background(), "user:a")
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, q, 2), rand.NewChaCha8([32]byte{5}))
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		after, err := e.ledger.Remaining(context.Background(), "user:a")
		if err != nil {
			t.Fatal(err)
		}
		if spent := before.Epsilon - after.Epsilon; math.Abs(spent-c.spent) > 1e-9 {
			t.Errorf("%s: spent ε = %g, want %g", q, spent, c.spent)
		}
		if len(res.Rows) != c.rows {
			t.Fatalf("%s: rows %v, want %d", q, res.Rows, c.rows)
		}
		if c.rows == 1 {
			n, _ := res.Rows[0][1].(int64)
			if res.Rows[0][0] != nil || n < 450 || n > 550 {
				t.Errorf("%s: row %v, want the total: k NULL, COUNT(*) 500 ± 50", q, res.Rows[0])
			}
		}
	}
}

// TestRollupIntervalsAndNotes: WITH ROLLUP's total carries the 95%
// interval of the sum of its groups' noises in DP_INTERVAL_LOW and
// DP_INTERVAL_HIGH, as the groups do, for COUNT, SUM and AVG, and SHOW
// WARNINGS gives it in one note per aggregate of the total. The data:
// 500 rows, k = i mod 5, x = i mod 100 (COUNT 500, SUM 24,750, AVG 49.5).
func TestRollupIntervalsAndNotes(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	var rows []groupedRow
	for i := range 500 {
		k, x := float64(i%5), float64(i%100)
		rows = append(rows, groupedRow{k: &k, x: &x})
	}
	loadGrouped(t, back, rows)
	q := "SELECT k, COUNT(*), DP_INTERVAL_LOW(COUNT(*)), DP_INTERVAL_HIGH(COUNT(*)), SUM(x), DP_INTERVAL_LOW(SUM(x)), DP_INTERVAL_HIGH(SUM(x)), " +
		"AVG(x), DP_INTERVAL_LOW(AVG(x)), DP_INTERVAL_HIGH(AVG(x)) FROM t GROUP BY k WITH ROLLUP"
	res, err := e.RunQuery(context.Background(), "a", planGrouped(t, cat, q, 2), rand.NewChaCha8([32]byte{6}))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.Rows) != 6 || res.Rows[5][0] != nil {
		t.Fatalf("%s: rows %v, want 5 groups and the total", q, res.Rows)
	}
	total := res.Rows[5]
	for i, truth := range []float64{500, 24750, 49.5} {
		var v [3]float64
		for j := range v {
			switch x := total[1+3*i+j].(type) {
			case int64:
				v[j] = float64(x)
			case float64:
				v[j] = x
			default:
				t.Fatalf("%s: total %v: column %d is %T, want a number", q, total, 1+3*i+j, x)
			}
		}
		// With seed 6 the truth is inside; a fresh interval misses it
		// with probability ≤ 5%.
		if !(v[1] <= v[0] && v[0] <= v[2] && v[1] <= truth && truth <= v[2]) {
			t.Errorf("%s: total's aggregate %d: value %v, interval [%v, %v], want it around %v", q, i, v[0], v[1], v[2], truth)
		}
	}
	notes := 0
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "WITH ROLLUP super-aggregate") {
			notes++
			if !strings.Contains(w.Message, "; 95% interval [") {
				t.Errorf("note without an interval: %s", w.Message)
			}
		}
	}
	if notes != 3 {
		t.Errorf("%d notes of the total, want 3 (COUNT, SUM, AVG): %v", notes, res.Warnings)
	}
}

// TestIntervalNotesNameClamping: the 95% interval of a SUM, AVG or
// VARIANCE is that of the statistic of the values clamped to the declared
// bounds, and its note says so; a count's clamps nothing and says nothing
// of bounds. 200 rows of x = 1000 with x declared in [0, 100] (an
// independent review's case): the SUM's interval is around 20,000, far
// from the true 200,000, and the note read as if it were the SUM's.
func TestIntervalNotesNameClamping(t *testing.T) {
	cat := groupedCatalog()
	back := backend.New(testdb.SQLite(t), sqlrewrite.SQLite, nil)
	e := newGroupedExecutor(t, back)
	rows := make([]groupedRow, 200)
	for i := range rows {
		k, x := 0.0, 1000.0
		rows[i] = groupedRow{k: &k, x: &x}
	}
	loadGrouped(t, back, rows)
	for _, c := range []struct {
		q     string
		notes []string
	}{
		{"SELECT COUNT(*), SUM(x), AVG(x), VAR_POP(x) FROM t", []string{
			`^COUNT\(\*\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\]; `,
			`^SUM\(x\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the values clamped to \[0, 100\]\); `,
			`^AVG\(x\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the values clamped to \[0, 100\]\); `,
			`^VAR_POP\(x\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the values clamped to \[0, 100\]\); `,
		}},
		{"SELECT k, COUNT(*), SUM(x) FROM t GROUP BY k WITH ROLLUP", []string{
			`^k = 0: COUNT\(\*\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\]; `,
			`^k = 0: SUM\(x\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the values clamped to \[0, 100\]\); `,
			`^k = NULL \(WITH ROLLUP super-aggregate\): COUNT\(\*\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the sum of its groups' noises\)$`,
			`^k = NULL \(WITH ROLLUP super-aggregate\): SUM\(x\): .*; 95% interval \[[-0-9.e+]+, [-0-9.e+]+\] \(of the values clamped to \[0, 100\], with the sum of its groups' noises\)$`,
		}},
	} {
		st, err := sqlrewrite.NewParser(cat).Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		var res *Result
		if sel, ok := st.(*sqlrewrite.Select); ok {
			var plan *planner.Plan
			if plan, err = planner.New(cat).Plan(sel, planner.Settings{Epsilon: 1, Mechanism: "auto"}); err != nil {
				t.Fatal(err)
			}
			res, err = e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{7}))
		} else {
			res, err = e.RunQuery(context.Background(), "a", planGrouped(t, cat, c.q, 1), rand.NewChaCha8([32]byte{7}))
		}
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		for _, want := range c.notes {
			re := regexp.MustCompile(want)
			if !slices.ContainsFunc(res.Warnings, func(w Warning) bool { return re.MatchString(w.Message) }) {
				t.Errorf("%s: no note matches %s in %v", c.q, want, res.Warnings)
			}
		}
	}
}
