package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/mm"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// Interactive instances (planner.InteractivePlan) are stored next to the
// ledger (budget.Ledger state under the plan's StateKey), so they survive
// restarts, and one instance serves every connection of every proxy that
// shares the ledger: per-connection or per-process instances would
// multiply the privacy loss.
//
// Paying exactly once. The instance's whole ε is charged when it is
// created, by the statement that creates it, in one reservation on the
// analyst's accounts (their own and the table's cap, as any statement)
// and on a claim account named by the StateKey whose limit is that ε: a
// second creation, in this process (serialised by the key's mutex) or in
// another proxy sharing the ledger, cannot fit. A statement that finds the
// claim taken waits, polling the state, until the instance appears. A
// creation that died (kill -9) or failed after reading data leaves the
// claim spent and no instance: a waiter that finds the claim's newest
// reservation settled, or pending with its creation lease unrenewed for
// longer than the lease (creation_lease.go: a live creator renews it,
// however long it takes), reopens the claim by one more ε and creates it
// itself (synopsis_store.go's rule); what the dead creation paid stays
// paid. The instance is stored with an insert-if-absent swap, so if two
// creations ever both ran (a creator that stalled past its lease), the
// second adopts the first's instance and never releases its own (unless
// the ledger failed to store the first: stored_release.go). Charging the
// creator mirrors the synopses: the analyst
// who opens the session pays for it, every later count of every analyst
// is free, and the table's configured total caps what all analysts
// together spend, this ε included.
//
// One writer (DESIGN.md §2). A Median Mechanism state changes with every
// answer that runs a test (mm.MedianMechanism.Answer): its cache entry,
// and for a hard answer its secret threshold noise, hard count and pool.
// Each such change is a compare-and-swap of the stored value
// from the exact value the answer was computed from, made in one ledger
// transaction with a renewal of the tester's test turn
// (interactive_turn.go; budget.Ledger.SwapStates), and the answer is
// released only after that transaction succeeded. A proxy takes the turn
// before a test and then reloads the stored value if it differs from its
// copy, so it answers from the newest state. A proxy whose commit is
// refused (its turn was taken over after it stalled past a whole lease,
// or the state changed) discards its answer unreleased (its instance is
// void), takes a new turn, reloads the newer state and answers again
// from it: often from the cache, when the other proxy answered the same
// query. A commit that fails, or is not known to have happened, is void
// too, and the statement fails with its error: the commit outlives the
// statement, bounded by a third of the turn's lease, and one whose
// outcome is unknown is decided by reading the turn back (testTurn.swap). So at most one answer is ever released per stored state, it
// comes from the test of the turn's holder whatever the timing of tests
// run at once, and several proxies behave as one proxy answering their
// queries in the order they took their turns. Answers
// from the cache, empty predicates and refusals after the halt read no
// data and change nothing; they are served from the process's copy, which
// is safe because the cache only grows and the halt is final.
type interactiveStore struct {
	ledger *budget.Ledger
	// lease is how long a pending creation holds its claim against takeover.
	lease time.Duration
	// poll is the wait between looks at the state while another creates.
	poll time.Duration
	// turnLease and turnPoll are a test turn's lease against takeover and
	// the wait between looks while another proxy holds it
	// (interactive_turn.go).
	turnLease, turnPoll time.Duration
	// watches judge the leases of other proxies' creations and test turns
	// by this process's clock (lease_watch.go).
	watches leaseWatches

	mu     sync.Mutex
	byKey  map[string]*interactiveInstance
	truths map[string]*interactiveTruth
	keys   keyLocks
}

// interactiveSwapAttempts bounds how often one statement re-answers after
// losing a swap to other proxies (each loss is another proxy's progress).
const interactiveSwapAttempts = 20

// errSwapLost: the commit of a test was refused, as another proxy changed
// the stored state or took this process's test turn over first.
var errSwapLost = errors.New("interactive state changed by another proxy")

// interactiveInstance is one dataset's instance as this process last
// stored or loaded it. Noisy (histogram) or mm (Median Mechanism) is set.
type interactiveInstance struct {
	header interactiveHeader
	mm     *mm.MedianMechanism
	// stored is the ledger value this copy was loaded from or last swapped
	// in: the expected value of its next swap.
	stored []byte
	// unstored, set only while stored is nil, is the value of an instance
	// this process created and paid for but could not store yet
	// (stored_release.go); it is read and changed under the key's lock.
	unstored []byte
}

