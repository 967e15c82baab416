package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Scalar subqueries. A statement that reads scalar subqueries
// (sqlrewrite.Query.Scalars: SELECT COUNT(*) / (SELECT COUNT(*) FROM pums)
// FROM pums WHERE married = 1) is one statement of several queries: each
// subquery, and the statement's own query, is planned as a QueryPlan of
// its own, and their releases are the statement's releases.
//
// Privacy (basic sequential composition). The statement's ε and δ are
// split over all its releases as over the releases of one plan: each
// query gets the share of ε and δ in proportion to its number of
// releases (mech.ProportionalShare, rounded down, so the shares' exact
// sum is at most ε and δ), and within it each release the same share as
// in one plan. A subquery is released first, and what reads its value —
// post-processing of the statement's rows — depends on the data only
// through that released value. The statement is charged ε (exactly, as a
// plan of several releases is) and the exact sum of the δ its queries
// spend rounded up, reserved once before anything is read and committed
// once (package exec).
//
// Every query of such a statement is answered with fresh releases
// (scalarPlan, or groupPlan with keys): no synopsis or interactive
// instance, which are built under reservations of their own. Its
// refusals (a mechanism that cannot answer at its share of ε, a subquery
// that may return more than one row, a key chosen by partition selection,
// whose number of released rows depends on the data) are all at plan
// time, before anything is reserved.

// planScalars plans q, a query with scalar subqueries, and its subqueries
// (nested ones too), as the comment above says: QueryPlan.Scalars are the
// subqueries' plans, QueryPlan.Cost the statement's and QueryPlan.Share
// what q's own releases spend.
func (p *Planner) planScalars(q *sqlrewrite.Query, s Settings) (*QueryPlan, error) {
	if !(s.Epsilon > 0) {
		return nil, dperr.New(dperr.InvalidValue, "@dp_epsilon must be > 0")
	}
	// Every query of the statement, each subquery before the queries that
	// read it: the order they are released in.
	var nodes []*sqlrewrite.Query
	var walk func(q *sqlrewrite.Query)
	walk = func(q *sqlrewrite.Query) {
		for _, sc := range q.Scalars {
			walk(sc.Query)
		}
		nodes = append(nodes, q)
	}
	walk(q)
	if err := checkScalarShape(q); err != nil {
		return nil, err
	}
	// Count each query's releases: their number depends on the statement
	// and the configuration, not on ε, at which a mechanism may refuse its
	// share (below its least ε, above mech.MaxEpsilon): planned at ε = 1
	// (or the statement's, when smaller), and at the statement's ε where
	// that refuses the settings, the real shares lying between the two.
	probe := func(n *sqlrewrite.Query) (*QueryPlan, error) {
		one := s
		one.Epsilon = min(s.Epsilon, 1)
		qp, err := p.planQuery(n, one, true)
		if dperr.KindOf(err) == dperr.InvalidValue && s.Epsilon > 1 {
			if whole, werr := p.planQuery(n, s, true); werr == nil {
				return whole, nil
			}
		}
		return qp, err
	}
	counts := make([]int, len(nodes))
	total := 0
	for j, n := range nodes {
		qp, err := probe(n)
		if err != nil {
			return nil, err
		}
		if n != q {
			if err := oneScalarRow(qp); err != nil {
				return nil, err
			}
			// Post-processing holds each subquery's rows in turn, as the
			// statement's own (PlanQuery checks the statement's).
			if err := qp.checkResultSize(); err != nil {
				return nil, err
			}
		}
		counts[j] = qp.releases()
		total += counts[j]
	}
	plans := make(map[*sqlrewrite.Query]*QueryPlan, len(nodes))
	var deltas []float64
	for j, n := range nodes {
		share := s
		if counts[j] > 0 {
			share.Epsilon = mech.ProportionalShare(s.Epsilon, counts[j], total)
			share.Delta = mech.ProportionalShare(s.Delta, counts[j], total)
		}
		qp, err := p.planQuery(n, share, true)
		if err != nil {
			// Its settings are a share of the statement's: say so.
			what := "the statement's own"
			if n != q {
				what = "a subquery's"
			}
			return nil, dperr.Wrap(dperr.KindOf(err), err, "this statement's @dp_epsilon = %g and @dp_delta = %g are split over its %d release(s); %s %d get epsilon = %g and delta = %g, and with those: %v",
				s.Epsilon, s.Delta, total, what, counts[j], share.Epsilon, share.Delta, err)
		}
		if got := qp.releases(); got != counts[j] {
			return nil, dperr.New(dperr.Internal, "internal error: a query planned with %d releases has %d at epsilon = %g", counts[j], got, share.Epsilon)
		}
		if err := checkScalarWhere(n, plans); err != nil {
			return nil, err
		}
		qp.Share = qp.Cost
		for _, sc := range n.Scalars {
			sub := plans[sc.Query]
			qp.Scalars = append(qp.Scalars, sub)
			qp.Cost.Epsilon += sub.Cost.Epsilon
			qp.Cost.Delta += sub.Cost.Delta
		}
		plans[n] = qp
		deltas = append(deltas, qp.Share.Delta)
	}
	top := plans[q]
	if top.Empty {
		// No row whatever the data (a LIMIT 0): no subquery is released.
		top.Cost = Cost{}
		return top, nil
	}
	// The statement's ε, not the float sum of the shares (rounded down, so
	// their exact sum is at most ε); δ the exact sum of what the queries
	// spend, rounded up.
	top.Cost = Cost{Delta: mech.SumRoundedUp(deltas...)}
	if total > 0 {
		top.Cost.Epsilon = s.Epsilon
	}
	return top, nil
}

