package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/exec"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/proxy"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"

	_ "modernc.org/sqlite" // registers "sqlite"
)

// groupedConfig is the catalog of the grouped benchmark: the PUMS sample
// with the demo's bounds and domains, a budget no run exhausts, and a
// second table whose educ is a private key (partition selection).
const groupedConfig = `
backend: {driver: sqlite, dsn: "%s"}
ledger: {driver: sqlite, dsn: "%s"}
privacy: {default_epsilon: 1, max_epsilon: 10, default_delta: 1.0e-6, max_delta: 1.0e-3}
users:
  - {name: bench, password_hash: "*0123456789ABCDEF0123456789ABCDEF01234567", epsilon: 1.0e+9, delta: 0.9}
tables:
  - name: pums
    columns:
      - {name: age, type: integer, lower: 0, upper: 100}
      - {name: educ, type: integer, lower: 1, upper: 16, values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]}
      - {name: race, type: integer, lower: 1, upper: 6, values: [1, 2, 3, 4, 5, 6]}
      - {name: income, type: real, lower: 0, upper: 500000}
  - name: keyed
    columns:
      - {name: k, type: integer, lower: 0, upper: 1000000, partition_selection: true}
`

// GroupedSetup is the real proxy (engine, executor, SQLite backend and
// ledger) over the PUMS sample, for the grouped benchmark.
type GroupedSetup struct {
	Session *proxy.Session
	Planner *planner.Planner
	Parser  *sqlrewrite.Parser
	close   func()
}

// Close releases the databases.
func (g *GroupedSetup) Close() { g.close() }

// NewGroupedSetup loads the PUMS sample into a SQLite file in dir and opens
// the proxy over it.
func NewGroupedSetup(ctx context.Context, dir string) (*GroupedSetup, error) {
	dataDSN := filepath.Join(dir, "pums.db")
	ledgerDSN := filepath.Join(dir, "ledger.db") + "?_pragma=journal_mode(WAL)" // budget.Open refuses synchronous(OFF)
	cfg, err := catalog.ParseConfig(strings.NewReader(fmt.Sprintf(groupedConfig, dataDSN, ledgerDSN)))
	if err != nil {
		return nil, err
	}
	be, err := backend.Open(ctx, "sqlite", dataDSN, "", nil)
	if err != nil {
		return nil, err
	}
	if err := demo.LoadPUMS(ctx, be.DB(), "sqlite", "pums"); err != nil {
		be.Close()
		return nil, err
	}
	ldb, err := sql.Open("sqlite", ledgerDSN)
	if err != nil {
		be.Close()
		return nil, err
	}
	closeAll := func() { ldb.Close(); be.Close() }
	ledger, err := budget.Open(ctx, ldb, budget.SQLite) // the engine holds bench to its configured budget
	if err != nil {
		closeAll()
		return nil, err
	}
	engine, err := proxy.NewEngine(cfg, exec.New(be, ledger, nil), ledger, nil)
	if err != nil {
		closeAll()
		return nil, err
	}
	return &GroupedSetup{Session: engine.Open("bench", 1), Planner: planner.New(cfg), Parser: sqlrewrite.NewParser(cfg), close: closeAll}, nil
}

// GroupTruth is the exact count, sum and mean of one group.
type GroupTruth struct {
	Key   int
	Count int
	Sum   float64
}

// pumsGroups returns the exact per-group counts and income sums of the
// PUMS sample grouped by educ or race, over the declared domain (empty
// groups included).
func pumsGroups(key string) []GroupTruth {
	lo, hi := 1, 16
	if key == "race" {
		hi = 6
	}
	out := make([]GroupTruth, hi-lo+1)
	for i := range out {
		out[i].Key = lo + i
	}
	for _, r := range demo.PUMS() {
		k := r.Educ
		if key == "race" {
			k = r.Race
		}
		out[k-lo].Count++
		out[k-lo].Sum += min(max(r.Income, 0), 500000)
	}
	return out
}

// GroupedErrors are, for one key, aggregate and ε, the absolute errors per
// group over the trials, of the proxy and of the baseline.
type GroupedErrors struct {
	Key, Aggregate string
	Epsilon        float64
	Groups         []GroupTruth
	Proxy          [][]float64 // [group][trial]
	Baseline       [][]float64
	ProxyNull      []int // trials where the proxy's answer was NULL
	BaselineNull   []int
}

