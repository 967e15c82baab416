package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// QueryPlan is the plan of a sqlrewrite.Query: the releases of its
// aggregates, run once per group, and the public groups.
//
// Privacy (add/remove of one row): the groups are the cross product of
// the keys' declared domains (or buckets over declared bounds, or the
// years, months, days or cyclic parts of a date column's declared bounds),
// fixed by the query and the configuration; a row falls in at most one
// group (a row with a value outside a declared list is in none, and so is
// a row with a NULL key unless the domain declares null: then the NULL
// group holds exactly the unreadable values, a condition disjoint from
// every declared value's; a date key computes one cell index per row, or
// none, and each group's filter is that same index). So
// adding or removing one row changes the data of one group only, and the
// releases of every group may each use the statement's whole ε and δ:
// parallel composition, the statement costs Base.Cost once, whatever the
// number of groups. Every group is computed and released, empty ones
// included (an empty group's releases start from zero counts and sums),
// so which groups appear never depends on the data. Everything after the
// releases — the output expressions, HAVING, ORDER BY, LIMIT, DISTINCT —
// is post-processing of released values and public keys, free.
//
// Privacy on a table with a privacy unit (add/remove all rows of one
// unit): the fetches keep of each unit at most max_rows_per_unit rows in
// each of at most G = max_groups_per_unit groups, chosen independently of
// the values (sqlrewrite.UnitBound.Groups). The n groups are disjoint (a
// row is in at most one, as above), so a unit's rows lie in at most n of
// them whatever the bound, and a neighbour step changes the data of at
// most g = min(n, G) groups (GroupsPerUnit); each group's releases are
// planned with ε/g and δ/g (unitGroupSettings), and the statement costs ε
// and δ: sequential composition over the unit's g groups, parallel across
// the others. n is public (the groups above are the configuration's and
// the statement's), so g is too. With a private key (Selection) the
// number of released keys depends on the data: the keys are chosen by
// distinct units, calibrated for G keys per unit, and then bounded as a
// declared domain with g = G (planSelected).
type QueryPlan struct {
	Query *sqlrewrite.Query
	// Base plans the aggregates of one group with the statement's ε; nil
	// when the query has no aggregate (a listing, or SELECT MAX(1)). With
	// NoRow it is their plan over no row (Plan.NoRow), which releases
	// nothing and only types the columns.
	Base *Plan
	// Groups are the key values of every group, the first key most
	// significant; one empty group when the query has no keys.
	Groups [][]sqlrewrite.Value
	// Dims are the keys as dimensions of the grouped summary fetch
	// (backend columns); group g is the mixed-radix index of its cells.
	Dims []sqlrewrite.CellDim
	// GroupFilters are, per group, the conditions that select its rows
	// (backend columns), for the fetches other than the grouped summary.
	// They select exactly the rows the Dims put in that group.
	GroupFilters [][]sqlrewrite.Condition
	// Selection is set when a key is private (Query.Keys[SelectedKey]):
	// its values are those it releases at run time, and Groups, Dims and
	// GroupFilters are then the cross product of the other keys' declared
	// domains (one empty group when there is none); the released groups
	// are every selected value × every declared group (exec orders them
	// selected value first), and Cost adds the selection's ε and δ to
	// Base's.
	//
	// Privacy of a private key beside declared ones: the selection counts
	// each value of the private key over all the filtered rows, summed
	// over the declared groups, so one row changes one value's count by
	// one, exactly as with the private key alone (PartitionSelection's
	// guarantee, (ε_sel, δ)); the released groups are the cross product of
	// the selected values with the declared domains, empty cells included,
	// so which cells appear depends on the data only through the
	// selection; each row is in one cell (parallel composition of the
	// aggregates). Counting per cross cell instead would reveal, through
	// which cells pass, which declared groups each value has rows in, and
	// split each value's rows over its cells, releasing fewer values.
	Selection   *PartitionSelection
	SelectedKey int
	// Parts are set instead of Base when aggregates carry their own
	// conditions (AVG(CASE WHEN c THEN col END), range counts without a
	// synopsis): one plan per distinct condition, each over the rows where
	// the WHERE and its condition hold, sharing the statement's ε and δ in
	// proportion to their releases (each release gets the same share as in
	// one plan: basic composition), every part released for every group.
	// When Disjoint, no row passes two parts' conditions (disjoint.go) and
	// each part spends the whole ε and δ (parallel composition).
	Parts    []QueryPart
	Disjoint bool
	// GroupsPerUnit is the most of the statement's groups whose releases
	// one neighbour step changes, by which each group's ε and δ are divided
	// (unitGroupSettings): on a unit table with keys, min(n, G) over n
	// public groups and G = max_groups_per_unit with a private key
	// (Selection, whose number of released keys depends on the data); 1
	// on a row-level table (a row is in one group) or without keys.
	GroupsPerUnit int64
	// Cost is what the statement spends.
	Cost Cost
	// Table is the table queried, and Filter and Boolean its WHERE
	// (backend columns; only set with Selection, which reads the key
	// counts through them).
	Table   *catalog.Table
	Filter  []sqlrewrite.Condition
	Boolean *sqlrewrite.Predicate
	// Derived are the row expressions the statement derives as columns
	// (Select.Derive), which the key counts' filter may read.
	Derived []sqlrewrite.DerivedColumn
	// Empty is set when the LIMIT leaves no row whatever the data: LIMIT
	// 0, or an OFFSET at or past the number of rows before HAVING, which
	// is public (outputRows: one without keys; the declared domain's size
	// with them, and WITH ROLLUP's subtotals and total); or when an outer
	// query's LIMIT does (outerLeavesNoRow). Nothing is
	// planned, read or charged; the result has its columns and no row.
	// It is also set, with NoRow and Base, when the statement has GROUP BY
	// keys and its WHERE selects no row whatever the data (noRowWhere).
	Empty bool
	// aggTypes are the types of the aggregates of a plan that the LIMIT
	// leaves Empty, where neither Base nor Parts is planned to type them
	// (aggregateTypes: the statement's and the catalog's alone, so the
	// columns are those the statement without its LIMIT announces).
	aggTypes []ResultType
	// Scalars are the plans of the query's scalar subqueries
	// (sqlrewrite.Query.Scalars), released before its own releases
	// (scalar.go); Cost is then the whole statement's, and Share what the
	// query's own releases spend.
	Scalars []*QueryPlan
	Share   Cost
	// NoRow says why the WHERE selects no row whatever the data: with
	// Empty when the statement has GROUP BY keys; without keys, its one
	// row is over no row (Row.NoRow: an aggregate of a constant,
	// sqlrewrite.ExprConstAgg, is NULL) and Base, if any, is planned over
	// no row (Plan.NoRow).
	NoRow string
}

// outputRows is the number of rows the post-processing starts from, before
// HAVING, DISTINCT and LIMIT, which only drop rows: one per group and,
// WITH ROLLUP, its subtotal and total rows, counted by the rollup
// PostProcess runs, over the public groups. It never depends on the data.
func (qp *QueryPlan) outputRows() int {
	if !qp.Query.Rollup {
		return len(qp.Groups)
	}
	rows := make([]Row, len(qp.Groups))
	for i, g := range qp.Groups {
		rows[i].Keys = g
	}
	return len(rollup(rows, 0, len(qp.Query.Keys)))
}

