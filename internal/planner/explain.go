package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

var deriveNames = map[DeriveKind]string{
	Direct: "released value", MeanOfSums: "mean of released sums",
	VarianceOfSums: "variance of released sums", SquareRoot: "square root of variance",
}

// ExplainZeroRow renders EXPLAIN of a zero-row probe of table
// (sqlrewrite.Explain.ZeroRow): the catalog engine answers it over the
// table's declared columns and no row, which gives every database's
// answer, so nothing is planned, read or charged.
func ExplainZeroRow(table string) (columns []string, rows [][]any) {
	return []string{"step", "kind", "what", "mechanism", "epsilon", "delta", "detail"}, [][]any{{int64(1), "total", table, "catalog engine", 0.0, 0.0,
		"the answer is the same whatever the table holds (LIMIT 0, a WHERE true for no row such as col = NULL, or aggregates only of values NULL on every row): " +
			"computed over the declared columns and no row, exactly; no data read, no budget spent"}}
}

// Explain renders the plan as the rows of EXPLAIN: one row per release (what
// it estimates, the mechanism, its ε and δ, what it reads), one row per
// output column (how it is derived), a row for the plan's one scan when it
// has one (profile.go), and a total. Nothing in it depends on data.
func (p *Plan) Explain() (columns []string, rows [][]any) {
	if p.Interactive != nil {
		return p.Interactive.explain(p)
	}
	if p.NoRow != "" {
		return p.explainNoRow()
	}
	columns = []string{"step", "kind", "what", "mechanism", "epsilon", "delta", "detail"}
	step := 0
	for _, r := range p.Releases {
		step++
		rows = append(rows, []any{int64(step), "release", r.Stat.String(), r.Mechanism.Name(),
			display(r.Epsilon), display(r.Delta), r.Mechanism.Guarantee() + "; reads " + r.Mechanism.Reads(r) + r.unitNote(p.Table)})
	}
	firstSynopsis := step
	step, rows = p.Synopsis.explainSynopses(step, rows)
	for i, o := range p.Outputs {
		step++
		if o.Derive == FromSynopsis {
			rows = append(rows, []any{int64(step), "output", o.Label, "post-processing", 0.0, 0.0, p.Synopsis.explainOutput(i, firstSynopsis)})
			continue
		}
		args := make([]string, len(o.Args))
		for i, a := range o.Args {
			args[i] = "#" + strconv.Itoa(a+1)
		}
		how := deriveNames[o.Derive]
		if o.Derive == SquareRoot {
			how += " (" + deriveNames[o.Inner] + ")"
		}
		rows = append(rows, []any{int64(step), "output", o.Label, "post-processing", 0.0, 0.0,
			fmt.Sprintf("%s of %s", how, strings.Join(args, ", "))})
	}
	for _, d := range p.Derived {
		step++
		how := "interval arithmetic"
		if _, ok := d.Expr.TemporalOf(); ok {
			how = "date number"
		}
		rows = append(rows, []any{int64(step), "row expression", derivedName(p.Table, d.Name), how, 0.0, 0.0, explainDerived(p.Table, d)})
	}
	if p.Profile != nil {
		step++
		rows = append(rows, []any{int64(step), "scan", p.Table.Name, "one GROUP BY", 0.0, 0.0, p.explainProfile()})
	}
	step++
	filter := "all rows"
	switch {
	case p.Boolean != nil && p.Boolean.Op == sqlrewrite.Never:
		filter = "no row (the WHERE is never true)"
	case p.Boolean != nil:
		filter = fmt.Sprintf("%d condition(s) combined with OR and NOT", leaves(p.Boolean)+len(p.Filter))
	case len(p.Filter) > 0:
		filter = fmt.Sprintf("%d condition(s)", len(p.Filter))
	}
	rows = append(rows, []any{int64(step), "total", p.Table.Name, "", display(p.Cost.Epsilon), display(p.Cost.Delta),
		fmt.Sprintf("basic composition over %d release(s); filter: %s", len(p.Releases), filter) + p.Synopsis.explainTotal() + unitTotal(p.Table) + notes(p.Notes)})
	return columns, rows
}

// notes renders a plan's notes at the end of EXPLAIN's total row.
func notes(ns []string) string {
	var sb strings.Builder
	for _, n := range ns {
		sb.WriteString("; " + n)
	}
	return sb.String()
}

// leaves counts the conditions of a predicate.
func leaves(p *sqlrewrite.Predicate) int {
	if p.Leaf != nil {
		return 1
	}
	n := 0
	for _, a := range p.Args {
		n += leaves(a)
	}
	return n
}

// display rounds a budget share to 12 significant digits, so an even split
// of 0.6 over six releases reads 0.1, not 0.09999999999999999.
func display(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return v
}
