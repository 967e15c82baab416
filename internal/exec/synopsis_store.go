package exec

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// Synopses are stored next to the ledger (budget.Ledger state), so they
// survive restarts and kill -9 exactly as spent budget does, and are shared
// by every proxy that shares the ledger.
//
// Building one exactly once. The first statement that needs a synopsis
// pays its ε once; concurrent first statements, in one process or in
// several proxies sharing the ledger, must neither pay twice nor release
// two synopses. Two guards:
//
//   - In one process, a mutex per synopsis key: the statements that need
//     the same missing synopsis queue behind the one building it and then
//     read it at no cost.
//   - Across processes, a claim account in the ledger: "synopsis:<hash of
//     the key>", whose ε limit is the synopsis's ε. The builder's
//     reservation charges the analyst's accounts and the claim account in
//     one atomic Reserve, so of two proxies racing, exactly one
//     reservation fits; the other sees the claim taken (BudgetExhausted
//     with the claim spent) and polls the state until the synopsis
//     appears. The builder renews a lease next to the claim while it
//     builds (creation_lease.go). The reservation is committed once data
//     was read (DESIGN.md §2) and cancelled only when the build failed
//     before any read and its lease was not taken over, which frees the
//     claim again.
//
// A builder that died after its Reserve (kill -9) leaves the claim spent
// and no synopsis. A waiter that finds the claim's newest reservation
// committed, cancelled, or pending with its lease unrenewed for longer
// than the lease (by the waiter's own clock: leaseWatch), with still no
// synopsis, reopens the claim by raising its limit by one more ε (all
// waiters compute the same limit from the same history, so the raise is
// idempotent) and races for it again; the crashed build stays paid. A
// builder stores its synopsis with an insert-if-absent swap
// (budget.Ledger.SwapState) and adopts a synopsis that appeared meanwhile
// instead of its own, so even after a takeover no second synopsis is
// released.
type synopsisStore struct {
	ledger *budget.Ledger
	// lease is how long a pending build holds its claim against takeover.
	lease time.Duration
	// poll is the wait between looks at the state while another builds.
	poll time.Duration
	// watches judge the leases of other proxies' builds by this process's
	// clock (lease_watch.go).
	watches leaseWatches

	mu    sync.Mutex
	cache map[string]*storedSynopsis
	locks map[string]*sync.Mutex
}

// Defaults of the store's timing.
const (
	synopsisLease = 2 * time.Minute
	synopsisPoll  = 50 * time.Millisecond
)

// storedSynopsis is a synopsis with what its warnings say of it, as stored.
type storedSynopsis struct {
	// Key is the planner's SynopsisSpec.Key, checked on load.
	Key       string              `json:"key"`
	BuiltAt   time.Time           `json:"built_at"`
	Epsilon   float64             `json:"epsilon"`
	Mechanism string              `json:"mechanism"`
	Workload  string              `json:"workload"`
	Synopsis  *histogram.Synopsis `json:"synopsis"`
}

func newSynopsisStore(l *budget.Ledger) *synopsisStore {
	return &synopsisStore{ledger: l, lease: synopsisLease, poll: synopsisPoll,
		cache: map[string]*storedSynopsis{}, locks: map[string]*sync.Mutex{}}
}

// stateKey and claimAccount name a synopsis in the ledger: a hash of its
// key, which may be longer than a ledger name.
func stateKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "synopsis:" + hex.EncodeToString(sum[:16])
}

func claimAccount(key string) string { return stateKey(key) }

// buildFunc builds a synopsis after its reservation: it reads the data
// (setting *readData first) and releases the synopsis.
type buildFunc func(ctx context.Context, readData *bool) (*histogram.Synopsis, error)