// PlanQuery plans a Query (see QueryPlan for its guarantee, and
// planScalars for a query with scalar subqueries). It refuses a statement
// whose result may pass catalog.MaxResultBytes (checkResultSize), before
// anything is read or charged.
func (p *Planner) PlanQuery(q *sqlrewrite.Query, s Settings) (*QueryPlan, error) {
	var qp *QueryPlan
	var err error
	if len(q.Scalars) > 0 {
		qp, err = p.planScalars(q, s)
	} else {
		qp, err = p.planQuery(q, s, false)
	}
	if err != nil {
		return nil, err
	}
	if err := qp.checkResultSize(); err != nil {
		return nil, err
	}
	return qp, nil
}

// planQuery plans q alone; within says it is one query of a statement
// with scalar subqueries (planScalars), whose releases run under the
// statement's reservation: with fresh releases only (scalarPlan).
func (p *Planner) planQuery(q *sqlrewrite.Query, s Settings, within bool) (*QueryPlan, error) {
	if q.FromLess != "" || within && q.Base.Table == "" {
		// A SELECT without FROM: one row of constants, no table, no release.
		if err := checkCollation(q, nil); err != nil {
			return nil, err
		}
		return &QueryPlan{Query: q, Groups: [][]sqlrewrite.Value{nil}}, nil
	}
	declared, ok := p.cat.Table(q.Base.Table)
	if !ok {
		return nil, dperr.New(dperr.UnknownTable, "Table '%s' doesn't exist", q.Base.Table)
	}
	if err := p.usable(declared); err != nil {
		return nil, err
	}
	// A key of buckets of a row expression reads the column derived for
	// it (named by its text; the base plans derive the same).
	t, derived, err := withRowExprs(declared, nil, q.Base.Derive)
	if err != nil {
		return nil, err
	}
	if err := checkCollation(q, t); err != nil {
		return nil, err
	}
	qp := &QueryPlan{Query: q, Groups: [][]sqlrewrite.Value{nil}, Table: t, Derived: derived, GroupsPerUnit: 1}
	private := slices.IndexFunc(q.Keys, func(k sqlrewrite.GroupKey) bool { return k.Private })
	if private >= 0 && len(q.Keys) > 1 && t.HasPrivacyUnit() {
		return nil, dperr.New(dperr.Unsupported,
			"not supported: GROUP BY %s, without a declared domain, beside other keys on table %s, which protects each %s; "+
				"declare the key's values (values:) or group by FLOOR buckets of a bounded column", q.Keys[private].Column, t.Name, t.PrivacyUnit)
	}
	for _, k := range q.Keys {
		if k.Private {
			continue
		}
		col, ok := t.Column(k.Column)
		if !ok {
			return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'group statement'", k.Column)
		}
		dim := sqlrewrite.CellDim{Column: col.Source}
		var conds [][]sqlrewrite.Condition
		if k.Date != nil {
			axis := k.Date.Axis
			dim.Date = &axis
			for i := range k.Values {
				conds = append(conds, []sqlrewrite.Condition{{Column: col.Source, Cell: &sqlrewrite.DateCell{Axis: axis, Index: i}}})
			}
		} else if k.Tiers != nil {
			dim.Tiers, conds = tierConditions(k.Tiers, col.Source)
			dim.Unreadable = k.Tiers.Unreadable
		} else if k.Bucket == nil {
			dim.Values = k.Values
			// Text values the column's collation equates (MySQL's _ci
			// defaults, SQLite's NOCASE, PostgreSQL's citext or a
			// nondeterministic ICU collation) would otherwise both take a
			// row that the grouped fetches' CASE puts in the first only: a
			// row in two groups, each spending the whole ε.
			conds = sqlrewrite.ValueConditions(col.Source, k.Values, col.Type == catalog.Text)
		} else {
			var bucket []sqlrewrite.Condition
			var err error
			if dim.Edges, bucket, err = bucketEdges(k, col); err != nil {
				return nil, err
			}
			for _, c := range bucket {
				conds = append(conds, []sqlrewrite.Condition{c})
			}
		}
		qp.Dims = append(qp.Dims, dim)
		var groups [][]sqlrewrite.Value
		var filters [][]sqlrewrite.Condition
		for g, prefix := range qp.Groups {
			for i, v := range k.Values {
				groups = append(groups, append(append([]sqlrewrite.Value(nil), prefix...), v))
				var f []sqlrewrite.Condition
				if qp.GroupFilters != nil {
					f = append(f, qp.GroupFilters[g]...)
				}
				filters = append(filters, append(f, conds[i]...))
			}
		}
		qp.Groups, qp.GroupFilters = groups, filters
	}
	if len(qp.Groups) > MaxGroups {
		return nil, dperr.New(dperr.Unsupported, "not supported: GROUP BY with %d groups (at most %d)", len(qp.Groups), MaxGroups)
	}
	if len(q.Keys) > 0 && private < 0 {
		qp.GroupsPerUnit = publicGroupsPerUnit(t, len(qp.Groups))
	}
	why := ""
	if !q.Listing {
		why = noRowWhere(t, q.Base)
	}
	if why != "" && len(q.Keys) > 0 {
		// No group has a row, as over the catalog engine's empty table;
		// Base, the aggregates over no row, types their columns.
		base, err := p.plan(q.Base, s, statementPlan)
		if err != nil {
			return nil, err
		}
		qp.Base, qp.Empty, qp.NoRow = base, true, why
		return qp, nil
	}
	if len(q.Keys) == 0 {
		// The one row has no row under it: its aggregates of constants
		// are NULL, and Base (planned below) answers the others over no
		// row (Plan.NoRow).
		qp.NoRow = why
	}
	// Below, a LIMIT that leaves no row whatever the data plans no
	// aggregate: nothing is read or charged and no setting refuses the
	// statement; its aggregates are typed from the statement and the
	// catalog alone (aggregateTypes), as its form without the LIMIT
	// types them.
	if outerLeavesNoRow(q.Outer) && len(q.Base.Items) > 0 && !q.Listing {
		qp.Empty, qp.aggTypes = true, aggregateTypes(declared, q.Base)
		return qp, nil
	}
	if l := q.Limit; private >= 0 && l != nil && l.Count == 0 && len(q.Base.Items) > 0 {
		// No row whatever the data; an OFFSET past the rows is no such
		// rule here, since how many keys are released is not public.
		qp.Empty, qp.aggTypes = true, aggregateTypes(declared, q.Base)
		return qp, nil
	}
	if private >= 0 && within {
		return nil, dperr.New(dperr.Unsupported, "not supported: GROUP BY %s, a key without declared values, in a statement with a scalar subquery; "+
			"declare the key's values (values:) or group by FLOOR buckets of a bounded column", q.Keys[private].Column)
	}
	if private >= 0 {
		return p.planSelected(qp, private, s)
	}
	if len(q.Base.Items) == 0 || q.Listing {
		return qp, nil
	}
	if l := q.Limit; l != nil && (l.Count == 0 || l.Offset >= uint64(qp.outputRows())) {
		qp.Empty, qp.aggTypes = true, aggregateTypes(declared, q.Base)
		return qp, nil
	}
	groupSettings := unitGroupSettings(s, qp.GroupsPerUnit)
	if filtered(q.Base.Items) && (len(q.Keys) > 0 || why == "") {
		if _, err := p.planParts(qp, groupSettings); err != nil {
			return nil, err
		}
		qp.Cost = unitGroupCost(qp.Cost, s, qp.GroupsPerUnit)
		return qp, rollupMeans(qp)
	}
	mode := statementPlan
	switch {
	case len(q.Keys) > 0:
		mode = groupPlan
	case within:
		mode = scalarPlan
	}
	base, err := p.plan(q.Base, groupSettings, mode)
	if err != nil {
		return nil, err
	}
	qp.Base, qp.Cost = base, unitGroupCost(base.Cost, s, qp.GroupsPerUnit)
	return qp, rollupMeans(qp)
}

