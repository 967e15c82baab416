package exec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Test turns across proxies. Within a process the key's mutex serialises
// the Median Mechanism's answers; proxies sharing the ledger also take a
// turn in it before a test (takeTestTurn), and a test's new state is
// committed only together with a renewal of the tester's turn, in one
// ledger transaction (testTurn.commit), so that the state changes only
// under the turn. Without turns, two proxies could test at once and the
// first swap would win, and the branches do not take the same time (a
// hard answer refines the pool before its commit, an easy one does not):
// racing proxies would release an easy answer unless every test came out
// hard, hiding hard outcomes against one threshold, which AboveThreshold's
// analysis does not cover. With turns, the proxy that holds the turn loads
// the newest state and tests in an order fixed before any test ran (the
// order the turns were taken); the holder renews its lease while it
// tests, so it is taken over only when it (or the ledger) stalled past a
// whole lease, or died. A lease is judged by the waiter's own clock
// (leaseWatch): the stored turn changes at every renewal, and a turn seen
// unchanged for a whole lease is taken over, whatever the proxies' wall
// clocks say. A holder taken over may still be testing when the new
// holder tests, but its commit then fails with its renewal, whatever its
// branch and however long it took: it releases nothing, and only the
// turn's holder at the time of a commit can change the state.

// interactiveTurnLease is how long a test turn holds against takeover:
// far beyond a test and its commit, short enough that a proxy killed
// holding one stalls the others for a bounded time.
const interactiveTurnLease = 30 * time.Second

// freeTurn is the stored value of a turn no proxy holds.
const freeTurn = "free"

// testTurn is a test turn this process holds (takeTestTurn): the ledger
// state value "owner renewal" under its key, renewed every third of the
// lease while the holder tests (storing the renewal's number, so that
// waiters see it change), so that a test that outlasts one lease (a slow
// hard answer, a slow count) keeps it. A renewal, a commit or the release
// that finds another value means the lease ran out (this process or the
// ledger stalled) and another proxy holds the turn: the renewals stop,
// and every later commit under this turn is refused. Each of its ledger
// calls outlives the statement and is bounded by a third of the lease
// (bound), so that a ledger row another session holds locked cannot hold
// the statement for longer than that.
type testTurn struct {
	ledger *budget.Ledger
	ctx    context.Context // outlives the statement: the release must run
	bound  time.Duration   // of each ledger call: a third of the lease
	key    string
	owner  string
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	held    []byte // the value this process last stored under key
	renewal int
}

// takeTestTurn waits until this process holds the test turn of the state
// stateKey and returns it; the caller must release it. The turn is taken
// by a compare-and-swap from free, absent, or a value seen unchanged by
// this process for longer than the lease. Its reads and swaps wait within
// ctx: a statement whose deadline passes while another session holds the
// turn's row locked gets its timeout (3024) then, not when the lock is
// released.
func (st *interactiveStore) takeTestTurn(ctx context.Context, stateKey string) (*testTurn, error) {
	const what = "another proxy's interactive answer"
	turnKey := stateKey + ":turn"
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return nil, dperr.Wrap(dperr.Internal, err, "internal error: no randomness for a test turn")
	}
	owner := hex.EncodeToString(token[:])
	mine := []byte(owner + " 0")
	for {
		held, ok, err := st.ledger.GetState(ctx, turnKey)
		if err != nil {
			// A poll the statement's end interrupts is that end (3024 or
			// 1317), not a ledger failure.
			return nil, waitError(ctx, true, err, what)
		}
		taken := false
		switch {
		case !ok:
			taken, err = st.ledger.SwapState(ctx, turnKey, nil, mine)
		case string(held) == freeTurn || st.watches.expired(turnKey, held, time.Now(), st.turnLease):
			taken, err = st.ledger.SwapState(ctx, turnKey, held, mine)
		}
		if err != nil {
			// The swap's outcome is unknown (the statement ended during
			// it, or the connection was lost at its commit): a turn it
			// stored after all is freed, so that it does not stall every
			// proxy's tests for a whole lease.
			st.freeIfTaken(ctx, turnKey, mine)
			return nil, waitError(ctx, true, err, what)
		}
		if taken {
			st.watches.forget(turnKey)
			turn := &testTurn{ledger: st.ledger, ctx: context.WithoutCancel(ctx), bound: st.turnLease / 3, key: turnKey, owner: owner,
				stop: make(chan struct{}), done: make(chan struct{}), held: mine}
			go turn.renew()
			return turn, nil
		}
		select {
		case <-ctx.Done():
			return nil, waitEnded(ctx, what)
		case <-time.After(st.turnPoll):
		}
	}
}

