package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/dpproxy/dpproxy/internal/mech"
	"math"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Interactive counting queries. A table with an interactive domain
// (catalog.Interactive: a few categorical or bucketed columns whose cross
// product is the finite domain X) answers counting queries over X from one
// mechanism instance per dataset, which spends the configured ε once for
// every query of every analyst. The planner's rule, on public facts only:
//
//   - SELECT COUNT(*) FROM t WHERE p, with p any AND/OR/NOT combination
//     of conditions on domain columns, is compiled to the set of cells of
//     X where p is true (mm.Predicate) and answered by the instance.
//     Rows with NULL, or with a value missing from a categorical list, in
//     any domain column are outside X and never counted, even under NOT.
//   - A predicate X cannot express (a column outside the domain, a range
//     across a bucket, IS NULL) is a fresh count over the rows it keeps,
//     like any other statement, and so is every statement when SET
//     @dp_mechanism forces a mechanism. A WHERE that is an AND of
//     conditions (no OR or NOT) also stays with the mechanisms above when
//     it restricts a column with a histogram domain (a DAWA range count is
//     free there: SynopsisPlan's rule). A COUNT(*) without WHERE is a
//     Laplace count too.
//   - The instance is created by the first such statement: it releases
//     n̂ = n + DLap(1/ε_n) with ε_n = ε·mm.DefaultCountShare, then,
//     with ε' = ε − ε_n, takes a one-shot noisy histogram over X (DLap(1/ε')
//     per cell, answering unlimited queries at no further cost) when
//
//     √(2·|X|)·ln(2/β)/ε' ≤ α·n̂,
//
//     the Median Mechanism author's rule (mm.MedianMechanism, "When to
//     use it": the histogram answered every benchmark query within α when
//     it holds), and otherwise the Median Mechanism (MM-SVT, with ε', and
//     the same n̂ as its row count: the count is released once) when
//     mm.PlanFor finds it feasible at n̂, and otherwise the histogram
//     still (neither then meets α for every query; the answers say so).
//     n̂ is a release, so the choice is post-processing. Package exec
//     makes n̂ and the noisy histogram with histogram.NoisyRowCount and
//     histogram.NoisyCells, whose doc comments derive their guarantee and
//     whose tests check it exactly. The configuration may force either
//     mechanism (mechanism: median | histogram); a forced Median Mechanism
//     infeasible at n̂ (below MedianRows) is the histogram too.
//
// EXPLAIN shows the rule with its thresholds on n̂ for the table
// (HistogramRows, MedianRows), public facts, and never which side of them
// the instance's n̂ fell; so it states each answer's accuracy under each
// mechanism the rule may take, with its condition (accuracyExplain): the
// histogram's bound for the query's cells (HistogramError) is within α·n̂
// only above a number of rows that may exceed the rule's own threshold.

// InteractivePlan is a counting query answered over an interactive domain.
type InteractivePlan struct {
	Table  *catalog.Table
	Config catalog.Interactive
	// Predicate is the set of cells counted.
	Predicate mm.Predicate
	// Describe renders the query's predicate over X for EXPLAIN.
	Describe string
	// Cells is the fetch that reads the database: one GROUP BY histogram
	// over X, computed by the database, no rows.
	Cells sqlrewrite.Fetch
	// Key identifies the dataset's instance: the table, the domain and the
	// interactive configuration.
	Key string
}

// FromInteractive is the derivation of the output answered by the
// interactive instance (Plan.Interactive).
const FromInteractive DeriveKind = 101

// The interactive mechanisms, as EXPLAIN and warnings name them.
const (
	InteractiveMedian    = "median-mechanism (MM-SVT)"
	InteractiveHistogram = "noisy-histogram"
)

// StateKey and ClaimAccount name the instance in the ledger: its state
// (budget.Ledger state) and the account whose limit is the instance's ε,
// which makes the ε be paid exactly once.
func (ip *InteractivePlan) StateKey() string {
	sum := sha256.Sum256([]byte(ip.Key))
	return "interactive:" + hex.EncodeToString(sum[:16])
}

// RowsPerUnit is the most rows of one unit the instance's histogram over X
// counts: max_rows_per_unit on a table with a privacy unit, 1 on a
// row-level table (a row is the unit).
func (ip *InteractivePlan) RowsPerUnit() int64 {
	if ip.Table != nil && ip.Table.HasPrivacyUnit() {
		return ip.Table.MaxRowsPerUnit
	}
	return 1
}

