package exec

import (
	"context"
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

// runSynopsisCount plans q on cat and runs it with a new executor (a
// proxy started with cat) on back and l, returning its count and whether
// it built its synopsis now.
func runSynopsisCount(t *testing.T, back *backend.Backend, l *budget.Ledger, cat *catalog.Config, q string, seed byte) (count int64, builtNow bool) {
	t.Helper()
	st, err := sqlrewrite.NewParser(cat).Parse(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
	if err != nil || plan.Synopsis == nil {
		t.Fatalf("%s: plan %v, %v; want an answer from a synopsis", q, plan, err)
	}
	e := New(back, l, nil)
	defer e.Wait()
	res, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{seed}))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	for _, w := range res.Warnings {
		builtNow = builtNow || strings.Contains(w.Message, "built now by this statement")
	}
	return res.Row[0].(int64), builtNow
}

// synopsisKeyTable is table t of the configuration: source, x in [0, 99]
// with a histogram of 100 bins (ε = 1, Greedy-H), y and z in [0, 100].
func synopsisKeyTable(source string, yUpper float64) *catalog.Config {
	lo, hiX, hi, hiY := 0.0, 99.0, 100.0, yUpper
	return &catalog.Config{Tables: []catalog.Table{{Name: "t", Source: source, Columns: []catalog.Column{
		{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hiX,
			Histogram: &catalog.Histogram{Epsilon: 1, Bins: 100, Mechanism: catalog.SynopsisGreedyH, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}}},
		{Name: "y", Source: "y", Type: catalog.Integer, Lower: &lo, Upper: &hiY},
		{Name: "z", Source: "z", Type: catalog.Integer, Lower: &lo, Upper: &hi},
	}}}}
}

// TestSynopsisKeyedOnSource: a synopsis answers only for the backend
// relation it was built from. Table t reads t_a (2,000 rows with x in
// [0, 49]); after a restart with t reading t_b (x in [50, 99]), or on
// another proxy sharing the ledger whose t reads t_b, the same statement
// builds t_b's synopsis, paid once, and answers about 0. Before the fix the
// key named the configured table only, and t_b's analysts got t_a's
// synopsis ("answered from synopsis built …, no budget spent": about
// 2,000).
func TestSynopsisKeyedOnSource(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec(`CREATE TABLE t_a (x INTEGER, y INTEGER, z INTEGER);
		CREATE TABLE t_b (x INTEGER, y INTEGER, z INTEGER);
		WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 1999)
		INSERT INTO t_a SELECT i % 50, 0, 0 FROM s;
		INSERT INTO t_b SELECT 50 + x, y, z FROM t_a`); err != nil {
		t.Fatal(err)
	}
	back := backend.New(db, sqlrewrite.SQLite, nil)
	ledgers := sharedLedgers(t, budget.SQLite, testdb.SQLiteDSN(t), 2)
	const q = "SELECT COUNT(*) FROM t WHERE x BETWEEN 0 AND 49"
	if n, built := runSynopsisCount(t, back, ledgers[0], synopsisKeyTable("t_a", 100), q, 1); !built || n < 1500 {
		t.Fatalf("t on t_a: count %d, built now %v; want about 2000, built", n, built)
	}
	if n, built := runSynopsisCount(t, back, ledgers[0], synopsisKeyTable("t_a", 100), q, 2); built || n < 1500 {
		t.Fatalf("t on t_a after a restart: count %d, built now %v; want t_a's synopsis, free", n, built)
	}
	// Another proxy sharing the ledger (or a restart) whose t reads t_b.
	if n, built := runSynopsisCount(t, back, ledgers[1], synopsisKeyTable("t_b", 100), q, 3); !built || n > 500 {
		t.Fatalf("t on t_b: count %d, built now %v; want about 0 from t_b's own synopsis, built now", n, built)
	}
	if n, built := runSynopsisCount(t, back, ledgers[0], synopsisKeyTable("t_b", 100), q, 4); built || n > 500 {
		t.Fatalf("t on t_b again: count %d, built now %v; want t_b's synopsis, free", n, built)
	}
	if r := remaining(t, ledgers[0]); r != 8 {
		t.Errorf("remaining ε: got %v, want 8 (each relation's synopsis once)", r)
	}
}

