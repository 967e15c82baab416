package budget

import (
	"context"
	"database/sql"
	"fmt"
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
// exactly raceCommits reservations were committed. Each Reserve's memo names
// its worker and turn, and each worker keeps what it was told (raceTurn), so
// that a failure says which Reserve a stray row was granted to and what its
// caller learned: a memo in two rows is a Reserve granted twice, a pending
// row whose caller never got its id a grant the caller never learned of.
func runRace(t *testing.T, ledgers []*Ledger) {
	ctx := context.Background()
	accounts := []string{"user:alice", "table:pums"}
	var commits, cancels, refusals atomic.Int64
	turns := make([][]raceTurn, raceWorkers) // turns[w] is written by worker w only
	start := time.Now()
	var wg sync.WaitGroup
	for w := range raceWorkers {
		l := ledgers[w%len(ledgers)]
		wg.Go(func() {
			for i := 0; ; i++ {
				memo := fmt.Sprintf("race w%d t%d", w, i)
				r, err := l.Reserve(ctx, stored(accounts...), Cost{Epsilon: raceCost}, memo)
				turn := raceTurn{memo: memo, reserveErr: err}
				if r != nil {
					turn.id = r.ID()
				}
				if dperr.KindOf(err) == dperr.BudgetExhausted {
					turns[w] = append(turns[w], turn)
					refusals.Add(1)
					return
				}
				if err != nil {
					turns[w] = append(turns[w], turn)
					t.Errorf("worker %d: Reserve: %v", w, err)
					return
				}
				settle, counter := r.Commit, &commits
				turn.settled = Committed
				if i%4 == 3 {
					settle, counter, turn.settled = r.Cancel, &cancels, Cancelled
				}
				turn.settleErr = settle(ctx)
				turns[w] = append(turns[w], turn)
				if turn.settleErr != nil {
					t.Errorf("worker %d: settle reservation %d: %v", w, turn.id, turn.settleErr)
					return
				}
				counter.Add(1)
			}
		})
	}
	wg.Wait()
	var retries, batches, abandoned, stranded int64
	for _, l := range ledgers {
		retries += l.Retries()
		batches += l.Batches()
		c, s := l.Abandoned()
		abandoned += c
		stranded += s
	}
	t.Logf("%d workers on %d ledger(s): %d commits, %d cancels, %d refusals, %d retries, %d batches, %d abandoned Reserves cancelled (%d stranded) in %v",
		raceWorkers, len(ledgers), commits.Load(), cancels.Load(), refusals.Load(), retries, batches, abandoned, stranded, time.Since(start))
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
	told := map[string]raceTurn{}
	for _, ts := range turns {
		for _, turn := range ts {
			told[turn.memo] = turn
		}
	}
	rows := map[string][]Entry{}
	var committed int64
	for _, e := range history {
		rows[e.Memo] = append(rows[e.Memo], e)
		turn := told[e.Memo]
		if e.State == Reserved {
			t.Errorf("reservation %d (%q) still pending after the race; its caller was told %v", e.ID, e.Memo, turn)
		}
		if turn.id != e.ID && len(rows[e.Memo]) == 1 {
			t.Errorf("reservation %d (%q, %s) is not the one its caller was told: %v", e.ID, e.Memo, e.State, turn)
		}
		if e.State == Committed {
			committed++
		}
	}
	for memo, es := range rows {
		if len(es) > 1 {
			t.Errorf("%q granted %d times: %+v; its caller was told %v", memo, len(es), es, told[memo])
		}
	}
	if got, want := committed, int64(raceCommits); got != want {
		t.Errorf("committed entries in History: got %v, want %v", got, want)
	}
}

// raceTurn is what one Reserve of a race worker, and the Commit or Cancel
// that followed it, returned.
type raceTurn struct {
	memo       string
	id         int64 // 0 when refused
	reserveErr error
	settled    State // Committed or Cancelled when the worker settled it
	settleErr  error
}

func (r raceTurn) String() string {
	switch {
	case r.memo == "":
		return "nothing (no worker sent this memo)"
	case r.reserveErr != nil:
		return fmt.Sprintf("Reserve failed: %v", r.reserveErr)
	case r.settleErr != nil:
		return fmt.Sprintf("id %d, then %s failed: %v", r.id, r.settled.verb(), r.settleErr)
	}
	return fmt.Sprintf("id %d, then %s succeeded", r.id, r.settled.verb())
}
