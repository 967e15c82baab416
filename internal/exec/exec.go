// Package exec runs plans: it reserves the plan's privacy cost in the ledger
// before any data is read, runs the plan's fetches on the backend, applies
// the mechanisms, commits the cost exactly once, and builds the result row
// and the warnings that describe every value (mechanism, ε, δ, 95% interval).
//
// Budget rule (DESIGN.md §2): the reservation is cancelled only when the
// statement fails before the first fetch is sent; from then on it is
// committed whatever happens, because a failure after reading data can
// itself reveal something about the data.
package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// Executor runs plans against one backend and one ledger. It is safe for
// concurrent use; each Run draws noise from the Source it is given.
type Executor struct {
	backend *backend.Backend
	ledger  *budget.Ledger
	log     *slog.Logger
	// synopses caches and builds range-count synopses (synopsis_store.go).
	synopses *synopsisStore
	// interactive holds the interactive counting instances (interactive_store.go).
	interactive *interactiveStore
	// statementTimeout bounds Run; 0 means none.
	statementTimeout time.Duration
	// tableCheck, if set, may refuse a statement on a table before any
	// budget is reserved (SetTableCheck).
	tableCheck func(ctx context.Context, user string, t *catalog.Table, reads []string) error
	// repeatWindow is how long a released answer is given again to an
	// identical statement (answers.go); 0 turns repeated answers off.
	repeatWindow time.Duration
	answers      answerStore
	// zones are the backend's date and timestamp columns with a time zone
	// (SetColumnZones), for the keys of stored synopses (storedSpecs).
	zones *catalog.ColumnZones
	// commits counts the commits of paid statements still under way.
	commits sync.WaitGroup
	// userLimits, if set, returns an analyst's own budget limit
	// (SetUserLimits).
	userLimits func(user string) (budget.Cost, bool)
}

// SetStatementTimeout bounds every later Run to d (0: no bound). The
// deadline covers the reservation, the fetches and the release; the backend
// is told the time left (backend.Snapshot), and a statement that runs out of
// time fails with a Timeout error. Its charge follows the budget rule: a
// timeout before the first fetch is sent cancels the reservation, one after
// is charged although nothing is delivered. Call it before Run is used.
func (e *Executor) SetStatementTimeout(d time.Duration) { e.statementTimeout = d }

// SetTableCheck makes Run and RunQuery call check with the statement's
// user and table and the backend columns its plan reads
// (planner.Plan.Reads, planner.QueryPlan.Reads) before they reserve
// budget or read data (a check that reads the backend's schema does so
// within the user's share of its connections, backend.Backend.Turn): an
// error from it is the statement's, and nothing is charged (the proxy
// checks there that the backend still has the table and those columns,
// and that their types still match their declarations). check must
// depend only on the table, the columns and the backend's schema, never
// on its rows. Call it before Run is used.
func (e *Executor) SetTableCheck(check func(ctx context.Context, user string, t *catalog.Table, reads []string) error) {
	e.tableCheck = check
}

// checkTable runs the table check of SetTableCheck, if any, on a
// statement of user on t and the columns reads returns.
func (e *Executor) checkTable(ctx context.Context, user string, t *catalog.Table, reads func() []string) error {
	if e.tableCheck == nil || t == nil {
		return nil
	}
	return e.tableCheck(ctx, user, t, reads())
}

// Wait returns when every commit of a statement already answered has been
// written to the ledger (or has failed); call it before closing the ledger.
func (e *Executor) Wait() { e.commits.Wait() }

// SetRepeatWindow makes identical statements within d of a released answer
// get that answer again at no cost (answers.go); 0, the default, turns it
// off. Call it before the first Run.
func (e *Executor) SetRepeatWindow(d time.Duration) { e.repeatWindow = d }

// SetColumnZones tells the executor which date and timestamp columns the
// backend stores with a time zone (cmd/dpproxy reads them; z may be
// updated while statements run): a synopsis whose rows such a column
// selects is keyed with the backend's zone (storedSpecs). Without it, or
// for a column it does not know, every such column is taken to have one.
// Call it before Run is used.
func (e *Executor) SetColumnZones(z *catalog.ColumnZones) { e.zones = z }

