// Package planner turns a parsed query, the catalog and the session's privacy
// settings into a Plan: the private releases the query needs, the mechanism
// of each, its share of ε and δ, what each reads from the database, and how
// every output column is derived from the releases by post-processing.
//
// The planner never touches data. Its choices depend only on public facts:
// the query, the catalog (bounds, types), ε and δ, and the mechanism the
// session forced with SET @dp_mechanism.
//
// Releases are shared: COUNT(*), AVG(age) and STDDEV(age) in one statement
// need a noisy non-null count of age, a noisy centred sum of age and a noisy
// centred sum of squares, and AVG, VARIANCE and STDDEV are all derived from
// those by post-processing, which costs no budget. The statement's ε is split
// evenly over the distinct releases (basic sequential composition), so asking
// for STDDEV next to VARIANCE costs nothing extra.
//
// Range counts and histograms on a column with a histogram domain are
// answered from stored synopses, by the rule written at SynopsisPlan
// (synopsis.go): they cost nothing, except the one-time ε of building a
// synopsis, which EXPLAIN shows.
//
// Counting queries with any AND/OR/NOT predicate on a table with an
// interactive domain are answered over that domain by one mechanism
// instance per dataset, the Median Mechanism or a one-shot noisy
// histogram, by the rule written at InteractivePlan (interactive.go),
// which EXPLAIN shows.
package planner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Settings are the session's privacy settings for one statement.
type Settings struct {
	// Epsilon is what the statement spends in total.
	Epsilon float64
	// Delta is the most δ the statement may spend; mechanisms that need none spend none.
	Delta float64
	// Mechanism is "auto" or the name of a mechanism to use wherever it applies.
	Mechanism string
	// Trim is the total fraction α the trimmed mean drops (SET @dp_trim).
	Trim float64
}

// Cost is a privacy cost under basic composition.
type Cost struct{ Epsilon, Delta float64 }

// Plan is the typed result of planning one Select.
type Plan struct {
	// Table is the catalog table queried.
	Table *catalog.Table
	// Filter is the query's predicate with backend column names.
	Filter []sqlrewrite.Condition
	// Boolean, if set, is the query's predicate with OR and NOT, with
	// backend column names, ANDed with Filter by every fetch.
	Boolean *sqlrewrite.Predicate
	// Notes are remarks on the whole answer for SHOW WARNINGS.
	Notes []string
	// Releases are the distinct private releases, each paid once.
	Releases []*Release
	// Outputs are the result columns, in the client's order.
	Outputs []Output
	// Cost is the sum of the releases' costs.
	Cost Cost
	// Synopsis, if set, answers some outputs from synopses (synopsis.go).
	Synopsis *SynopsisPlan
	// Interactive, if set, answers the one output, a count, over the
	// table's interactive domain (interactive.go); nothing else is set.
	Interactive *InteractivePlan
	// Derived are the row expressions the fetches compute as columns
	// (rowexpr.go); Table then lists them as columns.
	Derived []sqlrewrite.DerivedColumn
	// Profile, if set, is the one scan the executor sends first, from
	// which the releases' summary terms and the histograms, windows and
	// grid sums of its column are computed (profile.go). Only set on
	// plans that are not one group of a GROUP BY.
	Profile *sqlrewrite.Profile
	// NoRow, if set, says why the WHERE selects no row whatever the data
	// (norow.go): every output is FromNoRow, and nothing else is set.
	NoRow string
}

// StatKind is a statistic of the filtered rows that a mechanism releases.
type StatKind int

// The statistics.
const (
	// StatCount is the number of filtered rows (Column nil) or of non-NULL values of Column.
	StatCount StatKind = iota + 1
	// StatSum is the sum of Column clamped to its bounds.
	StatSum
	// StatCenteredSum is the sum of clamp(x) - m, m the midpoint of the bounds.
	StatCenteredSum
	// StatCenteredSumSquares is the sum of (clamp(x) - m)².
	StatCenteredSumSquares
	// StatMean is the mean of Column, released by a single mechanism.
	StatMean
	// StatVariance is the population variance of Column, released by a single mechanism.
	StatVariance
	// StatQuantile is the Quantile-th quantile of Column.
	StatQuantile
	// StatIQR is the interquartile range of Column (a private scale).
	StatIQR
	// StatRegression is coefficient Coefficient (0 the intercept, 1 the
	// slope) of the least-squares line of Column (y) on Column2 (x).
	StatRegression
	// StatCountDistinct is the number of distinct non-NULL values of Column.
	StatCountDistinct
)

