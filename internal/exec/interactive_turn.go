package exec

import (
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
// and every later commit under this turn is refused.
type testTurn struct {
	ledger *budget.Ledger
	ctx    context.Context // outlives the statement: the release must run
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
// this process for longer than the lease.
func (st *interactiveStore) takeTestTurn(ctx context.Context, stateKey string) (*testTurn, error) {
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
			return nil, waitError(ctx, true, err, "another proxy's interactive answer")
		}
		// The swap outlives ctx: a turn it stores is returned, for the
		// caller to release (a statement ending at that moment left the
		// turn stored but held by no one, stalling every proxy's tests
		// for a whole lease).
		taken := false
		detached := context.WithoutCancel(ctx)
		switch {
		case !ok:
			taken, err = st.ledger.SwapState(detached, turnKey, nil, mine)
		case string(held) == freeTurn || st.watches.expired(turnKey, held, time.Now(), st.turnLease):
			taken, err = st.ledger.SwapState(detached, turnKey, held, mine)
		}
		if err != nil {
			return nil, err
		}
		if taken {
			st.watches.forget(turnKey)
			turn := &testTurn{ledger: st.ledger, ctx: context.WithoutCancel(ctx), key: turnKey, owner: owner,
				stop: make(chan struct{}), done: make(chan struct{}), held: mine}
			go turn.renew(st.turnLease / 3)
			return turn, nil
		}
		select {
		case <-ctx.Done():
			return nil, waitEnded(ctx, "another proxy's interactive answer")
		case <-time.After(st.turnPoll):
		}
	}
}

// renew stores a new renewal every period until the release or a lost
// renewal.
func (t *testTurn) renew(period time.Duration) {
	defer close(t.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-tick.C:
		}
		// Each attempt is bounded by a period, so that a hung ledger
		// cannot hold the release; a failed one is retried at the next
		// tick (the turn is lost only to a takeover: a swap that finds
		// another value).
		ctx, cancel := context.WithTimeout(t.ctx, period)
		ok, err := t.swap(ctx)
		cancel()
		if err == nil && !ok {
			return
		}
	}
}

// swap stores the next renewal of the turn, from the value this process
// last stored, together with the swaps also, in one ledger transaction:
// all or nothing. It reports whether it wrote.
func (t *testTurn) swap(ctx context.Context, also ...budget.StateSwap) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := []byte(fmt.Sprintf("%s %d", t.owner, t.renewal+1))
	ok, err := t.ledger.SwapStates(ctx, append([]budget.StateSwap{{Key: t.key, Old: t.held, New: next}}, also...)...)
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
// from two tests run at once. It reports whether it wrote.
func (t *testTurn) commit(ctx context.Context, stateKey string, old, value []byte) (bool, error) {
	return t.swap(ctx, budget.StateSwap{Key: stateKey, Old: old, New: value})
}

// release stops the renewals and frees the turn if this process still
// holds it.
func (t *testTurn) release() {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.ledger.SwapState(t.ctx, t.key, t.held, []byte(freeTurn))
}
