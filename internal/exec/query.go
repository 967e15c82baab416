package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// RunQuery executes a query plan: the releases of every group (one
// reservation of the statement's cost: parallel composition, see
// planner.QueryPlan), then the post-processing of the released rows.
// A listing, or a query of constants only, reads no data and spends
// nothing.
func (e *Executor) RunQuery(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) (*Result, error) {
	q := qp.Query
	rows := make([]planner.Row, len(qp.Groups))
	for g := range rows {
		rows[g].Keys = qp.Groups[g]
	}
	var warnings []Warning
	switch {
	case q.Listing:
		warnings = append(warnings, note("the values are the declared domain of the configuration, not read from the data; no budget spent"))
	case qp.Base == nil:
		warnings = append(warnings, note("constants only: no data read, no budget spent"))
	case len(q.Keys) == 0:
		res, err := e.Run(ctx, user, qp.Base, src)
		if err != nil {
			return nil, err
		}
		rows[0].Aggs = datums(res.Row)
		warnings = res.Warnings
	default:
		released, err := e.releaseGroups(ctx, user, qp, src)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, note(fmt.Sprintf("GROUP BY: %d groups from the declared domains, every one released, empty ones included; "+
			"each group's releases use the statement's epsilon=%.6g delta=%.6g (parallel composition: one row is in at most one group)",
			len(qp.Groups), qp.Base.Cost.Epsilon, qp.Base.Cost.Delta)))
		for g := range rows {
			rows[g].Aggs = make([]planner.Datum, len(qp.Base.Outputs))
			group := groupLabel(q, qp.Groups[g])
			for i, o := range qp.Base.Outputs {
				v, err := o.Evaluate(released[g])
				if err != nil {
					return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot derive %s", o.Label)
				}
				if !v.Null {
					rows[g].Aggs[i] = planner.Datum{Num: v.Value, Int: o.Integer}
					if o.Integer {
						rows[g].Aggs[i].Num = float64(int64(v.Value))
					}
				} else {
					rows[g].Aggs[i] = planner.Datum{Null: true}
				}
				w := describe(qp.Base, &qp.Base.Outputs[i], v)
				w.Message = group + ": " + w.Message
				warnings = append(warnings, w)
			}
		}
	}
	for _, it := range q.Base.Items {
		if name := strings.ToUpper(it.Label); strings.HasPrefix(name, "MIN(") || strings.HasPrefix(name, "MAX(") {
			warnings = append(warnings, note(fmt.Sprintf("%s is answered as the DP %g-quantile of the column clamped to its bounds, not the exact extreme", it.Label, it.Agg.Quantile)))
		}
	}
	out, err := planner.PostProcess(q, rows)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot post-process the released rows")
	}
	res := &Result{Rows: make([][]any, len(out)), Warnings: warnings}
	for _, c := range q.Columns {
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

// releaseGroups reserves the base plan's cost once and runs its releases
// for every group on one snapshot: the summary terms of all groups in one
// grouped fetch (empty groups get zero counts and sums), the other
// fetches per group with the group's conditions added to the filter.
func (e *Executor) releaseGroups(ctx context.Context, user string, qp *planner.QueryPlan, src noise.Source) ([][]planner.Estimate, error) {
	base := qp.Base
	released := make([][]planner.Estimate, len(qp.Groups))
	err := e.paid(ctx, user, base, memo(base)+fmt.Sprintf(" (GROUP BY, %d groups)", len(qp.Groups)), func(readData *bool) error {
		snap, err := e.backend.Snapshot(ctx)
		if err != nil {
			return err
		}
		defer snap.Close()
		terms, where := summaryTerms(base)
		var values [][]float64
		if len(terms) > 0 {
			*readData = true
			f := e.fetch(base, sqlrewrite.Fetch{Grouped: &sqlrewrite.GroupedSummary{Dims: qp.Dims, Terms: terms}})
			if values, err = snap.GroupedSummary(ctx, f); err != nil {
				return err
			}
			if len(values) != len(qp.Groups) {
				return dperr.New(dperr.Internal, "internal error: grouped fetch has %d groups, the plan %d", len(values), len(qp.Groups))
			}
		}
		for g := range qp.Groups {
			group := *base
			group.Filter = append(append([]sqlrewrite.Condition(nil), base.Filter...), qp.GroupFilters[g]...)
			var v []float64
			if values != nil {
				v = values[g]
			}
			if released[g], err = e.releaseFrom(ctx, snap, &group, src, where, v, readData); err != nil {
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

// groupLabel names a group in warnings: key = value, ...
func groupLabel(q *sqlrewrite.Query, keys []sqlrewrite.Value) string {
	parts := make([]string, len(keys))
	for i, k := range q.Keys {
		name := k.Column
		if k.Bucket != nil {
			name = fmt.Sprintf("FLOOR(%s / %g)", k.Column, k.Bucket.Width)
			if !k.Bucket.Index {
				name += fmt.Sprintf(" * %g", k.Bucket.Width)
			}
		}
		v := keys[i]
		if v.IsText {
			parts[i] = fmt.Sprintf("%s = '%s'", name, v.Str)
		} else {
			parts[i] = fmt.Sprintf("%s = %g", name, v.Num)
		}
	}
	return strings.Join(parts, ", ")
}

func note(msg string) Warning { return Warning{Level: "Note", Code: NoteCode, Message: msg} }

// datums converts a one-row result of Run.
func datums(row []any) []planner.Datum {
	out := make([]planner.Datum, len(row))
	for i, v := range row {
		switch x := v.(type) {
		case nil:
			out[i] = planner.Datum{Null: true}
		case int64:
			out[i] = planner.Datum{Num: float64(x), Int: true}
		case float64:
			out[i] = planner.Datum{Num: x}
		}
	}
	return out
}