// obtain returns the synopsis of spec, building it with build under a
// reservation charged to accounts when no synopsis exists yet; built
// reports whether this call built it.
func (st *synopsisStore) obtain(ctx context.Context, spec *planner.SynopsisSpec, accounts []string, memo string, build buildFunc) (s *storedSynopsis, built bool, err error) {
	if s := st.cached(spec.Key); s != nil {
		return s, false, nil
	}
	unlock := st.lock(spec.Key)
	defer unlock()
	if s := st.cached(spec.Key); s != nil {
		return s, false, nil
	}
	claim := claimAccount(spec.Key)
	defer func() {
		if s != nil {
			st.watches.forget(claim) // no creation to wait for any more
		}
	}()
	eps := spec.Config.Epsilon
	deadline := time.Now().Add(2*st.lease + time.Minute)
	for {
		s, err := st.load(ctx, spec)
		if err != nil || s != nil {
			return s, false, err
		}
		res, err := reserveClaim(ctx, st.ledger, accounts, claim, eps, memo)
		if err != nil {
			return nil, false, err
		}
		if res != nil {
			s, err := st.build(ctx, spec, res, build)
			return s, err == nil, err
		}
		// Another statement holds the claim: wait for its synopsis, or
		// reopen the claim if that build is over without one.
		if s, err := st.load(ctx, spec); err != nil || s != nil {
			return s, false, err
		}
		if err := reopenIfAbandoned(ctx, st.ledger, claim, eps, st.lease, &st.watches); err != nil {
			return nil, false, err
		}
		if time.Now().After(deadline) {
			return nil, false, dperr.New(dperr.Internal, "internal error: the synopsis of %s is being built by another statement; try again", spec.Column.Name)
		}
		select {
		case <-ctx.Done():
			return nil, false, dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
		case <-time.After(st.poll):
		}
	}
}

// build reads the data and releases the synopsis under the reservation res,
// holding its creation lease while it builds, then stores it and settles
// res (creationLease.settle: committed once data was read).
func (st *synopsisStore) build(ctx context.Context, spec *planner.SynopsisSpec, res *budget.Reservation, build buildFunc) (s *storedSynopsis, err error) {
	readData := false
	hold, err := holdCreation(ctx, st.ledger, claimAccount(spec.Key), res, st.lease)
	defer func() {
		if serr := hold.settle(res, readData); serr != nil && err == nil {
			s, err = nil, dperr.Wrap(dperr.Internal, serr, "internal error: budget ledger unavailable")
		}
	}()
	if err != nil {
		return nil, err
	}
	syn, err := build(ctx, &readData)
	if err != nil {
		return nil, err
	}
	s = &storedSynopsis{Key: spec.Key, BuiltAt: time.Now().UTC(), Epsilon: spec.Config.Epsilon,
		Mechanism: syn.Mechanism(), Workload: spec.Config.Workload.Kind, Synopsis: syn}
	value, err := json.Marshal(s)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot encode synopsis")
	}
	// Store it only if no synopsis is stored yet; else adopt the one another
	// proxy stored meanwhile (after a takeover), so that only one is ever
	// released.
	stored, err := st.ledger.SwapState(context.WithoutCancel(ctx), stateKey(spec.Key), nil, value)
	if err != nil {
		return nil, err
	}
	if !stored {
		other, err := st.load(ctx, spec)
		if err == nil && other == nil {
			err = dperr.New(dperr.Internal, "internal error: the synopsis of %s vanished", spec.Column.Name)
		}
		return other, err
	}
	st.remember(s)
	return s, nil
}

// load returns the stored synopsis of spec, or nil when there is none.
func (st *synopsisStore) load(ctx context.Context, spec *planner.SynopsisSpec) (*storedSynopsis, error) {
	value, ok, err := st.ledger.GetState(ctx, stateKey(spec.Key))
	if err != nil || !ok {
		return nil, err
	}
	var s storedSynopsis
	if err := json.Unmarshal(value, &s); err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: stored synopsis of %s is unreadable", spec.Column.Name)
	}
	if s.Key != spec.Key || s.Synopsis == nil || s.Synopsis.N() != spec.Domain.Bins {
		return nil, dperr.New(dperr.Internal, "internal error: stored synopsis %s does not match %q", stateKey(spec.Key), spec.Key)
	}
	st.remember(&s)
	return &s, nil
}

// The claim accounts below are shared by the synopsis and interactive
// stores: a creation's ε is charged to its claim, whose limit admits one
// creation at a time.

