package proxy

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// gateWait bounds how long a statement waits at a byteGate.
const gateWait = 30 * time.Second

// errGateWait is the cause of a wait that gateWait ended.
var errGateWait = errors.New("gate wait ended")

// byteGate bounds the memory statements hold, weighed in bytes: a
// weighted semaphore of budget bytes, process-wide, behind one of perUser
// bytes per user, so one user's statements waiting for the shared budget
// hold at most perUser of its queue (which serves waiters in order) and
// another user's statement waits for at most that much of theirs ahead of
// it, however many connections they open. A weight of at most free bytes
// never waits; one above either budget counts as the whole of it (it
// holds that budget alone). Every wait ends with its statement's context
// (KILL, hang-up: 1317; its deadline: 3024, with the message timeout) or
// after gateWait (1205, with the message lockWait). The zero value is not
// usable: newByteGate.
type byteGate struct {
	free, budget, perUser int64
	lockWait, timeout     string
	total                 *semaphore.Weighted
	mu                    sync.Mutex
	users                 map[string]*semaphore.Weighted
}

func newByteGate(free, budget, perUser int64, lockWait, timeout string) *byteGate {
	return &byteGate{free: free, budget: budget, perUser: perUser, lockWait: lockWait, timeout: timeout,
		total: semaphore.NewWeighted(budget), users: map[string]*semaphore.Weighted{}}
}

// enter waits until user may hold n bytes; release must be called once
// they are no longer held. n of at most g.free does not wait. It fails
// with a Canceled error if ctx is canceled first, a Timeout error at
// ctx's deadline, a LockWait error after gateWait.
func (g *byteGate) enter(ctx context.Context, user string, n int64) (release func(), err error) {
	if n <= g.free {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, gateWait, errGateWait)
	defer cancel()
	g.mu.Lock()
	mine, ok := g.users[user]
	if !ok {
		mine = semaphore.NewWeighted(g.perUser)
		g.users[user] = mine
	}
	g.mu.Unlock()
	own, shared := min(n, g.perUser), min(n, g.budget)
	if err := mine.Acquire(ctx, own); err != nil {
		return nil, g.waitError(ctx)
	}
	if err := g.total.Acquire(ctx, shared); err != nil {
		mine.Release(own)
		return nil, g.waitError(ctx)
	}
	return func() {
		g.total.Release(shared)
		mine.Release(own)
	}, nil
}

// waitError is the error of a wait for the gate that ctx ended.
func (g *byteGate) waitError(ctx context.Context) error {
	switch {
	case errors.Is(context.Cause(ctx), errGateWait):
		return dperr.Wrap(dperr.LockWait, ctx.Err(), "%s", g.lockWait)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return dperr.Wrap(dperr.Timeout, ctx.Err(), "%s", g.timeout)
	}
	return dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
}
