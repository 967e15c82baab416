package proxy

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// largeStatementBytes is the length above which a statement's parse waits
// for largeParseGate: TiDB's parser allocates up to about 500 bytes per
// byte of nested text (a 4 MiB packet of nested operators took 1.9 GB),
// and no BI tool sends statements this long.
const largeStatementBytes = 256 << 10

// largeParseWait bounds how long a large statement waits for its parse.
const largeParseWait = 30 * time.Second

// largeParseGate bounds the memory spent parsing large statements: one
// parses at a time, process-wide, and each user has at most one waiting
// for it or running (a user's other large statements wait for that one
// first), so another analyst's large statement waits for at most one
// parse per user ahead of it, not for every connection one analyst
// opens. Every wait ends with its statement's context (KILL, hang-up:
// 1317) or after largeParseWait (3024). The zero value is not usable:
// newLargeParseGate.
type largeParseGate struct {
	slot  chan struct{}
	mu    sync.Mutex
	users map[string]chan struct{}
}

func newLargeParseGate() *largeParseGate {
	return &largeParseGate{slot: make(chan struct{}, 1), users: map[string]chan struct{}{}}
}

// enter waits until user may parse one large statement; release must be
// called after the parse. It fails with a Canceled error if ctx ends
// first, a Timeout error after largeParseWait.
func (g *largeParseGate) enter(ctx context.Context, user string) (release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, largeParseWait)
	defer cancel()
	g.mu.Lock()
	mine, ok := g.users[user]
	if !ok {
		mine = make(chan struct{}, 1)
		g.users[user] = mine
	}
	g.mu.Unlock()
	select {
	case mine <- struct{}{}:
	case <-ctx.Done():
		return nil, waitError(ctx)
	}
	select {
	case g.slot <- struct{}{}:
	case <-ctx.Done():
		<-mine
		return nil, waitError(ctx)
	}
	return func() {
		<-g.slot
		<-mine
	}, nil
}

// waitError is the error of a wait for the gate that ctx ended.
func waitError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return dperr.Wrap(dperr.Timeout, ctx.Err(), "statement timed out waiting for the parses of other large statements (over 256 KiB)")
	}
	return dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
}
