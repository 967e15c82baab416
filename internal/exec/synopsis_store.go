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
	"strings"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
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
//   - In one process, a lock per synopsis key (keyLocks): the statements
//     that need the same missing synopsis queue behind the one building it
//     and then read it at no cost; a statement's wait ends with its
//     context (its timeout, KILL), although the holder may itself be
//     waiting for another proxy's build of a later key (obtain).
//   - Across processes, a claim account in the ledger: "synopsis:<hash of
//     the key>", whose ε limit is the synopsis's ε. The builder's
//     reservation charges the analyst's accounts and the claim account in
//     one atomic Reserve, so of two proxies racing, exactly one
//     reservation fits; the other sees the claim taken (BudgetExhausted
//     with the claim spent) and polls the state until the synopsis
//     appears. The builder renews a lease next to the claim from its
//     Reserve until the reservation is settled (creation_lease.go). The
//     reservation is committed once data was read (DESIGN.md §2) and
//     cancelled only when the build failed before any read, or the
//     statement gave the claim up unbuilt (obtain), and its lease was not
//     taken over, which frees the claim again.
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
// released. (A build whose store the ledger failed answers its process's
// statements from its paid copy until stored; other proxies then build
// their own, paid again: stored_release.go.)
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
	// unstored are the synopses this process built and paid for but could
	// not store yet (stored_release.go), by key, with the value to store.
	unstored map[string]unstoredSynopsis
	keys     keyLocks
}

// unstoredSynopsis is a synopsis built and paid for whose store failed:
// the synopsis, answered from, and its encoded value, stored at the next
// statement that needs it (synopsisStore.storeUnstored).
type unstoredSynopsis struct {
	s     *storedSynopsis
	value []byte
}

// Defaults of the store's timing.
const (
	synopsisLease = 2 * time.Minute
	synopsisPoll  = 50 * time.Millisecond
)

// storedSynopsis is a synopsis with what its warnings say of it. It is
// stored as an envelope (stored_release.go) of its header and the
// synopsis's binary form; one stored before the envelope, as this struct
// in JSON (a synopsis's totals took up to 25 characters each), is still
// read.
type storedSynopsis struct {
	synopsisHeader
	Synopsis *histogram.Synopsis `json:"synopsis"`
}

// synopsisHeader is what a stored synopsis says of itself.
type synopsisHeader struct {
	// Key is the planner's SynopsisSpec.Key, checked on load.
	Key     string    `json:"key"`
	BuiltAt time.Time `json:"built_at"`
	Epsilon float64   `json:"epsilon"`
	// Mechanism is the synopsis's.
	Mechanism string `json:"mechanism"`
	Workload  string `json:"workload"`
}

