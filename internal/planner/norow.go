package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// FromNoRow is the derivation of every output of a plan whose WHERE
// selects no row whatever the data (Plan.NoRow): the aggregate's value
// over no row, as MySQL computes it (0 for COUNT, NULL otherwise: SUM of
// a condition too, sqlrewrite.Aggregate.Summed).
const FromNoRow DeriveKind = 102

// noRowWhere returns, when sel's WHERE selects no row whatever the data,
// why: a WHERE whose text makes it TRUE for no row (Boolean is Never: a
// comparison with NULL, col IN (NULL), 1 = 0; the catalog engine answers
// such a statement as a zero-row probe unless it has aggregates only
// dpproxy knows, MEDIAN and the like, which come here), or conditions on
// one numeric column that no number satisfies together (sex = 0 AND
// sex = 1, age < 30 AND age > 40, sex IN (0, 1) AND sex > 5). A row holds
// one value of the column, which each condition compares as a number on
// every backend, so this follows from the statement's text and the
// columns' declared types alone, like the zero-row probes the catalog
// engine answers (WHERE 1 = 0), and is "" otherwise. Ranges are
// intersected over the reals (an integer column may hold fractions in the
// backend); text columns (whose collations equate distinct strings),
// dates, NULL tests, complements and LIKE are left out, and so are
// conditions whose numbers are not exactly the statement's constants
// (Condition.ExactNumbers: d > 5 AND d < 5.0000000000000001 keeps the
// rows of a DECIMAL d between them, though the float64 of the second is
// 5; 365 / 7 is 52.1429 to MySQL; strings compare in double precision).
// An aggregate's own condition is not read here.
func noRowWhere(t *catalog.Table, sel *sqlrewrite.Select) string {
	if sel.Boolean != nil && sel.Boolean.Op == sqlrewrite.Never {
		return "the WHERE selects no row whatever the data (its text makes it TRUE for no row: a comparison with NULL is UNKNOWN, 1 = 0 is FALSE)"
	}
	conds := sel.Where
	byColumn := map[string][]sqlrewrite.Condition{}
	var names []string
	for _, c := range conds {
		col, ok := t.Column(c.Column)
		if !ok || col.Type != catalog.Integer && col.Type != catalog.Real || !c.ExactNumbers || c.Text || c.Temporal != "" || c.IsNull || c.Complement || c.Like != nil || c.Cell != nil ||
			slices.ContainsFunc(c.In, func(v sqlrewrite.Value) bool { return v.IsText || v.Null }) {
			continue
		}
		if _, seen := byColumn[col.Name]; !seen {
			names = append(names, col.Name)
		}
		byColumn[col.Name] = append(byColumn[col.Name], c)
	}
	for _, name := range names {
		cs := byColumn[name]
		if len(cs) < 2 {
			continue
		}
		r := sqlrewrite.Range{}
		var in []sqlrewrite.Value
		hasIn := false
		for _, c := range cs {
			switch {
			case c.Range != nil:
				r = intersectRange(r, *c.Range)
			case !hasIn:
				in, hasIn = slices.Clone(c.In), true
			default:
				in = slices.DeleteFunc(in, func(v sqlrewrite.Value) bool { return !slices.Contains(c.In, v) })
			}
		}
		in = slices.DeleteFunc(in, func(v sqlrewrite.Value) bool { return !inRange(r, v.Num) })
		if hasIn && len(in) == 0 || renderRange(r) == "empty" {
			described := make([]string, len(cs))
			for i, c := range cs {
				described[i] = describeCondition(c)
			}
			return fmt.Sprintf("the WHERE selects no row whatever the data (no value of %s satisfies %s)", name, strings.Join(described, " and "))
		}
	}
	return ""
}

// noRowPlan is the plan of sel, whose WHERE selects no row (why,
// noRowWhere): every output is its aggregate's value over no row, checked
// as any output is (its column declared, its aggregate supported), and
// nothing is released, read or charged. t has sel's row expressions.
func (p *Planner) noRowPlan(t *catalog.Table, derived []sqlrewrite.DerivedColumn, sel *sqlrewrite.Select, why string) (*Plan, error) {
	b := builder{planner: p, table: t}
	plan := &Plan{Table: t, Derived: derived, NoRow: why}
	for _, item := range sel.Items {
		out := Output{Label: item.Label, Agg: item.Agg}
		if item.Agg.Func != sqlrewrite.BucketKey {
			// An aggregate's own condition keeps no row either.
			item.Agg.Where, item.Agg.Boolean = nil, nil
			var err error
			if out, err = b.output(item); err != nil {
				return nil, err
			}
		}
		out.Derive, out.Args, out.Inner = FromNoRow, nil, 0
		plan.Outputs = append(plan.Outputs, out)
	}
	return plan, nil
}

// explainNoRow renders EXPLAIN of a plan whose WHERE selects no row.
func (p *Plan) explainNoRow() (columns []string, rows [][]any) {
	columns = []string{"step", "kind", "what", "mechanism", "epsilon", "delta", "detail"}
	for i, o := range p.Outputs {
		rows = append(rows, []any{int64(i + 1), "output", o.Label, "none", 0.0, 0.0, "the value over no row (0 for COUNT, NULL otherwise)"})
	}
	rows = append(rows, []any{int64(len(p.Outputs) + 1), "total", p.Table.Name, "", 0.0, 0.0,
		p.NoRow + ": answered from the statement alone; no data read, no budget spent"})
	return columns, rows
}