// RowEpsilon is the ε the instance spends per row: the configured ε on a
// row-level table, and ε/k (k = RowsPerUnit, rounded down so that k times
// it is at most ε exactly: mech.EvenShare) on a table with a privacy unit.
//
// Privacy units. On a unit table the histogram over X is read from the
// table bounded to k rows per unit with a salt fixed for the instance
// (package exec), so a unit moves the row count, each cell, each count and
// each gap of the Median Mechanism by at most k: a chain of at most k
// one-row steps. Both mechanisms (the noisy n̂, then the noisy histogram
// or MM-SVT) are ε-DP per row at RowEpsilon, hence k·RowEpsilon ≤ ε per
// unit (group privacy; every noise scale is the one for sensitivity k at
// ε). mm's unit_exact_test.go checks it exactly on k-row neighbours.
func (ip *InteractivePlan) RowEpsilon() float64 {
	return mech.EvenShare(ip.Config.Epsilon, int(ip.RowsPerUnit()))
}

// CountEpsilon is the ε of the noisy row count n̂ that decides the rule.
// CountEpsilon and RestEpsilon are rounded down so that their exact sum is
// at most the instance's per-row ε (RowEpsilon, mech.SplitShare).
func (ip *InteractivePlan) CountEpsilon() float64 {
	count, _ := mech.SplitShare(ip.RowEpsilon(), mm.DefaultCountShare)
	return count
}

// RestEpsilon is ε', what the chosen mechanism spends (per row).
func (ip *InteractivePlan) RestEpsilon() float64 {
	_, rest := mech.SplitShare(ip.RowEpsilon(), mm.DefaultCountShare)
	return rest
}

// HistogramRows is the threshold of the rule: the histogram is chosen when
// n̂ ≥ √(2·|X|)·ln(2/β)/(α·ε').
func (ip *InteractivePlan) HistogramRows() float64 {
	c := ip.Config
	return math.Sqrt(2*float64(ip.Predicate.Cells())) * math.Log(2/c.Beta) / (c.Alpha * ip.RestEpsilon())
}

// MedianConfig is the Median Mechanism's configuration under the rule,
// given the released row count nHat: the mechanism takes nHat as its n̂
// (released once, with ε_n, for the rule and the mechanism alike) and
// spends all of ε' on its tests and hard answers. maxHard, when positive,
// caps its hard answers so that its state fits where it is stored
// (mm.HardCapWithin).
func (ip *InteractivePlan) MedianConfig(nHat int64, maxHard int) mm.Config {
	c := ip.Config
	return mm.Config{Epsilon: ip.RestEpsilon(), Alpha: c.Alpha, Beta: c.Beta, PlannedQueries: c.PlannedQueries,
		PublicRows: nHat, RowCountEpsilon: ip.CountEpsilon(), MaxHardCap: maxHard}
}

// MedianRows is the fewest rows n̂ at which the instance's Median
// Mechanism is feasible (mm.FeasibleRows of MedianConfig, which does not
// depend on n̂'s value or the hard-answer cap): below it the rule (Choose)
// and, when the configuration forces the Median Mechanism, the creation
// take the noisy histogram. 0 for a configuration mm refuses.
func (ip *InteractivePlan) MedianRows() int64 {
	rows, err := mm.FeasibleRows(ip.MedianConfig(1, 0))
	if err != nil {
		return 0
	}
	return rows
}

