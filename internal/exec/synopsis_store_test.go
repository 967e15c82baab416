package exec

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

const testSynopsisEpsilon = 0.5

// testSpec is the synopsis of a 16-bin column.
func testSpec() *planner.SynopsisSpec {
	return &planner.SynopsisSpec{
		Table:  &catalog.Table{Name: "t"},
		Column: &catalog.Column{Name: "x"},
		Domain: planner.Domain{Lower: 0, Upper: 16, Bins: 16, Integer: true},
		Key:    "v2|t|x|[0, 16) in 16 bins||eps=1|mechanism=identity|workload=all-ranges",
		Config: catalog.Histogram{Bins: 16, Epsilon: testSynopsisEpsilon, Workload: catalog.Workload{Kind: catalog.WorkloadAllRanges}},
	}
}

// countingBuild builds an Identity synopsis, counting the builds.
func countingBuild(builds *atomic.Int64, delay time.Duration) buildFunc {
	return func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		*readData = true
		builds.Add(1)
		time.Sleep(delay)
		return histogram.Identity(rand.NewChaCha8([32]byte{1}), make([]int64, 16), testSynopsisEpsilon)
	}
}

// obtainOne obtains the one synopsis of spec from st (synopsisStore.obtain).
func obtainOne(ctx context.Context, st *synopsisStore, spec *planner.SynopsisSpec, accounts []budget.Account, build buildFunc) (*storedSynopsis, bool, error) {
	stored, built, err := st.obtain(ctx, accounts, []synopsisRequest{{spec: spec, memo: "test", build: build}}, budget.Cost{})
	if err != nil {
		return nil, false, err
	}
	return stored[0], built[0], nil
}

// openLedgers opens n ledgers (n proxies) on one SQLite file with user
// "user:a" holding a budget of ε = 10.
func openLedgers(t *testing.T, n int) []*budget.Ledger {
	t.Helper()
	dsn := testdb.SQLiteDSN(t)
	var out []*budget.Ledger
	for range n {
		db := testdb.Open(t, "sqlite", dsn)
		l, err := budget.Open(context.Background(), db, budget.SQLite)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := out[0].SetLimit(context.Background(), "user:a", budget.Cost{Epsilon: 10}); err != nil {
		t.Fatal(err)
	}
	return out
}

func remaining(t *testing.T, l *budget.Ledger) float64 {
	t.Helper()
	r, err := l.Remaining(context.Background(), "user:a")
	if err != nil {
		t.Fatal(err)
	}
	return r.Epsilon
}

// TestSynopsisBuiltOnceUnderConcurrency races 16 statements of each of two
// proxies (two stores, two connection pools on one ledger file) for the
// same missing synopsis: exactly one builds it and pays once, and all see
// the same synopsis.
func TestSynopsisBuiltOnceUnderConcurrency(t *testing.T) {
	ledgers := openLedgers(t, 2)
	stores := []*synopsisStore{newSynopsisStore(ledgers[0]), newSynopsisStore(ledgers[1])}
	var builds atomic.Int64
	var wg sync.WaitGroup
	got := make([]*storedSynopsis, 32)
	for i := range got {
		wg.Go(func() {
			s, _, err := obtainOne(context.Background(), stores[i%2], testSpec(), []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 20*time.Millisecond))
			if err != nil {
				t.Errorf("statement %d: %v", i, err)
				return
			}
			got[i] = s
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("builds: got %d, want 1", n)
	}
	if r := remaining(t, ledgers[0]); math.Abs(r-(10-testSynopsisEpsilon)) > 1e-9 {
		t.Errorf("remaining: got %v, want %v", r, 10-testSynopsisEpsilon)
	}
	for i, s := range got {
		if s == nil || !s.BuiltAt.Equal(got[0].BuiltAt) {
			t.Errorf("statement %d: got synopsis %+v, want the one built at %v", i, s, got[0].BuiltAt)
		}
	}
}

// TestSynopsisSurvivesRestart stores a synopsis and reads it from a new
// store (a restarted proxy) at no cost.
func TestSynopsisSurvivesRestart(t *testing.T) {
	ledgers := openLedgers(t, 1)
	var builds atomic.Int64
	first, built, err := obtainOne(context.Background(), newSynopsisStore(ledgers[0]), testSpec(), []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0))
	if err != nil || !built {
		t.Fatalf("first: built %v, err %v", built, err)
	}
	again, built, err := obtainOne(context.Background(), newSynopsisStore(ledgers[0]), testSpec(), []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0))
	if err != nil || built || builds.Load() != 1 {
		t.Fatalf("after restart: built %v (builds %d), err %v; want read, not built", built, builds.Load(), err)
	}
	if again.Synopsis.RangeSum(0, 15) != first.Synopsis.RangeSum(0, 15) || !again.BuiltAt.Equal(first.BuiltAt) {
		t.Errorf("after restart: got %+v, want %+v", again, first)
	}
	if r := remaining(t, ledgers[0]); math.Abs(r-(10-testSynopsisEpsilon)) > 1e-9 {
		t.Errorf("remaining: got %v, want %v", r, 10-testSynopsisEpsilon)
	}
}