// New returns an executor.
func New(b *backend.Backend, l *budget.Ledger, log *slog.Logger) *Executor {
	if log == nil {
		log = slog.Default()
	}
	return &Executor{backend: b, ledger: l, log: log, synopses: newSynopsisStore(l), interactive: newInteractiveStore(l)}
}

// Result is the answer to one private query: one row, or several rows
// (Rows, then Row is nil) for a histogram or a query.
type Result struct {
	Columns []string
	// Types are the columns' types, a function of the plan only
	// (planner.Plan.ColumnTypes, planner.QueryPlan.ColumnTypes); every
	// cell of Row and Rows is nil or of its column's Go type
	// (planner.ResultType.Cell).
	Types    []planner.ResultType
	Row      []any
	Rows     [][]any
	Warnings []Warning
	// Intervals are the 95% intervals of Row's released values, where
	// they have one (planner.Output.Interval), for DP_INTERVAL_LOW and
	// DP_INTERVAL_HIGH.
	Intervals []*planner.Interval
}

// Warning is one row of SHOW WARNINGS.
type Warning struct {
	Level   string
	Code    uint16
	Message string
}

// NoteCode is the code of the notes that describe released values.
const NoteCode = 1003

// DivisionByZeroCode is MySQL's warning ER_DIVISION_BY_ZERO, "Division by
// 0", of post-processing that divides a released value by 0
// (planner.Warnings).
const DivisionByZeroCode = 1365

// TruncatedCode is MySQL's ER_TRUNCATED_WRONG_VALUE, "Truncated incorrect
// DOUBLE value: '3000abc'", of post-processing that reads text as a number
// (planner.Truncation).
const TruncatedCode = 1292

// SetUserLimits makes every later statement hold each analyst's account to
// the budget limits returns for the analyst (the proxy's own
// configuration), against the usage that every proxy sharing the ledger
// adds to; an analyst without one is refused before anything is charged.
// Without SetUserLimits the limits stored in the ledger (SetLimit) apply.
// Call it before Run is used.
func (e *Executor) SetUserLimits(limits func(user string) (budget.Cost, bool)) {
	e.userLimits = limits
}

// accounts returns the ledger accounts a statement on table t by user
// charges, with the limits this executor holds them to: the analyst's
// (SetUserLimits), whose refusal states what remains of it, and always
// the account of t's backend relation (catalog.TableAccount), held to t's
// cap when it declares one and charged without a limit otherwise, so that
// a proxy with the cap sees every statement on the relation, whichever
// proxy sharing the ledger served it. A refusal by the table's account
// names the table as the analyst does, and does not state what remains of
// it: that is what the other analysts left. A statement that reads more
// tables (scalar subqueries of other tables) charges each one's account
// too.
func (e *Executor) accounts(user string, t *catalog.Table, more ...*catalog.Table) ([]budget.Account, error) {
	own := budget.Account{Name: catalog.UserAccount(user), Disclose: true}
	if e.userLimits != nil {
		limit, ok := e.userLimits(user)
		if !ok {
			return nil, dperr.New(dperr.Internal, "no privacy budget is configured for user %s", user)
		}
		own.Limit = budget.OwnLimit(limit)
	}
	out := []budget.Account{own}
	for _, t := range append([]*catalog.Table{t}, more...) {
		table := budget.Account{Name: catalog.TableAccount(t.Source), Limit: budget.NoLimit(), Label: "table " + t.Name}
		if t.Epsilon > 0 {
			table.Limit = budget.OwnLimit(budget.Cost{Epsilon: t.Epsilon, Delta: t.Delta})
		}
		// The ledger charges an account named twice once, held to each
		// limit given (two configured tables over one relation).
		if !slices.Contains(out, table) {
			out = append(out, table)
		}
	}
	return out, nil
}