var statNames = map[StatKind]string{
	StatCount: "count", StatSum: "sum", StatCenteredSum: "centred sum",
	StatCenteredSumSquares: "centred sum of squares", StatMean: "mean",
	StatVariance: "variance", StatQuantile: "quantile", StatIQR: "iqr", StatRegression: "regression",
	StatCountDistinct: "count distinct",
}

// Statistic identifies what a release estimates.
type Statistic struct {
	Kind StatKind
	// Column is nil for the row count.
	Column   *catalog.Column
	Quantile float64
	// Column2 and Coefficient are set for StatRegression.
	Column2     *catalog.Column
	Coefficient int
}

// String renders the statistic for plans and warnings, e.g. "quantile(income, 0.5)".
func (s Statistic) String() string {
	col := "*"
	if s.Column != nil {
		col = s.Column.Name
	}
	switch s.Kind {
	case StatQuantile:
		return fmt.Sprintf("%s(%s, %g)", statNames[s.Kind], col, s.Quantile)
	case StatRegression:
		return fmt.Sprintf("%s(%s, %s)", []string{"regr_intercept", "regr_slope"}[s.Coefficient], col, s.Column2.Name)
	}
	return fmt.Sprintf("%s(%s)", statNames[s.Kind], col)
}

// Release is one private release: a mechanism applied to a statistic with its
// share of the budget.
type Release struct {
	Stat      Statistic
	Mechanism Mechanism
	Epsilon   float64
	Delta     float64
	// Trim is the trimmed mean's α, from Settings.
	Trim float64
	// RowsPerUnit is how many rows of each privacy unit the release reads
	// (unit.go); 0 on a table without a privacy unit.
	RowsPerUnit int64
}

// DeriveKind says how an output column is computed from releases.
type DeriveKind int

// The derivations; all are post-processing of released values.
const (
	// Direct outputs release Args[0] as is.
	Direct DeriveKind = iota + 1
	// MeanOfSums is m + S̃/ñ from Args = [count, centred sum], clamped to the bounds.
	MeanOfSums
	// VarianceOfSums is Q̃/ñ - (S̃/ñ)² from Args = [count, centred sum, centred sum of squares].
	VarianceOfSums
	// SquareRoot is the square root of the variance derived as by Inner.
	SquareRoot
)

// Output is one result column.
type Output struct {
	Label string
	Agg   sqlrewrite.Aggregate
	// Column is the aggregate's column, nil for COUNT(*).
	Column *catalog.Column
	Derive DeriveKind
	// Args index Plan.Releases.
	Args []int
	// Inner is the derivation under SquareRoot (Direct or VarianceOfSums).
	Inner DeriveKind
	// Sample asks for the sample (n-1) rather than the population variance.
	Sample bool
	// Integer rounds the value to an integer (counts; MIN and MAX of an
	// integer column).
	Integer bool
}

// Planner plans statements against one catalog with a set of mechanisms.
type Planner struct {
	cat        *catalog.Config
	mechanisms []Mechanism
	// noUnits, if set, is why the backend cannot bound privacy units
	// (RefusePrivacyUnits).
	noUnits string
}

// RefusePrivacyUnits makes every later statement on a table with a privacy
// unit fail with an Unsupported error that gives why, before anything is
// reserved or read: for a backend that cannot run the bounding
// (sqlrewrite.UnitBound), such as Vitess's vtgate. Whether it applies
// depends only on the backend's kind, never on the data. Call it before
// planning starts.
func (p *Planner) RefusePrivacyUnits(why string) { p.noUnits = why }

// usable returns the Unsupported error for a table the backend cannot
// serve (RefusePrivacyUnits), or nil.
func (p *Planner) usable(t *catalog.Table) error {
	if p.noUnits != "" && t.HasPrivacyUnit() {
		return dperr.New(dperr.Unsupported, "not supported: table %s protects each %s, and %s", t.Name, t.PrivacyUnit, p.noUnits)
	}
	return nil
}