// TestSynopsisFailedBuildBeforeReadIsFree checks that a build failing
// before any data was read cancels its reservation, and the next
// statement can build.
func TestSynopsisFailedBuildBeforeReadIsFree(t *testing.T) {
	ledgers := openLedgers(t, 1)
	st := newSynopsisStore(ledgers[0])
	fail := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		return nil, dperr.New(dperr.Backend, "backend down")
	}
	if _, _, err := obtainOne(context.Background(), st, testSpec(), []budget.Account{{Name: "user:a"}}, fail); dperr.KindOf(err) != dperr.Backend {
		t.Fatalf("failing build: got %v, want the backend error", err)
	}
	if r := remaining(t, ledgers[0]); r != 10 {
		t.Errorf("after a failure before reading: remaining %v, want 10", r)
	}
	var builds atomic.Int64
	if _, built, err := obtainOne(context.Background(), st, testSpec(), []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0)); err != nil || !built {
		t.Fatalf("retry: built %v, err %v", built, err)
	}
}

// TestSynopsisAbandonedClaimIsReopened simulates a proxy killed after its
// reservation: the claim stays spent with no synopsis. After the lease a
// new statement reopens the claim, builds and pays; the dead build stays
// paid.
func TestSynopsisAbandonedClaimIsReopened(t *testing.T) {
	ledgers := openLedgers(t, 1)
	ctx := context.Background()
	spec := testSpec()
	killedBuild(t, ledgers[0], spec)
	st := newSynopsisStore(ledgers[0])
	st.lease = 300 * time.Millisecond // a third of it bounds each ledger write
	var builds atomic.Int64
	start := time.Now()
	_, built, err := obtainOne(ctx, st, spec, []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0))
	if err != nil || !built {
		t.Fatalf("after the lease: built %v, err %v", built, err)
	}
	if waited := time.Since(start); waited < st.lease {
		t.Errorf("reopened after %v, want at least the lease %v", waited, st.lease)
	}
	if r := remaining(t, ledgers[0]); math.Abs(r-(10-2*testSynopsisEpsilon)) > 1e-9 {
		t.Errorf("remaining: got %v, want %v (the dead build and the new one)", r, 10-2*testSynopsisEpsilon)
	}
}

// TestSynopsisBudgetExhausted refuses a build the analyst cannot pay for,
// with the analyst's error, and leaves the claim free.
func TestSynopsisBudgetExhausted(t *testing.T) {
	ledgers := openLedgers(t, 1)
	ctx := context.Background()
	if err := ledgers[0].SetLimit(ctx, "user:poor", budget.Cost{Epsilon: 0.1}); err != nil {
		t.Fatal(err)
	}
	st := newSynopsisStore(ledgers[0])
	var builds atomic.Int64
	if _, _, err := obtainOne(ctx, st, testSpec(), []budget.Account{{Name: "user:poor"}}, countingBuild(&builds, 0)); dperr.KindOf(err) != dperr.BudgetExhausted {
		t.Fatalf("got %v, want budget exhausted", err)
	}
	if free, err := claimFree(ctx, st.ledger, claimAccount(testSpec().Key), testSynopsisEpsilon); err != nil || !free {
		t.Errorf("claim free: got %v (err %v), want true", free, err)
	}
}

