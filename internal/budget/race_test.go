package budget

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// The race tests let raceWorkers goroutines, each on its own database
// connection like the connections of one analyst to a proxy, spend one
// account and one table cap until refused. Every fourth reservation of a
// worker is cancelled instead of committed, so releases race with
// reservations too. The last worker to stop sees no pending reservation of
// anyone, so exactly raceCommits reservations are committed: fewer would mean
// a refusal with budget left, more an overspend.
const (
	raceWorkers = 32
	raceCost    = 0.01
	raceCommits = 100 // raceCommits × raceCost is the analyst's limit
)

func TestRaceNeverOverspends(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		l := openLedger(t, b, dsn)
		setLimits(t, l, map[string]Cost{
			"user:alice": {Epsilon: raceCommits * raceCost},
			"table:pums": {Epsilon: 2 * raceCommits * raceCost},
		})
		runRace(t, []*Ledger{l})
	})
}

// TestRaceTwoProxies is the race between two Ledgers, each with its own
// connection pool, sharing one database: two proxy instances.
func TestRaceTwoProxies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ledgers := make([]*Ledger, 2)
		dbs := []*sql.DB{openDB(t, b, dsn), openDB(t, b, dsn)} // before any goroutine: openDB may end the test
		var wg sync.WaitGroup
		for i := range ledgers {
			wg.Go(func() { // both proxies start at once and create the schema
				l, err := Open(context.Background(), dbs[i], b.dialect)
				if err != nil {
					t.Errorf("Open: %v", err)
				}
				ledgers[i] = l
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		setLimits(t, ledgers[0], map[string]Cost{"user:alice": {Epsilon: raceCommits * raceCost}})
		setLimits(t, ledgers[1], map[string]Cost{"table:pums": {Epsilon: 2 * raceCommits * raceCost}})
		runRace(t, ledgers)
	})
}

// runRace runs raceWorkers workers spread over the ledgers and checks that
// exactly raceCommits reservations were committed.
func runRace(t *testing.T, ledgers []*Ledger) {
	ctx := context.Background()
	accounts := []string{"user:alice", "table:pums"}
	var commits, cancels, refusals atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range raceWorkers {
		l := ledgers[w%len(ledgers)]
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := l.Reserve(ctx, accounts, Cost{Epsilon: raceCost}, "race")
				if dperr.KindOf(err) == dperr.BudgetExhausted {
					refusals.Add(1)
					return
				}
				if err != nil {
					t.Errorf("worker %d: Reserve: %v", w, err)
					return
				}
				settle, counter := r.Commit, &commits
				if i%4 == 3 {
					settle, counter = r.Cancel, &cancels
				}
				if err := settle(ctx); err != nil {
					t.Errorf("worker %d: settle: %v", w, err)
					return
				}
				counter.Add(1)
			}
		})
	}
	wg.Wait()
	var retries int64
	for _, l := range ledgers {
		retries += l.Retries()
	}
	t.Logf("%d workers on %d ledger(s): %d commits, %d cancels, %d refusals, %d retries in %v",
		raceWorkers, len(ledgers), commits.Load(), cancels.Load(), refusals.Load(), retries, time.Since(start))
	if got, want := commits.Load(), int64(raceCommits); got != want {
		t.Errorf("commits: got %v, want %v", got, want)
	}
	if got, want := refusals.Load(), int64(raceWorkers); got != want {
		t.Errorf("refusals: got %v, want %v", got, want)
	}
	wantRemaining(t, ledgers[0], "user:alice", Cost{})
	wantRemaining(t, ledgers[0], "table:pums", Cost{Epsilon: raceCommits * raceCost})
	history, err := ledgers[0].History(ctx, "user:alice", 0)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	var committed int64
	for _, e := range history {
		if e.State == Reserved {
			t.Errorf("reservation %d still pending after the race", e.ID)
		}
		if e.State == Committed {
			committed++
		}
	}
	if got, want := committed, int64(raceCommits); got != want {
		t.Errorf("committed entries in History: got %v, want %v", got, want)
	}
}