// New returns a planner over the catalog with the standard mechanisms.
func New(cat *catalog.Config) *Planner {
	return &Planner{cat: cat, mechanisms: standardMechanisms()}
}

// MechanismNames lists the names SET @dp_mechanism accepts, "auto" first.
func (p *Planner) MechanismNames() []string {
	names := []string{"auto"}
	for _, m := range p.mechanisms {
		names = append(names, m.Name())
	}
	return names
}

// ValidMechanism reports whether name is accepted by SET @dp_mechanism.
func (p *Planner) ValidMechanism(name string) bool {
	return name == "auto" || p.mechanism(name) != nil
}

func (p *Planner) mechanism(name string) Mechanism {
	for _, m := range p.mechanisms {
		if m.Name() == name {
			return m
		}
	}
	return nil
}

// Plan plans a Select. It returns dperr errors: UnknownTable, UnknownColumn,
// Unsupported (no mechanism can answer an aggregate, or the forced one
// applies to none), InvalidValue (bad settings).
func (p *Planner) Plan(sel *sqlrewrite.Select, s Settings) (*Plan, error) {
	return p.plan(sel, s, statementPlan)
}

// planMode says how the releases of a plan are run, which decides what
// may answer them.
type planMode int

const (
	// statementPlan: a statement of its own (Plan, a Query without keys),
	// run by exec.Executor.Run with a reservation of its own: synopses,
	// the interactive domain and a profile scan may answer it.
	statementPlan planMode = iota
	// groupPlan: the aggregates of one group of a GROUP BY
	// (query_plan.go), or of one part: every release runs once per group,
	// so synopses and the interactive domain, which answer the whole
	// table, are not used; a WHERE that selects no row is the caller's.
	groupPlan
	// scalarPlan: one query of a statement with scalar subqueries
	// (scalar.go), without keys: its releases run under the statement's
	// one reservation, as one group, so with fresh releases only (a
	// synopsis or an interactive instance would be built with a
	// reservation of its own) and no profile scan.
	scalarPlan
)