// publicGroupsPerUnit is GroupsPerUnit for n public groups on t: min(n,
// max_groups_per_unit) on a unit table, since a unit's rows lie in at
// most n disjoint groups and the fetches keep at most max_groups_per_unit
// of them; 1 on a row-level table. Only for groups whose number the
// statement and the configuration fix, never for keys chosen from the
// data.
func publicGroupsPerUnit(t *catalog.Table, n int) int64 {
	return max(1, min(int64(n), t.UnitGroupShare()))
}

// outerLeavesNoRow reports whether the LIMIT of an outer query o (nil if
// none) leaves no row whatever the data: LIMIT 0, or an OFFSET past the
// one row an outer query without keys has (sqlrewrite.Outer). With keys,
// how many outer rows there are depends on the released rows, so an
// OFFSET is no such rule.
func outerLeavesNoRow(o *sqlrewrite.Outer) bool {
	if o == nil || o.Limit == nil {
		return false
	}
	return o.Limit.Count == 0 || len(o.Keys) == 0 && o.Limit.Offset >= 1
}

// rollupMeans refuses WITH ROLLUP where the total of an AVG, VARIANCE or
// STDDEV cannot be computed from its groups' releases: they must be the
// sums from both bounds (autoMean) or the squares from both bounds
// (autoVariance), the defaults, which add up over groups (PostProcess);
// another mechanism (SET @dp_mechanism) releases nothing that does. It
// reads the plan only, before anything is reserved.
func rollupMeans(qp *QueryPlan) error {
	if !qp.Query.Rollup {
		return nil
	}
	plans := []*Plan{qp.Base}
	for _, part := range qp.Parts {
		plans = append(plans, part.Plan)
	}
	for _, pl := range plans {
		if pl == nil {
			continue
		}
		for _, o := range pl.Outputs {
			var want Mechanism
			switch {
			case o.Agg.Func == sqlrewrite.Avg && o.Derive == Direct:
				want = autoMean{}
			case o.Agg.Func == sqlrewrite.Avg:
			case o.isVariance() && (o.Derive == Direct || o.Derive == SquareRoot && o.Inner == Direct):
				want = autoVariance{}
			case o.isVariance():
			default:
				continue
			}
			if want == nil || pl.Releases[o.Args[0]].Mechanism.Name() != want.Name() {
				return dperr.New(dperr.Unsupported, "not supported: WITH ROLLUP with %s, not answered by the default mechanism "+
					"(the totals add up the groups' sums or squares from both bounds, which auto-mean and auto-variance release: SET @dp_mechanism = 'auto')", o.Label)
			}
		}
	}
	return nil
}

// unitGroupSettings are the settings of one group's releases when one
// neighbour step changes at most g groups' data (QueryPlan.GroupsPerUnit):
// ε and δ split evenly over g (mech.EvenShare: g shares never exceed the
// whole), sequential composition over those g groups, parallel across the
// others; the statement's settings when g = 1 (a row-level table, where
// one row is in one group, or a statement without keys).
func unitGroupSettings(s Settings, g int64) Settings {
	if g == 1 {
		return s
	}
	s.Epsilon, s.Delta = mech.EvenShare(s.Epsilon, int(g)), mech.EvenShare(s.Delta, int(g))
	return s
}

// unitGroupCost is what a grouped statement spends when each group's
// releases cost perGroup, planned with unitGroupSettings(s, g): perGroup
// when g = 1; otherwise the statement's whole ε, and its whole δ when a
// release uses δ (g shares of unitGroupSettings add up to at most them).
func unitGroupCost(perGroup Cost, s Settings, g int64) Cost {
	if g == 1 {
		return perGroup
	}
	c := Cost{Epsilon: s.Epsilon}
	if perGroup.Delta > 0 {
		c.Delta = s.Delta
	}
	return c
}

// planSelected plans GROUP BY a private key (q.Keys[private]) and, in qp,
// the groups of the declared keys beside it: partition selection with
// half of the statement's ε and δ, the aggregates of every released group
// with the other half (parallel composition across groups). With no
// aggregate (SELECT key FROM t GROUP BY key, SELECT DISTINCT key, the
// declared keys' groups beside it) the released keys are the whole
// answer, and the selection gets all of ε and δ: it alone is
// (ε, δ)-DP by PartitionSelection's guarantee, and every output row is
// a released key or a declared group (post-processing).
//
// On a unit table (add/remove all rows of one unit; only a private key
// alone, PlanQuery refuses it beside declared keys): the selection counts
// distinct units per key, each unit toward at most g = max_groups_per_unit
// keys, and is calibrated for g keys changing (PartitionSelection); the
// released keys are then a public domain, over which each unit keeps at
// most k rows in each of at most g keys (bounded by the key's own values,
// sqlrewrite.UnitBound.Key, as the selection was), and each key's releases get the other half
// divided by g (unitGroupSettings; by g even when fewer keys are released,
// since how many are depends on the data). Both halves are (ε/2, δ/2)-DP per
// unit; the statement costs ε and δ (sequential composition). With no
// aggregate, the selection alone, calibrated the same way for g keys
// per unit with all of ε and δ, is (ε, δ)-DP per unit.
func (p *Planner) planSelected(qp *QueryPlan, private int, s Settings) (*QueryPlan, error) {
	q, t := qp.Query, qp.Table
	col, ok := t.Column(q.Keys[private].Column)
	if !ok {
		return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'group statement'", q.Keys[0].Column)
	}
	if !(s.Delta > 0) {
		return nil, dperr.New(dperr.Unsupported, "GROUP BY %s needs delta > 0 (partition selection is (epsilon, delta)-DP); SET @dp_delta to a positive value", col.Name)
	}
	if !(s.Epsilon > 0) {
		return nil, dperr.New(dperr.InvalidValue, "@dp_epsilon must be > 0")
	}
	if q.Base.Boolean != nil {
		var err error
		if qp.Boolean, err = backendPredicate(t, q.Base.Boolean); err != nil {
			return nil, err
		}
	}
	qp.SelectedKey, qp.GroupsPerUnit = private, t.UnitGroupShare()
	if filtered(q.Base.Items) {
		return nil, dperr.New(dperr.Unsupported, "not supported: aggregates with their own conditions (CASE WHEN ... THEN col END, range counts) beside GROUP BY %s, a key chosen by partition selection; use WHERE", col.Name)
	}
	for _, c := range q.Base.Where {
		wc, ok := t.Column(c.Column)
		if !ok {
			return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'where clause'", c.Column)
		}
		c.Column = wc.Source
		qp.Filter = append(qp.Filter, c)
	}
	rest, selection := s, s
	if len(q.Base.Items) > 0 {
		rest.Epsilon, rest.Delta = s.Epsilon/2, s.Delta/2
		selection.Epsilon, selection.Delta = s.Epsilon-rest.Epsilon, s.Delta-rest.Delta
		base, err := p.plan(q.Base, unitGroupSettings(rest, qp.GroupsPerUnit), groupPlan)
		if err != nil {
			return nil, err
		}
		qp.Base = base
	}
	sel, err := newPartitionSelection(col, selection.Epsilon, selection.Delta, t.UnitGroupShare())
	if err != nil {
		return nil, dperr.Wrap(dperr.Unsupported, err, "not supported: partition selection at epsilon = %g, delta = %g", s.Epsilon, s.Delta)
	}
	qp.Selection = sel
	qp.Cost = Cost{Epsilon: s.Epsilon, Delta: sel.Delta}
	if qp.Base != nil {
		qp.Cost.Delta = mech.SumRoundedUp(sel.Delta, unitGroupCost(qp.Base.Cost, rest, qp.GroupsPerUnit).Delta)
	}
	return qp, nil
}