// freeIfTaken reads the turn under turnKey back after a swap to mine whose
// outcome is unknown and frees it if that swap stored it, outliving ctx,
// bounded by a third of the lease. If that fails too, the turn stays
// stored, held by no one, until another proxy takes it over after a
// lease, as a dead holder's.
func (st *interactiveStore) freeIfTaken(ctx context.Context, turnKey string, mine []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.turnLease/3)
	defer cancel()
	if cur, ok, err := st.ledger.GetState(ctx, turnKey); err == nil && ok && bytes.Equal(cur, mine) {
		_, _ = st.ledger.SwapState(ctx, turnKey, mine, []byte(freeTurn))
	}
}

// renew stores a new renewal every third of the lease until the release
// or a lost renewal.
func (t *testTurn) renew() {
	defer close(t.done)
	tick := time.NewTicker(t.bound)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		if stopped(t.stop) { // a tick that came with the release
			return
		}
		// A commit under way renews the turn itself: the tick is skipped
		// rather than queued behind it (the release would wait for the
		// queued renewal too). Each attempt is bounded (swap), so that a
		// hung ledger cannot hold the release; a failed one is retried
		// at the next tick (the turn is lost only to a takeover: a swap
		// that finds another value).
		if !t.mu.TryLock() {
			continue
		}
		ok, err := t.swap()
		t.mu.Unlock()
		if err == nil && !ok {
			return
		}
	}
}

// swap stores the next renewal of the turn, from the value this process
// last stored, together with the swaps also, in one ledger transaction:
// all or nothing. It reports whether it wrote. It outlives the statement,
// bounded by t.bound; when it fails, its outcome unknown (the bound
// expired, or the connection was lost at the commit), the turn read back
// (bounded too) decides, as the turn changes only together with the
// swaps: the renewal stored means the transaction committed; the value
// this process last stored, or no answer, that it did not (the error is
// returned, and a commit is void); another value that the turn was taken
// over (false, nil). The caller holds t.mu.
func (t *testTurn) swap(also ...budget.StateSwap) (bool, error) {
	next := []byte(fmt.Sprintf("%s %d", t.owner, t.renewal+1))
	ctx, cancel := context.WithTimeout(t.ctx, t.bound)
	ok, err := t.ledger.SwapStates(ctx, append([]budget.StateSwap{{Key: t.key, Old: t.held, New: next}}, also...)...)
	cancel()
	if err != nil {
		rctx, rcancel := context.WithTimeout(t.ctx, t.bound)
		cur, found, rerr := t.ledger.GetState(rctx, t.key)
		rcancel()
		switch {
		case rerr != nil, found && bytes.Equal(cur, t.held):
			// Not stored, or unknown: the error stands.
		case found && bytes.Equal(cur, next):
			ok, err = true, nil
		default:
			err = nil // another value: taken over
		}
	}
	if ok {
		t.renewal++
		t.held = next
	}
	return ok, err
}

// commit swaps the state stored under stateKey from old to value if and
// only if this process still holds the turn, in one ledger transaction
// with a renewal of the turn (DESIGN.md §2, "Shared state has one
// writer"): a holder whose turn was taken over while it tested (its lease
// ran out while the ledger or this process stalled) writes nothing, so
// the state changes only in the order the turns were taken and never
// from two tests run at once. It reports whether it wrote; an error means
// the commit is not known to have happened, and its answer must not be
// released. It outlives the statement (whether a test is committed must
// not depend on how long the test took, which depends on its branch),
// bounded by a third of the lease, and reads the turn back when its
// outcome is unknown (swap).
func (t *testTurn) commit(stateKey string, old, value []byte) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.swap(budget.StateSwap{Key: stateKey, Old: old, New: value})
}

// release stops the renewals and frees the turn if this process still
// holds it, bounded by a third of the lease (if it fails, the turn is
// taken over after a lease, as a dead holder's).
func (t *testTurn) release() {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.ctx, t.bound)
	defer cancel()
	_, _ = t.ledger.SwapState(ctx, t.key, t.held, []byte(freeTurn))
}