// bounded returns ctx limited to the statement timeout (timeouts.statement),
// which every private statement runs under, in the proxy and, through the
// context's deadline, in the backend.
func (e *Executor) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if e.statementTimeout > 0 {
		return context.WithTimeout(ctx, e.statementTimeout)
	}
	return ctx, func() {}
}

// Run executes plan for user with noise from src. The result's columns
// have the plan's types (Result.Types).
func (e *Executor) Run(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (*Result, error) {
	res, err := e.run(ctx, user, plan, src)
	if err != nil {
		return nil, err
	}
	return res, res.conform(plan.ColumnTypes())
}

// conform sets r.Types and converts every cell to its column's type.
func (r *Result) conform(types []planner.ResultType) error {
	r.Types = types
	rows := r.Rows
	if r.Row != nil {
		rows = append([][]any{r.Row}, rows...)
	}
	for _, row := range rows {
		if len(row) != len(types) {
			return dperr.New(dperr.Internal, "internal error: a result row of %d values for %d columns", len(row), len(types))
		}
		for j, v := range row {
			c, err := types[j].Cell(v)
			if err != nil {
				return dperr.Wrap(dperr.Internal, fmt.Errorf("column %q: %w", r.Columns[j], err), "internal error: malformed result")
			}
			row[j] = c
		}
	}
	return nil
}

// run answers Run.
func (e *Executor) run(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (*Result, error) {
	ctx, cancel := e.bounded(ctx)
	defer cancel()
	if err := e.checkTable(ctx, user, plan.Table, plan.Reads); err != nil {
		return nil, err
	}
	if err := e.checkPlanArguments(plan); err != nil {
		return nil, err
	}
	if plan.NoRow != "" {
		return noRowResult(plan), nil
	}
	if plan.Interactive != nil {
		return e.runInteractive(ctx, user, plan, src)
	}
	if plan.Synopsis != nil {
		return e.runSynopses(ctx, user, plan, src)
	}
	if e.repeatWindow > 0 {
		return e.runRepeatable(ctx, user, plan, src)
	}
	released, err := e.paidRelease(ctx, user, plan, src)
	if err != nil {
		return nil, err
	}
	values, err := evaluate(plan, released)
	if err != nil {
		return nil, err
	}
	return resultOf(plan, values), nil
}

// paidRelease reserves the plan's cost, runs its releases and settles the
// reservation (the budget rule above).
func (e *Executor) paidRelease(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (released []planner.Estimate, err error) {
	err = e.paid(ctx, user, plan, memo(plan), plan.DeltaHint(), func(readData *bool) error {
		released, err = e.release(ctx, user, plan, src, readData)
		return err
	})
	if err != nil {
		return nil, err
	}
	return released, nil
}

// paid reserves the plan's cost, runs run and settles the reservation
// (the budget rule above): committed once run has set *readData. A refusal
// for want of δ names what needs δ and the forms that need none: hint
// (Plan.DeltaHint, with the partition selection's for a statement that
// selects its keys).
func (e *Executor) paid(ctx context.Context, user string, plan *planner.Plan, note, hint string, run func(readData *bool) error) (err error) {
	return e.paidOn(ctx, user, []*catalog.Table{plan.Table}, plan.Cost, note, hint, run)
}

// paidOn is paid for a statement that reads tables (at least one) and
// costs cost: one reservation charged to the analyst and to each table's
// account (accounts).
func (e *Executor) paidOn(ctx context.Context, user string, tables []*catalog.Table, cost planner.Cost, note, hint string, run func(readData *bool) error) (err error) {
	accounts, err := e.accounts(user, tables[0], tables[1:]...)
	if err != nil {
		return err
	}
	reservation, err := e.ledger.Reserve(ctx, accounts,
		budget.Cost{Epsilon: cost.Epsilon, Delta: cost.Delta}, note)
	if hint != "" && errors.Is(err, budget.ErrDeltaExhausted) {
		return dperr.Wrap(dperr.BudgetExhausted, err, "%v: %s", err, hint)
	}
	if err != nil {
		return err
	}
	readData := false
	defer func() {
		// A fresh context: the budget must be settled even if ctx was cancelled.
		settle := context.WithoutCancel(ctx)
		if readData {
			// The reservation already counts as spent, so the answer need
			// not wait for the commit, which only records that the
			// reservation will never be cancelled; the commit joins the
			// ledger's next batch (budget's group commit). If it fails or
			// the process dies first, the reservation stays reserved:
			// spent, as the ledger counts it. Wait lets shutdown finish it.
			e.commits.Add(1)
			go func() {
				defer e.commits.Done()
				if err := reservation.Commit(settle); err != nil {
					e.log.Error("committing budget reservation failed; it stays reserved (spent)", "user", user, "reservation", reservation.ID(), "err", err)
				}
			}()
			return
		}
		if serr := reservation.Cancel(settle); serr != nil {
			e.log.Error("settling budget reservation failed", "user", user, "err", serr)
			if err == nil {
				err = dperr.Wrap(dperr.Internal, serr, "internal error: budget ledger unavailable")
			}
		}
	}()
	return run(&readData)
}

// maxRounds bounds the rounds of window fetches one release may ask for.
const maxRounds = 8

// release runs every release of the plan on one read-only snapshot: the
// plan's profile if it has one (planner.Plan.Profile), then one summary
// query with the terms of all releases (one per number of rows per unit
// the releases read, on a table with a privacy unit), then, per release,
// its histogram and the windows its mechanism asks for round by round;
// whatever the profile determines is computed from it, not sent. The
// snapshot is one of user's backend connections (backend.Backend.Snapshot).
func (e *Executor) release(ctx context.Context, user string, plan *planner.Plan, src noise.Source, readData *bool) ([]planner.Estimate, error) {
	snap, err := e.backend.Snapshot(ctx, user)
	if err != nil {
		return nil, err
	}
	// The read-only transaction ends after the answer is on its way: its
	// ROLLBACK decides nothing, so no statement waits for its round trip.
	// The fetches are over, so the end of ctx must not kill its query.
	defer func() {
		snap.Disarm()
		go snap.Close()
	}()
	scope := unitScope{salt: newUnitSalt(plan, src)}
	if plan.Profile != nil {
		// The one scan: the summary below and the histograms, windows and
		// grid sums of the profile's column are computed from its groups.
		*readData = true
		if err := snap.Profile(ctx, e.fetch(plan, 0, scope, sqlrewrite.Fetch{Profile: plan.Profile})); err != nil {
			return nil, err
		}
	}
	terms, where := summaryTerms(plan)
	values := map[int64][]float64{}
	for _, rows := range slices.Sorted(maps.Keys(terms)) {
		*readData = true
		if values[rows], err = snap.Summary(ctx, e.fetch(plan, rows, scope, sqlrewrite.Fetch{Summary: terms[rows]})); err != nil {
			return nil, err
		}
	}
	return e.releaseFrom(ctx, snap, plan, src, scope, where, values, nil, nil, readData)
}

// summaryTerms lists the distinct summary terms of the plan's releases per
// number of rows per unit they read (one key on a row-level table) and, per
// release, the indexes of its terms in its key's list.
func summaryTerms(plan *planner.Plan) (terms map[int64][]sqlrewrite.SummaryTerm, where [][]int) {
	terms = map[int64][]sqlrewrite.SummaryTerm{}
	where = make([][]int, len(plan.Releases)) // release → indexes into terms[its rows]
	for i, r := range plan.Releases {
		for _, t := range r.Mechanism.Terms(r) {
			j := indexOf(terms[r.RowsPerUnit], t)
			if j < 0 {
				terms[r.RowsPerUnit] = append(terms[r.RowsPerUnit], t)
				j = len(terms[r.RowsPerUnit]) - 1
			}
			where[i] = append(where[i], j)
		}
	}
	return terms, where
}

// releaseFrom runs every release of the plan from the values of its
// summary terms (as summaryTerms indexes them, per rows per unit), fetching
// the histograms and windows the mechanisms ask for from snap, with the
// statement's unit scope; hists, when it has a release's index, holds that
// release's histogram, already fetched (groupedHistograms).
func (e *Executor) releaseFrom(ctx context.Context, snap *backend.Snapshot, plan *planner.Plan, src noise.Source, scope unitScope, where [][]int, values map[int64][]float64, hists [][]int64, grids gridTotals, readData *bool) ([]planner.Estimate, error) {
	var err error
	released := make([]planner.Estimate, len(plan.Releases))
	for i, r := range plan.Releases {
		mine := make([]float64, len(where[i]))
		for k, j := range where[i] {
			mine[k] = values[r.RowsPerUnit][j]
		}
		var hist []int64
		if h := r.Mechanism.Histogram(r); h != nil {
			*readData = true
			if i < len(hists) && hists[i] != nil {
				hist = hists[i]
			} else if hist, err = snap.Histogram(ctx, e.fetch(plan, r.RowsPerUnit, scope, sqlrewrite.Fetch{Histogram: h})); err != nil {
				return nil, err
			}
		}
		step, err := r.Mechanism.Start(src, r, mine, hist)
		if err != nil {
			return nil, mechanismError(ctx, r, err)
		}
		var fetched []planner.Fetched
		for round := 0; ; round++ {
			more, done, est, err := step.Advance(ctx, src, fetched)
			if err != nil {
				return nil, mechanismError(ctx, r, err)
			}
			if done {
				released[i] = est
				break
			}
			if round == maxRounds {
				return nil, dperr.New(dperr.Internal, "internal error: mechanism %s asked for too many fetches", r.Mechanism.Name())
			}
			fetched = make([]planner.Fetched, len(more))
			for k, f := range more {
				*readData = true
				f = e.fetch(plan, r.RowsPerUnit, scope, f)
				switch {
				case f.Pairs != nil:
					fetched[k].Pairs, err = snap.Pairs(ctx, f)
				case f.GridSums != nil && grids.has(f.GridSums):
					g := grids.of(f.GridSums)
					fetched[k].Grid = &g
				case f.GridSums != nil && fewValues(plan.Table, f.GridSums.Column):
					var g sqlrewrite.GridTotals
					g, err = snap.GridSumsGrouped(ctx, f)
					fetched[k].Grid = &g
				case f.GridSums != nil:
					var g sqlrewrite.GridTotals
					g, err = snap.GridSums(ctx, f)
					fetched[k].Grid = &g
				default:
					fetched[k].Values, err = snap.Window(ctx, f)
				}
				if err != nil {
					return nil, err
				}
			}
		}
	}
	return released, nil
}

// fetch completes a request with the plan's table and filter and, on a
// table with a privacy unit, the bound of rows per unit (unit.go); it asks
// for a window of values over an integer column with a small declared range
// as grouped counts (sqlrewrite.Window.Grouped): at most that many groups,
// one aggregate scan instead of a sort, from which the grid sums of the
// column are computed too (release). The numbers returned are the same.
func (e *Executor) fetch(plan *planner.Plan, rowsPerUnit int64, scope unitScope, f sqlrewrite.Fetch) sqlrewrite.Fetch {
	f.Table, f.Declared, f.Partitions, f.Filter, f.Boolean, f.Derived = plan.Table.Source, plan.Table.Name, plan.Table.Partitions, plan.Filter, plan.Boolean, plan.Derived
	f.Unit = unitBound(plan.Table, rowsPerUnit, scope)
	if w := f.Window; w != nil && fewValues(plan.Table, w.Column) {
		grouped := *w
		grouped.Grouped = true
		f.Window = &grouped
	}
	return f
}

// maxGroupedValues is the widest declared integer range whose windows are
// read grouped.
const maxGroupedValues = 1 << 16

// fewValues reports whether the table's column with backend name source is
// an integer column of at most maxGroupedValues declared values.
func fewValues(t *catalog.Table, source string) bool {
	for _, c := range t.Columns {
		if c.Source != source || c.Type != catalog.Integer {
			continue
		}
		lo, hi, ok := c.Bounds()
		return ok && hi-lo < maxGroupedValues
	}
	return false
}

// mechanismError is the client's error of a release whose mechanism
// failed: the statement's timeout (3024) or cancellation (1317) when the
// mechanism stopped because ctx ended (planner.Step), else an internal
// error.
func mechanismError(ctx context.Context, r *planner.Release, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return interrupted(ctx)
	}
	return dperr.Wrap(dperr.Internal, err, "internal error: mechanism %s failed", r.Mechanism.Name())
}

// interrupted is the error of a statement whose context ended while the
// proxy computed: past its deadline (timeouts.statement) a dperr.Timeout,
// 3024, otherwise (KILL QUERY, the client gone, shutdown) dperr.Canceled,
// 1317, with MySQL's messages for them.
func interrupted(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return dperr.Wrap(dperr.Timeout, ctx.Err(), "Query execution was interrupted, maximum statement execution time exceeded")
	}
	return dperr.Wrap(dperr.Canceled, ctx.Err(), "Query execution was interrupted")
}

func indexOf(terms []sqlrewrite.SummaryTerm, t sqlrewrite.SummaryTerm) int {
	for i, u := range terms {
		if u == t {
			return i
		}
	}
	return -1
}

// memo describes the charge in the ledger's history.
func memo(plan *planner.Plan) string {
	labels := make([]string, len(plan.Outputs))
	for i, o := range plan.Outputs {
		labels[i] = o.Label
	}
	return fmt.Sprintf("%s: %s", plan.Table.Name, strings.Join(labels, ", "))
}

// evaluate derives the output values from the released estimates.
func evaluate(plan *planner.Plan, released []planner.Estimate) ([]planner.Value, error) {
	values := make([]planner.Value, len(plan.Outputs))
	for i, o := range plan.Outputs {
		v, err := o.Evaluate(released)
		if err != nil {
			return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot derive %s", o.Label)
		}
		values[i] = v
	}
	return values, nil
}

// noRowResult answers a plan whose WHERE selects no row whatever the data
// (planner.Plan.NoRow) as MySQL answers over no row: 0 for each COUNT and
// NULL for every other aggregate, a count spelled SUM (SUM(condition),
// Aggregate.Summed) included, or no row for a histogram's buckets, from
// the statement alone, with nothing read or charged.
func noRowResult(plan *planner.Plan) *Result {
	res := &Result{}
	histogram := false
	for _, o := range plan.Outputs {
		res.Columns = append(res.Columns, o.Label)
		var v any
		switch o.Agg.Func {
		case sqlrewrite.CountRows, sqlrewrite.CountColumn, sqlrewrite.CountDistinct:
			if !o.Agg.Summed {
				v = int64(0)
			}
		case sqlrewrite.BucketKey:
			histogram = true
		}
		res.Row = append(res.Row, v)
	}
	if histogram {
		res.Row, res.Rows = nil, [][]any{}
	}
	res.Warnings = []Warning{note(plan.NoRow + ": answered as over no row (0 for COUNT, NULL otherwise) from the statement alone; no data read, no budget spent")}
	return res
}

// resultOf builds the result row from the output values and describes each
// in a warning.
func resultOf(plan *planner.Plan, values []planner.Value) *Result {
	res := &Result{}
	for i, o := range plan.Outputs {
		v := values[i]
		res.Columns = append(res.Columns, o.Label)
		res.Row = append(res.Row, outputValue(&o, v))
		res.Intervals = append(res.Intervals, o.Interval(v))
		res.Warnings = append(res.Warnings, describe(plan, &o, v, planScope(plan)))
	}
	for _, n := range plan.Notes {
		res.Warnings = append(res.Warnings, Warning{Level: "Note", Code: NoteCode, Message: n})
	}
	return res
}

// describe writes the note of one output: the mechanism(s), the ε and δ of
// the releases it is computed from, its 95% interval, and whom it protects
// at what ε within its statement (scope).
func describe(plan *planner.Plan, o *planner.Output, v planner.Value, scope statementScope) Warning {
	return newDescriber(plan, o, scope).note("", v)
}

// describer writes the notes of one output of a plan (describe) for any
// number of its values, the parts common to all of them (mechanisms, ε
// and δ, the clamped values, the unit note) computed once: one per output
// of a grouped statement, whose groups share everything but the value.
type describer struct {
	o       *planner.Output
	head    string // "label: mechanism=…; epsilon=… delta=…" and what it is derived from
	clamped string // " (of the values clamped to […])", or ""
	unit    string // unitNote
	buf     []byte // scratch of note
}

// newDescriber returns the describer of o, an output of plan, within its
// statement (scope).
func newDescriber(plan *planner.Plan, o *planner.Output, scope statementScope) *describer {
	var eps, delta float64
	var parts []string
	for _, a := range o.Args {
		r := plan.Releases[a]
		eps += r.Epsilon
		delta += r.Delta
		parts = append(parts, fmt.Sprintf("%s by %s", r.Stat, r.Mechanism.Name()))
	}
	head := fmt.Sprintf("%s: mechanism=%s; epsilon=%.6g delta=%.6g", o.Label, mechanismNames(plan, o), eps, delta)
	if len(o.Args) > 1 || o.Derive != planner.Direct {
		head += fmt.Sprintf(" (derived from %s)", strings.Join(parts, ", "))
	}
	d := &describer{o: o, head: head, unit: unitNote(plan, eps, scope)}
	if of := clampedValues(o); of != "" {
		d.clamped = " (of " + of + ")"
	}
	return d
}

// note is the note of the output's value v, its message after prefix and
// ": " when prefix is not empty (a group's label). The message is built in
// the describer's buffer and copied once, at its length: a grouped
// statement's notes are kept until the session's next statement.
func (d *describer) note(prefix string, v planner.Value) Warning {
	b := d.buf[:0]
	if prefix != "" {
		b = append(append(b, prefix...), ": "...)
	}
	b = append(b, d.head...)
	switch {
	case v.Null:
		b = append(append(b, "; NULL: "...), v.Note...)
	case v.HasInterval:
		if _, temporal := d.o.Temporal(); temporal {
			b = fmt.Appendf(b, "; 95%% interval [%s, %s]", d.o.FormatTemporal(v.Low), d.o.FormatTemporal(v.High))
		} else {
			b = fmt.Appendf(b, "; 95%% interval [%.6g, %.6g]", v.Low, v.High)
		}
		b = append(b, d.clamped...)
		if v.Note != "" {
			b = append(append(b, "; "...), v.Note...)
		}
	case v.Note != "":
		b = append(append(b, "; "...), v.Note...)
	default:
		b = append(b, "; 95% interval: not available for this mechanism"...)
	}
	b = append(b, d.unit...)
	d.buf = b
	level := "Note"
	if v.Null {
		level = "Warning"
	}
	return Warning{Level: level, Code: NoteCode, Message: string(b)}
}

// clampedValues names, for the interval of o, the values its statistic
// is of: those clamped to the declared bounds, as for o's value, so that
// the interval does not account for the bias of clamping; for a
// COUNT(DISTINCT col) limited to the D values col's declaration allows
// (catalog.Column.DistinctValues), that limit; empty for an output that
// clamps nothing (any other count).
func clampedValues(o *planner.Output) string {
	if o.Agg.Func == sqlrewrite.CountDistinct && o.Column != nil {
		if d, ok := o.Column.DistinctValues(); ok {
			return fmt.Sprintf("the values %s's declaration allows, at most %.6g", o.Column.Name, d)
		}
	}
	b, ok := o.ClampedTo()
	if !ok {
		return ""
	}
	if _, temporal := o.Temporal(); temporal {
		return fmt.Sprintf("the values clamped to [%s, %s]", o.FormatTemporal(b.Lower), o.FormatTemporal(b.Upper))
	}
	return fmt.Sprintf("the values clamped to [%g, %g]", b.Lower, b.Upper)
}

func mechanismNames(plan *planner.Plan, o *planner.Output) string {
	var names []string
	for _, a := range o.Args {
		n := plan.Releases[a].Mechanism.Name()
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, "+")
}