// MaxGroups is the public cap on the groups of one statement: declared
// groups beyond it are refused; of a private key's released values, the
// first SelectedLimit are answered.
const MaxGroups = 10000

// SelectedLimit is the number of released values of qp's private key
// (Selection) that are answered, the first in sorted order: MaxGroups
// over the groups of the declared keys beside it (10,000 alone, 5,000
// beside sex). Which values it keeps depends on the released set alone.
func (qp *QueryPlan) SelectedLimit() int { return MaxGroups / len(qp.Groups) }

// tierConditions returns the ranges of a tiering, in backend names, and
// per tier the conditions selecting its rows, as SQL's CASE does: the
// value readable, in the tier's range and in none of the earlier ones
// (each a Complement: not in the range, or unreadable); the ELSE tier's,
// in none of the ranges, which with UnreadableInElse holds for the
// unreadable values too (every WHEN is UNKNOWN on NULL), and otherwise
// is also readable; with UnreadableInNull, a last tier of the unreadable
// values. The conditions select exactly the rows the grouped fetch's
// CASE (sqlrewrite.CellDim) puts in each tier.
func tierConditions(t *sqlrewrite.Tiering, source string) ([]sqlrewrite.Range, [][]sqlrewrite.Condition) {
	readable := sqlrewrite.Condition{Column: source, IsNull: true, Complement: true}
	conds := make([][]sqlrewrite.Condition, len(t.Ranges)+1)
	for i := range conds {
		if i < len(t.Ranges) || t.Unreadable != sqlrewrite.UnreadableInElse {
			conds[i] = []sqlrewrite.Condition{readable}
		}
		if i < len(t.Ranges) {
			conds[i] = append(conds[i], sqlrewrite.Condition{Column: source, Range: &t.Ranges[i]})
		}
		for j := 0; j < i && j < len(t.Ranges); j++ {
			conds[i] = append(conds[i], sqlrewrite.Condition{Column: source, Range: &t.Ranges[j], Complement: true})
		}
	}
	if t.Unreadable == sqlrewrite.UnreadableInNull {
		conds = append(conds, []sqlrewrite.Condition{{Column: source, IsNull: true}})
	}
	return t.Ranges, conds
}

// bucketEdges returns the edges of a bucket key's buckets and, per
// bucket, the condition selecting its rows: [e_i, e_{i+1}), the first
// bucket open below and the last open above (values outside the bounds
// clamp into the end buckets, as the grouped fetch's keys do); a single
// bucket holds every readable value (±Infinity and a NUMERIC beyond any
// float64 included, as in the grouped fetch's CASE). Each edge is the
// least value in its bucket (Bucketing.Edges) among those the column
// holds (integers for col declared integer or derived as one), so that
// a column compared with the edges is in the bucket MySQL's FLOOR gives
// it. It fails, before anything is reserved, when two buckets have one
// edge (buckets narrower than the spacing of the column's values, some
// of them holding none) or an edge is no finite number.
func bucketEdges(k sqlrewrite.GroupKey, col *catalog.Column) ([]sqlrewrite.Edge, []sqlrewrite.Condition, error) {
	b := *k.Bucket
	source := col.Source
	edges, ok := b.Edges(k.First, len(k.Values), col.Type == catalog.Integer)
	for i := 1; ok && i < len(edges); i++ {
		ok = edges[i-1].Below(edges[i])
	}
	if !ok {
		return nil, nil, dperr.New(dperr.Unsupported, "not supported: GROUP BY buckets of %s of width %g, some of which hold no value (buckets narrower than the spacing of its values over its bounds: doubles, or integers for an integer column); use a wider bucket",
			k.Column, b.Width)
	}
	conds := make([]sqlrewrite.Condition, len(k.Values))
	last := len(k.Values) - 1
	if last == 0 {
		conds[0] = sqlrewrite.Condition{Column: source, IsNull: true, Complement: true}
		return edges, conds, nil
	}
	for i := range k.Values {
		r := &sqlrewrite.Range{Lower: edges[i].Num, LowerExact: edges[i].Exact, HasLower: i > 0,
			Upper: edges[i+1].Num, UpperExact: edges[i+1].Exact, HasUpper: i < last, UpperOpen: true}
		conds[i] = sqlrewrite.Condition{Column: source, Range: r}
	}
	return edges, conds, nil
}

