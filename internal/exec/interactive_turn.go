package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Test turns across proxies. Within a process the key's mutex serialises
// the Median Mechanism's answers; proxies sharing the ledger also take a
// turn in it before a test (takeTestTurn), so that no two tests of one
// state ever run at once. Without turns, two proxies could test at once
// and the first swap would win, and the branches do not take the same
// time (a hard answer refines the pool before its commit, an easy one
// does not): racing proxies would release an easy answer unless every
// test came out hard, hiding hard outcomes against one threshold, which
// AboveThreshold's analysis does not cover. With turns, the proxy that
// holds the turn loads the newest state and tests in an order fixed
// before any test ran (the order the turns were taken); the holder renews
// its lease while it tests, so a swap is lost only when a proxy stalled
// past a whole lease (or died). A lease is judged by the waiter's own
// clock (leaseWatch): the stored turn changes at every renewal, and a turn
// seen unchanged for a whole lease is taken over, whatever the proxies'
// wall clocks say.

// interactiveTurnLease is how long a test turn holds against takeover:
// far beyond a test and its commit, short enough that a proxy killed
// holding one stalls the others for a bounded time.
const interactiveTurnLease = 30 * time.Second

// freeTurn is the stored value of a turn no proxy holds.
const freeTurn = "free"

// takeTestTurn waits until this process holds the test turn of the state
// stateKey and returns its release. The turn is a ledger state value
// "owner renewal" taken by a compare-and-swap from free, absent, or seen
// unchanged by this process for longer than the lease.
func (st *interactiveStore) takeTestTurn(ctx context.Context, stateKey string) (release func(), err error) {
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
			return nil, err
		}
		taken := false
		switch {
		case !ok:
			taken, err = st.ledger.SwapState(ctx, turnKey, nil, mine)
		case string(held) == freeTurn || st.watches.expired(turnKey, held, time.Now(), st.turnLease):
			taken, err = st.ledger.SwapState(ctx, turnKey, held, mine)
		}
		if err != nil {
			return nil, err
		}
		if taken {
			st.watches.forget(turnKey)
			return st.holdTurn(context.WithoutCancel(ctx), turnKey, owner, mine), nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, dperr.Wrap(dperr.Timeout, ctx.Err(), "statement timed out waiting for another proxy's interactive answer")
			}
			return nil, dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
		case <-time.After(st.turnPoll):
		}
	}
}

// holdTurn keeps the turn stored as held, renewing its lease every third
// of it (storing "owner renewal" with the renewal's number, so that
// waiters see it change), so that a test that outlasts one lease (a slow hard answer, a
// slow count) keeps it; it returns the release, which stops the renewal
// and frees the turn. A lost renewal or release means the lease ran out
// (the process stalled) and another proxy holds the turn: nothing to do,
// and this proxy's commit, from a state the other may have changed, then
// loses its swap.
func (st *interactiveStore) holdTurn(ctx context.Context, turnKey, owner string, held []byte) (release func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	go func() {
		defer close(done)
		tick := time.NewTicker(st.turnLease / 3)
		defer tick.Stop()
		for renewal := 1; ; renewal++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock()
			renewed := []byte(fmt.Sprintf("%s %d", owner, renewal))
			ok, err := st.ledger.SwapState(ctx, turnKey, held, renewed)
			if ok {
				held = renewed
			}
			mu.Unlock()
			if err != nil || !ok {
				return
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		_, _ = st.ledger.SwapState(ctx, turnKey, held, []byte(freeTurn))
	}
}