// Choose applies the rule to the released row count nHat: the mechanism's
// name and why. maxHard is the most hard answers whose Median Mechanism
// state fits where it is stored (mm.HardCapWithin), a public bound the
// caller checked before the reservation: at least 1 when the Median
// Mechanism is forced; 0 makes the rule take the histogram.
func (ip *InteractivePlan) Choose(nHat int64, maxHard int) (mechanism, why string) {
	switch ip.Config.Mechanism {
	case catalog.InteractiveMedian:
		return InteractiveMedian, "forced by the configuration"
	case catalog.InteractiveHistogram:
		return InteractiveHistogram, "forced by the configuration"
	}
	threshold := ip.HistogramRows()
	if float64(nHat) >= threshold {
		return InteractiveHistogram, fmt.Sprintf("noisy n̂ = %d ≥ %.0f = √(2·|X|)·ln(2/β)/(α·ε')", nHat, math.Ceil(threshold))
	}
	if maxHard < 1 {
		return InteractiveHistogram, fmt.Sprintf("noisy n̂ = %d < %.0f = √(2·|X|)·ln(2/β)/(α·ε'), but the state of MM-SVT over %d cells would not fit the budget ledger", nHat, math.Ceil(threshold), ip.Predicate.Cells())
	}
	if _, err := mm.PlanFor(ip.MedianConfig(nHat, maxHard), nHat); err == nil {
		return InteractiveMedian, fmt.Sprintf("noisy n̂ = %d < %.0f = √(2·|X|)·ln(2/β)/(α·ε') and MM-SVT is feasible", nHat, math.Ceil(threshold))
	}
	return InteractiveHistogram, fmt.Sprintf("noisy n̂ = %d: too few rows for α = %g with either mechanism; the histogram answers with its own accuracy", nHat, ip.Config.Alpha)
}

// planInteractive returns the plan of sel over the table's interactive
// domain, or nil when the rule above leaves sel to the other mechanisms;
// then, for a count with OR or NOT the domain cannot express, a note for
// SHOW WARNINGS that says why.
func (p *Planner) planInteractive(sel *sqlrewrite.Select, t *catalog.Table, s Settings) (*Plan, string) {
	in := t.Interactive
	if in == nil || sel.GroupBy != nil || len(sel.Items) == 0 {
		return nil, ""
	}
	// Every item is the count of the rows (COUNT(*), or SUM(1) spelled as
	// a sum: items that differ only in spelling), answered by one count.
	for _, item := range sel.Items {
		if item.Agg.Func != sqlrewrite.CountRows || item.Agg.Filtered() {
			return nil, ""
		}
	}
	item := sel.Items[0]
	if s.Mechanism != "" && s.Mechanism != "auto" {
		return nil, ""
	}
	pred := sel.Boolean
	if pred == nil {
		if len(sel.Where) == 0 {
			return nil, ""
		}
		for _, c := range sel.Where {
			if col, ok := t.Column(c.Column); ok && col.Histogram != nil {
				return nil, ""
			}
		}
		pred = conjunction(sel.Where)
	}
	cells, err := compileInteractive(t, pred)
	if err != nil { // a predicate the domain cannot express: a fresh release
		if sel.Boolean == nil {
			return nil, ""
		}
		return nil, fmt.Sprintf("%s: a fresh release at this statement's epsilon, not an answer from the interactive domain: %v", item.Label, err)
	}
	ip := &InteractivePlan{Table: t, Config: *in, Predicate: cells,
		Describe: fmt.Sprintf("%d of %d cells", cells.Size(), cells.Cells()),
		Cells:    sqlrewrite.Fetch{Table: t.Source, Declared: t.Name, Partitions: t.Partitions, Cells: cellsFetch(t, in)}, Key: interactiveKey(t, in)}
	outputs := make([]Output, len(sel.Items))
	for i, item := range sel.Items {
		outputs[i] = Output{Label: item.Label, Agg: item.Agg, Derive: FromInteractive, Integer: true}
	}
	return &Plan{Table: t, Interactive: ip, Outputs: outputs}, ""
}

// conjunction turns a WHERE list into a Predicate.
func conjunction(conds []sqlrewrite.Condition) *sqlrewrite.Predicate {
	leaves := make([]*sqlrewrite.Predicate, len(conds))
	for i := range conds {
		leaves[i] = &sqlrewrite.Predicate{Op: sqlrewrite.Leaf, Leaf: &conds[i]}
	}
	if len(leaves) == 1 {
		return leaves[0]
	}
	return &sqlrewrite.Predicate{Op: sqlrewrite.And, Args: leaves}
}

// cellsFetch is the GROUP BY histogram over X with backend names.
func cellsFetch(t *catalog.Table, in *catalog.Interactive) *sqlrewrite.Cells {
	c := &sqlrewrite.Cells{}
	for _, ic := range in.Columns {
		col, _ := t.Column(ic.Name)
		d := sqlrewrite.CellDim{Column: col.Source, Edges: sqlrewrite.DoubleEdges(ic.Edges)}
		if !ic.Bucketed() {
			for i, v := range ic.Values {
				if col.Numeric() {
					d.Values = append(d.Values, sqlrewrite.Value{Num: ic.NumericValues()[i]})
				} else {
					d.Values = append(d.Values, sqlrewrite.Value{Str: v, IsText: true})
				}
			}
		}
		c.Dims = append(c.Dims, d)
	}
	return c
}

