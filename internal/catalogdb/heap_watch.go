package catalogdb

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"
)

// The catalog engine's memory budget.
//
// go-mysql-server evaluates a statement over the catalog in the proxy's
// own memory, and several of its operators hold rows outside its memory
// manager (GROUP_CONCAT's buffer, window partitions, joins): an
// independent review grew the proxy by 3 GB in 30 s with one
// GROUP_CONCAT over a cross join of information_schema, and killed it with
// 1 MiB strings over a sorted one. A statement's context is therefore
// cancelled as soon as the process's live heap exceeds what it was when
// the statement started by more than heapBudget, sampled every
// heapSampleEvery (runtime/metrics, without stopping the world); at most
// maxConcurrentStatements statements run at once, so their budgets add
// up to a bound; at most maxUserStatements of them are one user's, so
// that another user's statement gets the next slot freed (admission.go).
// The statement then fails with errMemoryBudget. Any
// allocation of the process counts, so a statement may also fail when
// other work grows the heap meanwhile: it can be repeated.
//
// A statement also ends after statementTimeout, so that one that is slow
// without growing the heap cannot hold one of the slots: every catalog
// statement of the proxy's analysts waits for those.
const (
	heapBudget              = 256 << 20
	heapSampleEvery         = 5 * time.Millisecond
	maxConcurrentStatements = 4
	maxUserStatements       = 2
	statementTimeout        = 10 * time.Second
)

// errStatementTimeout is the cause of a statement cancelled by its deadline.
var errStatementTimeout = fmt.Errorf("Query execution was interrupted, maximum statement execution time exceeded (a statement over the catalog may run for at most %v)", statementTimeout)

// errMemoryBudget is the cause of a statement cancelled by its heap watch.
var errMemoryBudget = errors.New("a statement over the catalog may use at most 256 MiB of the proxy's memory")

// liveHeap reads the bytes of live and not yet swept heap objects.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchHeap returns a context cancelled with errMemoryBudget once the heap
// grows past its size now plus budget, and the function that stops the
// watch (which the caller must call).
func watchHeap(ctx context.Context, budget uint64) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	limit := liveHeap() + budget
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(heapSampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if liveHeap() > limit {
					cancel(errMemoryBudget)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}
