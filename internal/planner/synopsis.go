package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Synopses. A numeric column with a histogram domain in the configuration
// (catalog.Histogram) has range-count synopses: one per predicate on the
// other columns of its table. The planner's rule, on public facts only:
//
//   - A range count, SUM(cond) or COUNT(CASE WHEN cond THEN 1 END), is
//     answered from a synopsis. Its column is the first column with a
//     histogram domain among the count's own conditions, else among the
//     statement's WHERE; the conditions on that column (the count's and
//     WHERE's, intersected) select the bins, and every other condition,
//     the count's and WHERE's, is the synopsis's predicate. A range count
//     with no such column is refused.
//   - A plain COUNT(*) is answered from a synopsis when WHERE restricts a
//     column with a histogram domain (the first such column, as above),
//     unless SET @dp_mechanism forces a mechanism that releases counts:
//     then, as without a histogram domain, with fresh Laplace noise.
//   - A histogram, SELECT FLOOR(col / w) * w AS b, COUNT(*) ... GROUP BY b,
//     needs a histogram domain on col and is answered from the synopsis of
//     col for the other columns' predicate, one row per bucket: every
//     bucket of a value within the bounds, the bucket of a real column's
//     upper bound on an edge being that bound's own cell (Domain).
//   - A condition a binned synopsis cannot answer (equality or IN on a
//     real column, or a real range end on a bin edge that asks for the
//     rows holding the edge value: Domain.realSpans) makes a plain
//     COUNT(*) fall back to Laplace, with a note saying why, and a range
//     count or histogram be refused.
//
// Every other aggregate of the statement is planned as without synopses
// and shares the statement's ε; the outputs answered from synopses cost
// nothing, except that the first statement needing a synopsis that does
// not exist yet pays its configured ε once, in a reservation of its own
// (package exec). The mechanism that builds it is chooseSynopsisMechanism's.

// SynopsisPlan is the part of a plan answered from synopses.
type SynopsisPlan struct {
	// Synopses are the distinct synopses the statement reads.
	Synopses []*SynopsisSpec
	// Answers has one entry per Plan.Outputs entry; nil for the outputs
	// computed from releases.
	Answers []*SynopsisAnswer
	// Buckets are the result rows of a histogram, ascending; nil otherwise.
	Buckets []Bucket
	// Notes are remarks on the whole answer for SHOW WARNINGS.
	Notes []string
}

// SynopsisSpec identifies one synopsis and says how to build it.
type SynopsisSpec struct {
	Table  *catalog.Table
	Column *catalog.Column
	Domain Domain
	// Predicate is the canonical predicate on the other columns ("" for
	// every row); Key identifies the synopsis: table, column, domain,
	// Predicate and the configuration that releases it (synopsisKey).
	Predicate string
	Key       string
	// Temporal are the date and timestamp columns (catalog names, sorted)
	// whose values select the rows the synopsis counts: those the
	// predicate restricts, directly or inside a derived column's
	// expression. One the backend stores with a time zone is read in the
	// backend's zone, so the synopsis's rows depend on it (package exec
	// keys such a synopsis with the zone).
	Temporal []string
	// Histogram is the fetch that builds it: one GROUP BY histogram over
	// the domain, computed by the database, filtered by the predicate.
	Histogram sqlrewrite.Fetch
	// Config is the column's histogram configuration (ε, workload, mechanism).
	Config catalog.Histogram
	// Observed are the bin ranges this statement asks for: the workload
	// when Config.Workload is first-statement.
	Observed [][2]int
}

// SynopsisAnswer is how one output is computed from a synopsis.
type SynopsisAnswer struct {
	// Synopsis indexes SynopsisPlan.Synopses.
	Synopsis int
	// Key is set for a histogram's bucket key column; KeyType is then
	// MariaDB's type of its expression (sqlrewrite.Bucketing.Type).
	Key     bool
	KeyType sqlrewrite.LabelType
	// Spans are the bins counted: the estimate is the synopsis's sum over
	// them (within each bucket's span, for a histogram), rounded to a
	// non-negative integer.
	Spans Spans
	// Describe says what is counted, in column units, for EXPLAIN.
	Describe string
}