// plan is Plan in one of the modes of planMode.
func (p *Planner) plan(sel *sqlrewrite.Select, s Settings, mode planMode) (*Plan, error) {
	t, ok := p.cat.Table(sel.Table)
	if !ok {
		return nil, dperr.New(dperr.UnknownTable, "Table '%s' doesn't exist", sel.Table)
	}
	if err := p.usable(t); err != nil {
		return nil, err
	}
	if !(s.Epsilon > 0) {
		return nil, dperr.New(dperr.InvalidValue, "@dp_epsilon must be > 0")
	}
	if err := p.Withdrawn(s.Mechanism); err != nil {
		return nil, err
	}
	forced := p.mechanism(s.Mechanism)
	if s.Mechanism != "" && s.Mechanism != "auto" && forced == nil {
		return nil, dperr.New(dperr.InvalidValue, "unknown mechanism %q; valid: %s", s.Mechanism, strings.Join(p.MechanismNames(), ", "))
	}
	t, derived, err := withRowExprs(t, sel.Items, sel.Derive)
	if err != nil {
		return nil, err
	}
	if why := noRowWhere(t, sel); why != "" && mode != groupPlan {
		return p.noRowPlan(t, derived, sel, why)
	}
	var synopses *SynopsisPlan
	var note string
	var fallbacks []string
	if mode == statementPlan {
		var ip *Plan
		if ip, note = p.planInteractive(sel, t, s); ip != nil {
			return ip, nil
		}
		// A synopsis is released for a conjunction of conditions: a
		// statement with OR or NOT reads fresh releases (the parser sends
		// its histograms and range counts the Query way).
		if sel.Boolean == nil {
			var err error
			if synopses, fallbacks, err = p.planSynopses(sel, t, derived, forced); err != nil {
				return nil, err
			}
		} else if sel.GroupBy != nil {
			return nil, dperr.New(dperr.Unsupported, "not supported: a histogram with OR and NOT in WHERE; write it as GROUP BY FLOOR(col / w) * w with COUNT(*)")
		}
	}
	b := builder{planner: p, table: t, forced: forced}
	plan := &Plan{Table: t, Synopsis: synopses, Derived: derived}
	if note != "" {
		plan.Notes = []string{note}
	}
	plan.Notes = append(plan.Notes, fallbacks...)
	if sel.Boolean != nil {
		if plan.Boolean, err = backendPredicate(t, sel.Boolean); err != nil {
			return nil, err
		}
	}
	for _, c := range sel.Where {
		col, ok := t.Column(c.Column)
		if !ok {
			return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'where clause'", c.Column)
		}
		c.Column = col.Source
		plan.Filter = append(plan.Filter, c)
	}
	for i, item := range sel.Items {
		if synopses != nil && synopses.Answers[i] != nil {
			plan.Outputs = append(plan.Outputs, Output{Label: item.Label, Agg: item.Agg, Derive: FromSynopsis, Integer: true})
			continue
		}
		out, err := b.output(item)
		if err != nil {
			return nil, err
		}
		plan.Outputs = append(plan.Outputs, out)
	}
	if forced != nil && !b.forcedUsed && (synopses == nil || len(b.releases) > 0) {
		return nil, dperr.New(dperr.Unsupported, "mechanism %q answers none of these aggregates; it answers %s (SET @dp_mechanism = 'auto' chooses a mechanism for each aggregate)",
			forced.Name(), describeSupport(forced))
	}
	plan.Releases = b.releases
	for _, r := range plan.Releases {
		r.Trim = s.Trim
		r.RowsPerUnit = rowsPerUnit(t, r.Mechanism)
	}
	// Even split over the distinct releases; a mechanism that needs δ gets an
	// equal share of the statement's δ. Shares are rounded down, so that
	// their exact sum never exceeds what the statement is charged.
	var needDelta int
	for _, r := range plan.Releases {
		if r.Mechanism.NeedsDelta() {
			needDelta++
		}
	}
	if needDelta > 0 && !(s.Delta > 0) {
		return nil, dperr.New(dperr.Unsupported, "this query needs delta > 0 (mechanisms with (epsilon, delta) guarantees); SET @dp_delta to a positive value")
	}
	for _, r := range plan.Releases {
		r.Epsilon = mech.EvenShare(s.Epsilon, len(plan.Releases))
		if r.Mechanism.NeedsDelta() {
			r.Delta = mech.EvenShare(s.Delta, needDelta)
		}
		plan.Cost.Epsilon += r.Epsilon
		plan.Cost.Delta += r.Delta
		if forced == nil || !forced.Supports(r.Stat) {
			r.Mechanism = withEpsilon(r.Mechanism, r)
		}
	}
	// Every release must be one its mechanism accepts, checked now, before
	// anything is reserved or read: a refusal after the data was read would
	// be charged, and could depend on the data.
	for _, r := range plan.Releases {
		if err := r.Mechanism.Check(r); err != nil {
			return nil, p.checkRefusal(s, plan.Releases, r, err)
		}
	}
	// Charge the statement's ε and δ exactly, not the float sums of their
	// shares, which can round below the shares' exact sum (δ = 10⁻⁷ over
	// five releases summed to 9.999999999999998e-08, below the five
	// shares' exact total).
	if len(plan.Releases) > 0 {
		plan.Cost.Epsilon = s.Epsilon
	}
	if needDelta > 0 {
		plan.Cost.Delta = s.Delta
	}
	if mode == statementPlan {
		plan.Profile = profileOf(plan, p.cat.Backend.Driver)
	}
	return plan, nil
}

// backendPredicate returns a copy of pred with the backend names of its
// leaves' columns (declared or derived columns of t).
func backendPredicate(t *catalog.Table, pred *sqlrewrite.Predicate) (*sqlrewrite.Predicate, error) {
	out := &sqlrewrite.Predicate{Op: pred.Op}
	if pred.Leaf != nil {
		col, ok := t.Column(pred.Leaf.Column)
		if !ok {
			return nil, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'where clause'", pred.Leaf.Column)
		}
		c := *pred.Leaf
		c.Column = col.Source
		out.Leaf = &c
	}
	for _, a := range pred.Args {
		b, err := backendPredicate(t, a)
		if err != nil {
			return nil, err
		}
		out.Args = append(out.Args, b)
	}
	return out, nil
}

