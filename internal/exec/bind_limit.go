package exec

import (
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// checkArguments refuses, before anything is reserved, a statement one of
// whose fetches could bind more arguments than the backend accepts in one
// query (sqlrewrite.MaxBindArguments): text constants are bind arguments,
// so WHERE name IN ('v0', …, 'v69999') passed planning, was reserved and
// charged, and then the backend refused it. What a fetch binds is a
// function of the statement and the configuration only (the filter, the
// Boolean predicate, the derived columns, the keys' declared values, the
// groups' conditions, and at most planner.MaxGroups released values),
// never of the data, so the refusal is too.
//
// The count is that of one fetch that binds everything any fetch of the
// statement binds: base's rows (its filter, predicate, derived columns and
// partitions) grouped by dims, on a unit table bounded within groups of
// dims, which the grouped fetches read, plus the most any one group's
// conditions (filters, widestFilter) bind, once per partition, which each
// group's own fetches add to base's rows (on a unit table bounded within
// dims too), plus the LIMIT and OFFSET of a fetch of ranks
// (sqlrewrite.RankArguments), counted whatever the plan: whether a
// mechanism sends one can depend on the data (a median sends no window
// when no value is readable). A fetch that cannot render so (a malformed
// plan) is left to fail where it runs, as it would have.
func (e *Executor) checkArguments(base *planner.Plan, dims []sqlrewrite.CellDim, filters [][]sqlrewrite.Condition) error {
	d := e.backend.Dialect()
	scope := unitScope{salt: strings.Repeat("0", 32)}
	count := []sqlrewrite.SummaryTerm{{Kind: sqlrewrite.CountAll}}
	f := sqlrewrite.Fetch{Summary: count}
	if len(dims) > 0 {
		if base.Table.HasPrivacyUnit() {
			scope = groupedScope(scope, dims, base.Table.MaxGroupsPerUnit)
		}
		f = sqlrewrite.Fetch{Grouped: &sqlrewrite.GroupedSummary{Dims: dims, Terms: count}}
	}
	_, args, err := sqlrewrite.Render(e.fetch(base, 1, scope, f), d)
	if err != nil {
		return nil
	}
	n, most := len(args), 0
	if widest := widestFilter(filters); widest != nil {
		if _, args, err := sqlrewrite.Render(sqlrewrite.Fetch{Table: base.Table.Source, Partitions: base.Table.Partitions, Filter: widest, Summary: count}, d); err == nil {
			most = len(args)
		}
	}
	return tooManyArguments(n+most+sqlrewrite.RankArguments, d)
}

// tooManyArguments refuses a query of n bind arguments when dialect d
// accepts fewer (sqlrewrite.MaxBindArguments).
func tooManyArguments(n int, d sqlrewrite.Dialect) error {
	if limit := sqlrewrite.MaxBindArguments(d); n > limit {
		return dperr.New(dperr.Unsupported, "this statement's text constants (IN lists, LIKE patterns, CASE conditions, and the declared values of its GROUP BY keys) "+
			"make %d bind arguments in one query, and the backend (%s) accepts at most %d: use fewer IN values, "+
			"or a GROUP BY over a column whose values are declared in the configuration (values:) instead of a long IN list", n, d, limit)
	}
	return nil
}

// checkPlanArguments is checkArguments for every fetch Run may send for
// plan: an interactive plan's histogram over its domain (interactiveFetch,
// which creates the instance or reads the truth), each synopsis's build
// (SynopsisSpec.Histogram, whose filter holds the statement's conditions
// on the other columns), and the plan's own releases' fetches. It runs
// before any branch of Run reserves or claims anything: a synopsis build
// refused by the backend for its arguments claimed and charged the
// build's ε although nothing was read.
func (e *Executor) checkPlanArguments(plan *planner.Plan) error {
	d := e.backend.Dialect()
	scope := unitScope{salt: strings.Repeat("0", 32)}
	check := func(f sqlrewrite.Fetch) error {
		_, args, err := sqlrewrite.Render(f, d)
		if err != nil {
			return nil // a malformed fetch fails where it runs, as checkArguments leaves it
		}
		return tooManyArguments(len(args), d)
	}
	if ip := plan.Interactive; ip != nil {
		return check(interactiveFetch(ip, scope.salt))
	}
	if sp := plan.Synopsis; sp != nil {
		for _, spec := range sp.Synopses {
			f := spec.Histogram
			f.Unit = unitBound(spec.Table, spec.RowsPerUnit(), scope)
			if err := check(f); err != nil {
				return err
			}
		}
		if len(plan.Releases) == 0 {
			return nil
		}
	}
	return e.checkArguments(plan, nil, nil)
}

// checkQueryArguments is checkArguments for every fetch qp's run may send
// (RunQuery): each part's, the grouped statement's, partition selection's
// counts and, after it, the released values' (counted as the most
// releaseSelected keeps).
func (e *Executor) checkQueryArguments(qp *planner.QueryPlan) error {
	switch {
	case len(qp.Parts) > 0:
		for _, part := range qp.Parts {
			if err := e.checkArguments(part.Plan, qp.Dims, qp.GroupFilters); err != nil {
				return err
			}
		}
	case qp.Selection != nil:
		base := qp.Base
		if base == nil {
			base = &planner.Plan{Table: qp.Table, Filter: qp.Filter, Boolean: qp.Boolean, Derived: qp.Derived}
		}
		sel := qp.Selection
		released := make([]sqlrewrite.Value, qp.SelectedLimit()) // releaseSelected's cap
		for i := range released {
			released[i] = sqlrewrite.Value{Num: float64(i), Str: strconv.Itoa(i), IsText: !sel.Column.Numeric()}
		}
		byValue := !qp.Table.HasPrivacyUnit() || len(qp.Dims) == 0
		dims := append([]sqlrewrite.CellDim{{Column: sel.Column.Source, Values: released, ByValue: byValue, Exact: true}}, qp.Dims...)
		filters := [][]sqlrewrite.Condition{keyFilters(sel.Column.Source, released[:1])[0]}
		for _, g := range qp.GroupFilters {
			filters = append(filters, append(keyFilters(sel.Column.Source, released[:1])[0], g...))
		}
		return e.checkArguments(base, dims, filters)
	case qp.Base != nil && !qp.Query.Listing && !qp.Empty:
		return e.checkArguments(qp.Base, qp.Dims, qp.GroupFilters)
	}
	return nil
}

// widestFilter returns the group conditions that bind the most arguments:
// a condition binds one per value of a text column and one per LIKE
// pattern. Counted without rendering each group's, whose values may add
// up to the square of the groups' number (ValueConditions: a group of a
// declared text key excludes the values before it).
func widestFilter(filters [][]sqlrewrite.Condition) []sqlrewrite.Condition {
	var widest []sqlrewrite.Condition
	most := -1
	for _, filter := range filters {
		n := 0
		for _, c := range filter {
			if c.Text {
				n += len(c.In)
			}
			if c.Like != nil {
				n++
			}
		}
		if n > most {
			widest, most = filter, n
		}
	}
	return widest
}