// interactiveTruth is the database's histogram over X, read once per
// process for the Median Mechanism's true counts and kept in memory only.
type interactiveTruth struct {
	mu     sync.Mutex
	counts []int64
}

// interactiveHeader is the stored description of an instance. The
// stored value is an envelope (stored_release.go) of this header and the
// Median Mechanism's state (which holds a secret: never log it).
type interactiveHeader struct {
	Key       string    `json:"key"`
	Mechanism string    `json:"mechanism"`
	Why       string    `json:"why"`
	NHat      int64     `json:"n_hat"`
	Epsilon   float64   `json:"epsilon"`
	Noise     float64   `json:"noise_epsilon,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Noisy     []int64   `json:"noisy,omitempty"`
	// UnitSalt is the instance's key for unit bounding on a table with a
	// privacy unit (newUnitSalt; "" on a row-level table): every read of
	// the histogram over X, at creation and for the Median Mechanism's
	// true counts in any process, keeps the same ≤ k rows of each unit.
	UnitSalt string `json:"unit_salt,omitempty"`
}

func newInteractiveStore(l *budget.Ledger) *interactiveStore {
	return &interactiveStore{ledger: l, lease: synopsisLease, poll: synopsisPoll, turnLease: interactiveTurnLease, turnPoll: 5 * time.Millisecond,
		byKey: map[string]*interactiveInstance{}, truths: map[string]*interactiveTruth{}}
}

// encode serializes the header and the Median Mechanism state mmState.
func (h *interactiveHeader) encode(mmState []byte) ([]byte, error) {
	return encodeEnvelope(h, mmState)
}

// load returns the stored instance of ip, or nil when there is none.
func (st *interactiveStore) load(ctx context.Context, ip *planner.InteractivePlan) (*interactiveInstance, error) {
	value, ok, err := st.ledger.GetState(ctx, ip.StateKey())
	if err != nil || !ok {
		return nil, err
	}
	return decodeInteractive(ip, value)
}

// decodeInteractive parses a stored value of ip.
func decodeInteractive(ip *planner.InteractivePlan, value []byte) (*interactiveInstance, error) {
	bad := func(err error) error {
		return dperr.Wrap(dperr.Internal, err, "internal error: stored interactive state of table %s is unreadable", ip.Table.Name)
	}
	inst := &interactiveInstance{stored: value}
	mmState, err := decodeEnvelope(value, &inst.header)
	if err != nil {
		return nil, bad(err)
	}
	if inst.header.Key != ip.Key {
		return nil, bad(fmt.Errorf("key %q, want %q", inst.header.Key, ip.Key))
	}
	if inst.header.Mechanism == planner.InteractiveMedian {
		inst.mm = &mm.MedianMechanism{}
		if err := inst.mm.UnmarshalBinary(mmState); err != nil {
			return nil, bad(err)
		}
	} else if len(inst.header.Noisy) != ip.Predicate.Cells() {
		return nil, bad(fmt.Errorf("%d noisy cells, want %d", len(inst.header.Noisy), ip.Predicate.Cells()))
	}
	return inst, nil
}

// createFunc reads the data and releases a new instance (setting
// *readData before the first read) whose Median Mechanism, if it takes
// one, has at most maxHard hard answers (0: it takes the histogram; fit);
// it returns the instance and the histogram over X it read.
type createFunc func(ctx context.Context, maxHard int, readData *bool) (*interactiveInstance, []int64, error)

// interactiveHeaderBound bounds the stored value of ip's instance besides
// its Median Mechanism state: the envelope (envelopeBound) and, for a
// histogram, its noisy cells (at most 20 characters and a comma each).
func interactiveHeaderBound(ip *planner.InteractivePlan, histogram bool) int64 {
	n := envelopeBound(len(ip.Key))
	if histogram {
		n += 21 * int64(ip.Predicate.Cells())
	}
	return n
}

// fit checks, from public facts only and before any reservation, that
// ip's instance can be stored in the ledger (budget.Ledger.StateValueLimit:
// the same limit on every ledger, lower on a MySQL/MariaDB ledger with a
// small max_allowed_packet), whatever the data and however long it lives:
// it returns the most hard answers its Median Mechanism may have so that
// its state stays within the limit (mm.HardCapWithin; 0 makes the rule
// take the histogram), or refuses the configuration. Without it a domain
// too large for the ledger read the data, failed to store its instance
// and was paid again by every count (found by an independent review).
func (st *interactiveStore) fit(ctx context.Context, ip *planner.InteractivePlan) (int, error) {
	limit, err := st.ledger.StateValueLimit(ctx)
	if err != nil {
		return 0, err
	}
	where := stateLimitText(limit)
	cells := ip.Predicate.Cells()
	kind := ip.Config.Mechanism
	if need := interactiveHeaderBound(ip, true); kind != catalog.InteractiveMedian && need > limit {
		return 0, dperr.New(dperr.Unsupported, "not supported: the noisy histogram over the %d cells of the interactive domain of table %s would take up to %d bytes, above %s; declare fewer cells",
			cells, ip.Table.Name, need, where)
	}
	if kind == catalog.InteractiveHistogram {
		return 0, nil
	}
	cfg := ip.MedianConfig(1, 0)
	maxHard := mm.HardCapWithin(cfg, cells, limit-interactiveHeaderBound(ip, false))
	if maxHard == 0 && kind == catalog.InteractiveMedian {
		return 0, dperr.New(dperr.Unsupported, "not supported: the Median Mechanism over the %d cells of the interactive domain of table %s keeps a state of up to %d bytes (%d candidates × %d cells × 8 bytes, its answer cache and one cut), above %s; declare fewer cells, or mechanism: histogram",
			cells, ip.Table.Name, interactiveHeaderBound(ip, false)+mm.StateBound(cfg, cells, 1), mm.DefaultPoolSize, cells, where)
	}
	return maxHard, nil
}

// obtain returns the instance of ip: cached (one this process could not
// store yet is stored first if the ledger now takes it: storeUnstored),
// loaded, or created with create under a reservation of the instance's ε
// charged to accounts and the claim; created reports whether this
// statement paid for a creation.
// While another proxy holds the claim it waits for that instance (at most
// twice the lease and a minute), reopening an abandoned claim.
func (st *interactiveStore) obtain(ctx context.Context, ip *planner.InteractivePlan, accounts []budget.Account, create createFunc) (inst *interactiveInstance, created bool, err error) {
	unlock, err := st.lock(ctx, ip.Key)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if inst := st.cached(ip.Key); inst != nil {
		if inst.unstored != nil {
			inst, err := st.storeUnstored(ctx, ip, inst)
			return inst, false, err
		}
		return inst, false, nil
	}
	claim := ip.StateKey()
	defer func() {
		if inst != nil {
			st.watches.forget(claim) // no creation to wait for any more
		}
	}()
	eps := ip.Config.Epsilon
	deadline := time.Now().Add(2*st.lease + time.Minute)
	what := fmt.Sprintf("the interactive instance of table %s, which another statement is creating; retry", ip.Table.Name)
	maxHard, fitted := 0, false
	for waiting := false; ; waiting = true {
		if inst, err := st.load(ctx, ip); err != nil || inst != nil {
			if inst != nil {
				st.remember(ip.Key, inst)
			}
			return inst, false, waitError(ctx, waiting, err, what)
		}
		if !fitted {
			if maxHard, err = st.fit(ctx, ip); err != nil {
				return nil, false, err
			}
			fitted = true
		}
		res, err := reserveClaim(ctx, st.ledger, accounts, claim, eps, fmt.Sprintf("%s: interactive counting instance", ip.Table.Name))
		if err != nil {
			return nil, false, waitError(ctx, waiting, err, what)
		}
		if res != nil {
			inst, err := st.create(ctx, ip, res, maxHard, create)
			return inst, err == nil, err
		}
		// Another statement holds the claim: wait for its instance, or
		// reopen the claim if that creation is over without one.
		if inst, err := st.load(ctx, ip); err != nil || inst != nil {
			if inst != nil {
				st.remember(ip.Key, inst)
			}
			return inst, false, waitError(ctx, true, err, what)
		}
		if err := reopenIfAbandoned(ctx, st.ledger, claim, eps, st.lease, &st.watches); err != nil {
			return nil, false, waitError(ctx, true, err, what)
		}
		if time.Now().After(deadline) {
			return nil, false, dperr.New(dperr.Internal, "internal error: the interactive instance of table %s is being created by another proxy; try again", ip.Table.Name)
		}
		select {
		case <-ctx.Done():
			return nil, false, waitEnded(ctx, what)
		case <-time.After(st.poll):
		}
	}
}

// create reads the data and releases the instance under the reservation
// res, holding its creation lease (creation_lease.go) meanwhile, stores it
// if no instance is stored yet (else adopts the stored one, never
// releasing its own) and settles res: committed once data was read
// (DESIGN.md §2), cancelled otherwise (freeing the claim) unless its lease
// was taken over. An instance it cannot store is kept unstored
// (stored_release.go).
func (st *interactiveStore) create(ctx context.Context, ip *planner.InteractivePlan, res *budget.Reservation, maxHard int, create createFunc) (inst *interactiveInstance, err error) {
	readData := false
	hold, err := holdCreation(ctx, st.ledger, ip.StateKey(), res, st.lease)
	defer func() {
		if serr := hold.settle(res, readData); serr != nil && err == nil {
			inst, err = nil, dperr.Wrap(dperr.Internal, serr, "internal error: budget ledger unavailable")
		}
	}()
	if err != nil {
		return nil, err
	}
	inst, truth, err := create(ctx, maxHard, &readData)
	if err != nil {
		return nil, err
	}
	var mmState []byte
	if inst.mm != nil {
		if mmState, err = inst.mm.MarshalBinary(); err != nil {
			return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot encode interactive state")
		}
	}
	value, err := inst.header.encode(mmState)
	if err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: cannot encode interactive state")
	}
	stored, err := storeRelease(ctx, st.ledger, ip.StateKey(), value, st.lease/3)
	if err != nil {
		inst.unstored = value
		st.remember(ip.Key, inst)
		return inst.answerable(ip, err)
	}
	if !stored { // another creation stored first (after a takeover): adopt it
		other, err := st.load(ctx, ip)
		if err == nil && other == nil {
			err = dperr.New(dperr.Internal, "internal error: the interactive state of table %s vanished", ip.Table.Name)
		}
		if err != nil {
			return nil, err
		}
		st.remember(ip.Key, other)
		return other, nil
	}
	inst.stored = value
	st.truth(ip.Key).set(truth)
	st.remember(ip.Key, inst)
	return inst, nil
}

// storeUnstored tries again to store inst, the instance of ip this
// process created and paid for but could not store (the caller holds the
// key's lock; stored_release.go). Once stored it is answered from as any
// other; if another creation stored one first, that one is adopted and
// inst dropped; if the ledger fails again, inst stays unstored and is
// answered from if it can be (answerable).
func (st *interactiveStore) storeUnstored(ctx context.Context, ip *planner.InteractivePlan, inst *interactiveInstance) (*interactiveInstance, error) {
	stored, err := st.ledger.SwapState(ctx, ip.StateKey(), nil, inst.unstored)
	if err != nil {
		return inst.answerable(ip, err)
	}
	if !stored {
		other, err := st.load(ctx, ip)
		if err != nil || other == nil {
			return inst.answerable(ip, err)
		}
		st.remember(ip.Key, other)
		return other, nil
	}
	inst.stored, inst.unstored = inst.unstored, nil
	return inst, nil
}

// answerable returns inst, unstored after the ledger error err (nil when
// the ledger holds another value it cannot read now), when it answers
// from the process's copy: a noisy histogram over X, whose answers are
// post-processing of the paid release. A Median Mechanism answers only
// once stored, as each of its tests commits a change of the stored state:
// until then its counts fail with the ledger's error, uncharged.
func (inst *interactiveInstance) answerable(ip *planner.InteractivePlan, err error) (*interactiveInstance, error) {
	if inst.mm == nil {
		return inst, nil
	}
	if err == nil {
		err = dperr.New(dperr.Internal, "internal error: the interactive state of table %s is being stored; try again", ip.Table.Name)
	}
	return nil, err
}

// answerMedian answers ip's count from the newest stored state of its
// Median Mechanism, committing the state change under this process's test
// turn before the answer is released (the type's comment). count returns
// the true count of ip's cells. It returns the instance the answer came
// from. A test whose commit is refused (the turn was taken over, or the
// state changed) is void: its answer is never released, and the query is
// answered again, under a new turn, from the newest state.
func (st *interactiveStore) answerMedian(ctx context.Context, ip *planner.InteractivePlan, src noise.Source, count func() (int64, error)) (*interactiveInstance, mm.Answer, error) {
	unlock, err := st.lock(ctx, ip.Key)
	if err != nil {
		return nil, mm.Answer{}, err
	}
	defer unlock()
	for attempt := 1; ; attempt++ {
		inst, a, err := st.answerOnce(ctx, ip, src, count)
		if errors.Is(err, errSwapLost) && attempt < interactiveSwapAttempts {
			continue
		}
		return inst, a, err
	}
}

// answerOnce is one attempt of answerMedian: it takes the test turn and
// reloads the state when the query needs a test, answers, and commits the
// new state under the turn. It fails with errSwapLost when the commit was
// refused.
func (st *interactiveStore) answerOnce(ctx context.Context, ip *planner.InteractivePlan, src noise.Source, count func() (int64, error)) (*interactiveInstance, mm.Answer, error) {
	key := ip.StateKey()
	inst := st.cached(ip.Key)
	var turn *testTurn
	if inst == nil || inst.mm.Tests(ip.Predicate) {
		var err error
		if turn, err = st.takeTestTurn(ctx, key); err != nil {
			return nil, mm.Answer{}, err
		}
		defer turn.release()
		value, ok, err := st.ledger.GetState(ctx, key)
		switch {
		case err != nil:
			return nil, mm.Answer{}, err
		case !ok:
			return nil, mm.Answer{}, dperr.New(dperr.Internal, "internal error: the interactive state of table %s is missing", ip.Table.Name)
		}
		if inst == nil || !bytes.Equal(value, inst.stored) {
			if inst, err = decodeInteractive(ip, value); err != nil {
				return nil, mm.Answer{}, err
			}
			if inst.mm == nil {
				return nil, mm.Answer{}, dperr.New(dperr.Internal, "internal error: the interactive state of table %s is not a Median Mechanism", ip.Table.Name)
			}
			st.remember(ip.Key, inst)
		}
	}
	committing := false
	a, err := inst.mm.Answer(src, ip.Predicate, count, func(state []byte) error {
		committing = true
		if turn == nil { // Tests said no test would run
			return errors.New("interactive state changed without a test turn")
		}
		value, err := inst.header.encode(state)
		if err != nil {
			return err
		}
		swapped, err := turn.commit(key, inst.stored, value)
		switch {
		case err != nil:
			return err
		case !swapped:
			return errSwapLost
		}
		inst.stored = value
		return nil
	})
	if committing && err != nil {
		st.forget(ip.Key, inst) // void: reload from the stored state
	}
	return inst, a, err
}

// cached returns the process's copy of the instance of key, or nil.
func (st *interactiveStore) cached(key string) *interactiveInstance {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.byKey[key]
}

func (st *interactiveStore) remember(key string, inst *interactiveInstance) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.byKey[key] = inst
}

// forget drops inst as the copy of key (if it still is).
func (st *interactiveStore) forget(key string, inst *interactiveInstance) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byKey[key] == inst {
		delete(st.byKey, key)
	}
}

// truth returns the process's histogram over X of key (empty until read).
func (st *interactiveStore) truth(key string) *interactiveTruth {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, ok := st.truths[key]
	if !ok {
		t = &interactiveTruth{}
		st.truths[key] = t
	}
	return t
}

// set records counts as the histogram if none was read yet.
func (t *interactiveTruth) set(counts []int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = counts
	}
}

// lock takes the process's lock of key (keyLocks.lock): one statement at
// a time creates or answers from an instance in a process.
func (st *interactiveStore) lock(ctx context.Context, key string) (unlock func(), err error) {
	return st.keys.lock(ctx, key, "the interactive instance another statement is using")
}