// describeSupport names, as SQL, the aggregates mechanism m answers.
func describeSupport(m Mechanism) string {
	var forms []string
	for _, f := range []struct {
		sql   string
		stats []Statistic
	}{
		{"COUNT(*), COUNT(col)", []Statistic{{Kind: StatCount}}},
		{"COUNT(DISTINCT col)", []Statistic{{Kind: StatCountDistinct}}},
		{"SUM(col)", []Statistic{{Kind: StatSum}}},
		{"AVG(col)", []Statistic{{Kind: StatMean}, {Kind: StatCenteredSum}}},
		{"VARIANCE(col), STDDEV(col)", []Statistic{{Kind: StatVariance}, {Kind: StatCenteredSumSquares}}},
		{"MEDIAN(col)", []Statistic{{Kind: StatQuantile, Quantile: 0.5}}},
		{"PERCENTILE_CONT(col, p), MIN(col), MAX(col)", []Statistic{{Kind: StatQuantile, Quantile: 0.9}}},
		{"IQR(col)", []Statistic{{Kind: StatIQR}}},
		{"REGR_SLOPE(y, x), REGR_INTERCEPT(y, x)", []Statistic{{Kind: StatRegression}}},
	} {
		if slices.ContainsFunc(f.stats, m.Supports) {
			forms = append(forms, f.sql)
		}
	}
	return strings.Join(forms, ", ")
}

// builder collects the distinct releases of one plan.
type builder struct {
	planner    *Planner
	table      *catalog.Table
	forced     Mechanism
	forcedUsed bool
	releases   []*Release
}

// release returns the index of the release of stat, adding it if new. The
// mechanism is the forced one where it supports the statistic, else the
// default for the statistic.
func (b *builder) release(stat Statistic) (int, error) {
	m := b.choose(stat)
	if m == nil {
		return 0, dperr.New(dperr.Unsupported, "no mechanism can release %s", stat)
	}
	for i, r := range b.releases {
		if r.Stat == stat && r.Mechanism.Name() == m.Name() {
			return i, nil
		}
	}
	b.releases = append(b.releases, &Release{Stat: stat, Mechanism: m})
	return len(b.releases) - 1, nil
}

func (b *builder) choose(stat Statistic) Mechanism {
	if b.forced != nil && b.forced.Supports(stat) {
		b.forcedUsed = true
		return b.forced
	}
	return b.planner.defaultMechanism(stat)
}

// whole reports whether the statistic of kind on col is released whole by
// one mechanism (the forced one if it supports it, else the default), rather
// than derived from shared sums: sums are used when a forced mechanism
// releases sums but not the statistic (SET @dp_mechanism = 'laplace').
func (b *builder) whole(kind StatKind, col *catalog.Column) bool {
	stat := Statistic{Kind: kind, Column: col}
	if b.forced != nil && !b.forced.Supports(stat) && b.forced.Supports(Statistic{Kind: StatCenteredSum, Column: col}) {
		b.forcedUsed = true
		return false
	}
	return b.choose(stat) != nil
}

// carriesCount reports whether release i, a variance, holds its own count
// (autoVariance's squares from both bounds), from which VAR_SAMP's
// n/(n−1) follows without a count released beside it.
func (b *builder) carriesCount(i int) bool {
	_, squares := b.releases[i].Mechanism.(autoVariance)
	return squares
}

// integerOutput reports whether the aggregate agg of column col (nil for
// COUNT(*)) is released as an integer (Output.Integer): a count; MIN and
// MAX, the 0- and 1-quantiles, of an integer column, as MySQL types them
// (the released quantile rounded, Output.direct), when its declared
// bounds hold an integer (the values clamped into [0.2, 0.8] are no
// integers: a DOUBLE). It reads the statement and the column alone, not
// the mechanism that releases the aggregate.
func integerOutput(agg sqlrewrite.Aggregate, col *catalog.Column) bool {
	switch agg.Func {
	case sqlrewrite.CountRows, sqlrewrite.CountColumn, sqlrewrite.CountDistinct:
		return true
	case sqlrewrite.Percentile:
		if _, temporal := agg.Expr.TemporalOf(); temporal || col.Type != catalog.Integer || agg.Quantile != 0 && agg.Quantile != 1 {
			return false
		}
		lo, hi, _ := col.Bounds()
		return math.Ceil(lo) <= math.Floor(hi)
	}
	return false
}