// Bucket is one row of a histogram.
type Bucket struct {
	// Key is the bucket's key as the client's expression gives it: the lower
	// edge k·w, or k for FLOOR(col / w).
	Key float64
	// Span is the part of the domain in the bucket.
	Span Span
}

// FromSynopsis is the derivation of an output answered from a synopsis
// (SynopsisPlan.Answers says how).
const FromSynopsis DeriveKind = 100

// maxBuckets bounds the rows of a histogram.
const maxBuckets = 10000

// synopsisPlanner collects the synopses of one statement.
type synopsisPlanner struct {
	table *catalog.Table
	// derived are the statement's row expressions, read as columns of
	// table: a synopsis's filter may restrict one (WHERE income > 1000 *
	// educ beside the range of the synopsis's column).
	derived []sqlrewrite.DerivedColumn
	plan    SynopsisPlan
	// fallbacks say why plain COUNT(*)s restricting a histogram column
	// are fresh Laplace counts (notes for the whole plan).
	fallbacks []string
}

// planSynopses decides which items of sel are answered from synopses
// (the rule above). It returns nil when none is, and notes saying why a
// plain COUNT(*) restricting a histogram column is not.
func (p *Planner) planSynopses(sel *sqlrewrite.Select, t *catalog.Table, derived []sqlrewrite.DerivedColumn, forced Mechanism) (*SynopsisPlan, []string, error) {
	for _, c := range sel.Where {
		if _, ok := t.Column(c.Column); !ok {
			return nil, nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'where clause'", c.Column)
		}
	}
	for _, item := range sel.Items {
		for _, c := range item.Agg.Where {
			if _, ok := t.Column(c.Column); !ok {
				return nil, nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'field list'", c.Column)
			}
		}
	}
	sp := &synopsisPlanner{table: t, derived: derived}
	sp.plan.Answers = make([]*SynopsisAnswer, len(sel.Items))
	if sel.GroupBy != nil {
		if err := sp.histogram(sel); err != nil {
			return nil, nil, err
		}
		return &sp.plan, nil, nil
	}
	forcedCount := forced != nil && forced.Supports(Statistic{Kind: StatCount})
	answered := false
	for i, item := range sel.Items {
		if item.Agg.Func != sqlrewrite.CountRows || len(item.Agg.Where) == 0 && forcedCount || item.Agg.Boolean != nil {
			continue // a count with OR or NOT is a part of a Query (sqlrewrite routes it so)
		}
		a, err := sp.rangeCount(item, sel.Where)
		if err != nil {
			return nil, nil, err
		}
		if a != nil {
			sp.plan.Answers[i], answered = a, true
		}
	}
	if !answered {
		return nil, sp.fallbacks, nil
	}
	sp.alignmentNote()
	return &sp.plan, sp.fallbacks, nil
}

// rangeCount plans one count item; nil when a plain COUNT(*) is not
// answered from a synopsis.
func (sp *synopsisPlanner) rangeCount(item sqlrewrite.Item, where []sqlrewrite.Condition) (*SynopsisAnswer, error) {
	own := item.Agg.Where
	col := sp.histogramColumn(own)
	if col == nil {
		col = sp.histogramColumn(where)
	}
	if col == nil {
		if len(own) == 0 {
			return nil, nil
		}
		return nil, dperr.New(dperr.Unsupported, "range count %s needs a condition on a column with a histogram domain (table %s declares %s); a count with conditions on other columns only is COUNT(*) with those conditions in WHERE", item.Label, sp.table.Name, sp.histogramColumns())
	}
	d, _ := columnDomain(col)
	spans, other, u := sp.split(col, d, append(append([]sqlrewrite.Condition{}, where...), own...))
	if u != nil {
		if len(own) == 0 {
			note := fmt.Sprintf("%s is a fresh Laplace count, charged, not an answer from the synopsis of %s: %s", item.Label, col.Name, u.reason)
			if u.free != "" {
				note += "; answered from the synopsis at no cost: " + u.free
			}
			if !slices.Contains(sp.fallbacks, note) {
				sp.fallbacks = append(sp.fallbacks, note)
			}
			return nil, nil
		}
		return nil, dperr.New(dperr.Unsupported, "range count %s: %s", item.Label, u)
	}
	a := &SynopsisAnswer{Synopsis: sp.synopsis(col, d, other), Spans: spans, Describe: describeSpans(col, d, spans)}
	sp.observe(a.Synopsis, spans)
	return a, nil
}