// maxScalarDepth and maxScalars bound a statement's scalar subqueries:
// how deeply they nest (1 for a subquery of the statement itself) and
// how many there are, whatever their nesting. Each is planned twice and
// released in turn, and the notes of a nested one name its path; the
// catalog engine's bounds are 6 levels and 64 subqueries.
const (
	maxScalarDepth = 8
	maxScalars     = 64
)

// checkScalarShape refuses a statement whose scalar subqueries nest
// deeper than maxScalarDepth or number more than maxScalars, before
// anything is planned.
func checkScalarShape(q *sqlrewrite.Query) error {
	count, depth := 0, 0
	var walk func(q *sqlrewrite.Query, level int)
	walk = func(q *sqlrewrite.Query, level int) {
		depth = max(depth, level)
		for _, sc := range q.Scalars {
			count++
			walk(sc.Query, level+1)
		}
	}
	walk(q, 0)
	switch {
	case depth > maxScalarDepth:
		return dperr.New(dperr.Unsupported, "not supported: scalar subqueries nested %d levels deep (at most %d); %s", depth, maxScalarDepth, supportedScalarShape)
	case count > maxScalars:
		return dperr.New(dperr.Unsupported, "not supported: %d scalar subqueries in one statement (at most %d); %s", count, maxScalars, supportedScalarShape)
	}
	return nil
}

// supportedScalarShape names the statements checkScalarShape answers.
var supportedScalarShape = fmt.Sprintf("a statement reads at most %d scalar subqueries, nested at most %d levels deep; split it into several statements", maxScalars, maxScalarDepth)

// releases is the number of distinct releases of qp, each paid once per
// group (parallel composition over the groups).
func (qp *QueryPlan) releases() int {
	n := 0
	if qp.Base != nil {
		n += len(qp.Base.Releases)
	}
	for _, part := range qp.Parts {
		n += len(part.Plan.Releases)
	}
	return n
}

// oneScalarRow refuses a subquery's plan that may answer more than one
// row, whatever the data: the rows before its HAVING, which the
// statement and the configuration fix (QueryPlan.outputRows), unless a
// LIMIT keeps at most one; and a key chosen by partition selection,
// whose number of released values depends on the data. A subquery's HAVING or LIMIT may leave it no row:
// its value is then NULL.
func oneScalarRow(qp *QueryPlan) error {
	q := qp.Query
	if qp.Selection != nil {
		return dperr.New(dperr.Unsupported, "not supported: a subquery that groups by %s, a key chosen by partition selection (its rows depend on the data); %s",
			qp.Selection.Column.Name, supportedScalarRow)
	}
	if n := qp.outputRows(); n > 1 && !(q.Limit != nil && q.Limit.Count <= 1) {
		return dperr.New(dperr.Unsupported, "not supported: a subquery of %d rows (one per group); %s", n, supportedScalarRow)
	}
	return nil
}

