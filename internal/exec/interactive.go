package exec

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// runInteractive answers a count over a table's interactive domain from the
// dataset's instance, creating it (and paying its ε once) if needed.
func (e *Executor) runInteractive(ctx context.Context, user string, plan *planner.Plan, src noise.Source) (*Result, error) {
	ip := plan.Interactive
	accounts, err := e.accounts(user, plan.Table)
	if err != nil {
		return nil, err
	}
	inst, created, err := e.interactive.obtain(ctx, ip, accounts,
		func(ctx context.Context, maxHard int, readData *bool) (*interactiveInstance, []int64, error) {
			return e.createInteractive(ctx, user, ip, src, maxHard, readData)
		})
	if err != nil {
		return nil, err
	}
	var count int64
	var note string
	if inst.mm == nil {
		count, note = inst.histogramAnswer(ip)
	} else {
		var a mm.Answer
		salt := inst.header.UnitSalt
		inst, a, err = e.interactive.answerMedian(ctx, ip, src, func() (int64, error) { return e.truthCount(ctx, user, ip, salt) })
		switch {
		case errors.Is(err, mm.ErrHardQueryCapReached):
			return nil, dperr.New(dperr.BudgetExhausted, "the interactive counting session of table %s has used all %d of its hard queries (Median Mechanism): it answers only the counting queries it answered before; ask an administrator for a new session (a new interactive configuration)",
				plan.Table.Name, inst.mm.Plan().HardCap)
		case err != nil:
			return nil, interactiveError(err)
		}
		count, note = a.Count, medianNote(inst, a)
	}
	spent := "epsilon=0 delta=0 spent by this statement"
	if created {
		spent = fmt.Sprintf("epsilon=%.6g delta=0 spent by this statement to create the table's interactive instance (%s), once for every later count of every analyst", ip.Config.Epsilon, inst.header.Why)
	}
	// Every output is the one count (COUNT(*), SUM(1): planInteractive).
	result := &Result{}
	for i, o := range plan.Outputs {
		result.Columns = append(result.Columns, o.Label)
		result.Row = append(result.Row, count)
		message := fmt.Sprintf("%s: mechanism=%s; %s; %s; %s", o.Label, inst.header.Mechanism, spent, note, interactiveUnitNote(ip))
		if i > 0 {
			message = fmt.Sprintf("%s: the same count as %s", o.Label, plan.Outputs[0].Label)
		}
		result.Warnings = append(result.Warnings, Warning{Level: "Note", Code: NoteCode, Message: message})
	}
	result.Warnings = append(result.Warnings, Warning{Level: "Note", Code: NoteCode,
		Message: "the count is over the interactive domain: rows with NULL, or with a value outside the declared categories, in a domain column are not counted, even under NOT"})
	return result, nil
}

// createInteractive reads the histogram over X once and releases the
// instance from it (releaseInstance). It reads on a backend connection of
// user's (backend.Backend.Snapshot).
func (e *Executor) createInteractive(ctx context.Context, user string, ip *planner.InteractivePlan, src noise.Source, maxHard int, readData *bool) (*interactiveInstance, []int64, error) {
	snap, err := e.backend.Snapshot(ctx, user)
	if err != nil {
		return nil, nil, err
	}
	defer snap.Close()
	*readData = true
	salt := newUnitSalt(&planner.Plan{Table: ip.Table}, src)
	truth, err := snap.Cells(ctx, interactiveFetch(ip, salt))
	if err != nil {
		return nil, nil, err
	}
	inst, err := releaseInstance(src, ip, truth, maxHard)
	if err != nil {
		return nil, nil, err
	}
	inst.header.UnitSalt = salt
	return inst, truth, nil
}

// releaseInstance releases a new instance of ip from truth, the exact
// histogram over X: the noisy row count n̂ (histogram.NoisyRowCount at the
// plan's CountEpsilon), the mechanism the planner's rule chooses with it,
// and that mechanism: the noisy histogram (histogram.NoisyCells at
// RestEpsilon), or a Median Mechanism with at most maxHard hard answers
// (its state then fits the ledger: interactiveStore.fit). Guarantee: n̂
// and the mechanism are each DP at their share of the instance's per-row
// ε (planner.InteractivePlan), which add up to at most it;
// TestAuditInstanceReleases audits n̂ and the noisy cells at their shares.
func releaseInstance(src noise.Source, ip *planner.InteractivePlan, truth []int64, maxHard int) (*interactiveInstance, error) {
	var n int64
	for _, c := range truth {
		n += c
	}
	nHat, err := histogram.NoisyRowCount(src, n, ip.CountEpsilon())
	if err != nil {
		return nil, interactiveError(err)
	}
	kind, why := ip.Choose(nHat, maxHard)
	inst := &interactiveInstance{header: interactiveHeader{Key: ip.Key, Mechanism: kind, Why: why,
		NHat: nHat, Epsilon: ip.Config.Epsilon, Noise: ip.RestEpsilon(), CreatedAt: time.Now().UTC()}}
	if kind == planner.InteractiveMedian {
		// The mechanism takes the n̂ released above as its row count: the
		// count is released once, for the rule and the mechanism.
		inst.mm, err = mm.NewMedianMechanism(src, len(truth), n, ip.MedianConfig(nHat, maxHard))
		if err == nil {
			return inst, nil
		}
		if !errors.Is(err, mm.ErrInfeasible) {
			return nil, interactiveError(err)
		}
		// Forced by the configuration but infeasible at n̂: ε' goes to the histogram.
		inst.mm = nil
		inst.header.Mechanism = planner.InteractiveHistogram
		inst.header.Why += "; MM-SVT infeasible at the noisy count, so noisy-histogram"
	}
	if inst.header.Noisy, err = histogram.NoisyCells(src, truth, inst.header.Noise); err != nil {
		return nil, interactiveError(err)
	}
	return inst, nil
}