// histogram plans a GROUP BY histogram: every item is answered from
// synopses of the bucket column.
func (sp *synopsisPlanner) histogram(sel *sqlrewrite.Select) error {
	g := sel.GroupBy
	col, ok := sp.table.Column(g.Column)
	if !ok {
		return dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'group statement'", g.Column)
	}
	d, ok := columnDomain(col)
	if !ok {
		return dperr.New(dperr.Unsupported, "GROUP BY histograms are answered from synopses, and column %s of table %s has no histogram domain (declare histogram: on it in the configuration; table %s declares %s)", col.Name, sp.table.Name, sp.table.Name, sp.histogramColumns())
	}
	restrict, _, u := sp.split(col, d, sel.Where)
	if u != nil {
		return dperr.New(dperr.Unsupported, "histogram of %s: %s", col.Name, u)
	}
	if err := sp.buckets(col, d, g, restrict); err != nil {
		return err
	}
	if len(sp.plan.Buckets) == 0 {
		// Refused before anything is reserved or read (a plan without
		// rows answered its counts as one row: an index out of range,
		// after the synopsis was built and paid).
		lo, hi, _ := col.Bounds()
		return dperr.New(dperr.Unsupported, "histogram of %s: the WHERE leaves none of its buckets within its bounds [%s, %s], the domain of its synopsis, which answers ranges within them only; "+
			"restrict %s to a range that meets the bounds", col.Name, formatNumber(lo), formatNumber(hi), col.Name)
	}
	for i, item := range sel.Items {
		if item.Agg.Func == sqlrewrite.BucketKey {
			sp.plan.Answers[i] = &SynopsisAnswer{Key: true, KeyType: g.Type, Synopsis: -1, Describe: fmt.Sprintf("FLOOR(%s / %s)%s", col.Name, formatNumber(g.Width), keyTimes(g))}
			continue
		}
		spans, other, u := sp.split(col, d, append(append([]sqlrewrite.Condition{}, sel.Where...), item.Agg.Where...))
		if u != nil {
			return dperr.New(dperr.Unsupported, "histogram count %s: %s", item.Label, u)
		}
		a := &SynopsisAnswer{Synopsis: sp.synopsis(col, d, other), Spans: spans, Describe: "each bucket ∩ " + describeSpans(col, d, spans)}
		for _, b := range sp.plan.Buckets {
			sp.observe(a.Synopsis, spans.intersect(Spans{b.Span}))
		}
		sp.plan.Answers[i] = a
	}
	sp.alignmentNote()
	return nil
}

// keyTimes renders the "* w" of a bucket key that is a lower edge.
func keyTimes(g *sqlrewrite.Bucketing) string {
	if g.Index {
		return ""
	}
	return " * " + formatNumber(g.Width)
}