// TestReopenIgnoresTheReserversClock: whether a pending creation is
// abandoned is judged by the waiter's own clock, never by the reservation's
// time, which the reserving proxy's clock wrote. A live creation by a proxy
// whose clock runs an hour behind is not reopened at once; a dead one by a
// proxy whose clock runs an hour ahead is reopened after one lease, not an
// hour.
func TestReopenIgnoresTheReserversClock(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.SQLiteDSN(t)
	db := testdb.Open(t, "sqlite", dsn)
	l, err := budget.Open(ctx, db, budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	const eps, lease = 0.5, 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		shift time.Duration // the reserving proxy's clock minus ours
	}{
		{"an hour behind", -time.Hour},
		{"an hour ahead", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim := "synopsis:clock " + tc.name
			if err := l.SetLimit(ctx, claim, budget.Cost{Epsilon: eps}); err != nil {
				t.Fatal(err)
			}
			res, err := l.Reserve(ctx, []budget.Account{{Name: claim}}, budget.Cost{Epsilon: eps}, "pending")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, "UPDATE dpproxy_reservations SET reserved_at = reserved_at + ? WHERE id = ?", tc.shift.Microseconds(), res.ID()); err != nil {
				t.Fatal(err)
			}
			limit := func() float64 {
				r, err := l.Remaining(ctx, claim)
				if err != nil {
					t.Fatal(err)
				}
				return r.Epsilon
			}
			var watches leaseWatches
			if err := reopenIfAbandoned(ctx, l, claim, eps, lease, &watches); err != nil {
				t.Fatal(err)
			}
			if r := limit(); r != 0 {
				t.Fatalf("first look at a pending creation: claim reopened (%v free)", r)
			}
			time.Sleep(lease + 50*time.Millisecond)
			if err := reopenIfAbandoned(ctx, l, claim, eps, lease, &watches); err != nil {
				t.Fatal(err)
			}
			if r := limit(); math.Abs(r-eps) > 1e-12 {
				t.Errorf("pending for a whole lease by this clock: %v free, want %v", r, eps)
			}
		})
	}
}

// TestDeadBuilderReopenedAcrossShortStatements: a builder killed after its
// reservation is taken over even when every waiting statement ends before
// a whole lease (the default statement timeout, 60 s, is shorter than the
// creation lease, 2 min): the process keeps watching the claim across
// statements. A watch of each statement's own never saw a whole lease (an
// independent review).
func TestDeadBuilderReopenedAcrossShortStatements(t *testing.T) {
	ledgers := openLedgers(t, 1)
	ctx := context.Background()
	spec := testSpec()
	killedBuild(t, ledgers[0], spec)
	st := newSynopsisStore(ledgers[0])
	st.lease, st.poll = 200*time.Millisecond, 5*time.Millisecond
	var builds atomic.Int64
	for i := range 20 { // statements of half a lease each: ten leases
		sctx, cancel := context.WithTimeout(ctx, st.lease/2)
		s, built, err := obtainOne(sctx, st, spec, []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0))
		cancel()
		if err == nil && s != nil && built {
			t.Logf("reopened and built by statement %d", i)
			return
		}
	}
	t.Fatalf("a dead builder's claim was not reopened over ten leases of short statements (builds %d)", builds.Load())
}

// TestLeaseWatchesForgetFinishedWaits: once a wait ends with the release
// (here, a reopened claim built by this process), its watch is dropped, so
// the watches do not grow with every creation ever waited on.
func TestLeaseWatchesForgetFinishedWaits(t *testing.T) {
	ledgers := openLedgers(t, 1)
	ctx := context.Background()
	spec := testSpec()
	killedBuild(t, ledgers[0], spec)
	st := newSynopsisStore(ledgers[0])
	st.lease, st.poll = 300*time.Millisecond, 5*time.Millisecond // a third of it bounds each ledger write
	var builds atomic.Int64
	if _, built, err := obtainOne(ctx, st, spec, []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0)); err != nil || !built {
		t.Fatalf("after the lease: built %v, err %v", built, err)
	}
	st.watches.mu.Lock()
	defer st.watches.mu.Unlock()
	if n := len(st.watches.watches); n != 0 {
		t.Errorf("%d watches left after the wait ended, want 0", n)
	}
}