// interactiveKey identifies a dataset's instance by everything its
// creation reads and everything that changes what it releases: the backend
// relation (relationIdentity: source and partitions), each domain column's
// declaration and identity (columnIdentity: source, type, bounds), the
// interactive configuration and the privacy unit bound. A change to any of
// them makes a new instance, paid once, and two proxies sharing the ledger
// share an instance only when they would create the same one. v2 added the
// partitions and the columns' identities (v1 named the table, its source
// and the domain only, so an instance answered for other backend columns):
// each instance stored under a v1 key is a new session, paid once more.
func interactiveKey(t *catalog.Table, in *catalog.Interactive) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "v2|%s", relationIdentity(t))
	for _, c := range in.Columns {
		col, _ := t.Column(c.Name)
		fmt.Fprintf(&sb, "|%s (%s)", c.Describe(), columnIdentity(col))
	}
	fmt.Fprintf(&sb, "|eps=%g|alpha=%g|beta=%g|k=%d|%s", in.Epsilon, in.Alpha, in.Beta, in.PlannedQueries, in.Mechanism)
	if t.HasPrivacyUnit() {
		// The unit and its bound change what is released; row-level keys
		// have no such part. The unit is a backend column, named as
		// written, as relationIdentity names the relation.
		fmt.Fprintf(&sb, "|unit=%s|rows_per_unit=%d", t.PrivacyUnit, t.MaxRowsPerUnit)
	}
	return sb.String()
}

// explainInteractive renders EXPLAIN of an interactive count.
func (ip *InteractivePlan) explain(p *Plan) (columns []string, rows [][]any) {
	columns = []string{"step", "kind", "what", "mechanism", "epsilon", "delta", "detail"}
	c := ip.Config
	var dims []string
	for _, col := range c.Columns {
		dims = append(dims, col.Describe())
	}
	feasible := "MM-SVT is feasible at n̂"
	if r := ip.MedianRows(); r > 0 {
		feasible = fmt.Sprintf("n̂ ≥ %d rows (where MM-SVT is feasible at α = %g)", r, c.Alpha)
	}
	var mechanism, rule string
	switch c.Mechanism {
	case catalog.InteractiveMedian:
		// Below the feasible rows the creation takes the histogram
		// (package exec's createInteractive), which n̂, a release,
		// decides: the condition, not the outcome.
		mechanism = InteractiveMedian + " or " + InteractiveHistogram
		rule = fmt.Sprintf("median-mechanism forced by the configuration: median-mechanism (MM-SVT) if %s, else noisy-histogram", feasible)
	case catalog.InteractiveHistogram:
		mechanism, rule = InteractiveHistogram, "forced by the configuration"
	default:
		mechanism = "auto"
		histogram := fmt.Sprintf("n̂ ≥ %.0f rows (√(2·|X|)·ln(2/β)/(α·ε') with |X| = %d, β = %g, α = %g, ε' = %s)",
			math.Ceil(ip.HistogramRows()), ip.Predicate.Cells(), c.Beta, c.Alpha, formatNumber(display(ip.RestEpsilon())))
		rule = fmt.Sprintf("rule: noisy-histogram if %s, else median-mechanism (MM-SVT) if %s and its state fits the budget ledger, else noisy-histogram", histogram, feasible)
		if r := ip.MedianRows(); r > 0 && float64(r) >= ip.HistogramRows() {
			rule = fmt.Sprintf("rule: noisy-histogram whatever n̂: the rule takes it from %s, and below that MM-SVT is infeasible (it needs n̂ ≥ %d rows at α = %g)", histogram, r, c.Alpha)
		}
	}
	rows = append(rows,
		[]any{int64(1), "interactive", fmt.Sprintf("count over X = %s", strings.Join(dims, " × ")), mechanism, display(c.Epsilon), 0.0,
			fmt.Sprintf("pure ε-DP; one instance per dataset shared by every analyst: ε spent once, by the statement that creates it (noisy n̂ with ε_n = %s, then the mechanism with ε'), then stored with the ledger; %s; reads one GROUP BY histogram over X computed by the database, no rows; rows with NULL or an undeclared value in a domain column are outside X%s",
				formatNumber(display(ip.CountEpsilon())), rule, ip.unitExplain())},
		[]any{int64(2), "output", p.Outputs[0].Label, "post-processing", 0.0, 0.0,
			"count of the rows in " + ip.Describe + " of X, from the instance" + ip.accuracyExplain()},
		[]any{int64(3), "total", p.Table.Name, "", 0.0, 0.0, "no per-statement cost; plus the instance's ε once if it does not exist yet"})
	return columns, rows
}