// buckets lists the histogram's rows: every bucket FLOOR(x / w) of a value
// x within the column's bounds whose span meets the WHERE restriction on
// the column. A bucket's span is that of the doubles MySQL's FLOOR puts
// in it, from its least double (Bucketing.Edges) to the next bucket's.
func (sp *synopsisPlanner) buckets(col *catalog.Column, d Domain, g *sqlrewrite.Bucketing, restrict Spans) error {
	lo, hi, _ := col.Bounds()
	first, last := g.Of(lo), g.Of(hi)
	if math.IsInf(first, 0) || math.IsInf(last, 0) || last-first+1 > maxBuckets {
		return dperr.New(dperr.Unsupported, "histogram of %s with width %s has %g buckets over [%g, %g]; at most %d are answered (use a wider bucket)", col.Name, formatNumber(g.Width), last-first+1, lo, hi, maxBuckets)
	}
	edges, ok := g.Edges(first, int(last-first)+1, col.Type == catalog.Integer)
	for i := 1; ok && i < len(edges); i++ {
		ok = edges[i-1].Below(edges[i])
	}
	if !ok {
		return dperr.New(dperr.Unsupported, "histogram of %s with width %s: some of its buckets hold no value (buckets narrower than the spacing of its values over [%g, %g]); use a wider bucket", col.Name, formatNumber(g.Width), lo, hi)
	}
	if slices.ContainsFunc(edges, func(e sqlrewrite.Edge) bool { return e.Exact != "" }) {
		// The synopsis's spans are of doubles.
		return dperr.New(dperr.Unsupported, "histogram of %s with width %s over [%g, %g]: some of its buckets start between two doubles (integers beyond 2^53); bound the column within ±2^53 (9007199254740992)", col.Name, formatNumber(g.Width), lo, hi)
	}
	for i, k := 0, first; k <= last; i, k = i+1, k+1 {
		r := sqlrewrite.Range{Lower: edges[i].Num, Upper: edges[i+1].Num, HasLower: true, HasUpper: true, UpperOpen: true}
		spans := d.rangeSpan(r).intersect(restrict)
		if len(spans) == 0 {
			continue
		}
		whole := d.rangeSpan(r)
		sp.plan.Buckets = append(sp.plan.Buckets, Bucket{Key: g.Label(k), Span: whole[0]})
	}
	return nil
}

// histogramColumn returns the first column with a histogram domain that
// conds restrict, or nil.
func (sp *synopsisPlanner) histogramColumn(conds []sqlrewrite.Condition) *catalog.Column {
	for _, c := range conds {
		if col, ok := sp.table.Column(c.Column); ok && col.Histogram != nil && col.Numeric() {
			return col
		}
	}
	return nil
}

// histogramColumns lists the table's columns with a histogram domain.
func (sp *synopsisPlanner) histogramColumns() string {
	var names []string
	for _, c := range sp.table.Columns {
		if c.Histogram != nil {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// split separates conds into the spans of col they select and the
// conditions on other columns; u, when not nil, says why the conditions
// on col cannot be answered from its synopsis.
func (sp *synopsisPlanner) split(col *catalog.Column, d Domain, conds []sqlrewrite.Condition) (spans Spans, other []sqlrewrite.Condition, u *unanswerable) {
	var own []sqlrewrite.Condition
	for _, c := range conds {
		if strings.EqualFold(c.Column, col.Name) {
			own = append(own, c)
		} else {
			other = append(other, c)
		}
	}
	if spans, u = d.columnSpans(col.Name, own); u != nil {
		return nil, nil, u
	}
	return spans, other, nil
}

// synopsis returns the index of the synopsis of col for the predicate
// other, adding it if new.
func (sp *synopsisPlanner) synopsis(col *catalog.Column, d Domain, other []sqlrewrite.Condition) int {
	pred := canonicalPredicate(sp.table, other)
	reads := predicateColumns(sp.table, sp.derived, other)
	key := synopsisKey(sp.table, col, d, pred, reads)
	for i, s := range sp.plan.Synopses {
		if s.Key == key {
			return i
		}
	}
	filter := make([]sqlrewrite.Condition, len(other))
	for i, c := range other {
		oc, _ := sp.table.Column(c.Column)
		c.Column = oc.Source
		filter[i] = c
	}
	sp.plan.Synopses = append(sp.plan.Synopses, &SynopsisSpec{
		Table: sp.table, Column: col, Domain: d, Predicate: pred, Key: key, Config: *col.Histogram, Temporal: temporalColumns(reads),
		Histogram: sqlrewrite.Fetch{Table: sp.table.Source, Declared: sp.table.Name, Partitions: sp.table.Partitions, Filter: filter, Derived: sp.derived,
			Histogram: &sqlrewrite.Histogram{Column: col.Source, Lower: d.Lower, Upper: d.Upper, Bins: d.Bins, Top: !d.Integer}},
	})
	return len(sp.plan.Synopses) - 1
}

// WholeSynopsis returns the spec of col's synopsis over every row of t
// (no predicate): of col's synopses the one with the shortest key, so the
// smallest stored value. ok is false when col declares no histogram.
func WholeSynopsis(t *catalog.Table, col *catalog.Column) (spec *SynopsisSpec, ok bool) {
	d, ok := columnDomain(col)
	if !ok {
		return nil, false
	}
	sp := &synopsisPlanner{table: t}
	return sp.plan.Synopses[sp.synopsis(col, d, nil)], true
}

// predicateColumns returns the declared columns of t (sorted by name,
// each once) that conds read: a condition's own column, or, for a
// condition on a derived column (a row expression of derived), the
// columns its operands and CASE conditions read, whose clamped values it
// computes. A derived column itself is not returned: its name is its
// expression's text, which the predicate writes, and its backend name
// depends on the statement.
func predicateColumns(t *catalog.Table, derived []sqlrewrite.DerivedColumn, conds []sqlrewrite.Condition) []*catalog.Column {
	var out []*catalog.Column
	add := func(col *catalog.Column) {
		if !slices.Contains(out, col) {
			out = append(out, col)
		}
	}
	for _, c := range conds {
		col, _ := t.Column(c.Column)
		i := slices.IndexFunc(derived, func(d sqlrewrite.DerivedColumn) bool { return d.Name == col.Source })
		if i < 0 {
			add(col)
			continue
		}
		derived[i].Expr.Sourced(func(source string) string { // a walk over the expression's columns
			for j := range t.Columns {
				if t.Columns[j].Source == source {
					add(&t.Columns[j])
				}
			}
			return source
		})
	}
	slices.SortFunc(out, func(a, b *catalog.Column) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.Source, b.Source))
	})
	return out
}