// reserveClaim reserves eps on the analyst's accounts and the claim
// account together: the reservation if this statement may create the shared
// release, nil (and no error) if another statement holds the claim, or the
// error (BudgetExhausted when the analyst's own budget is short).
func reserveClaim(ctx context.Context, ledger *budget.Ledger, accounts []string, claim string, eps float64, memo string) (*budget.Reservation, error) {
	if err := ensureClaim(ctx, ledger, claim, eps); err != nil {
		return nil, err
	}
	res, err := ledger.Reserve(ctx, append(slices.Clone(accounts), claim), budget.Cost{Epsilon: eps}, memo)
	if err == nil {
		return res, nil
	}
	if dperr.KindOf(err) != dperr.BudgetExhausted {
		return nil, err
	}
	free, cerr := claimFree(ctx, ledger, claim, eps)
	switch {
	case cerr != nil:
		return nil, cerr
	case free:
		return nil, err // the analyst's own budget is short
	}
	return nil, nil
}

// ensureClaim creates the claim account with a limit of one ε if missing.
func ensureClaim(ctx context.Context, ledger *budget.Ledger, claim string, eps float64) error {
	_, err := ledger.Remaining(ctx, claim)
	if errors.Is(err, budget.ErrUnknownAccount) {
		return ledger.SetLimit(ctx, claim, budget.Cost{Epsilon: eps})
	}
	return err
}

// claimFree reports whether the claim account could pay eps.
func claimFree(ctx context.Context, ledger *budget.Ledger, claim string, eps float64) (bool, error) {
	rem, err := ledger.Remaining(ctx, claim)
	if err != nil {
		return false, err
	}
	return rem.Epsilon >= eps*(1-1e-9), nil
}

// reopenIfAbandoned raises the claim's limit by eps when its newest
// reservation is settled, or when it and its creation's lease
// (creation_lease.go) have been seen unchanged by this process (watches,
// across statements) for longer than the lease, while nothing was stored
// (the caller checked): the creation it paid for is over or dead. A
// pending creation's lease is taken over first, by a swap that fails if
// its builder renewed, settled, or was taken over by another waiter
// meanwhile (then nothing is raised now); once taken over, its builder
// can no longer cancel the reservation the raise counts as spent. What
// was paid stays paid. The reservation's own time, written by the
// reserving proxy's clock, is not compared with this one's.
func reopenIfAbandoned(ctx context.Context, ledger *budget.Ledger, claim string, eps float64, lease time.Duration, watches *leaseWatches) error {
	history, err := ledger.History(ctx, claim, 0)
	if err != nil || len(history) == 0 {
		return err
	}
	if newest := history[0]; newest.State == budget.Reserved {
		key := claimLeaseKey(claim)
		held, ok, err := ledger.GetState(ctx, key)
		if err != nil {
			return err
		}
		id := strconv.FormatInt(newest.ID, 10)
		if !watches.expired(claim, []byte(id+"|"+string(held)), time.Now(), lease) {
			return nil
		}
		if !ok {
			held = nil
		}
		var token [16]byte
		if _, err := rand.Read(token[:]); err != nil {
			return dperr.Wrap(dperr.Internal, err, "internal error: no randomness for a creation lease")
		}
		taken, err := ledger.SwapState(ctx, key, held, []byte(id+" taken "+hex.EncodeToString(token[:])))
		if err != nil || !taken {
			return err
		}
	}
	used := 0.0
	for _, e := range history {
		if e.State != budget.Cancelled {
			used += e.Cost.Epsilon
		}
	}
	return ledger.SetLimit(ctx, claim, budget.Cost{Epsilon: used + eps})
}

func (st *synopsisStore) cached(key string) *storedSynopsis {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cache[key]
}

func (st *synopsisStore) remember(s *storedSynopsis) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.cache[s.Key] = s
}

// lock takes the process-wide mutex of key and returns its unlock.
func (st *synopsisStore) lock(key string) func() {
	st.mu.Lock()
	m, ok := st.locks[key]
	if !ok {
		m = &sync.Mutex{}
		st.locks[key] = m
	}
	st.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// describe is the warning's account of where an answer came from:
// built now by this statement, or earlier and free.
func (s *storedSynopsis) describe(builtNow bool, column string) string {
	if builtNow {
		return fmt.Sprintf("answered from synopsis built now by this statement with epsilon=%.6g (%s, workload %s), spent once: later range counts and histograms on %s with the same other-column predicate are free",
			s.Epsilon, s.Mechanism, s.Workload, column)
	}
	return fmt.Sprintf("answered from synopsis built %s with epsilon=%.6g (%s, workload %s), no budget spent",
		s.BuiltAt.Format(time.RFC3339), s.Epsilon, s.Mechanism, s.Workload)
}
