package exec

import (
	"context"
	"errors"
	"sync"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// keyLocks are process-wide locks, one per key (a repeated statement's
// answer, a synopsis, an interactive instance), whose waits end with the
// waiting statement's context: a statement waiting for a key another
// statement holds, perhaps for minutes while it waits in its turn for
// another proxy's build, gets its timeout or KILL as any other wait of a
// statement does (a plain mutex kept it waiting past both). The map holds
// the keys in use only. The zero value is ready to use.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

// keyLock is the lock of one key (a one-slot channel, so that waiting
// for it ends with the statement's context) and the number of statements
// holding or waiting for it.
type keyLock struct {
	slot  chan struct{}
	users int
}

// lock takes key's lock and returns its unlock, which forgets the lock
// once no statement holds or waits for it. When ctx ends first it returns
// the statement's timeout (dperr.Timeout, its message saying it waited
// for what) or cancellation (dperr.Canceled) and holds nothing.
func (k *keyLocks) lock(ctx context.Context, key, what string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyLock{slot: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
	}
	select {
	case l.slot <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, waitEnded(ctx, what)
	}
	return func() {
		<-l.slot
		release()
	}, nil
}

// waitError is err, or, once the statement has waited (waiting) and its
// context has ended, the error of the wait (waitEnded): a ledger read of a
// waiting loop that the deadline interrupted reports what the statement
// waited for, not the ledger.
func waitError(ctx context.Context, waiting bool, err error, what string) error {
	if err != nil && waiting && ctx.Err() != nil {
		return waitEnded(ctx, what)
	}
	return err
}

// waitEnded is the error of a statement whose context ended while it
// waited for what (another statement's work, a lock): past its deadline
// (timeouts.statement) a dperr.Timeout, 3024, whose message says what it
// waited for; otherwise (KILL, the client gone, shutdown) dperr.Canceled,
// 1317.
func waitEnded(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return dperr.Wrap(dperr.Timeout, ctx.Err(), "statement timed out waiting for %s", what)
	}
	return dperr.Wrap(dperr.Canceled, ctx.Err(), "query canceled")
}