// temporalColumns returns the catalog names of the date and timestamp
// columns among cols (predicateColumns: sorted, each once).
func temporalColumns(cols []*catalog.Column) []string {
	var out []string
	for _, col := range cols {
		if col.Temporal() {
			out = append(out, col.Name)
		}
	}
	return out
}

// observe records the bins a statement asks of synopsis i.
func (sp *synopsisPlanner) observe(i int, spans Spans) {
	s := sp.plan.Synopses[i]
	s.Observed = append(s.Observed, spans.binRanges(s.Domain.Cells())...)
}

// alignmentNote adds a note when some answer's ends fall inside bins.
func (sp *synopsisPlanner) alignmentNote() {
	for _, a := range sp.plan.Answers {
		if a == nil || a.Key {
			continue
		}
		s := sp.plan.Synopses[a.Synopsis]
		aligned := a.Spans.aligned()
		for _, b := range sp.plan.Buckets {
			aligned = aligned && a.Spans.intersect(Spans{b.Span}).aligned()
		}
		if !aligned {
			d := s.Domain
			sp.plan.Notes = append(sp.plan.Notes, fmt.Sprintf("some range or bucket ends fall inside the synopsis bins of %s (width %s): those bins are counted in proportion to the part covered",
				s.Column.Name, formatNumber((d.Upper-d.Lower)/float64(d.Bins))))
			return
		}
	}
}

// describeSpans renders spans in column units, e.g. "age in [18, 25)",
// closed at a real column's upper bound when they take its cell ("x in
// [5, 10]").
func describeSpans(col *catalog.Column, d Domain, spans Spans) string {
	if len(spans) == 0 {
		return col.Name + " in no value"
	}
	parts := make([]string, len(spans))
	for i, s := range spans {
		closing := ")"
		if !d.Integer && s.To > float64(d.Bins) {
			closing = "]"
		}
		parts[i] = fmt.Sprintf("[%s, %s%s", formatNumber(d.value(s.From)), formatNumber(d.value(s.To)), closing)
	}
	return col.Name + " in " + strings.Join(parts, " ∪ ")
}