// supportedScalarRow names the subqueries of one row.
const supportedScalarRow = "a scalar subquery returns one row: aggregates without GROUP BY, or with LIMIT 1"

// explainScalars renders the subqueries' plans for Explain: per subquery
// a row that says what it spends and that it is released first, then its
// own rows (its total left out), numbered from step.
func (qp *QueryPlan) explainScalars() [][]any {
	var rows [][]any
	for k, sub := range qp.Scalars {
		_, sr := sub.Explain()
		total := sr[len(sr)-1]
		rows = append(rows, []any{int64(len(rows) + 1), "subquery", fmt.Sprintf("#%d: %s", k+1, qp.Query.Scalars[k].Text), "sequential composition",
			display(sub.Cost.Epsilon), display(sub.Cost.Delta),
			fmt.Sprintf("released first, over its own table and WHERE (%s); its value is then a constant of what reads it: post-processing of a released value", total[6])})
		for _, r := range sr[:len(sr)-1] {
			r[0] = int64(len(rows) + 1)
			rows = append(rows, r)
		}
	}
	return rows
}

// explainWithScalars is Explain of a query with scalar subqueries: the
// subqueries' rows, the query's own (at its share), and the statement's
// total.
func (qp *QueryPlan) explainWithScalars() (columns []string, rows [][]any) {
	if !qp.Empty {
		rows = qp.explainScalars()
	}
	own := *qp
	own.Scalars, own.Cost = nil, qp.Share
	columns, orows := own.Explain()
	ownTotal := orows[len(orows)-1]
	for _, r := range orows[:len(orows)-1] {
		r[0] = int64(len(rows) + 1)
		rows = append(rows, r)
	}
	table := fmt.Sprint(ownTotal[2])
	if table == "" {
		var tables []string
		for _, sub := range qp.Scalars {
			if sub.Table != nil && !strings.Contains(","+strings.Join(tables, ",")+",", ","+sub.Table.Name+",") {
				tables = append(tables, sub.Table.Name)
			}
		}
		table = strings.Join(tables, ", ")
	}
	detail := fmt.Sprintf("sequential composition: %d scalar subquery(ies) released first (%d release(s)), then the statement's own releases (%d, epsilon = %s); "+
		"the statement's epsilon and delta are split over all %d release(s) in proportion; the statement's own: %s",
		len(qp.Scalars), qp.scalarReleases(), qp.releases(), formatNumber(display(qp.Share.Epsilon)), qp.scalarReleases()+qp.releases(), ownTotal[6])
	if qp.Empty {
		detail = fmt.Sprintf("no subquery is released: %s", ownTotal[6])
	}
	rows = append(rows, []any{int64(len(rows) + 1), "total", table, "", display(qp.Cost.Epsilon), display(qp.Cost.Delta), detail})
	return columns, rows
}

// scalarReleases is the number of releases of qp's subqueries, nested
// ones included.
func (qp *QueryPlan) scalarReleases() int {
	n := 0
	for _, sub := range qp.Scalars {
		n += sub.releases() + sub.scalarReleases()
	}
	return n
}