// encode serializes the stored synopsis.
func (s *storedSynopsis) encode() ([]byte, error) {
	var state []byte
	if s.Synopsis != nil {
		var err error
		if state, err = s.Synopsis.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	return encodeEnvelope(&s.synopsisHeader, state)
}

// decodeSynopsis parses a stored value: an envelope, or JSON as stored
// before the envelope.
func decodeSynopsis(value []byte) (*storedSynopsis, error) {
	var s storedSynopsis
	if !isEnvelope(value) {
		return &s, json.Unmarshal(value, &s)
	}
	state, err := decodeEnvelope(value, &s.synopsisHeader)
	if err != nil {
		return &s, err
	}
	s.Synopsis = &histogram.Synopsis{}
	return &s, s.Synopsis.UnmarshalBinary(state)
}

// synopsisBound bounds the stored value of spec's synopsis from public
// facts only: its envelope and the binary form of a synopsis over its
// cells, whatever partition and totals the mechanism releases.
func synopsisBound(spec *planner.SynopsisSpec) int64 {
	return envelopeBound(len(spec.Key)) + histogram.BinaryBound(spec.Domain.Cells())
}

// fit checks, from public facts only and before any reservation, that
// spec's synopsis, unless it is stored already, can be stored in the
// ledger (budget.Ledger.StateValueLimit: the same limit on every ledger,
// lower on a MySQL/MariaDB ledger with a small max_allowed_packet), and
// refuses its statement otherwise. Without it a synopsis too large for
// the ledger read the data, failed to store and was paid again by every
// statement that needed it (found by an independent review).
func (st *synopsisStore) fit(ctx context.Context, spec *planner.SynopsisSpec) error {
	if s, err := st.load(ctx, spec); err != nil || s != nil {
		return err
	}
	limit, err := st.ledger.StateValueLimit(ctx)
	if err != nil {
		return err
	}
	need := synopsisBound(spec)
	if need <= limit {
		return nil
	}
	return dperr.New(dperr.Unsupported, "not supported: the synopsis of table %s, %s, over %d bins would take up to %d bytes, above %s; declare at most %d bins in the histogram of %s",
		spec.Table.Name, synopsisWhat(spec), spec.Domain.Bins, need, stateLimitText(limit), max(fittingBins(spec, limit), 1), spec.Column.Name)
}

// fittingBins is the most bins spec's column could declare for a synopsis
// with spec's key to fit limit (fewer bins never lengthen the key). It may
// be below 1.
func fittingBins(spec *planner.SynopsisSpec, limit int64) int64 {
	return (limit-envelopeBound(len(spec.Key))-histogram.BinaryBound(0))/9 - int64(spec.Domain.Cells()-spec.Domain.Bins)
}

// CheckSynopsisFits refuses, from the configuration alone, col's histogram
// when even its synopsis over every row of t, the one with the shortest key
// (planner.WholeSynopsis), cannot fit budget.MaxStateValue, the limit of
// every ledger: every statement needing one of its synopses would be
// refused (synopsisStore.fit), so such a configuration is refused at
// start. The error names the bins that fit. A synopsis that fits this
// bound may still be refused by fit, for a longer key (a predicate on
// other columns) or a ledger with a small max_allowed_packet.
func CheckSynopsisFits(t *catalog.Table, col *catalog.Column) error {
	spec, ok := planner.WholeSynopsis(t, col)
	if !ok || synopsisBound(spec) <= budget.MaxStateValue {
		return nil
	}
	// Fewer bins may write the key with fewer digits, leaving room for
	// a bin or two more than fittingBins says.
	most := int(max(fittingBins(spec, budget.MaxStateValue), 1))
	for most+1 < spec.Domain.Bins && wholeSynopsisFits(t, col, most+1) {
		most++
	}
	return fmt.Errorf("%d bins would make its synopsis take up to %d bytes, above the %d bytes a value in the budget ledger may take on every ledger; declare at most %d bins",
		spec.Domain.Bins, synopsisBound(spec), budget.MaxStateValue, most)
}

// wholeSynopsisFits reports whether col's synopsis over every row of t
// fits budget.MaxStateValue with bins bins.
func wholeSynopsisFits(t *catalog.Table, col *catalog.Column, bins int) bool {
	c, h := *col, *col.Histogram
	h.Bins, c.Histogram = bins, &h
	spec, _ := planner.WholeSynopsis(t, &c)
	return synopsisBound(spec) <= budget.MaxStateValue
}

func newSynopsisStore(l *budget.Ledger) *synopsisStore {
	return &synopsisStore{ledger: l, lease: synopsisLease, poll: synopsisPoll,
		cache: map[string]*storedSynopsis{}, unstored: map[string]unstoredSynopsis{}}
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

// synopsisRequest is one synopsis a statement reads: its spec, the memo
// of its build in the ledger's history, and how to build it.
type synopsisRequest struct {
	spec  *planner.SynopsisSpec
	memo  string
	build buildFunc
}

// obtain returns the synopses of reqs, whose keys must be distinct,
// building each that does not exist yet under a reservation charged to
// accounts; built reports which ones this call built. It claims every
// missing synopsis (claim: its reservation, and its creation's lease)
// before it builds any, in the order of their keys, so that a statement
// whose analyst cannot pay for all of its builds builds none and is
// charged for none: the claims already made are cancelled, as no data
// was read for them. The order makes waits acyclic, in one process and
// across proxies: a statement waits for another's build only while it
// holds claims on smaller keys. A build that fails cancels the claims not
// built yet; the ones built stay paid. A cancellation that fails leaves
// its reservation spent (budget.Reservation), never undercharging.
//
// answers is what the statement has reserved on accounts for its own
// releases, if anything (runSynopses): a refusal for want of budget then
// states what remained before the statement and everything it needs, its
// answers and all the synopses it would build (refusal), not what is left
// beside its pending reservations and the one build refused.
func (st *synopsisStore) obtain(ctx context.Context, accounts []budget.Account, reqs []synopsisRequest, answers budget.Cost) (stored []*storedSynopsis, built []bool, err error) {
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(reqs[a].spec.Key, reqs[b].spec.Key) })
	stored, built = make([]*storedSynopsis, len(reqs)), make([]bool, len(reqs))
	claims := make([]*synopsisClaim, len(reqs))
	defer func() {
		for _, c := range claims {
			if c != nil {
				c.abandon()
			}
		}
	}()
	for _, i := range order {
		if stored[i], claims[i], err = st.claim(ctx, reqs[i].spec, accounts, reqs[i].memo); err != nil {
			if short, ok := errors.AsType[*budget.Shortfall](err); ok {
				err = st.refusal(ctx, short, answers, reqs, stored, claims, i)
			}
			return nil, nil, err
		}
	}
	for _, i := range order {
		c := claims[i]
		if c == nil {
			continue
		}
		claims[i] = nil
		if stored[i], err = c.build(ctx, reqs[i].build); err != nil {
			return nil, nil, err
		}
		built[i] = true
	}
	return stored, built, nil
}