// killedBuild leaves spec's claim as a builder killed after its reservation
// leaves it: spent by a pending reservation of user:a, with no synopsis.
func killedBuild(t *testing.T, l *budget.Ledger, spec *planner.SynopsisSpec) {
	t.Helper()
	ctx := context.Background()
	claim := claimAccount(spec.Key)
	if err := ensureClaim(ctx, l, claim, testSynopsisEpsilon); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Reserve(ctx, []budget.Account{{Name: "user:a"}, {Name: claim}}, budget.Cost{Epsilon: testSynopsisEpsilon}, "killed"); err != nil {
		t.Fatal(err)
	}
}

// TestLiveBuilderNotTakenOver: a build that outlives the lease (possible
// with a statement timeout longer than it) renews its creation lease while
// it builds, so another proxy keeps waiting for it through several of its
// own leases instead of reopening the claim, building a second synopsis
// and paying twice. Before the fix the waiter reopened the claim after one
// lease and built (two builds, two payments).
func TestLiveBuilderNotTakenOver(t *testing.T) {
	for _, b := range ledgerBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			waitOutLiveBuild(t, sharedLedgers(t, b.dialect, b.dsn(t), 2), func() {})
		})
	}
}

// TestLedgerErrorsDoNotEndRenewals: a live builder whose lease renewals
// fail for a while (the ledger's state table gone for two renewals) goes
// on renewing once the ledger answers again, so a waiter does not take
// the build over: one build, paid once. Before the fix the first failed
// renewal ended them, and the waiter built and paid again (an
// independent review).
func TestLedgerErrorsDoNotEndRenewals(t *testing.T) {
	dsn := testdb.SQLiteDSN(t)
	ledgers := sharedLedgers(t, budget.SQLite, dsn, 2)
	raw := testdb.Open(t, "sqlite", dsn)
	waitOutLiveBuild(t, ledgers, func() {
		if _, err := raw.Exec("ALTER TABLE dpproxy_state_v3 RENAME TO dpproxy_state_away"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // two of the builder's renewals fail
		if _, err := raw.Exec("ALTER TABLE dpproxy_state_away RENAME TO dpproxy_state_v3"); err != nil {
			t.Fatal(err)
		}
	})
}

// waitOutLiveBuild starts a build on ledgers[0] that lasts until a waiter
// on ledgers[1] has waited two of its leases, runs during before the
// waiter starts, and checks that the waiter did not take the live build
// over: one build, paid once. The builder renews every third of 300 ms;
// the waiter judges a lease abandoned after 1.5 s unchanged (a renewal
// would have to stall for 1.4 s on a loaded machine to fail the test).
func waitOutLiveBuild(t *testing.T, ledgers []*budget.Ledger, during func()) {
	t.Helper()
	ctx := context.Background()
	builder, waiter := newSynopsisStore(ledgers[0]), newSynopsisStore(ledgers[1])
	builder.lease = 300 * time.Millisecond
	waiter.lease, waiter.poll = 1500*time.Millisecond, 5*time.Millisecond
	building, finish := make(chan struct{}), make(chan struct{})
	var builds atomic.Int64
	slow := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		*readData = true
		builds.Add(1)
		close(building)
		<-finish
		return histogram.Identity(rand.NewChaCha8([32]byte{1}), make([]int64, 16), testSynopsisEpsilon)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, built, err := obtainOne(ctx, builder, testSpec(), []budget.Account{{Name: "user:a"}}, slow); err != nil || !built {
			t.Errorf("builder: built %v, err %v", built, err)
		}
	})
	<-building
	during()
	wctx, cancel := context.WithTimeout(ctx, 2*waiter.lease)
	_, built, err := obtainOne(wctx, waiter, testSpec(), []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0))
	cancel()
	if built || err == nil {
		t.Errorf("waiter during a live build: built %v, err %v; want it to wait until its statement ends", built, err)
	}
	close(finish)
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("builds: got %d, want 1", n)
	}
	if r := remaining(t, ledgers[0]); math.Abs(r-(10-testSynopsisEpsilon)) > 1e-9 {
		t.Errorf("remaining: got %v, want %v (one build paid once)", r, 10-testSynopsisEpsilon)
	}
}

