package budget

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestConcurrentReservesShareTransactions: 64 Reserves (and their Commits)
// started at once run in fewer transactions than requests, each gets its
// own reservation, and the account's usage is the exact float64 sum of the
// granted costs; the Reserves that do not fit are refused one by one.
func TestConcurrentReservesShareTransactions(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		const workers, cost, fit = 64, 0.1, 40 // the limit pays for 40 of the 64
		limit := 0.0
		for range fit {
			limit += cost
		}
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: limit}, "table:pums": {Epsilon: 1000}})
		ctx := context.Background()
		start := make(chan struct{})
		ids := make([]int64, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				<-start
				r, err := l.Reserve(ctx, stored("user:alice", "table:pums"), Cost{Epsilon: cost}, "batch")
				if err != nil {
					errs[w] = err
					return
				}
				ids[w] = r.ID()
				errs[w] = r.Commit(ctx)
			})
		}
		close(start)
		wg.Wait()
		seen := map[int64]bool{}
		granted := 0
		for w, err := range errs {
			switch {
			case err == nil:
				granted++
				if seen[ids[w]] {
					t.Errorf("reservation id %d given twice", ids[w])
				}
				seen[ids[w]] = true
			case dperr.KindOf(err) != dperr.BudgetExhausted:
				t.Errorf("worker %d: %v", w, err)
			}
		}
		if granted != fit {
			t.Errorf("granted %d reservations, want %d", granted, fit)
		}
		wantRemaining(t, l, "user:alice", Cost{})
		wantRemaining(t, l, "table:pums", Cost{Epsilon: 1000 - float64(fit)*cost})
		history, err := l.History(ctx, "user:alice", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range history {
			if e.State != Committed || !seen[e.ID] {
				t.Errorf("history entry %d is %s (granted to a worker: %v)", e.ID, e.State, seen[e.ID])
			}
		}
		if len(history) != fit {
			t.Errorf("history has %d entries, want %d", len(history), fit)
		}
		// 64 Reserves and 40 Commits.
		if b := l.Batches(); b >= workers+fit {
			t.Errorf("%d transactions for %d requests: no group commit", b, workers+fit)
		}
		t.Logf("%d requests in %d transactions", workers+fit, l.Batches())
	})
}

// TestBatchWithStaleCommit: a batch in which one Commit finds its
// reservation already settled fails that Commit only.
func TestBatchWithStaleCommit(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
		ctx := context.Background()
		stale := reserve(t, l, Cost{Epsilon: 0.1}, "user:alice")
		if err := stale.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		fresh := reserve(t, l, Cost{Epsilon: 0.1}, "user:alice")
		now := time.Now().UnixMicro()
		batch := []*request{
			{commit: fresh, now: now, done: make(chan error, 1)},
			{commit: stale, now: now, done: make(chan error, 1)},
			{reserve: &reserveRequest{accounts: stored("user:alice"), sorted: []string{"user:alice"}, cost: Cost{Epsilon: 0.2}, memo: "m"}, now: now, done: make(chan error, 1)},
		}
		l.runBatch(batch)
		if err := <-batch[0].done; err != nil {
			t.Errorf("commit of the pending reservation: %v", err)
		}
		if err := <-batch[1].done; !errors.Is(err, ErrSettled) {
			t.Errorf("commit of the cancelled reservation: got %v, want ErrSettled", err)
		}
		if err := <-batch[2].done; err != nil || batch[2].id == 0 {
			t.Errorf("reserve in the batch: id %d, %v", batch[2].id, err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.7})
	})
}