// checkScalarWhere refuses, at plan time, a WHERE of q that compares a
// column with a value computed from subqueries (plans holds their plans)
// whose type is of another kind (exprType over the subqueries' column
// types, as Eval computes it): a number with a numeric column, a date or
// datetime with a date or timestamp column (sqlrewrite's
// scalar_where.go). A value that is NULL whatever the data compares with
// any.
func checkScalarWhere(q *sqlrewrite.Query, plans map[*sqlrewrite.Query]*QueryPlan) error {
	if q.Base == nil {
		return nil
	}
	uses := sqlrewrite.ScalarUses(q.Base.Where, q.Base.Boolean)
	if len(uses) == 0 {
		return nil
	}
	env := &typeEnv{scalars: make([]ResultType, len(q.Scalars))}
	for _, u := range uses {
		for _, k := range sqlrewrite.ScalarIndexes(u.Value) {
			if k < 0 || k >= len(q.Scalars) || plans[q.Scalars[k].Query] == nil {
				return dperr.New(dperr.Internal, "internal error: WHERE compares %s with subquery %d, which is not planned", u.Column, k+1)
			}
			types := plans[q.Scalars[k].Query].ColumnTypes()
			if len(types) != 1 {
				return dperr.New(dperr.Internal, "internal error: subquery %d has %d columns", k+1, len(types))
			}
			env.scalars[k] = types[0]
		}
	}
	for _, u := range uses {
		// An allow-list of kinds, whatever a type carries above its kind
		// (a VARCHAR's length, a DECIMAL's scale): a value of another
		// kind would be refused only once released, after the charge.
		t := exprType(u.Value, env)
		var temporal, numeric bool
		switch t.Kind() {
		case ResultDate, ResultDateTime:
			temporal = true
		case ResultBigint, ResultInt, ResultUnsigned, ResultDecimal, ResultDouble, ResultFloat:
			numeric = true
		}
		value := sqlrewrite.DescribeScalarValue(u.Value)
		if u.Value.Kind == sqlrewrite.ExprScalar {
			value = q.Scalars[u.Value.Index].Text
		}
		switch {
		case t == ResultNull:
		case u.Temporal != "" && !temporal:
			return dperr.New(dperr.Unsupported, "not supported: a comparison of the %s column %s with %s, whose value is a %s, not a date; %s",
				u.Temporal, u.Column, value, t, supportedScalarWhere)
		case u.Temporal == "" && !numeric:
			return dperr.New(dperr.Unsupported, "not supported: a comparison of the numeric column %s with %s, whose value is a %s, not a number; %s",
				u.Column, value, t, supportedScalarWhere)
		}
	}
	return nil
}

// supportedScalarWhere names the comparisons with subqueries WHERE takes.
const supportedScalarWhere = "a scalar subquery in WHERE, or arithmetic of subqueries and constants, is compared with a column of its kind: a numeric column with a number, a date or timestamp column with a date or datetime " +
	"(col > (SELECT AVG(income) FROM t), col > 1.5 * (SELECT AVG(income) FROM t), day >= (SELECT MEDIAN(day) FROM t) - INTERVAL 7 DAY, col BETWEEN (SELECT ...) AND b)"

// ScalarValueOf is a value computed from released subquery values as
// sqlrewrite.ResolveScalars takes it.
func ScalarValueOf(d Datum) sqlrewrite.ScalarValue {
	switch v := d.Value().(type) {
	case nil:
		return sqlrewrite.ScalarValue{Null: true}
	case int64:
		return sqlrewrite.ScalarValue{Exact: strconv.FormatInt(v, 10), Num: float64(v)}
	case uint64:
		return sqlrewrite.ScalarValue{Exact: strconv.FormatUint(v, 10), Num: float64(v)}
	case Decimal:
		return sqlrewrite.ScalarValue{Exact: string(v), Num: d.Num}
	case Date:
		return sqlrewrite.ScalarValue{IsText: true, Text: string(v), Temporal: catalog.Date}
	case DateTime:
		return sqlrewrite.ScalarValue{IsText: true, Text: string(v), Temporal: catalog.Timestamp}
	case string:
		return sqlrewrite.ScalarValue{IsText: true, Text: v}
	}
	return sqlrewrite.ScalarValue{Num: d.Num}
}

// WithScalars returns p with its WHERE's comparisons with subqueries
// resolved (sqlrewrite.ResolveScalars), scalars the subqueries' released
// values: each compared value is Eval of its expression over them, as
// the select list's expressions are (post-processing of released
// values; a division by zero is NULL, an overflow MySQL's 1690). It is p
// itself when it has none.
func (p *Plan) WithScalars(scalars []Datum) (*Plan, error) {
	if p == nil || len(sqlrewrite.ScalarUses(p.Filter, p.Boolean)) == 0 {
		return p, nil
	}
	value := func(e *sqlrewrite.Expr) (sqlrewrite.ScalarValue, error) {
		w := Warnings{scalars: scalars}
		d, err := Eval(e, Row{}, &w)
		if err != nil {
			return sqlrewrite.ScalarValue{}, err
		}
		return ScalarValueOf(d), nil
	}
	filter, boolean, err := sqlrewrite.ResolveScalars(p.Filter, p.Boolean, value)
	var de *dperr.Error
	switch {
	case errors.As(err, &de):
		return nil, err
	case err != nil:
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: %v", err)
	}
	out := *p
	out.Filter, out.Boolean = filter, boolean
	return &out, nil
}
