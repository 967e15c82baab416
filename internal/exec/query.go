package exec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// RunQuery executes a query plan: the releases of every group (one
// reservation of the statement's cost: parallel composition, see
// planner.QueryPlan), then the post-processing of the released rows.
// A listing, or a query of constants only, reads no data and spends
// nothing. The result's columns have the plan's types (Result.Types).
func (e *Executor) RunQuery(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (*Result, error) {
	ctx, cancel := e.bounded(ctx)
	defer cancel()
	if len(qp.Scalars) > 0 {
		res, err := e.runScalars(ctx, user, qp, src)
		if err != nil {
			return nil, err
		}
		return res, res.conform(qp.ColumnTypes())
	}
	if err := e.checkQueryArguments(qp); err != nil {
		return nil, err
	}
	if spendsOwnBudget(qp) {
		// Run checks the statements it pays for.
		if err := e.checkTable(ctx, user, qp.Table, qp.Reads); err != nil {
			return nil, err
		}
	}
	run := e.runQuery
	if e.repeatWindow > 0 && spendsOwnBudget(qp) {
		run = e.runRepeatableQuery
	}
	res, err := run(ctx, user, qp, src)
	if err != nil {
		return nil, err
	}
	return res, res.conform(qp.ColumnTypes())
}

// spendsOwnBudget reports whether RunQuery pays for qp's releases itself
// (GROUP BY, aggregates with their own conditions, partition selection),
// rather than through Run (one group without keys, which repeats its
// answers itself) or not at all (listings, constants, an empty LIMIT).
func spendsOwnBudget(qp *planner.QueryPlan) bool {
	switch {
	case len(qp.Parts) > 0, qp.Selection != nil:
		return true
	case qp.Query.Listing, qp.Empty, qp.Base == nil, len(qp.Query.Keys) == 0:
		return false
	}
	return true
}

// runQuery answers qp (RunQuery, within its deadline).
func (e *Executor) runQuery(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (*Result, error) {
	q := qp.Query
	rows := make([]planner.Row, len(qp.Groups))
	for g := range rows {
		rows[g].Keys, rows[g].NoRow = qp.Groups[g], qp.NoRow != ""
	}
	var warnings []Warning
	switch {
	case len(qp.Parts) > 0:
		released, err := e.releaseParts(ctx, user, qp, src)
		if err != nil {
			return nil, err
		}
		sharing := "sharing epsilon=%.6g delta=%.6g by basic composition"
		if qp.Disjoint {
			sharing = "each spending epsilon=%.6g delta=%.6g, as no row passes two parts' conditions (parallel composition)"
		}
		warnings = append(warnings, note(fmt.Sprintf("%d group(s), %d part(s): the aggregates with their own conditions (CASE WHEN … THEN col END, range counts) "+
			"are released over their rows, "+sharing+"; each group's releases use that whole cost (parallel composition)",
			len(rows), len(qp.Parts), qp.Cost.Epsilon, qp.Cost.Delta)))
		if t := qp.Table; t.HasPrivacyUnit() && len(q.Keys) > 0 {
			warnings = append(warnings, note(fmt.Sprintf("each %s contributes to at most %d groups, so each group's parts share epsilon / %d: "+
				"protects each %s at epsilon=%.6g across at most %d groups", t.PrivacyUnit, qp.GroupsPerUnit, qp.GroupsPerUnit, t.PrivacyUnit, qp.Cost.Epsilon, qp.GroupsPerUnit)))
		}
		for g := range rows {
			rows[g].Aggs = make([]planner.Datum, len(q.Base.Items))
		}
		for j, part := range qp.Parts {
			partRows := make([]planner.Row, len(rows))
			for g := range rows {
				partRows[g].Keys = rows[g].Keys
			}
			sub := &planner.QueryPlan{Query: q, Table: qp.Table, Base: part.Plan, Cost: qp.Cost, GroupsPerUnit: qp.GroupsPerUnit} // the statement's cost and groups in the notes
			if warnings, err = releasedRows(sub, partRows, released[j], warnings); err != nil {
				return nil, err
			}
			for g := range rows {
				for k, i := range part.Items {
					rows[g].Aggs[i] = partRows[g].Aggs[k]
				}
			}
		}
	case qp.Selection != nil:
		keys, more, released, err := e.releaseSelected(ctx, user, qp, src)
		if err != nil {
			return nil, err
		}
		count := strconv.Itoa(len(keys))
		if more {
			count = "more than " + count
		}
		sel := qp.Selection
		perKey := fmt.Sprintf("each released key's releases use epsilon=%.6g (parallel composition)", qp.Cost.Epsilon-sel.Epsilon)
		if qp.Base == nil {
			perKey = "the released keys are the answer (no aggregate beside the key: the selection spends the statement's whole epsilon and delta)"
		}
		warnings = append(warnings, note(fmt.Sprintf("GROUP BY %s: %s key(s) released by partition selection (epsilon=%.6g delta=%.6g): "+
			"a value appears only if its row count plus discrete Laplace noise (scale %.6g) reaches %d, so values with few rows are not shown; %s",
			sel.Column.Name, count, sel.Epsilon, sel.Delta, sel.Scale(), sel.Threshold, perKey)))
		if t := qp.Table; t.HasPrivacyUnit() {
			released := fmt.Sprintf("the released keys are the answer (no aggregate beside the key): protects each %s at epsilon=%.6g", t.PrivacyUnit, qp.Cost.Epsilon)
			if qp.Base != nil {
				released = fmt.Sprintf("each %s contributes at most %d rows to each of at most %d released keys, whose releases use epsilon=%.6g: protects each %s at epsilon=%.6g",
					t.PrivacyUnit, t.MaxRowsPerUnit, t.MaxGroupsPerUnit, qp.Base.Cost.Epsilon, t.PrivacyUnit, qp.Cost.Epsilon)
			}
			warnings[len(warnings)-1] = note(fmt.Sprintf("GROUP BY %s: %s key(s) released by partition selection over distinct %s (epsilon=%.6g delta=%.6g): "+
				"each %s counts toward at most %d values, each value selected at epsilon=%.6g delta=%.6g: it appears only if its number of %s plus discrete Laplace noise (scale %.6g) reaches %d, "+
				"so values shared by few %s are not shown however many rows they have (a value of one %s: probability %.3g); %s",
				sel.Column.Name, count, t.PrivacyUnit, sel.Epsilon, sel.Delta, t.PrivacyUnit, sel.KeysPerUnit, sel.KeyEpsilon, sel.KeyDelta,
				t.PrivacyUnit, sel.Scale(), sel.Threshold, t.PrivacyUnit, t.PrivacyUnit, sel.KeepProbability(1), released))
		}
		if more {
			warnings = append(warnings, truncatedNote(qp))
		}
		if len(qp.Groups) > 1 {
			warnings = append(warnings, note(fmt.Sprintf("GROUP BY: each released %s value with each of the %d groups of the declared keys, empty ones included",
				sel.Column.Name, len(qp.Groups))))
		}
		rows = make([]planner.Row, 0, len(keys)*len(qp.Groups))
		for _, k := range keys {
			for _, d := range qp.Groups {
				row := planner.Row{Keys: slices.Insert(slices.Clone(d), qp.SelectedKey, k)}
				rows = append(rows, row)
			}
		}
		if qp.Base != nil {
			if warnings, err = releasedRows(qp, rows, released, warnings); err != nil {
				return nil, err
			}
		}
	case q.Listing:
		warnings = append(warnings, note("the values are the declared domain of the configuration, not read from the data; no budget spent"))
	case qp.Empty && qp.NoRow != "":
		warnings = append(warnings, note(qp.NoRow+": no group has a row, answered from the statement alone; no data read, no budget spent"))
		rows = nil
	case qp.Empty:
		warnings = append(warnings, note("the LIMIT leaves no row whatever the data: no data read, no budget spent"))
		rows = nil
	case qp.Base == nil && qp.NoRow != "":
		warnings = append(warnings, note(qp.NoRow+": answered as over no row (an aggregate of a constant is NULL) from the statement alone; no data read, no budget spent"))
	case qp.Base == nil:
		warnings = append(warnings, note("constants only: no data read, no budget spent"))
	case len(q.Keys) == 0:
		res, err := e.Run(ctx, user, qp.Base, src)
		if err != nil {
			return nil, err
		}
		rows[0].Aggs = datums(res.Row)
		for i, in := range res.Intervals {
			if i < len(rows[0].Aggs) {
				rows[0].Aggs[i].Interval = in
			}
		}
		warnings = res.Warnings
	default:
		released, err := e.releaseGroups(ctx, user, qp, src)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, note(fmt.Sprintf("GROUP BY: %d groups from the declared domains, every one released, empty ones included; "+
			"each group's releases use the statement's epsilon=%.6g delta=%.6g (parallel composition: one row is in at most one group)",
			len(qp.Groups), qp.Base.Cost.Epsilon, qp.Base.Cost.Delta)))
		if t := qp.Table; t.HasPrivacyUnit() {
			warnings[len(warnings)-1] = note(fmt.Sprintf("GROUP BY: %d groups from the declared domains, every one released, empty ones included; "+
				"each %s contributes at most %d rows to each of at most %d groups, so each group's releases use epsilon=%.6g delta=%.6g "+
				"(the statement's divided by %d): protects each %s at epsilon=%.6g across at most %d groups",
				len(qp.Groups), t.PrivacyUnit, t.MaxRowsPerUnit, qp.GroupsPerUnit, qp.Base.Cost.Epsilon, qp.Base.Cost.Delta,
				qp.GroupsPerUnit, t.PrivacyUnit, qp.Cost.Epsilon, qp.GroupsPerUnit))
		}
		if warnings, err = releasedRows(qp, rows, released, warnings); err != nil {
			return nil, err
		}
	}
	return postProcessed(qp, rows, warnings)
}

// RunConstants answers a SELECT without FROM (sqlrewrite.Query.FromLess)
// that PlanQuery planned: its one row, post-processing of constants
// alone, with MySQL's warnings and errors of the computation only (no
// note: nothing was read). It sends nothing to a backend and reserves
// nothing, so it needs no Executor. The result's columns have the plan's
// types.
func RunConstants(qp *planner.QueryPlan) (*Result, error) {
	res, err := postProcessed(qp, []planner.Row{{}}, nil)
	if err != nil {
		return nil, err
	}
	return res, res.conform(qp.ColumnTypes())
}

// postProcessed computes qp's output rows from rows, its groups with
// their released aggregates, after warnings, the notes of the releases:
// WITH ROLLUP's totals, then planner.PostProcess, whose warnings and
// errors follow the notes.
func postProcessed(qp *planner.QueryPlan, rows []planner.Row, warnings []Warning) (*Result, error) {
	return postProcessedScalars(qp, rows, nil, warnings)
}

// postProcessedScalars is postProcessed of a query whose scalar
// subqueries released scalars (planner.PostProcessScalars).
func postProcessedScalars(qp *planner.QueryPlan, rows []planner.Row, scalars []planner.Datum, warnings []Warning) (*Result, error) {
	out, warnings, err := postProcess(qp, rows, scalars, warnings)
	if err != nil {
		return nil, err
	}
	columns := qp.Query.Columns
	if o := qp.Query.Outer; o != nil {
		columns = o.Columns
	}
	res := &Result{Rows: make([][]any, len(out)), Warnings: warnings}
	for _, c := range columns {
		res.Columns = append(res.Columns, c.Label)
	}
	for i, r := range out {
		res.Rows[i] = make([]any, len(r))
		for j, d := range r {
			res.Rows[i][j] = d.Value()
		}
	}
	return res, nil
}

// postProcess is the computation of postProcessedScalars: the output
// rows, and warnings with the notes and MySQL warnings of
// post-processing after it.
func postProcess(qp *planner.QueryPlan, rows []planner.Row, scalars []planner.Datum, warnings []Warning) ([][]planner.Datum, []Warning, error) {
	q := qp.Query
	for _, x := range planner.NoRowAggregates(q) {
		value := "NULL"
		if !x.Value.Null {
			value = "0"
		}
		warnings = append(warnings, note(fmt.Sprintf("%s: its argument is NULL on every row, so it aggregates no value whatever the data and is %s, its value over no row; "+
			"answered from the statement alone, no data read for it, no budget spent", x.Op, value)))
	}
	for _, it := range q.Base.Items {
		if name := strings.ToUpper(it.Label); strings.HasPrefix(name, "MIN(") || strings.HasPrefix(name, "MAX(") {
			warnings = append(warnings, note(fmt.Sprintf("%s is answered as the DP %g-quantile of the column clamped to its bounds, not the exact extreme", it.Label, it.Agg.Quantile)))
		}
	}
	if q.Rollup {
		rows = planner.Rollup(q, rows)
		warnings = append(warnings, rollupNotes(qp, rows)...)
	}
	out, computed, err := planner.PostProcessScalars(q, rows, scalars)
	switch dperr.KindOf(err) {
	case dperr.OutOfRange, dperr.ResultTooLarge:
		// A number of released values beyond BIGINT or DOUBLE, as MySQL's
		// 1690, or rows of them past catalog.MaxResultBytes: charged, as
		// the releases were made.
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot post-process the released rows")
	}
	if q.Outer != nil {
		warnings = append(warnings, note("the outer query aggregates the subquery's released rows: post-processing, no further budget spent"))
	}
	for range computed.DivisionsByZero {
		warnings = append(warnings, Warning{Level: "Warning", Code: DivisionByZeroCode, Message: "Division by 0"})
	}
	for _, t := range computed.Truncations {
		level := "Warning"
		if t.Note {
			level = "Note"
		}
		warnings = append(warnings, Warning{Level: level, Code: TruncatedCode, Message: fmt.Sprintf("Truncated incorrect %s value: '%s'", t.Type, catalog.ErrConvText(t.Value))})
	}
	for _, c := range computed.Casts {
		level := "Warning"
		if c.Note {
			level = "Note"
		}
		warnings = append(warnings, Warning{Level: level, Code: c.Code, Message: c.Message})
	}
	return out, warnings, nil
}

// releasedRows derives every group's aggregates from its releases into
// rows[g].Aggs (with their Rolled sums for WITH ROLLUP only) and adds one
// note per group and aggregate. Each group's releases are dropped from
// released once derived.
func releasedRows(qp *planner.QueryPlan, rows []planner.Row, released [][]planner.Estimate, warnings []Warning) ([]Warning, error) {
	outputs := qp.Base.Outputs
	describers := make([]*describer, len(outputs))
	for i := range outputs {
		describers[i] = newDescriber(qp.Base, &outputs[i], queryScope(qp))
	}
	warnings = slices.Grow(warnings, len(rows)*len(outputs))
	for g := range rows {
		rows[g].Aggs = make([]planner.Datum, len(outputs))
		group := groupLabel(qp.Query, rows[g].Keys)
		for i := range outputs {
			o := &outputs[i]
			v, err := o.Evaluate(released[g])
			if err != nil {
				return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot derive %s", o.Label)
			}
			rows[g].Aggs[i] = datum(outputValue(o, v))
			rows[g].Aggs[i].Interval = o.Interval(v)
			if qp.Query.Rollup { // the sums WITH ROLLUP's totals add up, which nothing else reads
				rows[g].Aggs[i].Rolled = o.Rolled(v)
			}
			warnings = append(warnings, describers[i].note(group, v))
		}
		released[g] = nil
	}
	return warnings, nil
}

// releaseParts reserves the statement's cost once and runs every part's
// releases for every group on one snapshot (releaseOn); released[j][g]
// are part j's estimates for group g.
func (e *Executor) releaseParts(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) ([][][]planner.Estimate, error) {
	reserve := *qp.Parts[0].Plan
	reserve.Cost = qp.Cost
	filters := qp.GroupFilters
	if len(qp.Query.Keys) == 0 {
		filters = [][]sqlrewrite.Condition{nil}
	}
	released := make([][][]planner.Estimate, len(qp.Parts))
	err := e.paid(ctx, user, &reserve, memo(&reserve)+fmt.Sprintf(" (%d parts)", len(qp.Parts)), reserve.DeltaHint(), func(readData *bool) error {
		snap, err := e.backend.Snapshot(ctx, user)
		if err != nil {
			return err
		}
		defer snap.Close()
		for j, part := range qp.Parts {
			if released[j], err = e.releaseOn(ctx, snap, part.Plan, qp.Dims, filters, src, readData); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return released, nil
}

// releaseSelected reserves the statement's cost, reads the count of every
// value of the private key, keeps the values that pass partition
// selection (sorted, so their order reveals nothing beyond the set), at
// most qp.SelectedLimit of them (planner.MaxGroups groups bound the
// memory and time of one statement whatever the number of distinct
// values that pass the selection), and runs the base plan's releases
// for every kept value as in releaseGroups. more reports that further values passed
// the selection and were cut (post-processing of the released set: which
// values are kept, and more, depend on that set alone).
func (e *Executor) releaseSelected(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (kept []sqlrewrite.Value, more bool, released [][]planner.Estimate, err error) {
	reserve := planner.Plan{Table: qp.Table, Cost: qp.Cost}
	if qp.Base != nil {
		reserve = *qp.Base
		reserve.Cost = qp.Cost
	}
	sel := qp.Selection
	hint := sel.DeltaHint()
	if h := reserve.DeltaHint(); h != "" {
		hint += "; " + h
	}
	err = e.paid(ctx, user, &reserve, fmt.Sprintf("%s: GROUP BY %s (partition selection)", qp.Table.Name, sel.Column.Name), hint, func(readData *bool) error {
		snap, err := e.backend.Snapshot(ctx, user)
		if err != nil {
			return err
		}
		defer snap.Close()
		*readData = true
		// Integers beyond 2^53 that the database keeps apart may read as
		// one number: one key for them; beyond the limit, the first values
		// in sorted order (post-processing of the released set).
		kept, more, err = snap.SelectedKeys(ctx, selectionFetch(qp, src), func(count int64) bool {
			return count > 0 && sel.Keep(src, count)
		}, qp.SelectedLimit())
		if err != nil {
			return err
		}
		if qp.Base == nil || len(kept) == 0 {
			return nil
		}
		// Grouped by the key's own values (on a unit table beside declared
		// keys, by their CASE: groupedScope). Text keys are matched
		// character for character, as SelectedKeys counted them.
		byValue := !qp.Table.HasPrivacyUnit() || len(qp.Dims) == 0
		dims := append([]sqlrewrite.CellDim{{Column: sel.Column.Source, Values: kept, ByValue: byValue, Exact: true}}, qp.Dims...)
		filters := make([][]sqlrewrite.Condition, 0, len(kept)*len(qp.Groups))
		for _, f := range keyFilters(sel.Column.Source, kept) {
			if qp.GroupFilters == nil { // the private key alone: one group per value
				filters = append(filters, f)
				continue
			}
			for _, declared := range qp.GroupFilters {
				filters = append(filters, append(slices.Clone(f), declared...))
			}
		}
		released, err = e.releaseOn(ctx, snap, qp.Base, dims, filters, src, readData)
		return err
	})
	if err != nil {
		return nil, false, nil, err
	}
	return kept, more, released, nil
}

// truncatedNote says that more values passed qp's partition selection
// than qp.SelectedLimit, of which the first are answered.
func truncatedNote(qp *planner.QueryPlan) Warning {
	limit, sel := qp.SelectedLimit(), qp.Selection
	each := ""
	if len(qp.Groups) > 1 {
		each = fmt.Sprintf(", each with the %d groups of the declared keys", len(qp.Groups))
	}
	return Warning{Level: "Warning", Code: NoteCode, Message: fmt.Sprintf("GROUP BY %s: more than %d values passed partition selection; only the first %d in sorted order are answered%s "+
		"(at most %d groups per statement; the cut is of the released values, in their own order: it spends nothing and depends on no unreleased data); "+
		"narrow the statement with WHERE to see the others", sel.Column.Name, limit, limit, each, planner.MaxGroups)}
}

// selectionFetch is the fetch of partition selection's counts: the rows
// per value of the key on a row-level table; on a unit table the distinct
// units per value, each unit counted toward at most max_groups_per_unit of
// its values, chosen by a keyed hash with a fresh salt (one row per unit
// and kept key: sqlrewrite.UnitBound.Key), the count the selection is
// calibrated for (planner.PartitionSelection).
func selectionFetch(qp *planner.QueryPlan, src noise.Source) sqlrewrite.Fetch {
	sel, t := qp.Selection, qp.Table
	f := sqlrewrite.Fetch{Table: t.Source, Declared: t.Name, Partitions: t.Partitions, Filter: qp.Filter, Boolean: qp.Boolean, Derived: qp.Derived,
		Keys: &sqlrewrite.KeyCounts{Column: sel.Column.Source, Numeric: sel.Column.Numeric()}}
	if t.HasPrivacyUnit() {
		f.Unit = unitBound(t, 1, unitScope{salt: newUnitSalt(&planner.Plan{Table: t}, src)})
		f.Unit.Key, f.Unit.KeyNumeric, f.Unit.MaxGroups = sel.Column.Source, sel.Column.Numeric(), sel.KeysPerUnit
	}
	return f
}

// keyFilters returns, per key, the condition column = key.
func keyFilters(column string, keys []sqlrewrite.Value) [][]sqlrewrite.Condition {
	out := make([][]sqlrewrite.Condition, len(keys))
	for i, k := range keys {
		out[i] = []sqlrewrite.Condition{{Column: column, In: []sqlrewrite.Value{k}, Exact: true}}
	}
	return out
}

// releaseGroups reserves the base plan's cost once and runs its releases
// for every group on one snapshot: the summary terms of all groups in one
// grouped fetch (empty groups get zero counts and sums), the other
// fetches per group with the group's conditions added to the filter.
func (e *Executor) releaseGroups(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) ([][]planner.Estimate, error) {
	base := qp.Base
	// The statement's cost: the base plan's on a row-level table, the whole
	// ε over the groups' shares on a unit table.
	reserve := *base
	reserve.Cost = qp.Cost
	var released [][]planner.Estimate
	err := e.paid(ctx, user, &reserve, memo(base)+fmt.Sprintf(" (GROUP BY, %d groups)", len(qp.Groups)), reserve.DeltaHint(), func(readData *bool) error {
		snap, err := e.backend.Snapshot(ctx, user)
		if err != nil {
			return err
		}
		defer snap.Close()
		released, err = e.releaseOn(ctx, snap, base, qp.Dims, qp.GroupFilters, src, readData)
		return err
	})
	if err != nil {
		return nil, err
	}
	return released, nil
}

// releaseOn runs the base plan's releases for every group of the product
// domain dims (one group, filters = [nil], when dims is empty) on snap: the summary terms of all groups in one grouped
// fetch (empty groups get zero counts and sums), the other fetches per
// group with filters[g] added to the plan's filter.
func (e *Executor) releaseOn(ctx context.Context, snap *backend.Snapshot, base *planner.Plan, dims []sqlrewrite.CellDim, filters [][]sqlrewrite.Condition, src noise.Source, readData *bool) ([][]planner.Estimate, error) {
	// On a unit table every fetch of the statement reads the same bounded
	// rows: one salt, and with keys at most max_groups_per_unit groups of
	// each unit (the planner gave each group ε / max_groups_per_unit, or
	// ε / n over fewer, n, groups: QueryPlan.GroupsPerUnit).
	scope := unitScope{salt: newUnitSalt(base, src)}
	if base.Table.HasPrivacyUnit() && len(dims) > 0 {
		scope = groupedScope(scope, dims, base.Table.MaxGroupsPerUnit)
	}
	byRows, where := summaryTerms(base)
	values := map[int64][][]float64{} // rows per unit → group → term values
	for _, rows := range slices.Sorted(maps.Keys(byRows)) {
		terms := byRows[rows]
		if len(terms) == 0 {
			continue
		}
		*readData = true
		if len(dims) == 0 { // one group, the whole filtered table
			one, err := snap.Summary(ctx, e.fetch(base, rows, scope, sqlrewrite.Fetch{Summary: terms}))
			if err != nil {
				return nil, err
			}
			values[rows] = [][]float64{one}
			continue
		}
		f := e.fetch(base, rows, scope, sqlrewrite.Fetch{Grouped: &sqlrewrite.GroupedSummary{Dims: dims, Terms: terms}})
		grouped, err := snap.GroupedSummary(ctx, f)
		if err != nil {
			return nil, err
		}
		if len(grouped) != len(filters) {
			return nil, dperr.New(dperr.Internal, "internal error: grouped fetch has %d groups, the plan %d", len(grouped), len(filters))
		}
		values[rows] = grouped
	}
	hists, err := e.groupedHistograms(ctx, snap, base, scope, dims, len(filters), readData)
	if err != nil {
		return nil, err
	}
	grids, err := e.groupedGridSums(ctx, snap, base, scope, dims, len(filters), readData)
	if err != nil {
		return nil, err
	}
	// One group's terms, histograms and grid sums, filled anew for each
	// group (releaseFrom keeps none of these containers); a group's terms
	// and grid sums are dropped from the grouped ones once it is released.
	v := make(map[int64][]float64, len(values))
	var mine [][]int64
	if hists != nil {
		mine = make([][]int64, len(hists))
	}
	var totals gridTotals
	if grids != nil {
		totals = make(gridTotals, len(grids))
	}
	released := make([][]planner.Estimate, len(filters))
	for g := range filters {
		group, groupScope := groupReads(base, scope, filters[g])
		for rows, vs := range values {
			v[rows], vs[g] = vs[g], nil
		}
		for i, h := range hists {
			if h != nil {
				mine[i] = h[g]
			}
		}
		for grid, ts := range grids {
			totals[grid], ts[g] = ts[g], sqlrewrite.GridTotals{}
		}
		if released[g], err = e.releaseFrom(ctx, snap, group, src, groupScope, where, v, mine, totals, readData); err != nil {
			return nil, err
		}
	}
	return released, nil
}

// groupedHistograms fetches, on a row-level table, the histogram each
// group's release would fetch (its mechanism's, with the group's
// conditions added to the filter) for every group at once: one
// GroupedHistogram fetch per distinct histogram, one scan where there was
// one per group. The result is per release, per group (nil for a release
// without a histogram); nil on a unit table, whose groups are bounded
// together and fetch their own.
func (e *Executor) groupedHistograms(ctx context.Context, snap *backend.Snapshot, base *planner.Plan, scope unitScope, dims []sqlrewrite.CellDim, groups int, readData *bool) ([][][]int64, error) {
	if len(dims) == 0 || base.Table.HasPrivacyUnit() {
		return nil, nil
	}
	out := make([][][]int64, len(base.Releases))
	fetched := map[sqlrewrite.Histogram][][]int64{}
	for i, r := range base.Releases {
		h := r.Mechanism.Histogram(r)
		if h == nil {
			continue
		}
		if got, ok := fetched[*h]; ok {
			out[i] = got
			continue
		}
		*readData = true
		got, err := snap.GroupedHistogram(ctx, e.fetch(base, r.RowsPerUnit, scope,
			sqlrewrite.Fetch{GroupedHist: &sqlrewrite.GroupedHistogram{Dims: dims, Histogram: *h}}))
		if err != nil {
			return nil, err
		}
		if len(got) != groups {
			return nil, dperr.New(dperr.Internal, "internal error: grouped histogram has %d groups, the plan %d", len(got), groups)
		}
		fetched[*h], out[i] = got, got
	}
	return out, nil
}

// groupedGrids are grid sums fetched for every group at once: per grid
// (its SumOnly cleared), the totals of each group.
type groupedGrids map[sqlrewrite.GridSums][]sqlrewrite.GridTotals

// gridTotals are one group's grid sums fetched at once with the others',
// by grid (its SumOnly cleared); nil when none were.
type gridTotals map[sqlrewrite.GridSums]sqlrewrite.GridTotals

// has reports whether the totals answer a request of g: fetched for the
// whole column (never a ranked request), with Σk² where g needs it.
func (t gridTotals) has(g *sqlrewrite.GridSums) bool {
	if g.Ranks != nil {
		return false
	}
	key := *g
	key.SumOnly = false
	totals, ok := t[key]
	return ok && (g.SumOnly || totals.SumSquares != nil)
}

// of returns the totals of a request of g (has(g) true).
func (t gridTotals) of(g *sqlrewrite.GridSums) sqlrewrite.GridTotals {
	key := *g
	key.SumOnly = false
	return t[key].Of(g)
}

// groupedGridSums fetches, on a row-level table, the grid sums each
// group's releases would fetch alone (planner.GridSumsRead: their only
// fetch, with the group's conditions added to the filter) for every group
// at once: one GroupedGridSums fetch per distinct grid, with Σk² where one
// of its releases needs it. Nil on a unit table, whose groups are bounded
// together and fetch their own, and without groups.
func (e *Executor) groupedGridSums(ctx context.Context, snap *backend.Snapshot, base *planner.Plan, scope unitScope, dims []sqlrewrite.CellDim, groups int, readData *bool) (groupedGrids, error) {
	if len(dims) == 0 || base.Table.HasPrivacyUnit() {
		return nil, nil
	}
	grids := map[sqlrewrite.GridSums]bool{} // grid (SumOnly cleared) → only sums asked for
	var order []sqlrewrite.GridSums
	for _, r := range base.Releases {
		g, ok := planner.GridSumsRead(r)
		if !ok {
			continue
		}
		key := *g
		key.SumOnly = false
		only, seen := grids[key]
		if !seen {
			order = append(order, key)
		}
		grids[key] = (!seen || only) && g.SumOnly
	}
	out := groupedGrids{}
	for _, key := range order {
		grid := key
		grid.SumOnly = grids[key]
		*readData = true
		got, err := snap.GroupedGridSums(ctx, e.fetch(base, 1, scope, sqlrewrite.Fetch{GroupedGrid: &sqlrewrite.GroupedGridSums{Dims: dims, Grid: grid}}))
		if err != nil {
			return nil, err
		}
		if len(got) != groups {
			return nil, dperr.New(dperr.Internal, "internal error: grouped grid sums have %d groups, the plan %d", len(got), groups)
		}
		out[key] = got
	}
	return out, nil
}

// groupReads is what one group's fetches read: on a row-level table the
// base plan with the group's conditions added to its filter; on a unit
// table the base plan's filter, with the group's conditions applied to the
// bounded rows (scope.within), since bounding each group alone would let a
// unit keep all its groups.
func groupReads(base *planner.Plan, scope unitScope, filter []sqlrewrite.Condition) (*planner.Plan, unitScope) {
	group := *base
	if base.Table.HasPrivacyUnit() {
		scope.within = filter
	} else {
		group.Filter = append(append([]sqlrewrite.Condition(nil), base.Filter...), filter...)
	}
	return &group, scope
}

// groupLabel names a group in warnings: key = value, ...
func groupLabel(q *sqlrewrite.Query, keys []sqlrewrite.Value) string {
	parts := make([]string, len(keys))
	for i, k := range q.Keys {
		name := k.Column
		if k.Date != nil {
			name = k.Date.String()
		} else if k.Tiers != nil {
			name = k.Tiers.String()
		} else if k.Bucket != nil {
			name = fmt.Sprintf("FLOOR(%s / %g)", k.Column, k.Bucket.Width)
			if !k.Bucket.Index {
				name += fmt.Sprintf(" * %g", k.Bucket.Width)
			}
		}
		switch v := keys[i]; {
		case v.Null:
			parts[i] = name + " = NULL"
		case v.IsText:
			parts[i] = fmt.Sprintf("%s = '%s'", name, v.Str)
		default:
			parts[i] = fmt.Sprintf("%s = %g", name, v.Num)
		}
	}
	return strings.Join(parts, ", ")
}

// rollupNotes writes one note per aggregate of each WITH ROLLUP
// super-aggregate row of rows (planner.Rollup): that it is computed from
// its groups' releases, and its 95% interval, the one DP_INTERVAL_LOW and
// DP_INTERVAL_HIGH return.
func rollupNotes(qp *planner.QueryPlan, rows []planner.Row) []Warning {
	var notes []Warning
	for _, r := range rows {
		if !r.Super {
			continue
		}
		group := groupLabel(qp.Query, r.Keys)
		for i, o := range qp.Base.Outputs {
			msg := fmt.Sprintf("%s (WITH ROLLUP super-aggregate): %s: computed from its groups' releases (post-processing, no further budget)", group, o.Label)
			switch d := r.Aggs[i]; {
			case d.Null:
				msg += "; NULL: no group has a value"
			case d.Interval != nil:
				of := "the sum of its groups' noises"
				if values := clampedValues(&o); values != "" {
					of = values + ", with the sum of its groups' noises"
				}
				msg += fmt.Sprintf("; 95%% interval [%.6g, %.6g] (of %s)", d.Interval.Low, d.Interval.High, of)
			default:
				msg += "; 95% interval: not available (its groups' releases carry no noise description)"
			}
			notes = append(notes, note(msg))
		}
	}
	return notes
}

func note(msg string) Warning { return Warning{Level: "Note", Code: NoteCode, Message: msg} }

// datums converts a one-row result of Run.
func datums(row []any) []planner.Datum {
	out := make([]planner.Datum, len(row))
	for i, v := range row {
		out[i] = datum(v)
	}
	return out
}

// datum is a result cell (outputValue) as a post-processing value.
func datum(v any) planner.Datum {
	switch x := v.(type) {
	case int64:
		return planner.Datum{Num: float64(x), Int: true}
	case float64:
		return planner.Datum{Num: x, Double: true} // sent as a DOUBLE
	case string:
		return planner.Datum{Str: x, IsText: true}
	case planner.Date:
		return planner.Datum{Str: string(x), IsText: true, Temporal: catalog.Date}
	case planner.DateTime:
		return planner.Datum{Str: string(x), IsText: true, Temporal: catalog.Timestamp}
	}
	return planner.Datum{Null: true}
}