func (b *builder) output(item sqlrewrite.Item) (Output, error) {
	agg := item.Agg
	out := Output{Label: item.Label, Agg: agg}
	if agg.Filtered() {
		// A synopsis or a Query's part answers an aggregate's own
		// condition; released here it would count every row.
		return out, dperr.New(dperr.Internal, "internal error: %s has its own condition outside a synopsis or a part", item.Label)
	}
	var col *catalog.Column
	if agg.Func != sqlrewrite.CountRows {
		c, ok := b.table.Column(agg.Column)
		if !ok {
			return out, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'field list'", agg.Column)
		}
		col = c
		out.Column = c
		if !c.Numeric() && agg.Func != sqlrewrite.CountColumn && agg.Func != sqlrewrite.CountDistinct {
			return out, dperr.New(dperr.Unsupported, "%s of text column %s: only COUNT is supported on text columns", strings.ToUpper(agg.Func.String()), c.Name)
		}
	}
	add := func(stats ...Statistic) error {
		for _, s := range stats {
			i, err := b.release(s)
			if err != nil {
				return err
			}
			out.Args = append(out.Args, i)
		}
		return nil
	}
	out.Integer = integerOutput(agg, col)
	var err error
	switch agg.Func {
	case sqlrewrite.CountRows, sqlrewrite.CountColumn:
		out.Derive = Direct
		err = add(Statistic{Kind: StatCount, Column: col})
	case sqlrewrite.CountDistinct:
		out.Derive = Direct
		err = add(Statistic{Kind: StatCountDistinct, Column: col})
	case sqlrewrite.Sum:
		out.Derive = Direct
		err = add(Statistic{Kind: StatSum, Column: col})
	case sqlrewrite.Avg:
		if b.whole(StatMean, col) {
			out.Derive = Direct
			err = add(Statistic{Kind: StatMean, Column: col})
		} else {
			out.Derive = MeanOfSums
			err = add(Statistic{Kind: StatCount, Column: col}, Statistic{Kind: StatCenteredSum, Column: col})
		}
	case sqlrewrite.VarPop, sqlrewrite.VarSamp, sqlrewrite.StddevPop, sqlrewrite.StddevSamp:
		out.Sample = agg.Func == sqlrewrite.VarSamp || agg.Func == sqlrewrite.StddevSamp
		inner := VarianceOfSums
		if b.whole(StatVariance, col) {
			inner = Direct
			err = add(Statistic{Kind: StatVariance, Column: col})
			if err == nil && out.Sample && !b.carriesCount(out.Args[0]) {
				// The n/(n-1) correction needs a count.
				err = add(Statistic{Kind: StatCount, Column: col})
			}
		} else {
			err = add(Statistic{Kind: StatCount, Column: col}, Statistic{Kind: StatCenteredSum, Column: col},
				Statistic{Kind: StatCenteredSumSquares, Column: col})
		}
		out.Derive = inner
		if agg.Func == sqlrewrite.StddevPop || agg.Func == sqlrewrite.StddevSamp {
			out.Derive, out.Inner = SquareRoot, inner
		}
	case sqlrewrite.Median, sqlrewrite.Percentile:
		out.Derive = Direct
		err = add(Statistic{Kind: StatQuantile, Column: col, Quantile: agg.Quantile})
	case sqlrewrite.IQR:
		out.Derive = Direct
		err = add(Statistic{Kind: StatIQR, Column: col})
	case sqlrewrite.RegrSlope, sqlrewrite.RegrIntercept:
		x, ok := b.table.Column(agg.Column2)
		if !ok {
			return out, dperr.New(dperr.UnknownColumn, "Unknown column '%s' in 'field list'", agg.Column2)
		}
		coefficient := 0
		if agg.Func == sqlrewrite.RegrSlope {
			coefficient = 1
		}
		out.Derive = Direct
		err = add(Statistic{Kind: StatRegression, Column: col, Column2: x, Coefficient: coefficient})
	default:
		err = dperr.New(dperr.Unsupported, "aggregate %s is not supported", agg.Func)
	}
	return out, err
}