// refusal restates short, the refusal of the claim of reqs[refused], for
// the whole statement (budget.Shortfall.Restate): held is its answers'
// reservation and the claims made before, and it needs its answers and
// the build of every synopsis that is not stored: the ones claimed, the
// one refused, and those not tried yet that are missing now (one that
// cannot be read counts as missing).
func (st *synopsisStore) refusal(ctx context.Context, short *budget.Shortfall, answers budget.Cost, reqs []synopsisRequest, stored []*storedSynopsis, claims []*synopsisClaim, refused int) error {
	held, builds := answers, 0.0
	var columns []string
	for j, r := range reqs {
		missing := claims[j] != nil || j == refused
		if claims[j] != nil {
			held.Epsilon += r.spec.Config.Epsilon
		}
		if !missing && stored[j] == nil {
			s, err := st.load(ctx, r.spec)
			missing = err != nil || s == nil
		}
		if missing {
			builds += r.spec.Config.Epsilon
			if !slices.Contains(columns, r.spec.Column.Name) {
				columns = append(columns, r.spec.Column.Name)
			}
		}
	}
	needs := budget.Cost{Epsilon: answers.Epsilon + builds, Delta: answers.Delta}
	what := "synopsis"
	if len(columns) > 1 {
		what = "synopses"
	}
	parts := fmt.Sprintf("%s to build the %s of %s", budget.Cost{Epsilon: builds}, what, strings.Join(columns, ", "))
	if answers != (budget.Cost{}) {
		parts = fmt.Sprintf("%s for its answers and %s", answers, parts)
	}
	return short.Restate(held, needs, parts)
}

// synopsisClaim is a missing synopsis a statement has claimed: its
// reservation is made and its creation's lease held, and it holds the
// process's lock of the key until build or abandon.
type synopsisClaim struct {
	st     *synopsisStore
	spec   *planner.SynopsisSpec
	res    *budget.Reservation
	hold   *creationLease
	unlock func()
}

