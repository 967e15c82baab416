package exec

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// runSynopses runs a plan some of whose outputs are answered from
// synopses (planner.SynopsisPlan): it obtains every synopsis, building a
// missing one under a reservation of its own (obtainSynopses), runs the
// plan's releases, if any, as Run does, and builds the rows.
//
// A plan with releases reserves their cost first and obtains the synopses
// under that reservation (paid): a statement whose analyst cannot pay for
// its own releases is refused before any synopsis is built or charged, and
// one refused for want of budget for a synopsis build has its releases'
// reservation cancelled, as nothing was read for them. Either way a
// refusal for budget costs nothing (DESIGN.md §2). The statement's
// reservation is then held while it waits for a synopsis another
// statement is building. A statement needing a synopsis too large for the
// ledger is refused before any reservation (synopsisStore.fit).
func (e *Executor) runSynopses(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (*Result, error) {
	var (
		stored   []*storedSynopsis
		builtNow []bool
		released []planner.Estimate
	)
	specs := e.storedSpecs(plan)
	for _, spec := range specs {
		if err := e.synopses.fit(ctx, spec); err != nil {
			return nil, err
		}
	}
	if len(plan.Releases) == 0 {
		var err error
		if stored, builtNow, err = e.obtainSynopses(ctx, user, plan, specs, budget.Cost{}, src); err != nil {
			return nil, err
		}
		return synopsisResult(plan, stored, builtNow, nil)
	}
	err := e.paid(ctx, user, plan, memo(plan), plan.DeltaHint(), func(readData *bool) error {
		var err error
		answers := budget.Cost{Epsilon: plan.Cost.Epsilon, Delta: plan.Cost.Delta}
		if stored, builtNow, err = e.obtainSynopses(ctx, user, plan, specs, answers, src); err != nil {
			return err
		}
		released, err = e.release(ctx, user, plan, src, readData)
		return err
	})
	if err != nil {
		return nil, err
	}
	return synopsisResult(plan, stored, builtNow, released)
}

// obtainSynopses returns the plan's synopses, specs (storedSpecs),
// building each missing one under a reservation of its own on the
// analyst's accounts, and none unless the analyst can pay for all of them
// (synopsisStore.obtain); builtNow reports which ones this call built.
// answers is what the statement reserved for its own releases.
func (e *Executor) obtainSynopses(ctx context.Context, user string, plan *planner.Plan, specs []*planner.SynopsisSpec, answers budget.Cost, src noise.Source) (stored []*storedSynopsis, builtNow []bool, err error) {
	reqs := make([]synopsisRequest, len(specs))
	for i, spec := range specs {
		build := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
			snap, err := e.backend.Snapshot(ctx, user)
			if err != nil {
				return nil, err
			}
			defer snap.Close()
			*readData = true
			// On a unit table the histogram keeps ≤ k rows per unit, chosen
			// with a salt drawn for this build alone (spec.Build's contract).
			fetch := spec.Histogram
			fetch.Unit = unitBound(spec.Table, spec.RowsPerUnit(), unitScope{salt: newUnitSalt(plan, src)})
			hist, err := snap.Histogram(ctx, fetch)
			if err != nil {
				return nil, err
			}
			syn, err := spec.Build(src, hist)
			if err != nil {
				return nil, dperr.Wrap(dperr.Internal, err, "internal error: synopsis mechanism %s failed", spec.MechanismName())
			}
			return syn, nil
		}
		reqs[i] = synopsisRequest{spec: spec, memo: synopsisMemo(spec), build: build}
	}
	accounts, err := e.accounts(user, plan.Table)
	if err != nil {
		return nil, nil, err
	}
	return e.synopses.obtain(ctx, accounts, reqs, answers)
}

// SynopsisBuilds returns the ε of building the plan's synopses that are not
// stored yet (each is charged once, to the statement that builds it) and
// their columns' names: with the plan's own cost, the most the statement
// may spend. Whether a synopsis is stored is what earlier statements did,
// not data.
func (e *Executor) SynopsisBuilds(ctx context.Context, plan *planner.Plan) (epsilon float64, columns []string, err error) {
	if plan.Synopsis == nil {
		return 0, nil, nil
	}
	for _, spec := range e.storedSpecs(plan) {
		stored, err := e.synopses.load(ctx, spec)
		if err != nil {
			return 0, nil, err
		}
		if stored == nil {
			epsilon += spec.Config.Epsilon
			columns = append(columns, spec.Column.Name)
		}
	}
	return epsilon, columns, nil
}

// storedSpecs returns the plan's synopses as the synopsis store keys
// them: each spec itself, or, when the rows it counts are selected by a
// date or timestamp column the backend stores with a time zone (or whose
// backend type is not known: SetColumnZones), a copy whose Key also names
// the backend's zone (backend.Backend.Zone). Such a column is read as the
// wall-clock time it shows in that zone, so a predicate on it selects
// other rows in another zone: a synopsis built in one zone would answer,
// after a restart in another (backend.time_zone, a zone the DSN sets, the
// server's), for other instants. It is built anew there, paid once.
// Every other synopsis keeps its key, so that no change of the backend's
// zone or DSN builds and charges it again.
func (e *Executor) storedSpecs(plan *planner.Plan) []*planner.SynopsisSpec {
	specs := slices.Clone(plan.Synopsis.Synopses)
	zone := e.backend.Zone()
	if zone == "" {
		return specs
	}
	if _, id, ok := catalog.Location(zone); ok {
		zone = id // spellings of one zone agree: UTC is +00:00
	}
	for i, spec := range specs {
		for _, c := range spec.Temporal {
			if zoned, known := e.zones.Zoned(spec.Table.Name, c); zoned || !known {
				keyed := *spec
				keyed.Key += "|backend zone=" + zone
				specs[i] = &keyed
				break
			}
		}
	}
	return specs
}