// TestTakenOverBuildKeepsTheRaisedClaim: a build whose lease was taken
// over (judged abandoned: here the builder's lease is long, so it does
// not renew during the test, and the waiter's short, as when the builder
// or the ledger stalls past a lease) and that then fails before reading
// data commits its reservation instead of cancelling it: the claim the
// waiter raised on the strength of it stays spent while the waiter
// builds, so no third build can start, and the taken-over creation stays
// paid, as a dead one's does. Before the fix its cancel freed ε of the
// raised claim during the waiter's build.
func TestTakenOverBuildKeepsTheRaisedClaim(t *testing.T) {
	for _, b := range ledgerBackends {
		t.Run(b.dialect.String(), func(t *testing.T) {
			ctx := context.Background()
			ledgers := sharedLedgers(t, b.dialect, b.dsn(t), 2)
			first, second := newSynopsisStore(ledgers[0]), newSynopsisStore(ledgers[1])
			first.lease = time.Minute
			// Short, but not so short that a third of it (what each of the
			// waiter's ledger writes may take) is below a shared SQLite
			// file's write under a loaded machine: at 30 ms a clean-clone
			// run's takeover failed with "budget ledger unavailable".
			second.lease, second.poll = 1500*time.Millisecond, 5*time.Millisecond
			firstBuilding, firstFail := make(chan struct{}), make(chan struct{})
			secondBuilding, secondFinish := make(chan struct{}), make(chan struct{})
			failing := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
				close(firstBuilding)
				<-firstFail
				return nil, dperr.New(dperr.Backend, "backend down") // before any read
			}
			building := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
				*readData = true
				close(secondBuilding)
				<-secondFinish
				return histogram.Identity(rand.NewChaCha8([32]byte{1}), make([]int64, 16), testSynopsisEpsilon)
			}
			var firstDone, secondDone sync.WaitGroup
			firstDone.Go(func() {
				if _, _, err := obtainOne(ctx, first, testSpec(), []budget.Account{{Name: "user:a"}}, failing); dperr.KindOf(err) != dperr.Backend {
					t.Errorf("first build: got %v, want the backend error", err)
				}
			})
			<-firstBuilding
			secondDone.Go(func() {
				if _, built, err := obtainOne(ctx, second, testSpec(), []budget.Account{{Name: "user:a"}}, building); err != nil || !built {
					t.Errorf("second build: built %v, err %v", built, err)
				}
			})
			<-secondBuilding // the second proxy took the first's claim over
			close(firstFail)
			firstDone.Wait()
			if free, err := claimFree(ctx, ledgers[0], claimAccount(testSpec().Key), testSynopsisEpsilon); err != nil || free {
				t.Errorf("claim free during the second build: %v (err %v), want taken", free, err)
			}
			close(secondFinish)
			secondDone.Wait()
			if r := remaining(t, ledgers[0]); math.Abs(r-(10-2*testSynopsisEpsilon)) > 1e-9 {
				t.Errorf("remaining: got %v, want %v (the taken-over creation and the second, each once)", r, 10-2*testSynopsisEpsilon)
			}
		})
	}
}