// HistogramError bounds the error of a noisy-histogram answer, the sum
// of cells cells of DLap(1/epsilon) noise: |error| ≤ HistogramError
// with probability ≥ 1 − beta for one query (Chernoff with the Laplace
// moment bound E[e^{λZ}] ≤ e^{2λ²b²} for λb ≤ 1/√2, b = 1/epsilon,
// L = ln(2/beta)): b·√(8·cells·L) when L ≤ cells, b·√2·(cells + L)
// otherwise. It depends on public facts only, so EXPLAIN states it
// before the instance exists, and each answer's note after.
func HistogramError(cells int, epsilon, beta float64) float64 {
	m, b, l := float64(cells), 1/epsilon, math.Log(2/beta)
	if l <= m {
		return b * math.Sqrt(8*m*l)
	}
	return b * math.Sqrt2 * (m + l)
}

// accuracyExplain is what EXPLAIN says, after "from the instance", of
// an answer's accuracy under
// each mechanism the instance may run, without saying which runs (n̂,
// a release, decides): MM-SVT's answers are within α·n̂ with probability
// 1 − β jointly for the first planned_queries (mm's guarantee, wherever
// it is feasible); the noisy histogram's within HistogramError of this
// predicate's cells, which is α·n̂ or less only when n̂ is large enough:
// the rule takes the histogram below that too (n̂ under both its
// threshold and MM-SVT's, or MM-SVT not fitting the ledger), where
// α-accuracy does not hold.
func (ip *InteractivePlan) accuracyExplain() string {
	c := ip.Config
	m := ip.Predicate.Size()
	if m == 0 {
		return ": no cell of X satisfies the predicate, 0 exactly, from public information"
	}
	e := math.Ceil(HistogramError(m, ip.RestEpsilon(), c.Beta))
	histogram := fmt.Sprintf("within ±%.0f rows with probability %g for this query (the noise of its %d cells), which is within α·n̂ (α = %g) only when n̂ ≥ %.0f",
		e, 1-c.Beta, m, c.Alpha, math.Ceil(e/c.Alpha))
	r := ip.MedianRows()
	switch {
	case c.Mechanism == catalog.InteractiveHistogram, r == 0, c.Mechanism != catalog.InteractiveMedian && float64(r) >= ip.HistogramRows():
		return " (noisy-histogram): " + histogram
	}
	return fmt.Sprintf(": if median-mechanism (MM-SVT) runs, within α·n̂ (α = %g) with probability %g jointly for the instance's first %d answers; if noisy-histogram runs, %s",
		c.Alpha, 1-c.Beta, c.PlannedQueries, histogram)
}

// unitExplain is what EXPLAIN says of the instance's privacy unit; empty
// on a row-level table.
func (ip *InteractivePlan) unitExplain() string {
	t := ip.Table
	if !t.HasPrivacyUnit() {
		return ""
	}
	k := ip.RowsPerUnit()
	return fmt.Sprintf("; protects each %s at epsilon = %s: the histogram over X keeps ≤ %d rows per %s (chosen at random in the database, fixed for the instance), so each count has sensitivity %d and the instance runs at epsilon/%d = %s per row (ε_n and ε' above are per row); counts are of the bounded rows",
		t.PrivacyUnit, formatNumber(display(ip.Config.Epsilon)), k, t.PrivacyUnit, k, k, formatNumber(display(ip.RowEpsilon())))
}

// refuseInteractive says why the domain cannot answer a predicate.
func refuseInteractive(t *catalog.Table, format string, args ...any) error {
	var dims []string
	for _, c := range t.Interactive.Columns {
		dims = append(dims, c.Describe())
	}
	return dperr.New(dperr.Unsupported, "%s; the interactive domain of table %s is %s",
		fmt.Sprintf(format, args...), t.Name, strings.Join(dims, " × "))
}