// claim returns the synopsis of spec (cached, stored, or built by this
// process and not stored yet, which it tries to store again first:
// storeUnstored), or, when there is none yet,
// a claim to build it: a reservation of its ε charged to accounts and its
// claim account, with the creation's lease held. While another statement
// holds the claim it waits for that synopsis, or reopens the claim if
// that build is over without one.
func (st *synopsisStore) claim(ctx context.Context, spec *planner.SynopsisSpec, accounts []budget.Account, memo string) (s *storedSynopsis, c *synopsisClaim, err error) {
	if s := st.cached(spec.Key); s != nil {
		return s, nil, nil
	}
	unlock, err := st.lock(ctx, spec.Key)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if c == nil {
			unlock()
		}
	}()
	if s := st.cached(spec.Key); s != nil {
		return s, nil, nil
	}
	if s := st.storeUnstored(ctx, spec); s != nil {
		return s, nil, nil
	}
	claim := claimAccount(spec.Key)
	defer func() {
		if s != nil {
			st.watches.forget(claim) // no creation to wait for any more
		}
	}()
	eps := spec.Config.Epsilon
	deadline := time.Now().Add(2*st.lease + time.Minute)
	what := fmt.Sprintf("the synopsis of %s.%s, which another statement is building; retry", spec.Table.Name, spec.Column.Name)
	for waiting := false; ; waiting = true {
		s, err := st.load(ctx, spec)
		if err != nil || s != nil {
			return s, nil, waitError(ctx, waiting, err, what)
		}
		res, err := reserveClaim(ctx, st.ledger, accounts, claim, eps, memo)
		if err != nil {
			return nil, nil, waitError(ctx, waiting, err, what)
		}
		if res != nil {
			hold, err := holdCreation(ctx, st.ledger, claim, res, st.lease)
			if err != nil {
				// Settled by a commit when the lease was never held
				// (creationLease.settle).
				if serr := hold.settle(res, false); serr != nil {
					err = errors.Join(err, serr)
				}
				return nil, nil, err
			}
			return nil, &synopsisClaim{st: st, spec: spec, res: res, hold: hold, unlock: unlock}, nil
		}
		// Another statement holds the claim: wait for its synopsis, or
		// reopen the claim if that build is over without one.
		if s, err := st.load(ctx, spec); err != nil || s != nil {
			return s, nil, waitError(ctx, true, err, what)
		}
		if err := reopenIfAbandoned(ctx, st.ledger, claim, eps, st.lease, &st.watches); err != nil {
			return nil, nil, waitError(ctx, true, err, what)
		}
		if time.Now().After(deadline) {
			return nil, nil, dperr.New(dperr.Internal, "internal error: the synopsis of %s is being built by another statement; try again", spec.Column.Name)
		}
		select {
		case <-ctx.Done():
			return nil, nil, waitEnded(ctx, what)
		case <-time.After(st.poll):
		}
	}
}

// abandon gives up the claim without building: its reservation is
// cancelled, freeing the claim and the analyst's ε, unless its lease was
// taken over (creationLease.settle); a failed settlement leaves it spent.
func (c *synopsisClaim) abandon() {
	defer c.unlock()
	_ = c.hold.settle(c.res, false) // on failure the reservation stays spent: an overcharge, never an undercharge
}