// TestSynopsesAllOrNone: a statement that needs two missing synopses, by
// an analyst who can pay for one build only, builds neither, is charged
// nothing and told what both builds need, and both claims stay free; with budget for both, both
// are built and each is charged once.
func TestSynopsesAllOrNone(t *testing.T) {
	ledgers := openLedgers(t, 1)
	ctx := context.Background()
	if err := ledgers[0].SetLimit(ctx, "user:poor", budget.Cost{Epsilon: 1.5 * testSynopsisEpsilon}); err != nil {
		t.Fatal(err)
	}
	second := testSpec()
	second.Column = &catalog.Column{Name: "y"}
	second.Key = "v2|t|y|[0, 16) in 16 bins||eps=1|mechanism=identity|workload=all-ranges"
	st := newSynopsisStore(ledgers[0])
	var builds atomic.Int64
	reqs := []synopsisRequest{
		{spec: second, memo: "y", build: countingBuild(&builds, 0)},
		{spec: testSpec(), memo: "x", build: countingBuild(&builds, 0)},
	}
	// The refusal states what remained before the statement and both
	// builds, not what was left beside the first claim and the second
	// build alone (remaining 0.25, needs 0.5).
	_, _, err := st.obtain(ctx, []budget.Account{{Name: "user:poor", Disclose: true}}, reqs, budget.Cost{})
	want := "privacy budget exhausted for user poor: remaining epsilon=0.75, delta=0; this query needs epsilon=1, delta=0 (epsilon=1, delta=0 to build the synopses of y, x)"
	if dperr.KindOf(err) != dperr.BudgetExhausted || err.Error() != want {
		t.Fatalf("got %v, want budget exhausted: %s", err, want)
	}
	if n := builds.Load(); n != 0 {
		t.Errorf("%d builds, want none", n)
	}
	if r, err := ledgers[0].Remaining(ctx, "user:poor"); err != nil || r.Epsilon != 1.5*testSynopsisEpsilon {
		t.Errorf("poor's remaining ε: %v (err %v), want %v: nothing charged", r.Epsilon, err, 1.5*testSynopsisEpsilon)
	}
	for _, spec := range []*planner.SynopsisSpec{testSpec(), second} {
		if free, err := claimFree(ctx, st.ledger, claimAccount(spec.Key), testSynopsisEpsilon); err != nil || !free {
			t.Errorf("claim of %s free: got %v (err %v), want true", spec.Column.Name, free, err)
		}
	}
	stored, built, err := st.obtain(ctx, []budget.Account{{Name: "user:a"}}, reqs, budget.Cost{})
	if err != nil || !built[0] || !built[1] || stored[0].Key != second.Key || stored[1].Key != testSpec().Key {
		t.Fatalf("with budget: built %v, err %v; want both built, in the requests' order", built, err)
	}
	if got, want := remaining(t, ledgers[0]), 10-2*testSynopsisEpsilon; math.Abs(got-want) > 1e-9 {
		t.Errorf("remaining ε: got %v, want %v", got, want)
	}
}

// TestSynopsisStoredAsJSONStillRead: a synopsis stored as JSON, as every
// synopsis was before the binary envelope, is still read, at no cost and
// with its answers; one built now is stored as an envelope, smaller.
func TestSynopsisStoredAsJSONStillRead(t *testing.T) {
	ctx := context.Background()
	l := openLedgers(t, 1)[0]
	spec := testSpec()
	legacy := `{"key":"` + spec.Key + `","built_at":"2026-01-02T03:04:05Z","epsilon":0.5,"mechanism":"identity","workload":"all-ranges",` +
		`"synopsis":{"version":1,"mechanism":"identity","epsilon":0.5,"n":16,"totals":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16.5]}}`
	if err := l.PutState(ctx, stateKey(spec.Key), []byte(legacy)); err != nil {
		t.Fatal(err)
	}
	noBuild := func(context.Context, *bool) (*histogram.Synopsis, error) {
		t.Fatal("a stored synopsis was built again")
		return nil, nil
	}
	s, built, err := obtainOne(ctx, newSynopsisStore(l), spec, []budget.Account{{Name: "user:a"}}, noBuild)
	if err != nil || built || s.Synopsis.RangeSum(0, 15) != 136.5 || s.BuiltAt.Year() != 2026 || s.Mechanism != "identity" {
		t.Fatalf("got %+v, built %v, %v; want the stored synopsis (sum 136.5)", s, built, err)
	}
	other := testSpec()
	other.Key += "|other"
	var builds atomic.Int64
	if _, _, err := obtainOne(ctx, newSynopsisStore(l), other, []budget.Account{{Name: "user:a"}}, countingBuild(&builds, 0)); err != nil {
		t.Fatal(err)
	}
	value, _, err := l.GetState(ctx, stateKey(other.Key))
	if err != nil || !isEnvelope(value) || len(value) > 400 {
		t.Fatalf("stored now: %q, %v; want an envelope of the header and 16 totals", value, err)
	}
	back, err := newSynopsisStore(l).load(ctx, other)
	if err != nil || back == nil || back.Synopsis.N() != 16 || back.Key != other.Key {
		t.Fatalf("read back: %+v, %v", back, err)
	}
	if r := remaining(t, l); r != 10-testSynopsisEpsilon {
		t.Errorf("remaining: got %v, want %v (the one build)", r, 10-testSynopsisEpsilon)
	}
}
