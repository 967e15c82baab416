package sqlrewrite

import (
	"math"
	"slices"
	"time"

	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// scope is the one table a private query reads, and the name its columns may
// be qualified with (the alias if there is one, else the table name as written).
type scope struct {
	table     *catalog.Table
	qualifier string
	// now, timeZone (backend.time_zone) and sessionZone (the session's
	// time_zone) give CURDATE() and NOW() (date_constants.go).
	now         func() time.Time
	timeZone    string
	sessionZone string
	// derived are the row expressions the statement reads as columns
	// (Select.Derive), each once.
	derived []*RowExpr
	// where is the WHERE of a Query when it is a conjunction, which
	// narrows the domains of its GROUP BY keys (whereRange).
	where []Condition
	// scalars, set while a Query's WHERE is converted, collects the
	// scalar subqueries its comparisons read (scalar_where.go); nil
	// elsewhere, where a subquery is refused.
	scalars *subqueries
}

// whereRange returns the interval of the column named col that every row
// the WHERE keeps lies in: the intersection of the ranges its conjunction
// puts on col, a list of numbers IN it counting as their hull; ok is
// false when no condition on col is such a range (a NOT, IS NULL, LIKE
// or text condition), so that nothing is known of col from the WHERE.
// Its ends are whole (Range.WholeSeconds): a fraction of a second in a
// timestamp comparison widens it to the seconds around.
func (sc *scope) whereRange(col string) (rg Range, ok bool) {
	for _, c := range sc.where {
		if c.Column != col || c.Complement || c.IsNull || c.Like != nil || c.Cell != nil {
			continue
		}
		var r Range
		switch {
		case c.Range != nil:
			r = c.Range.WholeSeconds()
		case len(c.In) > 0 && !c.In[0].IsText:
			// The doubles around each value (a constant's exact digits
			// lie between two).
			r = Range{Lower: math.Inf(1), Upper: math.Inf(-1), HasLower: true, HasUpper: true}
			for _, v := range c.In {
				x := valueRat(v)
				r.Lower, r.Upper = math.Min(r.Lower, floorDouble(x)), math.Max(r.Upper, ceilDouble(x))
			}
		default:
			continue
		}
		if !ok {
			rg, ok = r, true
			continue
		}
		rg = intersect(rg, r)
	}
	return rg, ok
}

// whereBounds returns an interval that holds every value the row
// expression x takes on the rows the WHERE keeps: x's Bounds with each
// column it reads (RowColumn, RowTemporal) over the part of its declared
// bounds that the WHERE's range on it allows (whereSpan). The database
// reads a column clamped to its bounds, and clamping is monotone, so a
// row whose value lies in the range reads a value between the range's
// ends clamped; interval arithmetic bounds x over those values as over
// the declared ones (exactly, up to outward rounding, when x is monotone
// in one column: UNIX_TIMESTAMP(col), a DATEDIFF from a constant). It is
// x.Bounds() when the WHERE narrows no column of x, or leaves one of
// them no value (no row is kept: every group answers, empty). It depends
// only on the statement and the configuration.
func (sc *scope) whereBounds(x *RowExpr) (lo, hi float64, err error) {
	narrowed, empty := false, false
	var within func(e *RowExpr, exact bool) *RowExpr
	within = func(e *RowExpr, exact bool) *RowExpr {
		if e == nil {
			return nil
		}
		out := *e
		if e.Kind == RowColumn || e.Kind == RowTemporal {
			l, h, ok := sc.whereSpan(e, exact)
			narrowed = narrowed || l != e.Lower || h != e.Upper
			empty = empty || !ok
			out.Lower, out.Upper = l, h
		}
		out.Args = make([]*RowExpr, len(e.Args))
		for i, a := range e.Args {
			out.Args[i] = within(a, e.Kind == RowSecondDiff || e.Kind == RowMonthDiff)
		}
		return &out
	}
	y := within(x, false)
	if narrowed && !empty {
		if lo, hi, err = y.Bounds(); err == nil {
			return lo, hi, nil
		}
	}
	return x.Bounds()
}

// whereSpan returns the part [lo, hi] of the declared bounds of a column
// a row expression reads (leaf, a RowColumn or RowTemporal) that its
// reading takes on the rows the WHERE keeps (whereRange, whose ends are
// whole seconds on a timestamp): the range's ends clamped to the bounds.
// A date or timestamp is read as a whole number, at most its value when
// that is not negative and at most 0 when it is (PostgreSQL floors a
// fraction of a second, MySQL truncates it), so below an open upper end
// u ≥ 1 that is whole it reads at most u − 1 (WHERE at < '2024-02-01'
// reads no second of February), unless exact: a timestamp operand of a
// RowSecondDiff or RowMonthDiff, read with its fraction of a second, is
// below u, and u bounds it. ok is false when nothing of the bounds is
// left.
func (sc *scope) whereSpan(leaf *RowExpr, exact bool) (lo, hi float64, ok bool) {
	lo, hi = leaf.Lower, leaf.Upper
	rg, found := sc.whereRange(leaf.Column)
	if !found {
		return lo, hi, true
	}
	clamp := func(v float64) float64 { return math.Min(math.Max(v, leaf.Lower), leaf.Upper) }
	if rg.HasLower {
		lo = clamp(rg.Lower)
	}
	if rg.HasUpper {
		u := rg.Upper
		if rg.UpperOpen && leaf.Kind == RowTemporal && !(exact && leaf.Temporal == catalog.Timestamp) && u == math.Trunc(u) && u >= 1 {
			u--
		}
		hi = clamp(u)
	}
	return lo, hi, lo <= hi
}

// whereAllows reports whether a row whose column col holds the number v
// may satisfy the WHERE's conjunction as far as its numeric conditions on
// col tell (ranges and IN lists; a NULL satisfies none of them).
func (sc *scope) whereAllows(col string, v Value) bool {
	for _, c := range sc.where {
		if c.Column != col || c.Complement || c.IsNull || c.Like != nil || c.Cell != nil {
			continue
		}
		switch {
		case c.Range != nil:
			if v.Null || v.IsText || !c.Range.Contains(v.Num) {
				return false
			}
		case len(c.In) > 0 && !c.In[0].IsText:
			if v.Null || v.IsText || !slices.ContainsFunc(c.In, func(x Value) bool { return x.Num == v.Num }) {
				return false
			}
		}
	}
	return true
}

// derive adds x to the row expressions the statement reads as columns.
func (sc *scope) derive(x *RowExpr) {
	if x.Kind == RowColumn {
		return // CAST(col AS DOUBLE): the column itself, read as it is
	}
	for _, d := range sc.derived {
		if d.String() == x.String() {
			return
		}
	}
	sc.derived = append(sc.derived, x)
}

// privateSelect converts a SELECT with FROM: an outer query over an
// aggregate subquery or CTE first (derived_query.go), then derived tables
// flattened (flatten.go): the one-row aggregate SELECT and the GROUP BY
// histogram give a Select (oneRowSelect); every other shape is tried as a
// Query (query_parse.go), whose refusal is then the answer.
func (p *Parser) privateSelect(s *ast.SelectStmt) (Statement, error) {
	if err := checkTextLiterals(s); err != nil {
		return nil, err
	}
	if err := p.checkCharsets(s); err != nil {
		return nil, err
	}
	if st, handled, err := p.derivedQuery(s); handled {
		return st, err
	}
	if err := flatten(s); err != nil {
		return nil, err
	}
	if hasSubquery(s) {
		// Scalar subqueries are released before the statement's own
		// aggregates, which a Query post-processes with their values.
		q, err := p.query(s)
		if err != nil {
			return nil, err
		}
		return q, nil
	}
	sel, err := p.oneRowSelect(s)
	switch {
	case err == nil && !p.groupedHistogram(sel) && !p.filteredWithoutSynopsis(sel) && !booleanOverSynopsis(sel):
		return sel, nil
	case err == nil:
	case dperr.KindOf(err) != dperr.Unsupported:
		return nil, err
	}
	q, err := p.query(s)
	if err != nil {
		return nil, err
	}
	return q, nil
}

// groupedHistogram reports whether sel is a histogram on a column without
// a histogram domain: no synopsis answers it, so it is answered as a
// grouped Query over the buckets of the column's bounds.
func (p *Parser) groupedHistogram(sel *Select) bool {
	if sel.GroupBy == nil {
		return false
	}
	t, _ := p.cat.Table(sel.Table)
	col, ok := t.Column(sel.GroupBy.Column)
	return ok && col.Histogram == nil
}

// booleanOverSynopsis reports whether sel has an OR/NOT WHERE beside
// something only a synopsis answers as a Select (a histogram, a range
// count): a synopsis is released for a conjunction of conditions, so such
// a statement is answered as a Query, with fresh releases over the rows
// the predicate keeps.
func booleanOverSynopsis(sel *Select) bool {
	if sel.Boolean == nil {
		return false
	}
	if sel.GroupBy != nil {
		return true
	}
	for _, it := range sel.Items {
		if it.Agg.Filtered() {
			return true
		}
	}
	return false
}

// filteredWithoutSynopsis reports whether sel has a range count (an
// aggregate with its own conditions) none of whose conditions is on a
// column with a histogram domain: no synopsis answers it, so it is
// answered as a Query with one set of releases per condition. So is one
// with an aggregate whose own condition has OR or NOT.
func (p *Parser) filteredWithoutSynopsis(sel *Select) bool {
	for _, it := range sel.Items {
		if it.Agg.Boolean != nil {
			return true // no synopsis answers OR and NOT
		}
	}
	t, _ := p.cat.Table(sel.Table)
	for _, it := range sel.Items {
		for _, c := range it.Agg.Where {
			if col, ok := t.Column(c.Column); ok && col.Histogram != nil {
				return false
			}
		}
	}
	for _, it := range sel.Items {
		if len(it.Agg.Where) > 0 {
			return true
		}
	}
	return false
}

// oneRowSelect converts SELECT agg [, agg ...] FROM table [WHERE predicate]
// and the GROUP BY histogram. A WHERE that is an AND of conditions (or one
// condition) gives Where; one with OR or NOT gives Boolean.
func (p *Parser) oneRowSelect(s *ast.SelectStmt) (*Select, error) {
	if err := refuseModifiers(s); err != nil {
		return nil, err
	}
	if s.GroupBy == nil {
		if err := refuseRowClauses(s); err != nil {
			return nil, err
		}
	}
	sc, err := p.source(s)
	if err != nil {
		return nil, err
	}
	sel := &Select{Table: sc.table.Name}
	if s.GroupBy != nil {
		err = sc.histogram(s, sel)
	} else {
		err = sc.items(s.Fields.Fields, sel)
	}
	if err != nil {
		return nil, err
	}
	if s.Where != nil {
		pred, err := sc.predicate(s.Where, whereSite)
		if err != nil {
			return nil, err
		}
		if conds, ok := conjunction(pred); ok {
			sel.Where = conds
		} else {
			sel.Boolean = pred
		}
	}
	sel.Derive = sc.derived
	return sel, nil
}

// items converts the select list of a one-row SELECT: aggregates only.
func (sc *scope) items(fields []*ast.SelectField, sel *Select) error {
	for _, f := range fields {
		it, err := sc.item(f)
		if err != nil {
			return err
		}
		sel.Items = append(sel.Items, it)
	}
	return nil
}

// refuseClauses refuses every clause of a SELECT without FROM but the
// select list, WHERE (which the caller refuses with its own message) and a
// LIMIT that keeps the single result row.
func refuseClauses(s *ast.SelectStmt) error {
	if err := refuseModifiers(s); err != nil {
		return err
	}
	return refuseRowClauses(s)
}

// refuseModifiers refuses the clauses no SELECT may have. Modifiers that
// change no answer (SQL_NO_CACHE, HIGH_PRIORITY, optimizer hints, index
// hints) are ignored: the client's text never reaches the backend.
func refuseModifiers(s *ast.SelectStmt) error {
	switch {
	case s.Kind != ast.SelectStmtKindSelect:
		return refuseQuery("%s statements", s.Kind.String())
	case s.With != nil:
		return refuseQuery("WITH (common table expressions)")
	case s.Distinct:
		return refuseQuery("SELECT DISTINCT")
	case len(s.WindowSpecs) > 0:
		return refuseQuery("WINDOW")
	case s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone:
		return refuseQuery("FOR UPDATE and LOCK IN SHARE MODE")
	case s.SelectIntoOpt != nil:
		return refuseInto()
	}
	return nil
}

// refuseRowClauses refuses the clauses of a one-row SELECT (no GROUP BY
// in a private one) that would change its result row. Both private and constant SELECTs
// return exactly one row, so LIMIT n with n ≥ 1 and no offset changes
// nothing and is accepted (clients send "select @@version_comment limit 1");
// LIMIT 0 and offsets are refused.
func refuseRowClauses(s *ast.SelectStmt) error {
	switch {
	case s.GroupBy != nil:
		return refuseHistogram("GROUP BY without FROM")
	case s.Having != nil:
		return refuseQuery("HAVING")
	case s.OrderBy != nil:
		return refuseQuery("ORDER BY")
	case s.Limit != nil && !keepsOneRow(s.Limit):
		return refuseQuery("a LIMIT other than LIMIT n with n ≥ 1 (the result is one row)")
	}
	return nil
}

// keepsOneRow reports whether a LIMIT leaves a one-row result unchanged.
func keepsOneRow(l *ast.Limit) bool {
	count, ok := literal(l.Count)
	if !ok || count.IsText || count.Null || count.Num < 1 {
		return false
	}
	if l.Offset == nil {
		return true
	}
	off, ok := literal(l.Offset)
	return ok && !off.IsText && !off.Null && off.Num == 0
}

// refuseJoin refuses a join, naming the form BI tools send for a "top N"
// (Superset's series limit, Tableau's Top-N filter): a join with a
// grouped, limited subquery that picks the groups to keep.
func refuseJoin(join *ast.Join) error {
	for _, side := range []ast.ResultSetNode{join.Left, join.Right} {
		ts, ok := side.(*ast.TableSource)
		if !ok {
			continue
		}
		if sub, ok := ts.Source.(*ast.SelectStmt); ok && sub.Limit != nil && (sub.GroupBy != nil || containsNode(sub.Fields, isAggregate)) {
			return refuseQuery("a join with a grouped subquery with LIMIT (a series limit or Top-N filter: Superset's series limit, Tableau's Top-N); switch the series limit off, or write the grouped query with ORDER BY <aggregate> DESC LIMIT n")
		}
	}
	return refuseQuery("joins")
}

// source resolves the FROM clause of s: exactly one declared table, which
// s may read in the session's zone (checkZones).
func (p *Parser) source(s *ast.SelectStmt) (*scope, error) {
	from := s.From
	if from == nil {
		return nil, refuseQuery("a SELECT without FROM inside a FROM (a subquery reads a declared table)")
	}
	join := from.TableRefs
	if join.Right != nil {
		return nil, refuseJoin(join)
	}
	ts, ok := join.Left.(*ast.TableSource)
	if !ok {
		return nil, refuseQuery("joins")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		if _, isJoin := ts.Source.(*ast.Join); isJoin {
			return nil, refuseQuery("joins")
		}
		return nil, refuseQuery("subqueries in FROM")
	}
	switch {
	case tn.TableSample != nil:
		return nil, refuseQuery("TABLESAMPLE")
	case tn.AsOf != nil:
		return nil, refuseQuery("AS OF")
	case len(tn.PartitionNames) > 0:
		return nil, refuseQuery("PARTITION")
	}
	t, ok := p.cat.Table(tn.Name.O)
	if !ok || !inDataDatabase(tn.Schema.L) {
		name := tn.Name.O
		if tn.Schema.O != "" {
			name = tn.Schema.O + "." + name
		}
		return nil, dperr.New(dperr.UnknownTable, "Table '%s' doesn't exist", name)
	}
	sc := &scope{table: t, qualifier: tn.Name.O, now: p.now, sessionZone: p.sessionZone}
	if p.cat != nil {
		sc.timeZone = p.cat.Backend.TimeZone
	}
	if ts.AsName.O != "" {
		sc.qualifier = ts.AsName.O
	}
	if err := p.checkZones(sc, s); err != nil {
		return nil, err
	}
	return sc, nil
}

// column resolves a column reference; clause names the clause for
// UnknownColumn messages, as MySQL does ('field list', 'where clause').
func (sc *scope) column(c *ast.ColumnName, clause string) (*catalog.Column, error) {
	if c.Table.O != "" && !strings.EqualFold(c.Table.O, sc.qualifier) || !inDataDatabase(c.Schema.L) {
		return nil, unknownColumn(c, clause)
	}
	col, ok := sc.table.Column(c.Name.O)
	if !ok {
		return nil, unknownColumn(c, clause)
	}
	return col, nil
}

// columns resolves every column e names, for an expression whose value
// the statement's text decides, so that an unknown one is an error as
// elsewhere.
func (sc *scope) columns(e ast.Node, clause string) error {
	var err error
	containsNode(e, func(n ast.Node) bool {
		if c, isColumn := n.(*ast.ColumnNameExpr); isColumn {
			_, err = sc.column(c.Name, clause)
		}
		return err != nil
	})
	return err
}

func unknownColumn(c *ast.ColumnName, clause string) error {
	name := c.Name.O
	if c.Table.O != "" {
		name = c.Table.O + "." + name
	}
	if c.Schema.O != "" {
		name = c.Schema.O + "." + name
	}
	return dperr.New(dperr.UnknownColumn, "Unknown column '%s' in '%s'", name, clause)
}

// containsNode reports whether any node under e satisfies match.
func containsNode(e ast.Node, match func(ast.Node) bool) bool {
	f := &finder{match: match}
	e.Accept(f)
	return f.found
}

type finder struct {
	match func(ast.Node) bool
	found bool
}

func (f *finder) Enter(n ast.Node) (ast.Node, bool) {
	if f.match(n) {
		f.found = true
	}
	return n, f.found
}

func (f *finder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func isAggregate(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.AggregateFuncExpr, *ast.WindowFuncExpr:
		return true
	case *ast.FuncCallExpr:
		_, ok := functionAggs[n.FnName.L]
		return ok && n.Schema.L == ""
	}
	return false
}

func isColumn(n ast.Node) bool {
	_, ok := n.(*ast.ColumnNameExpr)
	return ok
}

// isCall matches a function call or a subquery.
func isCall(n ast.Node) bool {
	_, isFunction := n.(*ast.FuncCallExpr)
	return isFunction || isSubquery(n)
}

func isSubquery(n ast.Node) bool {
	switch n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		return true
	}
	return false
}