// build reads the data and releases the synopsis under the claim, then
// stores it and settles the reservation (creationLease.settle: committed
// once data was read), and gives up the process's lock of the key.
func (c *synopsisClaim) build(ctx context.Context, build buildFunc) (s *storedSynopsis, err error) {
	st, spec := c.st, c.spec
	defer c.unlock()
	readData := false
	defer func() {
		if serr := c.hold.settle(c.res, readData); serr != nil && err == nil {
			s, err = nil, dperr.Wrap(dperr.Internal, serr, "internal error: budget ledger unavailable")
		}
		if s != nil {
			st.watches.forget(claimAccount(spec.Key)) // no creation to wait for any more
		}
	}()
	syn, err := build(ctx, &readData)
	if err != nil {
		return nil, err
	}
	header := synopsisHeader{Key: spec.Key, BuiltAt: time.Now().UTC(), Epsilon: spec.Config.Epsilon,
		Mechanism: syn.Mechanism(), Workload: spec.Config.Workload.Kind}
	s = &storedSynopsis{synopsisHeader: header, Synopsis: syn}
	value, err := s.encode()
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot encode synopsis")
	}
	// Store it only if no synopsis is stored yet; else adopt the one another
	// proxy stored meanwhile (after a takeover), so that only one is ever
	// released. One that cannot be stored is kept unstored and answered
	// from (stored_release.go).
	stored, err := storeRelease(ctx, st.ledger, stateKey(spec.Key), value, st.lease/3)
	if err != nil {
		st.keepUnstored(s, value)
		return s, nil
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

// keepUnstored keeps s, built and paid for, whose encoded value could not
// be stored, for this process's statements (stored_release.go).
func (st *synopsisStore) keepUnstored(s *storedSynopsis, value []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.unstored[s.Key] = unstoredSynopsis{s: s, value: value}
}

// storeUnstored returns the synopsis of spec this process built but could
// not store, or nil when there is none, after trying to store it again
// (the caller holds the key's lock): once stored it is cached as any
// other; if another creation stored one first, that one is returned
// instead and the copy dropped; if the ledger fails again, the copy is
// returned (stored_release.go).
func (st *synopsisStore) storeUnstored(ctx context.Context, spec *planner.SynopsisSpec) *storedSynopsis {
	st.mu.Lock()
	u, ok := st.unstored[spec.Key]
	st.mu.Unlock()
	if !ok {
		return nil
	}
	stored, err := st.ledger.SwapState(ctx, stateKey(spec.Key), nil, u.value)
	if err != nil {
		return u.s
	}
	s := u.s
	if !stored {
		other, err := st.fetch(ctx, spec)
		if err != nil || other == nil {
			return u.s // unreadable now: answered from the copy, and tried again
		}
		s = other
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.unstored, spec.Key)
	st.cache[spec.Key] = s
	return s
}

// load returns the synopsis of spec, or nil when there is none: cached,
// kept unstored by this process (stored_release.go), or stored.
func (st *synopsisStore) load(ctx context.Context, spec *planner.SynopsisSpec) (*storedSynopsis, error) {
	if s := st.cached(spec.Key); s != nil {
		return s, nil
	}
	st.mu.Lock()
	u, ok := st.unstored[spec.Key]
	st.mu.Unlock()
	if ok {
		return u.s, nil
	}
	s, err := st.fetch(ctx, spec)
	if s != nil {
		st.remember(s)
	}
	return s, err
}

// fetch reads the stored synopsis of spec from the ledger, or nil when
// none is stored.
func (st *synopsisStore) fetch(ctx context.Context, spec *planner.SynopsisSpec) (*storedSynopsis, error) {
	value, ok, err := st.ledger.GetState(ctx, stateKey(spec.Key))
	if err != nil || !ok {
		return nil, err
	}
	s, err := decodeSynopsis(value)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: stored synopsis of %s is unreadable", spec.Column.Name)
	}
	if s.Key != spec.Key || s.Synopsis == nil || s.Synopsis.N() != spec.Domain.Cells() {
		return nil, dperr.New(dperr.Internal, "internal error: stored synopsis %s does not match %q", stateKey(spec.Key), spec.Key)
	}
	return s, nil
}

// The claim accounts below are shared by the synopsis and interactive
// stores: a creation's ε is charged to its claim, whose limit admits one
// creation at a time.

// reserveClaim reserves eps on the analyst's accounts and the claim
// account together: the reservation if this statement may create the shared
// release, nil (and no error) if another statement holds the claim, or the
// error (BudgetExhausted when the analyst's own budget is short).
func reserveClaim(ctx context.Context, ledger *budget.Ledger, accounts []budget.Account, claim string, eps float64, memo string) (*budget.Reservation, error) {
	if err := ensureClaim(ctx, ledger, claim, eps); err != nil {
		return nil, err
	}
	res, err := ledger.Reserve(ctx, append(slices.Clone(accounts), budget.Account{Name: claim}), budget.Cost{Epsilon: eps}, memo)
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

// lock takes the process's lock of key (keyLocks.lock), which a claim
// holds until it is built or abandoned, perhaps while its statement waits
// for another proxy's build of a later key (obtain).
func (st *synopsisStore) lock(ctx context.Context, key string) (unlock func(), err error) {
	return st.keys.lock(ctx, key, "a synopsis another statement is building")
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