// synopsisMemo describes a synopsis build in the ledger's history.
func synopsisMemo(spec *planner.SynopsisSpec) string {
	return fmt.Sprintf("%s: synopsis of %s", spec.Table.Name, synopsisWhat(spec))
}

// synopsisWhat names a synopsis within its table: its column, and the
// predicate on the other columns.
func synopsisWhat(spec *planner.SynopsisSpec) string {
	if spec.Predicate == "" {
		return spec.Column.Name
	}
	return spec.Column.Name + " | " + spec.Predicate
}

// synopsisUnitNote is whom a synopsis protects, for its answers' warnings.
func synopsisUnitNote(spec *planner.SynopsisSpec) string {
	t := spec.Table
	if !t.HasPrivacyUnit() {
		return "privacy unit: each row"
	}
	k := spec.RowsPerUnit()
	return fmt.Sprintf("privacy unit: each %s; protects each %s at epsilon=%.6g (the synopsis's, spent once): its histogram keeps ≤ %d rows per %s, L1 sensitivity %d, noise scaled by %d",
		t.PrivacyUnit, t.PrivacyUnit, spec.Config.Epsilon, k, t.PrivacyUnit, k, k)
}

// synopsisResult builds the result: one row, or one row per bucket of a
// histogram, and one warning per output column, then the plan's notes.
func synopsisResult(plan *planner.Plan, stored []*storedSynopsis, builtNow []bool, released []planner.Estimate) (*Result, error) {
	sp := plan.Synopsis
	res := &Result{}
	for i, o := range plan.Outputs {
		res.Columns = append(res.Columns, o.Label)
		a := sp.Answers[i]
		switch {
		case a == nil:
			v, err := o.Evaluate(released)
			if err != nil {
				return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot derive %s", o.Label)
			}
			res.Row = append(res.Row, outputValue(&o, v))
			res.Warnings = append(res.Warnings, describe(plan, &o, v, planScope(plan)))
		case a.Key:
			res.Warnings = append(res.Warnings, Warning{Level: "Note", Code: NoteCode,
				Message: fmt.Sprintf("%s: bucket key, public (no budget spent); the buckets are those of the column's bounds that meet WHERE, and rows where the column is NULL are not counted", o.Label)})
		default:
			s := stored[a.Synopsis]
			spent := 0.0
			if builtNow[a.Synopsis] {
				spent = s.Epsilon
			}
			res.Warnings = append(res.Warnings, Warning{Level: "Note", Code: NoteCode,
				Message: fmt.Sprintf("%s: mechanism=%s synopsis; epsilon=%.6g delta=0 spent by this statement; %s; 95%% interval: not available for synopsis answers; %s",
					o.Label, s.Mechanism, spent, s.describe(builtNow[a.Synopsis], sp.Synopses[a.Synopsis].Column.Name), synopsisUnitNote(sp.Synopses[a.Synopsis]))})
			if sp.Buckets == nil {
				res.Row = append(res.Row, a.Count(s.Synopsis, nil))
			}
		}
	}
	for _, n := range sp.Notes {
		res.Warnings = append(res.Warnings, Warning{Level: "Note", Code: NoteCode, Message: n})
	}
	if sp.Buckets == nil {
		return res, nil
	}
	res.Row = nil
	res.Rows = [][]any{}
	for _, b := range sp.Buckets {
		row := make([]any, len(plan.Outputs))
		for i, a := range sp.Answers {
			if a.Key {
				row[i] = bucketKey(b.Key)
				continue
			}
			row[i] = a.Count(stored[a.Synopsis].Synopsis, &b.Span)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// outputValue is the cell of a released output, of the output's type
// (planner.Output.ResultType): NULL, an integer count, a date or timestamp
// (the text of an order statistic of a date column), or a number.
func outputValue(o *planner.Output, v planner.Value) any {
	if v.Null {
		return nil
	}
	switch o.ResultType() {
	case planner.ResultBigint:
		return int64(v.Value)
	case planner.ResultDate:
		return planner.Date(o.FormatTemporal(v.Value))
	case planner.ResultDateTime:
		return planner.DateTime(o.FormatTemporal(v.Value))
	}
	return v.Value
}

// bucketKey is a bucket's key cell: an integer when it is one.
func bucketKey(k float64) any {
	if k == math.Trunc(k) && math.Abs(k) < 1<<53 {
		return int64(k)
	}
	return k
}

// ResultRows returns the result's rows: Rows for a histogram, else the one Row.
func (r *Result) ResultRows() [][]any {
	if r.Rows != nil {
		return r.Rows
	}
	return [][]any{r.Row}
}