// Explain renders the plan as EXPLAIN rows, in the columns of
// Plan.Explain: the releases of one group, one row for the groups (their
// number and the parallel composition), one row per output column, and
// the total.
func (qp *QueryPlan) Explain() (columns []string, rows [][]any) {
	if len(qp.Scalars) > 0 {
		return qp.explainWithScalars()
	}
	columns = []string{"step", "kind", "what", "mechanism", "epsilon", "delta", "detail"}
	q := qp.Query
	table := q.Base.Table
	var cost Cost
	if qp.Base != nil {
		_, base := qp.Base.Explain()
		rows = base[:len(base)-1]
		cost = qp.Base.Cost
		table = qp.Base.Table.Name
	}
	for j, part := range qp.Parts {
		conds := make([]string, len(part.Where))
		for i, c := range part.Where {
			conds[i] = describeCondition(c)
		}
		if part.Boolean != nil {
			conds = append(conds, describePredicate(part.Boolean))
		}
		where := "all rows"
		if len(conds) > 0 {
			where = "rows where " + strings.Join(conds, " AND ")
		}
		composition, detail := "basic composition", "the aggregates with this condition, over the rows that pass the WHERE and it"
		if qp.Disjoint {
			composition, detail = "parallel composition", detail+"; no row passes two parts' conditions, so each part spends the whole ε"
		}
		rows = append(rows, []any{int64(len(rows) + 1), "part", fmt.Sprintf("#%d: %s", j+1, where),
			composition, display(part.Plan.Cost.Epsilon), display(part.Plan.Cost.Delta), detail})
		_, prows := part.Plan.Explain()
		for _, r := range prows[:len(prows)-1] {
			r[0] = int64(len(rows) + 1)
			rows = append(rows, r)
		}
		cost = qp.Cost
		table = part.Plan.Table.Name
	}
	step := int64(len(rows))
	if sel := qp.Selection; sel != nil {
		step++
		released := fmt.Sprintf("each released %s is a group whose releases use epsilon = %s (parallel composition)",
			qp.selectedGroup(), strconv.FormatFloat(display(cost.Epsilon), 'g', -1, 64))
		if qp.Base == nil {
			released = "the released keys are the answer (no aggregate beside the key: the selection spends the statement's whole epsilon and delta)"
			if len(q.Keys) > 1 {
				released = fmt.Sprintf("each released key with each of the %d groups of the declared keys is a row of the answer (no aggregate beside the keys: the selection spends the statement's whole epsilon and delta)", len(qp.Groups))
			}
		}
		detail := fmt.Sprintf("(epsilon, delta)-DP: a value of %s is released only if its row count plus discrete Laplace noise (scale %.6g) reaches %d "+
			"(a value with one row: probability %.3g); reads the count of every value%s; %s; %s",
			sel.Column.Name, sel.Scale(), sel.Threshold, sel.KeepProbability(1), qp.declaredBeside(), released, qp.selectedCap())
		if t := qp.Table; t.HasPrivacyUnit() {
			released = fmt.Sprintf("each released key is a group in which each %s keeps at most %d rows, in at most %d keys, whose releases use epsilon = %s (the rest divided by %d)",
				t.PrivacyUnit, t.MaxRowsPerUnit, t.MaxGroupsPerUnit, strconv.FormatFloat(display(cost.Epsilon), 'g', -1, 64), t.MaxGroupsPerUnit)
			if qp.Base == nil {
				released = "the released keys are the answer (no aggregate beside the key: the selection spends the statement's whole epsilon and delta)"
			}
			detail = fmt.Sprintf("(epsilon, delta)-DP per %s: each %s counts once toward at most g = %d values of %s (chosen in the database by a keyed hash, independently of the values), "+
				"so each value's selection uses epsilon = %s and delta = %s (the selection's divided by %d): a value is released only if its number of distinct %s plus discrete Laplace noise (scale %.6g) reaches %d "+
				"(a value contributed by one %s: probability %.3g); reads the count of %s of every value; %s; %s",
				t.PrivacyUnit, t.PrivacyUnit, sel.KeysPerUnit, sel.Column.Name,
				strconv.FormatFloat(display(sel.KeyEpsilon), 'g', -1, 64), strconv.FormatFloat(sel.KeyDelta, 'g', 6, 64), sel.KeysPerUnit,
				t.PrivacyUnit, sel.Scale(), sel.Threshold, t.PrivacyUnit, sel.KeepProbability(1), t.PrivacyUnit, released, qp.selectedCap())
		}
		rows = append(rows, []any{step, "selection", fmt.Sprintf("keys of %s", sel.Column.Name), "partition selection",
			display(sel.Epsilon), display(sel.Delta), detail})
	}
	if len(q.Keys) > 0 && qp.Selection == nil {
		if len(qp.Parts) > 0 {
			cost = qp.Cost
			if qp.Table.HasPrivacyUnit() { // one group's parts: a share of the statement
				cost = Cost{}
				for _, part := range qp.Parts {
					cost.Epsilon += part.Plan.Cost.Epsilon
					cost.Delta += part.Plan.Cost.Delta
				}
			}
		}
		step++
		names := make([]string, len(q.Keys))
		for i, k := range q.Keys {
			names[i] = fmt.Sprintf("%s(%d)", keyName(k), len(k.Values))
		}
		detail := "the values are listed from the declared domains: no data is read, no budget spent"
		if qp.Empty {
			rows := fmt.Sprintf("%d declared groups", len(qp.Groups))
			if q.Rollup {
				rows += fmt.Sprintf(", %d rows with WITH ROLLUP's subtotals and total", qp.outputRows())
			}
			detail = fmt.Sprintf("%s, %s: none is computed", rows, qp.emptyWhy())
		}
		if qp.NoRow != "" {
			detail = fmt.Sprintf("%d declared groups, none of which has a row: none is computed", len(qp.Groups))
		}
		if !q.Listing && !qp.Empty && (qp.Base != nil || len(qp.Parts) > 0) {
			detail = fmt.Sprintf("every one of the %d public groups (of the declared domains and bounds, less those the WHERE's ranges exclude) is computed and released, empty ones included; "+
				"each row is in at most one group, so each group's releases use the statement's epsilon = %s and delta = %s "+
				"(parallel composition under add/remove of one row); summary aggregates of all groups in one GROUP BY fetch",
				len(qp.Groups), strconv.FormatFloat(display(cost.Epsilon), 'g', -1, 64), strconv.FormatFloat(display(cost.Delta), 'g', -1, 64))
			if t := qp.Table; t.HasPrivacyUnit() {
				reach := fmt.Sprintf("each %s contributes at most %d rows to each of at most %d groups (chosen in the database by a keyed hash, independently of the values)",
					t.PrivacyUnit, t.MaxRowsPerUnit, qp.GroupsPerUnit)
				if qp.GroupsPerUnit < t.MaxGroupsPerUnit {
					reach = fmt.Sprintf("each %s contributes at most %d rows to each group, and to at most the statement's %d group(s) (fewer than max_groups_per_unit = %d; the groups are disjoint and their number public)",
						t.PrivacyUnit, t.MaxRowsPerUnit, qp.GroupsPerUnit, t.MaxGroupsPerUnit)
				}
				detail = fmt.Sprintf("every one of the %d public groups (of the declared domains and bounds, less those the WHERE's ranges exclude) is computed and released, empty ones included; "+
					"%s, so each group's releases use epsilon = %s and delta = %s (the statement's divided by %d): protects each %s at epsilon = %s across at most %d groups; "+
					"summary aggregates of all groups in one GROUP BY fetch",
					len(qp.Groups), reach,
					strconv.FormatFloat(display(cost.Epsilon), 'g', -1, 64), strconv.FormatFloat(display(cost.Delta), 'g', -1, 64), qp.GroupsPerUnit,
					t.PrivacyUnit, strconv.FormatFloat(display(qp.Cost.Epsilon), 'g', -1, 64), qp.GroupsPerUnit)
			}
		}
		rows = append(rows, []any{step, "groups", fmt.Sprintf("%s = %d groups", strings.Join(names, " × "), len(qp.Groups)),
			"parallel composition", display(cost.Epsilon), display(cost.Delta), detail})
	}
	if q.Rollup && !q.Listing {
		step++
		rows = append(rows, []any{step, "rollup", "WITH ROLLUP", "post-processing", 0.0, 0.0,
			"a subtotal after the groups of each prefix of the keys and a total last: of a COUNT or SUM the sum of its groups' released values, " +
				"of an AVG the mean of the sums of its groups' released sums from both bounds; no data read, no budget spent"})
	}
	for _, c := range q.Columns {
		step++
		rows = append(rows, []any{step, "output", c.Label, "post-processing", 0.0, 0.0, "computed from " + ExprString(q, c.Expr)})
	}
	var post []string
	if q.Having != nil {
		post = append(post, "HAVING "+ExprString(q, q.Having))
	}
	if len(q.OrderBy) > 0 {
		keys := make([]string, len(q.OrderBy))
		for i, o := range q.OrderBy {
			keys[i] = ExprString(q, o.Expr)
			if o.Desc {
				keys[i] += " DESC"
			}
		}
		post = append(post, "ORDER BY "+strings.Join(keys, ", "))
	}
	if q.Limit != nil {
		post = append(post, fmt.Sprintf("LIMIT %d OFFSET %d", q.Limit.Count, q.Limit.Offset))
	}
	if q.Distinct {
		post = append(post, "DISTINCT")
	}
	if len(post) > 0 {
		step++
		detail := "applied to the released rows after every group is released"
		if qp.Empty {
			detail = fmt.Sprintf("keeps no row of the %d the statement has whatever the data", qp.outputRows())
		}
		rows = append(rows, []any{step, "rows", strings.Join(post, "; "), "post-processing", 0.0, 0.0, detail})
	}
	if o := q.Outer; o != nil {
		var by []string
		for _, k := range o.Keys {
			by = append(by, q.Columns[k].Label)
		}
		what := "one row of the subquery's rows"
		if len(by) > 0 {
			what = "the subquery's rows grouped by " + strings.Join(by, ", ")
		}
		for _, c := range o.Columns {
			step++
			rows = append(rows, []any{step, "outer", c.Label, "post-processing", 0.0, 0.0,
				fmt.Sprintf("computed from %s over %s (released rows: no budget)", outerString(q, c.Expr), what)})
		}
	}
	step++
	detail := qp.totalDetail()
	switch n := len(q.Base.Where); {
	case q.Base.Boolean != nil && q.Base.Boolean.Op == sqlrewrite.Never:
		detail += "; filter: no row (the WHERE is never true)"
	case q.Base.Boolean != nil:
		detail += fmt.Sprintf("; filter: %d condition(s) combined with OR and NOT", n+leaves(q.Base.Boolean))
	case n > 0 && !q.Listing:
		detail += fmt.Sprintf("; filter: %d condition(s)", n)
	}
	if uses := sqlrewrite.ScalarUses(q.Base.Where, q.Base.Boolean); len(uses) > 0 {
		var ks, conds []string
		for _, u := range uses {
			for _, i := range sqlrewrite.ScalarIndexes(u.Value) {
				if k := fmt.Sprintf("#%d", i+1); !slices.Contains(ks, k) {
					ks = append(ks, k)
				}
			}
			if c := sqlrewrite.DescribeScalarBound(u.Column, u.Temporal, u.Bound); !slices.Contains(conds, c) {
				conds = append(conds, c)
			}
		}
		detail += fmt.Sprintf(" comparing with the released value of subquery %s (%s: computed after the release, a public constant of the fetches, bound as a typed argument; "+
			"the WHERE narrows no bound or group at plan time)", strings.Join(ks, ", "), strings.Join(conds, ", "))
	}
	if t := qp.Table; t != nil && t.HasPrivacyUnit() && !q.Listing && !qp.Empty {
		if len(q.Keys) > 0 && (qp.Base != nil || len(qp.Parts) > 0) {
			detail += fmt.Sprintf(" (each %s in at most %d of them: ε / %d per group)", t.PrivacyUnit, qp.GroupsPerUnit, qp.GroupsPerUnit)
		}
		detail += unitTotal(t)
	}
	rows = append(rows, []any{step, "total", table, "", display(qp.Cost.Epsilon), display(qp.Cost.Delta), detail})
	return columns, rows
}