// interactiveError is the error a client gets for err, a failure of an
// interactive count: one that already carries its code and a message for
// the client (a *dperr.Error in its chain: the ledger's, a backend's
// query-id error, 1317 or 3024 for a statement that ended while it waited)
// keeps them; any other is the generic 1105, its text (a mechanism's or
// a driver's) kept for the log only (dperr's contract).
func interactiveError(err error) error {
	var e *dperr.Error
	if errors.As(err, &e) {
		return err
	}
	return dperr.Wrap(dperr.Internal, err, "internal error: interactive mechanism failed")
}

// interactiveFetch is the histogram over X of ip's instance: on a table
// with a privacy unit bounded to k rows per unit with the instance's salt
// (planner.InteractivePlan.RowEpsilon's contract), else the plan's fetch.
func interactiveFetch(ip *planner.InteractivePlan, salt string) sqlrewrite.Fetch {
	f := ip.Cells
	f.Unit = unitBound(ip.Table, ip.RowsPerUnit(), unitScope{salt: salt})
	return f
}

// interactiveUnitNote is whom an interactive answer protects.
func interactiveUnitNote(ip *planner.InteractivePlan) string {
	t := ip.Table
	if !t.HasPrivacyUnit() {
		return "privacy unit: each row"
	}
	k := ip.RowsPerUnit()
	return fmt.Sprintf("privacy unit: each %s; protects each %s at epsilon=%.6g (the instance's, spent once): the instance counts ≤ %d rows per %s, sensitivity %d per count, and runs at epsilon=%.6g per row",
		t.PrivacyUnit, t.PrivacyUnit, ip.Config.Epsilon, k, t.PrivacyUnit, k, ip.RowEpsilon())
}

// truthCount returns the true count of the plan's cells, reading the
// histogram over X (bounded with the instance's unit salt) once per process,
// on a backend connection of user's.
func (e *Executor) truthCount(ctx context.Context, user string, ip *planner.InteractivePlan, salt string) (int64, error) {
	truth := e.interactive.truth(ip.Key)
	truth.mu.Lock()
	defer truth.mu.Unlock()
	if truth.counts == nil {
		snap, err := e.backend.Snapshot(ctx, user)
		if err != nil {
			return 0, err
		}
		defer snap.Close()
		counts, err := snap.Cells(ctx, interactiveFetch(ip, salt))
		if err != nil {
			return 0, err
		}
		truth.counts = counts
	}
	return ip.Predicate.Count(truth.counts), nil
}

// histogramAnswer sums the noisy cells of the predicate, clamped at 0,
// and describes its accuracy: for m cells of DLap(1/ε') noise, |error|
// ≤ planner.HistogramError with probability ≥ 1 − β, as EXPLAIN states.
func (inst *interactiveInstance) histogramAnswer(ip *planner.InteractivePlan) (int64, string) {
	count := max(ip.Predicate.Count(inst.header.Noisy), 0)
	m := float64(ip.Predicate.Size())
	if m == 0 {
		return 0, "no cell of X satisfies the predicate: 0 exactly, from public information"
	}
	bound := planner.HistogramError(int(m), inst.header.Noise, ip.Config.Beta)
	nHat := float64(inst.header.NHat)
	return count, fmt.Sprintf("sum of %d noisy cells of %d = fraction %.6g × noisy n̂ %d; accuracy ±%.0f rows (α = %.4g of n̂) with probability %g for this query; answered from a synopsis released once, no further cost",
		int(m), ip.Predicate.Cells(), float64(count)/nHat, inst.header.NHat, math.Ceil(bound), math.Ceil(bound)/nHat, 1-ip.Config.Beta)
}

// medianNote describes a Median Mechanism answer.
func medianNote(inst *interactiveInstance, a mm.Answer) string {
	p := inst.mm.Plan()
	kind := fmt.Sprintf("easy query: the candidate pool's median fraction %.6g × noisy n̂ %d", float64(a.Count)/float64(p.RowCount), p.RowCount)
	if a.Hard {
		kind = "hard query: a fresh noisy count, which also teaches the pool"
	}
	if a.Cached {
		kind = "repeated query: the earlier answer, no test run"
	}
	return fmt.Sprintf("%s; accuracy ±%d rows (α = %.4g of n̂) with probability %g jointly for the first %d answers; hard queries used %d of %d",
		kind, a.Alpha, a.AlphaFraction, a.Confidence, p.PlannedQueries, a.HardUsed, a.HardCap)
}