// RunGroupedErrors runs SELECT key, agg FROM pums GROUP BY key through the
// proxy at ε, trials times, and the independent per-group Laplace baseline
// at the same ε: per group, COUNT(*) + Lap(1/ε), and AVG(income) as
// (S + Lap(2U/ε)) / (n + Lap(2/ε)) with U = 500000 the declared upper
// bound (half of ε each for the sum and the count, each group using all
// of ε by parallel composition, as the proxy does), NULL when the noisy
// count is below 1. A NULL answer counts as an error of |exact| (a chart
// shows it as 0). The baseline's noise is a seeded math/rand stream (a
// benchmark, not a release).
func RunGroupedErrors(ctx context.Context, g *GroupedSetup, key, agg string, epsilon float64, trials int, seed uint64) (GroupedErrors, error) {
	truth := pumsGroups(key)
	res := GroupedErrors{Key: key, Aggregate: agg, Epsilon: epsilon, Groups: truth,
		Proxy: make([][]float64, len(truth)), Baseline: make([][]float64, len(truth)),
		ProxyNull: make([]int, len(truth)), BaselineNull: make([]int, len(truth))}
	if _, err := g.Session.Execute(ctx, fmt.Sprintf("SET @dp_epsilon = %g", epsilon)); err != nil {
		return res, err
	}
	q := fmt.Sprintf("SELECT %s, %s FROM pums GROUP BY %s ORDER BY %s", key, agg, key, key)
	rng := rand.New(rand.NewPCG(seed, uint64(math.Float64bits(epsilon))))
	lap := func(b float64) float64 { return b * (rng.ExpFloat64() - rng.ExpFloat64()) }
	for range trials {
		r, err := g.Session.Execute(ctx, q)
		if err != nil {
			return res, fmt.Errorf("%s: %w", q, err)
		}
		if len(r.Rows) != len(truth) {
			return res, fmt.Errorf("%s: %d rows, want %d", q, len(r.Rows), len(truth))
		}
		for i, t := range truth {
			exact := float64(t.Count)
			if agg != "COUNT(*)" {
				exact = 0 // the mean of an empty group is taken as 0
				if t.Count > 0 {
					exact = t.Sum / float64(t.Count)
				}
			}
			v, ok := toFloat(r.Rows[i][1])
			if !ok {
				res.ProxyNull[i]++
				res.Proxy[i] = append(res.Proxy[i], math.Abs(exact))
			} else {
				res.Proxy[i] = append(res.Proxy[i], math.Abs(v-exact))
			}
			if agg == "COUNT(*)" {
				res.Baseline[i] = append(res.Baseline[i], math.Abs(lap(1/epsilon)))
				continue
			}
			n := float64(t.Count) + lap(2/epsilon)
			s := t.Sum + lap(2*500000/epsilon)
			if n < 1 {
				res.BaselineNull[i]++
				res.Baseline[i] = append(res.Baseline[i], math.Abs(exact))
				continue
			}
			res.Baseline[i] = append(res.Baseline[i], math.Abs(min(max(s/n, 0), 500000)-exact))
		}
	}
	return res, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// Median returns the median of xs (NaN when empty).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// SelectionResult is partition selection on one column of key counts.
type SelectionResult struct {
	Name         string
	Keys         int     // keys with at least one row
	Rows         int64   // rows
	Epsilon      float64 // the selection's ε and δ
	Delta        float64
	Threshold    int64
	Expected     float64 // exact expectation of the released keys
	AboveHalf    int     // keys kept with probability ≥ 1/2
	Samples      []int   // released keys in seeded draws
	MinKeptCount int64   // the smallest count of a key kept with probability ≥ 1/2
}

// RunSelection plans SELECT k, COUNT(*) FROM keyed GROUP BY k (a private
// key: partition selection with half of the statement's ε and δ) at ε and
// δ through the real planner, and evaluates it on the key
// counts: the exact expected number of released keys Σ P[keep | n_k], and
// draws of the released set from a seeded stream.
func RunSelection(g *GroupedSetup, name string, counts []int64, epsilon, delta float64, draws int, seed uint64) (SelectionResult, error) {
	st, err := g.Parser.Parse("SELECT k, COUNT(*) FROM keyed GROUP BY k")
	if err != nil {
		return SelectionResult{}, err
	}
	q, ok := st.(*sqlrewrite.Query)
	if !ok {
		return SelectionResult{}, fmt.Errorf("bench: SELECT k, COUNT(*) … GROUP BY k parsed as %T", st)
	}
	qp, err := g.Planner.PlanQuery(q, planner.Settings{Epsilon: epsilon, Delta: delta, Mechanism: "auto"})
	if err != nil {
		return SelectionResult{}, err
	}
	ps := qp.Selection
	if ps == nil {
		return SelectionResult{}, fmt.Errorf("bench: no partition selection in the plan")
	}
	res := SelectionResult{Name: name, Epsilon: ps.Epsilon, Delta: ps.Delta, Threshold: ps.Threshold, MinKeptCount: -1}
	var nonzero []int64
	for _, n := range counts {
		if n > 0 {
			nonzero = append(nonzero, n)
			res.Rows += n
			p := ps.KeepProbability(n)
			res.Expected += p
			if p >= 0.5 {
				res.AboveHalf++
				if res.MinKeptCount < 0 || n < res.MinKeptCount {
					res.MinKeptCount = n
				}
			}
		}
	}
	res.Keys = len(nonzero)
	src := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 'p', 's'})
	for range draws {
		kept := 0
		for _, n := range nonzero {
			if ps.Keep(src, n) {
				kept++
			}
		}
		res.Samples = append(res.Samples, kept)
	}
	return res, nil
}

// PUMSEducCounts returns the PUMS sample's count per educ value (1..16).
func PUMSEducCounts() []int64 {
	var out []int64
	for _, t := range pumsGroups("educ") {
		out = append(out, int64(t.Count))
	}
	return out
}