// emptyWhy says why a LIMIT leaves qp no row whatever the data (Empty
// without NoRow), for EXPLAIN: a LIMIT 0, the statement's own or an outer
// query's, returns none; an OFFSET is at or past every row.
func (qp *QueryPlan) emptyWhy() string {
	q := qp.Query
	switch o := q.Outer; {
	case q.Limit != nil && q.Limit.Count == 0, o != nil && o.Limit != nil && o.Limit.Count == 0:
		return "but LIMIT 0 returns no row"
	case outerLeavesNoRow(o):
		return "but the outer query's one row is before its OFFSET"
	}
	return "all before the OFFSET"
}

// declaredBeside describes the declared keys beside a private one for
// EXPLAIN ("" when there is none).
func (qp *QueryPlan) declaredBeside() string {
	if len(qp.Query.Keys) == 1 {
		return ""
	}
	return fmt.Sprintf(" over all the filtered rows (summed over the %d groups of the declared keys, so one row changes one count by one)", len(qp.Groups))
}

// selectedCap states SelectedLimit for EXPLAIN, as the statement's
// Warning says it when more values pass the selection.
func (qp *QueryPlan) selectedCap() string {
	groups := ""
	if len(qp.Groups) > 1 {
		groups = fmt.Sprintf(", %d groups per statement over the %d groups of the declared keys", MaxGroups, len(qp.Groups))
	}
	return fmt.Sprintf("at most %d released values are answered (the first in sorted order%s); when more pass the selection, "+
		"a Warning says so (the cut is of the released values: it spends nothing and depends on no unreleased data)", qp.SelectedLimit(), groups)
}

// selectedGroup names what one group of a selected key is.
func (qp *QueryPlan) selectedGroup() string {
	if len(qp.Query.Keys) == 1 {
		return "key"
	}
	var names []string
	for i, k := range qp.Query.Keys {
		if i != qp.SelectedKey {
			names = append(names, fmt.Sprintf("%s(%d)", keyName(k), len(k.Values)))
		}
	}
	return fmt.Sprintf("key × %s (%d cells per key, empty ones included)", strings.Join(names, " × "), len(qp.Groups))
}

func (qp *QueryPlan) totalDetail() string {
	switch {
	case qp.Query.Listing:
		return "declared values from the configuration; no data read"
	case qp.Empty && qp.NoRow != "":
		return qp.NoRow + ": no group has a row; no data read"
	case qp.Empty:
		return "the LIMIT leaves no row whatever the data; no data read"
	case qp.NoRow != "":
		return qp.NoRow + ": answered from the statement alone; no data read"
	case len(qp.Parts) > 0:
		composition := "basic"
		if qp.Disjoint {
			composition = "parallel"
		}
		return fmt.Sprintf("%s composition over %d part(s) with their own conditions; parallel composition over %d group(s)", composition, len(qp.Parts), len(qp.Groups))
	case qp.Selection != nil && qp.Base == nil:
		return "partition selection only: the released keys, no aggregate"
	case qp.Selection != nil && len(qp.Query.Keys) > 1:
		return fmt.Sprintf("partition selection, then basic composition over %d release(s) per cell (released key × declared group), parallel composition over the cells", len(qp.Base.Releases))
	case qp.Selection != nil:
		return fmt.Sprintf("partition selection, then basic composition over %d release(s) per released key, parallel composition over the keys", len(qp.Base.Releases))
	case qp.Base == nil:
		return "constants only; no data read"
	case len(qp.Query.Keys) > 0:
		return fmt.Sprintf("basic composition over %d release(s) per group, parallel composition over %d groups", len(qp.Base.Releases), len(qp.Groups))
	}
	return fmt.Sprintf("basic composition over %d release(s)", len(qp.Base.Releases))
}

func keyName(k sqlrewrite.GroupKey) string {
	if k.Date != nil {
		return k.Date.String()
	}
	if k.Tiers != nil {
		return k.Tiers.String()
	}
	if k.Bucket == nil {
		return k.Column
	}
	if k.Bucket.Index {
		return fmt.Sprintf("FLOOR(%s / %g)", k.Column, k.Bucket.Width)
	}
	if o := k.Bucket.Origin; o != 0 {
		return fmt.Sprintf("FLOOR((%s - %g) / %g) * %g + %g", k.Column, o, k.Bucket.Width, k.Bucket.Width, o)
	}
	return fmt.Sprintf("FLOOR(%s / %g) * %g", k.Column, k.Bucket.Width, k.Bucket.Width)
}