// TestSynopsisKeyedOnOperandBounds: a synopsis whose predicate restricts
// a row expression (y - z > 50) counts rows by the operands clamped to
// their declared bounds, so it answers only under those bounds. With y in
// [0, 100] the 2,000 rows with y = 100, z = 0 are counted; after a restart
// with y in [0, 40] (y - z ≤ 40 for every row) the statement builds a new
// synopsis, paid once, which counts none. Before the fix the key held the
// expression's text only, and the old synopsis answered about 2,000.
func TestSynopsisKeyedOnOperandBounds(t *testing.T) {
	db := testdb.SQLite(t)
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER, y INTEGER, z INTEGER);
		WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 1999)
		INSERT INTO t SELECT i % 50, 100, 0 FROM s`); err != nil {
		t.Fatal(err)
	}
	back := backend.New(db, sqlrewrite.SQLite, nil)
	l := sharedLedgers(t, budget.SQLite, testdb.SQLiteDSN(t), 1)[0]
	const q = "SELECT COUNT(*) FROM t WHERE x BETWEEN 0 AND 49 AND y - z > 50"
	if n, built := runSynopsisCount(t, back, l, synopsisKeyTable("t", 100), q, 1); !built || n < 1500 {
		t.Fatalf("y in [0, 100]: count %d, built now %v; want about 2000, built", n, built)
	}
	if n, built := runSynopsisCount(t, back, l, synopsisKeyTable("t", 40), q, 2); !built || n > 500 {
		t.Fatalf("y in [0, 40]: count %d, built now %v; want about 0 from a new synopsis, built now", n, built)
	}
	if n, built := runSynopsisCount(t, back, l, synopsisKeyTable("t", 40), q, 3); built || n > 500 {
		t.Fatalf("y in [0, 40] again: count %d, built now %v; want the new synopsis, free", n, built)
	}
	if r := remaining(t, l); r != 8 {
		t.Errorf("remaining ε: got %v, want 8 (each synopsis once)", r)
	}
}

// TestSynopsisKeyNamesWhatTheBuildReads: every part of the configuration
// a synopsis's build reads changes its key (the relation, its partitions,
// the histogram column's and each predicate column's source, type and
// bounds, an expression operand's too), and the configured table's name,
// which it does not read, does not.
func TestSynopsisKeyNamesWhatTheBuildReads(t *testing.T) {
	key := func(change func(*catalog.Table)) string {
		cat := synopsisKeyTable("t", 100)
		lo, hi := 0.0, 10.0
		cat.Tables[0].Columns = append(cat.Tables[0].Columns, catalog.Column{Name: "w", Source: "w", Type: catalog.Integer, Lower: &lo, Upper: &hi})
		change(&cat.Tables[0])
		q := "SELECT COUNT(*) FROM " + cat.Tables[0].Name + " WHERE x BETWEEN 0 AND 49 AND y - z > 50 AND w = 3"
		st, err := sqlrewrite.NewParser(cat).Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 1, Mechanism: "auto"})
		if err != nil || plan.Synopsis == nil || len(plan.Synopsis.Synopses) != 1 {
			t.Fatalf("plan %v, %v", plan, err)
		}
		return plan.Synopsis.Synopses[0].Key
	}
	base := key(func(*catalog.Table) {})
	if got := key(func(t *catalog.Table) { t.Name = "renamed" }); got != base {
		t.Errorf("the table's name changed the key: %q, was %q", got, base)
	}
	column := func(name string, change func(*catalog.Column)) func(*catalog.Table) {
		return func(t *catalog.Table) {
			c, _ := t.Column(name)
			change(c)
		}
	}
	for what, change := range map[string]func(*catalog.Table){
		"source":                func(t *catalog.Table) { t.Source = "hr.t" },
		"partitions":            func(t *catalog.Table) { t.Partitions = []string{"t_1", "t_2"} },
		"histogram column":      column("x", func(c *catalog.Column) { c.Source = "x2" }),
		"predicate column":      column("w", func(c *catalog.Column) { c.Source = "w2" }),
		"predicate column type": column("w", func(c *catalog.Column) { c.Type = catalog.Real }),
		"predicate bounds":      column("w", func(c *catalog.Column) { hi := 20.0; c.Upper = &hi }),
		"operand source":        column("z", func(c *catalog.Column) { c.Source = "z2" }),
		"operand bounds":        column("y", func(c *catalog.Column) { hi := 40.0; c.Upper = &hi }),
		"operand lower bound":   column("z", func(c *catalog.Column) { lo := -1.0; c.Lower = &lo }),
	} {
		if got := key(change); got == base {
			t.Errorf("%s changed but the key did not: %q", what, got)
		}
	}
	if a, b := key(func(t *catalog.Table) { t.Partitions = []string{"t_1", "t_2"} }), key(func(t *catalog.Table) { t.Partitions = []string{"t_2", "t_1"} }); a != b {
		t.Errorf("the partitions' order changed the key: %q and %q", a, b)
	}
	if !strings.HasPrefix(base, "v3|source=t|") {
		t.Errorf("key %q: want version v3 and the source first", base)
	}
}
