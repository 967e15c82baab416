package exec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Creation leases. A creation of a shared release (a synopsis, an
// interactive instance) holds its claim (reserveClaim) by a pending
// reservation, and a lease next to it: the ledger state under
// claimLeaseKey, "id owner renewal" with the reservation's id, which the
// builder renews every third of the lease while it builds, however long
// that takes (a statement timeout may exceed the lease). A waiter judges
// the creation abandoned (reopenIfAbandoned) only when the newest
// reservation and the lease have stayed unchanged for a whole lease by its
// own clock, so a live builder is not taken over and its creation is built
// and paid once. A waiter that does judge it abandoned (the builder died,
// or stalled, or the ledger stalled its renewals, past a whole lease)
// first takes the lease over by a swap to "id taken token", then raises
// the claim by one more ε, counting the reservation as spent: the builder
// then can no longer cancel it, as its cancellation is a swap from its own
// lease value in the same transaction (budget.Reservation.CancelIf), and
// it commits instead. So a raised claim is never freed by the creation it
// was raised over, and a second creation runs only when the first was
// judged abandoned; each creation is paid exactly once.

// claimLeaseKey is the ledger state key of the lease of claim's pending
// creation.
func claimLeaseKey(claim string) string { return claim + ":lease" }

// creationLease is the lease of one creation (holdCreation).
type creationLease struct {
	ledger *budget.Ledger
	ctx    context.Context // outlives the statement: the settlement must run
	bound  time.Duration   // of each ledger call: a third of the lease
	key    string
	prefix string // "id owner"
	stop   chan struct{}
	done   chan struct{} // closed when the renewals stopped

	mu      sync.Mutex
	held    []byte // the value this creation last stored; nil: never held
	renewal int
}

// holdCreation stores the lease of the creation paid by res on claim and
// renews it every third of lease until settle. It returns the lease even
// with an error (the ledger failed): a creation that never held its lease
// is settled by a commit, since a waiter may take it over. Its ledger
// reads and writes outlive ctx, each bounded by a third of lease (a row
// another session holds locked holds the statement no longer), so that a
// statement ending meanwhile still learns whether it holds the lease, and
// its claim, which read nothing, is then cancelled rather than committed;
// a swap whose outcome is unknown (its bound expired, or the connection
// was lost at its commit) is decided by reading the lease back.
func holdCreation(ctx context.Context, ledger *budget.Ledger, claim string, res *budget.Reservation, lease time.Duration) (*creationLease, error) {
	id := strconv.FormatInt(res.ID(), 10)
	l := &creationLease{ledger: ledger, ctx: context.WithoutCancel(ctx), bound: lease / 3, key: claimLeaseKey(claim),
		stop: make(chan struct{}), done: make(chan struct{})}
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		close(l.done)
		return l, dperr.Wrap(dperr.Internal, err, "internal error: no randomness for a creation lease")
	}
	l.prefix = id + " " + hex.EncodeToString(token[:])
	mine := []byte(l.prefix + " 0")
	for {
		// The read outlives ctx too: a statement ending during it left
		// the lease unheld, and its claim was then committed although
		// nothing was read.
		old, ok, err := l.get()
		if err != nil {
			close(l.done)
			return l, err
		}
		if ok && bytes.HasPrefix(old, []byte(id+" ")) {
			close(l.done) // taken over before this creation stored its lease
			return l, nil
		}
		if !ok {
			old = nil
		}
		// The swap outlives ctx: a lease it stores is then held by this
		// creation and ended by settle (a statement ending at that moment
		// left it stored but unknown to its creation, which was then
		// committed although it read nothing, and stalled the claim's
		// waiters for a lease).
		swapped, err := l.swap(old, mine)
		if err != nil {
			close(l.done)
			return l, err
		}
		if swapped {
			l.held = mine
			go l.renew()
			return l, nil
		}
	}
}

// get reads the lease, outliving the statement, bounded by l.bound.
func (l *creationLease) get() ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.bound)
	defer cancel()
	return l.ledger.GetState(ctx, l.key)
}

// swap stores next as the lease if it holds old (nil: nothing), outliving
// the statement, bounded by l.bound. When the swap fails with its outcome
// unknown (the bound expired, or the connection was lost at its commit),
// the lease read back decides: next stored means it was written; old
// still stored, or no answer, that it was not (the error stands);
// another value that the swap lost (false, nil).
func (l *creationLease) swap(old, next []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(l.ctx, l.bound)
	ok, err := l.ledger.SwapState(ctx, l.key, old, next)
	cancel()
	if err == nil {
		return ok, nil
	}
	cur, found, rerr := l.get()
	switch {
	case rerr != nil, found && bytes.Equal(cur, old), !found && old == nil:
		return false, err // not stored, or unknown
	case found && bytes.Equal(cur, next):
		return true, nil
	}
	return false, nil // another value
}

// renew stores a new renewal every third of the lease until settle or a
// takeover.
func (l *creationLease) renew() {
	defer close(l.done)
	tick := time.NewTicker(l.bound)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		if stopped(l.stop) { // a tick that came with the settlement
			return
		}
		// Each attempt is bounded (swap), so that a hung ledger cannot
		// hold the settlement; a failed one is retried at the next tick
		// (one ledger error must not end the renewals of a live build,
		// which would then be taken over and paid twice: an independent
		// review); only a swap that finds another value (a takeover)
		// ends them.
		l.mu.Lock()
		next := []byte(fmt.Sprintf("%s %d", l.prefix, l.renewal+1))
		ok, err := l.swap(l.held, next)
		if ok {
			l.renewal++
			l.held = next
		}
		l.mu.Unlock()
		if err == nil && !ok {
			return
		}
	}
}

// settle stops the renewals and settles res (once): committed once data was read
// (DESIGN.md §2), or when the lease was taken over (a waiter raised the
// claim counting res as spent: it stays paid, as a dead creation's does);
// cancelled, freeing the claim and giving the analyst the ε back, only
// together with the end of a lease this creation still holds. Each
// ledger call is bounded by a third of the lease; a settlement that fails
// leaves res pending, spent, until a waiter takes the claim over.
func (l *creationLease) settle(res *budget.Reservation, readData bool) error {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if !readData && l.held != nil {
		ctx, cancel := context.WithTimeout(l.ctx, l.bound)
		cancelled, err := res.CancelIf(ctx, budget.StateSwap{Key: l.key, Old: l.held, New: []byte(l.prefix + " cancelled")})
		cancel()
		if err != nil || cancelled {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(l.ctx, l.bound)
	defer cancel()
	return res.Commit(ctx)
}

// stopped reports whether stop is closed: a renewal loop whose stop and
// tick were both ready (a renewal outlasted its period) ends rather than
// renewing once more while its release or settlement waits.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