// ExprString renders a post-processing expression for plans and tests:
// aggregates by their text, keys by their column.
func ExprString(q *sqlrewrite.Query, e *sqlrewrite.Expr) string {
	switch e.Kind {
	case sqlrewrite.ExprConst:
		if e.Value.Null {
			return "NULL"
		}
		if e.Value.IsText {
			return strconv.Quote(e.Value.Str)
		}
		return strconv.FormatFloat(e.Value.Num, 'g', -1, 64)
	case sqlrewrite.ExprNoRow:
		return fmt.Sprintf("%s, the value over no row of %s, whose argument is NULL on every row (no data read, no budget spent)",
			ExprString(q, &sqlrewrite.Expr{Kind: sqlrewrite.ExprConst, Value: e.Value}), e.Op)
	case sqlrewrite.ExprConstAgg:
		return fmt.Sprintf("%s, the constant of %s (NULL where the WHERE selects no row whatever the data; no data read, no budget spent)",
			ExprString(q, &sqlrewrite.Expr{Kind: sqlrewrite.ExprConst, Value: e.Value}), e.Op)
	case sqlrewrite.ExprAgg:
		return q.Base.Items[e.Index].Label
	case sqlrewrite.ExprScalar:
		return fmt.Sprintf("subquery #%d %s", e.Index+1, q.Scalars[e.Index].Text)
	case sqlrewrite.ExprKey:
		return "key " + keyName(q.Keys[e.Index])
	case sqlrewrite.ExprWindow:
		w := q.Windows[e.Index]
		arg := "*"
		if w.Arg != nil {
			arg = ExprString(q, w.Arg)
		}
		return fmt.Sprintf("%s(%s) over released rows", w.Func, arg)
	}
	return operatorString(e, func(a *sqlrewrite.Expr) string { return ExprString(q, a) })
}

// NoRowAggregates are the aggregates q answers as their value over no
// row (sqlrewrite.ExprNoRow), each once, in the order its output columns,
// HAVING and ORDER BY name them.
func NoRowAggregates(q *sqlrewrite.Query) []*sqlrewrite.Expr {
	var found []*sqlrewrite.Expr
	var walk func(e *sqlrewrite.Expr)
	walk = func(e *sqlrewrite.Expr) {
		if e == nil {
			return
		}
		if e.Kind == sqlrewrite.ExprNoRow && !slices.ContainsFunc(found, func(f *sqlrewrite.Expr) bool { return f.Op == e.Op }) {
			found = append(found, e)
		}
		for _, a := range e.Args {
			walk(a)
		}
	}
	for _, c := range q.Columns {
		walk(c.Expr)
	}
	walk(q.Having)
	for _, o := range q.OrderBy {
		walk(o.Expr)
	}
	return found
}

// operatorString renders an operator, function or CASE node, its
// arguments rendered by arg.
func operatorString(e *sqlrewrite.Expr, arg func(*sqlrewrite.Expr) string) string {
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = arg(a)
	}
	switch {
	case e.Kind == sqlrewrite.ExprCase:
		return "CASE(" + strings.Join(args, ", ") + ")"
	case e.Kind == sqlrewrite.ExprFunc || len(args) == 1:
		return e.Op + "(" + strings.Join(args, ", ") + ")"
	}
	return "(" + strings.Join(args, " "+e.Op+" ") + ")"
}

// outerString renders an expression of an Outer query for EXPLAIN.
func outerString(q *sqlrewrite.Query, e *sqlrewrite.Expr) string {
	o := q.Outer
	switch e.Kind {
	case sqlrewrite.ExprColumn:
		return q.Columns[e.Index].Label
	case sqlrewrite.ExprOuterKey:
		return q.Columns[o.Keys[e.Index]].Label
	case sqlrewrite.ExprOuterAgg:
		a := o.Aggs[e.Index]
		arg := "*"
		if a.Arg != nil {
			arg = outerString(q, a.Arg)
		}
		if a.Distinct {
			arg = "DISTINCT " + arg
		}
		return strings.ToUpper(a.Func) + "(" + arg + ")"
	case sqlrewrite.ExprConst:
		return ExprString(q, e)
	}
	return operatorString(e, func(a *sqlrewrite.Expr) string { return outerString(q, a) })
}

// QueryPart is one set of releases of a QueryPlan with Parts.
type QueryPart struct {
	// Plan is planned over the rows that pass the WHERE and Where, or
	// Boolean (the aggregates' own condition with OR or NOT).
	Plan    *Plan
	Where   []sqlrewrite.Condition
	Boolean *sqlrewrite.Predicate
	// Items are the indexes in Query.Base.Items of Plan's outputs, in order.
	Items []int
}

// filtered reports whether an aggregate carries its own conditions.
func filtered(items []sqlrewrite.Item) bool {
	for _, it := range items {
		if it.Agg.Filtered() {
			return true
		}
	}
	return false
}

// conditionKey identifies an aggregate's own condition: aggregates with
// equal keys have equal conditions (every field, numbers to the bit) and
// share a part.
func conditionKey(a sqlrewrite.Aggregate) string {
	var sb strings.Builder
	for _, c := range a.Where {
		sb.WriteString(conditionIdentity(c) + ";")
	}
	if a.Boolean != nil {
		sb.WriteString("boolean " + predicateIdentity(a.Boolean))
	}
	return sb.String()
}

// conditionIdentity writes every field of c that selects rows, pointers
// followed: ExactNumbers, which only says whether its numbers are the
// statement's constants exactly, is left out, as the rows are the same.
func conditionIdentity(c sqlrewrite.Condition) string {
	s := fmt.Sprintf("%q %#v %t %t %t %q %q %t", c.Column, c.In, c.IsNull, c.Complement, c.Text, c.Temporal, c.LikeCase, c.Exact)
	if c.Range != nil {
		s += fmt.Sprintf(" range %#v", *c.Range)
	}
	if c.Cell != nil {
		s += fmt.Sprintf(" cell %#v", *c.Cell)
	}
	if c.Scalar != nil {
		s += fmt.Sprintf(" scalar %#v %s", c.Scalar.Range, sqlrewrite.DescribeScalarBound(c.Column, c.Temporal, c.Scalar))
	}
	if c.Like != nil {
		s += fmt.Sprintf(" like %q", *c.Like)
	}
	if c.Function != nil {
		s += fmt.Sprintf(" function %#v", *c.Function)
	}
	return s
}

// predicateIdentity is conditionIdentity of a predicate's tree.
func predicateIdentity(p *sqlrewrite.Predicate) string {
	if p.Leaf != nil {
		return "(" + conditionIdentity(*p.Leaf) + ")"
	}
	args := make([]string, len(p.Args))
	for i, a := range p.Args {
		args[i] = predicateIdentity(a)
	}
	return fmt.Sprintf("(%d %s)", p.Op, strings.Join(args, " "))
}

// describePredicate renders a predicate for EXPLAIN, parenthesised so
// that it reads as it selects.
func describePredicate(p *sqlrewrite.Predicate) string {
	switch p.Op {
	case sqlrewrite.Leaf:
		return "(" + describeCondition(*p.Leaf) + ")"
	case sqlrewrite.Never:
		return "FALSE"
	}
	args := make([]string, len(p.Args))
	for i, a := range p.Args {
		args[i] = describePredicate(a)
	}
	switch p.Op {
	case sqlrewrite.Not:
		return "NOT " + args[0]
	case sqlrewrite.Or:
		return "(" + strings.Join(args, " OR ") + ")"
	}
	return "(" + strings.Join(args, " AND ") + ")"
}

