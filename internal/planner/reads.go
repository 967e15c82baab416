package planner

import (
	"slices"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Reads returns the backend columns of p.Table that p's fetches may read
// (catalog.Column.Source, and catalog.Table.PrivacyUnit), sorted, each
// once: the aggregated columns, those of the WHERE, of the synopses'
// and the interactive domain's fetches and of the profile, a derived
// column (withRowExprs) standing for the columns its expression reads.
// On a table with a privacy unit it is every declared column and the
// unit column, whatever the statement: every fetch there orders each
// unit's rows by all the declared columns (sqlrewrite.UnitBound.Order).
// A plan whose WHERE selects no row (NoRow) reads nothing else. It
// depends on the plan alone, so that a check of these columns against
// the backend's schema (exec.Executor.SetTableCheck) never depends on
// the data.
func (p *Plan) Reads() []string {
	r := reads{}
	r.plan(p)
	return r.sorted()
}

// Reads returns the backend columns qp's fetches may read, as Plan.Reads
// says: those of its base plan or parts, of its GROUP BY keys and group
// filters, and of a key chosen by partition selection with the WHERE its
// counts read. A plan that reads no row (Empty) reads nothing on a table
// without a privacy unit.
func (qp *QueryPlan) Reads() []string {
	r := reads{}
	in := r.in(qp.Derived)
	if qp.Table != nil {
		in.table(qp.Table)
	}
	if qp.Empty {
		return r.sorted()
	}
	if qp.Base != nil {
		r.plan(qp.Base)
	}
	for _, part := range qp.Parts {
		r.plan(part.Plan)
	}
	in.dims(qp.Dims)
	for _, f := range qp.GroupFilters {
		in.conditions(f)
	}
	if sel := qp.Selection; sel != nil {
		in.column(sel.Column)
		in.conditions(qp.Filter)
		in.predicate(qp.Boolean)
	}
	return r.sorted()
}

// reads is a set of backend column names.
type reads map[string]bool

// sorted returns the names in r in order.
func (r reads) sorted() []string {
	names := make([]string, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// plan adds the columns p reads, its derived columns read through their
// expressions.
func (r reads) plan(p *Plan) {
	in := r.in(p.Derived)
	in.table(p.Table)
	if p.NoRow != "" {
		return
	}
	in.conditions(p.Filter)
	in.predicate(p.Boolean)
	for _, rel := range p.Releases {
		in.column(rel.Stat.Column)
		in.column(rel.Stat.Column2)
	}
	for _, o := range p.Outputs {
		in.column(o.Column)
	}
	if p.Synopsis != nil {
		for _, s := range p.Synopsis.Synopses {
			in.column(s.Column)
			r.fetch(s.Histogram)
		}
	}
	if p.Interactive != nil {
		r.fetch(p.Interactive.Cells)
	}
	if p.Profile != nil {
		in.name(p.Profile.Column)
	}
}

// fetch adds the columns read by f, a fetch the plan carries: a
// synopsis's histogram (its WHERE and column) or the interactive domain's
// cells (their columns).
func (r reads) fetch(f sqlrewrite.Fetch) {
	in := r.in(f.Derived)
	in.conditions(f.Filter)
	in.predicate(f.Boolean)
	if f.Histogram != nil {
		in.name(f.Histogram.Column)
	}
	if f.Cells != nil {
		in.dims(f.Cells.Dims)
	}
}

// in returns the adder of r for names among which those of derived stand
// for their expressions' columns.
func (r reads) in(derived []sqlrewrite.DerivedColumn) adder {
	return adder{out: r, derived: derived}
}

// adder adds backend column names to out, a derived column's as the
// columns of its expression.
type adder struct {
	out     reads
	derived []sqlrewrite.DerivedColumn
}

// name adds the backend column name ("" adds nothing).
func (a adder) name(name string) {
	if name == "" {
		return
	}
	for _, d := range a.derived {
		if d.Name == name {
			d.Expr.Sourced(func(c string) string { a.out[c] = true; return c })
			return
		}
	}
	a.out[name] = true
}

// column adds c's backend column (nil adds nothing).
func (a adder) column(c *catalog.Column) {
	if c != nil {
		a.name(c.Source)
	}
}

// table adds, on a table with a privacy unit, every declared column and
// the unit column.
func (a adder) table(t *catalog.Table) {
	if !t.HasPrivacyUnit() {
		return
	}
	a.name(t.PrivacyUnit)
	for i := range t.Columns {
		a.column(&t.Columns[i])
	}
}

// conditions adds the columns of cs.
func (a adder) conditions(cs []sqlrewrite.Condition) {
	for _, c := range cs {
		a.name(c.Column)
	}
}

// predicate adds the columns of p's leaves.
func (a adder) predicate(p *sqlrewrite.Predicate) {
	if p == nil {
		return
	}
	if p.Leaf != nil {
		a.name(p.Leaf.Column)
	}
	for _, arg := range p.Args {
		a.predicate(arg)
	}
}

// dims adds the columns of ds.
func (a adder) dims(ds []sqlrewrite.CellDim) {
	for _, d := range ds {
		a.name(d.Column)
	}
}
