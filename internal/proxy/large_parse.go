package proxy

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// Bounds of the memory spent parsing. TiDB's parser allocates about 250
// to 500 bytes per byte of text (a refused 255 KiB IN list or FROM-less
// SELECT 1,1,... took 60 to 130 MB, a 4 MiB packet of nested operators
// 1.9 GB), so a statement's parse is weighed by its length: a statement
// longer than gatedStatementBytes waits until the text being parsed,
// process-wide, fits in parseBudgetBytes and the user's in
// userParseBytes. A statement longer than either counts as the whole of
// it (one 4 MiB statement parses alone). Statements of BI tools are
// shorter than gatedStatementBytes and never wait.
const (
	gatedStatementBytes = 16 << 10
	parseBudgetBytes    = 1 << 20
	userParseBytes      = 256 << 10
)

// largeStatementBytes is the length above which a statement is parsed only
// once, for its execution: a prepared statement's text that long is not
// described, relabeled or read again as a zero-row probe.
const largeStatementBytes = 256 << 10

// largeParseWait bounds how long a statement waits for its parse.
const largeParseWait = 30 * time.Second

// errParseWait is the cause of a wait that largeParseWait ended.
var errParseWait = errors.New("parse wait ended")

// parseGate bounds the memory spent parsing statements (see
// gatedStatementBytes): a weighted semaphore of parseBudgetBytes bytes of
// text, process-wide, behind one of userParseBytes per user, so one user's
// statements waiting for the shared budget hold at most userParseBytes of
// its queue (which serves waiters in order) and another analyst's
// statement waits for at most that much of theirs ahead of it, however
// many connections they open. Every wait ends with its statement's
// context (KILL, hang-up: 1317; its timeout: 3024) or after
// largeParseWait (1205). The zero value is not usable: newParseGate.
type parseGate struct {
	total *semaphore.Weighted
	mu    sync.Mutex
	users map[string]*semaphore.Weighted
}

func newParseGate() *parseGate {
	return &parseGate{total: semaphore.NewWeighted(parseBudgetBytes), users: map[string]*semaphore.Weighted{}}
}

// enter waits until user may parse n bytes of text; release must be
// called after the parse. Text of at most gatedStatementBytes does not
// wait. It fails with a Canceled error if ctx is canceled first, a
// Timeout error at ctx's deadline, a LockWait error after largeParseWait.
func (g *parseGate) enter(ctx context.Context, user string, n int) (release func(), err error) {
	if n <= gatedStatementBytes {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, largeParseWait, errParseWait)
	defer cancel()
	g.mu.Lock()
	mine, ok := g.users[user]
	if !ok {
		mine = semaphore.NewWeighted(userParseBytes)
		g.users[user] = mine
	}
	g.mu.Unlock()
	own, shared := int64(min(n, userParseBytes)), int64(min(n, parseBudgetBytes))
	if err := mine.Acquire(ctx, own); err != nil {
		return nil, waitError(ctx)
	}
	if err := g.total.Acquire(ctx, shared); err != nil {
		mine.Release(own)
		return nil, waitError(ctx)
	}
	return func() {
		g.total.Release(shared)
		mine.Release(own)
	}, nil
}

// waitError is the error of a wait for the gate that ctx ended.
func waitError(ctx context.Context) error {
	switch {
	case errors.Is(context.Cause(ctx), errParseWait):
		return dperr.Wrap(dperr.LockWait, ctx.Err(), "statement waited %s for memory to parse it, held by the parses of other long statements (over %d KiB, %d KiB at once, %d KiB per user); retry, or send shorter statements", largeParseWait, gatedStatementBytes>>10, parseBudgetBytes>>10, userParseBytes>>10)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return dperr.Wrap(dperr.Timeout, ctx.Err(), "statement timed out waiting for the parses of other long statements (over %d KiB)", gatedStatementBytes>>10)
	}
	return dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
}