// planParts plans one part per distinct aggregate condition (see
// QueryPlan.Parts). Each part is planned twice: at ε = 1 to count its
// releases, then with its share ε·n_j/N of the N releases of all parts,
// so that every release gets ε/N as in a single plan; or, when no row can
// pass two parts' conditions on a table without a privacy unit, with the
// whole ε (QueryPlan.Disjoint).
func (p *Planner) planParts(qp *QueryPlan, s Settings) (*QueryPlan, error) {
	q := qp.Query
	if len(q.Keys) == 1 && q.Keys[0].Private {
		return nil, dperr.New(dperr.Unsupported, "not supported: aggregates with their own conditions beside GROUP BY a key chosen by partition selection")
	}
	var order []string
	byWhere := map[string]*QueryPart{}
	for i, it := range q.Base.Items {
		key := conditionKey(it.Agg)
		part, ok := byWhere[key]
		if !ok {
			part = &QueryPart{Where: it.Agg.Where, Boolean: it.Agg.Boolean}
			byWhere[key] = part
			order = append(order, key)
		}
		part.Items = append(part.Items, i)
	}
	selects := make([]*sqlrewrite.Select, len(order))
	counts := make([]int, len(order))
	total := 0
	for j, key := range order {
		part := byWhere[key]
		sel := &sqlrewrite.Select{Table: q.Base.Table, Boolean: both(q.Base.Boolean, part.Boolean), Derive: q.Base.Derive,
			Where: append(append([]sqlrewrite.Condition(nil), q.Base.Where...), part.Where...)}
		for _, i := range part.Items {
			it := q.Base.Items[i]
			it.Agg.Where, it.Agg.Boolean = nil, nil
			if it.Agg.Func == sqlrewrite.CountRows {
				it.Label = "COUNT(*)"
			}
			sel.Items = append(sel.Items, it)
		}
		one := s
		one.Epsilon = 1
		probe, err := p.plan(sel, one, groupPlan)
		if err != nil {
			return nil, err
		}
		selects[j], counts[j] = sel, len(probe.Releases)
		total += counts[j]
	}
	parts := make([]*QueryPart, len(order))
	for j, key := range order {
		parts[j] = byWhere[key]
	}
	// Parts read one after another: without one snapshot a row written in
	// between may be read by two of them, so they compose in parallel only
	// on a snapshot (backend.isolation repeatable_read).
	qp.Disjoint = !qp.Table.HasPrivacyUnit() && p.cat.Backend.Isolation != catalog.IsolationNone && disjointParts(parts, p.cat.Backend.Driver)
	var deltas []float64
	for j, part := range parts {
		share := s
		if !qp.Disjoint { // rounded down: the parts' exact sum is at most ε, δ
			share.Epsilon = mech.ProportionalShare(s.Epsilon, counts[j], total)
			share.Delta = mech.ProportionalShare(s.Delta, counts[j], total)
		}
		plan, err := p.plan(selects[j], share, groupPlan)
		if err != nil {
			return nil, err
		}
		part.Plan = plan
		qp.Parts = append(qp.Parts, *part)
		deltas = append(deltas, plan.Cost.Delta)
	}
	// The statement's ε, not the float sum of the parts' shares (rounded
	// down above, so their exact sum is at most ε). δ is what the parts
	// that need it spend: in parallel the largest, else their exact sum
	// rounded up, never below what is spent.
	qp.Cost.Epsilon = s.Epsilon
	if qp.Disjoint && len(deltas) > 0 {
		qp.Cost.Delta = slices.Max(deltas)
	} else {
		qp.Cost.Delta = mech.SumRoundedUp(deltas...)
	}
	return qp, nil
}

// both is the AND of two predicates, either of which may be nil.
func both(a, b *sqlrewrite.Predicate) *sqlrewrite.Predicate {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &sqlrewrite.Predicate{Op: sqlrewrite.And, Args: []*sqlrewrite.Predicate{a, b}}
}

// describeCondition renders a condition for EXPLAIN.
func describeCondition(c sqlrewrite.Condition) string {
	if c.Cell != nil {
		return fmt.Sprintf("%s in date cell %d", c.Column, c.Cell.Index)
	}
	if c.Scalar != nil {
		return sqlrewrite.DescribeScalarBound(c.Column, c.Temporal, c.Scalar)
	}
	if c.Temporal != "" && c.Range != nil {
		col := catalog.Column{Type: c.Temporal}
		var parts []string
		if r := c.Range; r.HasLower {
			parts = append(parts, fmt.Sprintf("%s %s '%s'", c.Column, map[bool]string{false: ">=", true: ">"}[r.LowerOpen], col.FormatTemporalMicros(r.Lower, r.LowerMicros)))
		}
		if r := c.Range; r.HasUpper {
			parts = append(parts, fmt.Sprintf("%s %s '%s'", c.Column, map[bool]string{false: "<=", true: "<"}[r.UpperOpen], col.FormatTemporalMicros(r.Upper, r.UpperMicros)))
		}
		return strings.Join(parts, " AND ")
	}
	switch {
	case c.IsNull && c.Complement:
		return c.Column + " IS NOT NULL"
	case c.IsNull:
		return c.Column + " IS NULL"
	case c.Complement:
		plain := c
		plain.Complement = false
		return "NOT (" + describeCondition(plain) + ") OR " + c.Column + " IS NULL"
	case c.Function != nil:
		return sqlrewrite.DescribeTextFunction(c.Column, *c.Function)
	case c.Like != nil && c.LikeCase != "":
		return fmt.Sprintf("%s(%s) LIKE %s ESCAPE '%c'", strings.ToUpper(c.LikeCase), c.Column, strconv.Quote(*c.Like), sqlrewrite.LikeEscape)
	case c.Like != nil:
		return fmt.Sprintf("%s LIKE %s ESCAPE '%c'", c.Column, strconv.Quote(*c.Like), sqlrewrite.LikeEscape)
	}
	if c.Range == nil {
		vals := make([]string, len(c.In))
		for i, v := range c.In {
			switch {
			case v.IsText:
				vals[i] = strconv.Quote(v.Str)
			case v.Decimal != "":
				vals[i] = v.Decimal // a constant's exact digits
			default:
				vals[i] = strconv.FormatFloat(v.Num, 'g', -1, 64)
			}
		}
		return fmt.Sprintf("%s IN (%s)", c.Column, strings.Join(vals, ", "))
	}
	r := c.Range
	var parts []string
	if r.HasLower {
		op := ">="
		if r.LowerOpen {
			op = ">"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", c.Column, op, describeEnd(r.Lower, r.LowerExact)))
	}
	if r.HasUpper {
		op := "<="
		if r.UpperOpen {
			op = "<"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", c.Column, op, describeEnd(r.Upper, r.UpperExact)))
	}
	return strings.Join(parts, " AND ")
}

// describeEnd writes a range end: its exact digits when it has some, else
// its number as %g.
func describeEnd(x float64, exact string) string {
	if exact != "" {
		return exact
	}
	return fmt.Sprintf("%g", x)
}
