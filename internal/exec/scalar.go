package exec

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// runScalars answers a query with scalar subqueries (planner.QueryPlan
// with Scalars; planner's scalar.go gives the guarantee): the statement's
// cost is reserved once, on the analyst's account and on the account of
// every table one of its queries reads, before anything is read; then
// on one snapshot each subquery is released, subqueries before the
// queries that read them, each post-processed to its value (NULL when it
// has no row), and last the query's own releases, post-processed with
// those values; the reservation is committed once. Every check that can
// refuse the statement (the tables' schema, the bind arguments) runs
// before the reservation, for every query.
func (e *Executor) runScalars(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (*Result, error) {
	var tables []*catalog.Table
	for _, n := range scalarNodes(qp) {
		if n.Table != nil {
			if err := e.checkTable(ctx, user, n.Table, n.Reads); err != nil {
				return nil, err
			}
			if !slices.Contains(tables, n.Table) {
				tables = append(tables, n.Table)
			}
		}
		if err := e.checkQueryArguments(n); err != nil {
			return nil, err
		}
	}
	if qp.Empty {
		nulls := make([]planner.Datum, len(qp.Scalars))
		for i := range nulls {
			nulls[i].Null = true
		}
		return postProcessedScalars(qp, nil, nulls, []Warning{note("the LIMIT leaves no row whatever the data: no subquery is released, no data read, no budget spent")})
	}
	run := &scalarRun{e: e, ctx: ctx, src: src, cost: qp.Cost}
	answer := func() (*Result, error) {
		scalars, warnings, err := run.values(qp, "")
		if err != nil {
			return nil, err
		}
		rows, warnings, err := run.released(qp, scalars, warnings)
		if err != nil {
			return nil, err
		}
		return postProcessedScalars(qp, rows, scalars, append(run.notes(qp), warnings...))
	}
	if qp.Cost == (planner.Cost{}) || len(tables) == 0 {
		// No release (every query's WHERE selects no row whatever the
		// data, or its LIMIT none): nothing is read or charged.
		return answer()
	}
	var res *Result
	err := e.paidOn(ctx, user, tables, qp.Cost, scalarMemo(qp), scalarHint(qp), func(readData *bool) error {
		snap, err := e.backend.Snapshot(ctx, user)
		if err != nil {
			return err
		}
		defer snap.Close()
		run.snap, run.readData = snap, readData
		res, err = answer()
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// scalarNodes lists the queries of a statement with scalar subqueries,
// each subquery before the query that reads it.
func scalarNodes(qp *planner.QueryPlan) []*planner.QueryPlan {
	var out []*planner.QueryPlan
	for _, sub := range qp.Scalars {
		out = append(out, scalarNodes(sub)...)
	}
	return append(out, qp)
}

// scalarMemo describes the statement's charge in the ledger's history.
func scalarMemo(qp *planner.QueryPlan) string {
	var tables []string
	for _, n := range scalarNodes(qp) {
		if n.Table != nil && !slices.Contains(tables, n.Table.Name) {
			tables = append(tables, n.Table.Name)
		}
	}
	var labels []string
	for _, c := range qp.Query.Columns {
		labels = append(labels, c.Label)
	}
	return fmt.Sprintf("%s: %s (%d scalar subquery(ies))", strings.Join(tables, ", "), strings.Join(labels, ", "), len(qp.Scalars))
}

// scalarHint is the refusal hint for want of δ of every query's plans
// (planner.Plan.DeltaHint).
func scalarHint(qp *planner.QueryPlan) string {
	var hints []string
	for _, n := range scalarNodes(qp) {
		var plans []*planner.Plan
		if n.Base != nil {
			plans = append(plans, n.Base)
		}
		for _, part := range n.Parts {
			plans = append(plans, part.Plan)
		}
		for _, p := range plans {
			if h := p.DeltaHint(); h != "" && !slices.Contains(hints, h) {
				hints = append(hints, h)
			}
		}
	}
	return strings.Join(hints, "; ")
}

// scalarRun runs the queries of one statement with scalar subqueries
// under its one reservation, on one snapshot.
type scalarRun struct {
	e        *Executor
	ctx      context.Context
	snap     *backend.Snapshot
	src      noise.Source
	readData *bool
	// cost is the statement's, which every note states.
	cost planner.Cost
}

// values releases qp's subqueries and returns their values, in order,
// with the notes of their releases and post-processing, each prefixed
// with the subquery it is about: its path (#2 for qp's second, #2.1 for
// the first subquery of that one, after path) and its text, cut short
// (noteText), so that the notes of nested subqueries grow with their
// number, not with the statement's length times its nesting.
func (r *scalarRun) values(qp *planner.QueryPlan, path string) ([]planner.Datum, []Warning, error) {
	values := make([]planner.Datum, len(qp.Scalars))
	var warnings []Warning
	for k, sub := range qp.Scalars {
		if err := r.ctx.Err(); err != nil {
			return nil, nil, err
		}
		at := path + strconv.Itoa(k+1)
		inner, innerNotes, err := r.values(sub, at+".")
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, innerNotes...)
		rows, w, err := r.released(sub, inner, nil)
		if err != nil {
			return nil, nil, err
		}
		out, w, err := postProcess(sub, rows, inner, w)
		if err != nil {
			return nil, nil, err
		}
		values[k] = planner.Datum{Null: true}
		if len(out) > 0 && len(out[0]) > 0 {
			values[k] = out[0][0]
		}
		prefix := fmt.Sprintf("subquery #%s %s: ", at, noteText(qp.Query.Scalars[k].Text))
		if len(out) == 0 {
			w = append(w, note("it has no row, so its value is NULL"))
		}
		for _, x := range w {
			x.Message = prefix + x.Message
			warnings = append(warnings, x)
		}
	}
	return values, warnings, nil
}

// noteTextBytes is the most of a subquery's text a note repeats.
const noteTextBytes = 120

// noteText is a subquery's text for its notes: whole up to noteTextBytes,
// else cut at a character boundary and ended with "...)".
func noteText(text string) string {
	if len(text) <= noteTextBytes {
		return text
	}
	cut := noteTextBytes
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "...)"
}

// released runs qp's own releases (not its subqueries') on the
// statement's snapshot and returns its rows, one per group with its
// released aggregates, after warnings with the notes of each release.
// scalars are the released values of qp's subqueries, which its WHERE's
// comparisons with them read (planner.Plan.WithScalars): public
// constants of the fetches, bound as typed arguments.
func (r *scalarRun) released(qp *planner.QueryPlan, scalars []planner.Datum, warnings []Warning) ([]planner.Row, []Warning, error) {
	q := qp.Query
	rows := make([]planner.Row, len(qp.Groups))
	for g := range rows {
		rows[g].Keys, rows[g].NoRow = qp.Groups[g], qp.NoRow != ""
	}
	filters := qp.GroupFilters
	if len(q.Keys) == 0 {
		filters = [][]sqlrewrite.Condition{nil}
	}
	// The notes state the statement's cost, not the query's share.
	stated := *qp
	stated.Cost = r.cost
	switch {
	case qp.Empty && qp.NoRow != "":
		return nil, append(warnings, note(qp.NoRow+": no group has a row, answered from the statement alone; no data read, no budget spent")), nil
	case qp.Empty:
		return nil, append(warnings, note("the LIMIT leaves no row whatever the data: no data read, no budget spent")), nil
	case len(qp.Parts) > 0:
		for g := range rows {
			rows[g].Aggs = make([]planner.Datum, len(q.Base.Items))
		}
		for _, part := range qp.Parts {
			plan, err := part.Plan.WithScalars(scalars)
			if err != nil {
				return nil, nil, err
			}
			released, err := r.e.releaseOn(r.ctx, r.snap, plan, qp.Dims, filters, r.src, r.readData)
			if err != nil {
				return nil, nil, err
			}
			partRows := make([]planner.Row, len(rows))
			for g := range rows {
				partRows[g].Keys = rows[g].Keys
			}
			sub := &planner.QueryPlan{Query: q, Table: qp.Table, Base: part.Plan, Cost: r.cost, GroupsPerUnit: qp.GroupsPerUnit}
			if warnings, err = releasedRows(sub, partRows, released, warnings); err != nil {
				return nil, nil, err
			}
			for g := range rows {
				for k, i := range part.Items {
					rows[g].Aggs[i] = partRows[g].Aggs[k]
				}
			}
		}
	case qp.Base == nil && qp.NoRow != "":
		warnings = append(warnings, note(qp.NoRow+": answered as over no row (an aggregate of a constant is NULL) from the statement alone; no data read, no budget spent"))
	case qp.Base == nil:
	case qp.Base.NoRow != "":
		res := noRowResult(qp.Base)
		rows[0].Aggs = datums(res.Row)
		warnings = append(warnings, res.Warnings...)
	default:
		if r.snap == nil {
			return nil, nil, dperr.New(dperr.Internal, "internal error: a release planned in a statement that reserves nothing")
		}
		base, err := qp.Base.WithScalars(scalars)
		if err != nil {
			return nil, nil, err
		}
		released, err := r.e.releaseOn(r.ctx, r.snap, base, qp.Dims, filters, r.src, r.readData)
		if err != nil {
			return nil, nil, err
		}
		if warnings, err = releasedRows(&stated, rows, released, warnings); err != nil {
			return nil, nil, err
		}
	}
	return rows, warnings, nil
}

// notes are the notes on the whole statement: how its ε and δ are split
// between its subqueries and its own releases.
func (r *scalarRun) notes(qp *planner.QueryPlan) []Warning {
	var shares []string
	for k, sub := range qp.Scalars {
		shares = append(shares, fmt.Sprintf("subquery #%d epsilon=%.6g delta=%.6g", k+1, sub.Cost.Epsilon, sub.Cost.Delta))
	}
	shares = append(shares, fmt.Sprintf("the statement's own releases epsilon=%.6g delta=%.6g", qp.Share.Epsilon, qp.Share.Delta))
	where := ""
	for _, n := range scalarNodes(qp) {
		if n.Query.Base != nil && len(sqlrewrite.ScalarUses(n.Query.Base.Where, n.Query.Base.Boolean)) > 0 {
			where = "; a WHERE that compares a column with a subquery reads its released value as a public constant of the releases after it, bound as a typed argument " +
				"(adaptive sequential composition; NULL makes the comparison UNKNOWN)"
			break
		}
	}
	return []Warning{note(fmt.Sprintf("scalar subqueries: the statement's epsilon=%.6g delta=%.6g is split over all its releases (basic sequential composition), reserved once: %s; "+
		"each subquery is released first, and what reads its value is post-processing of a released value%s", qp.Cost.Epsilon, qp.Cost.Delta, strings.Join(shares, ", "), where))}
}
