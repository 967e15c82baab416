package exec

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
)

// endedWaits runs wait twice while another statement's work is in
// progress: once under a deadline that passes while it waits, which must
// end in the statement's timeout (3024) naming what it waited for, and
// once cancelled while it waits (KILL, the client gone), which must end
// in 1317. Both were 1317.
func endedWaits(t *testing.T, waitingFor string, wait func(ctx context.Context) error) {
	t.Helper()
	// The deadline leaves room for the ledger reads before the wait on a
	// loaded machine (at 300 ms one ended inside a ledger read, whose
	// timeout names the ledger instead).
	timed, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := wait(timed)
	if dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("waiting past the deadline: got %v (%v), want the statement's timeout", err, dperr.KindOf(err))
	} else if code, _ := dperr.Timeout.Code(); code != 3024 || !strings.Contains(err.Error(), waitingFor) {
		t.Errorf("waiting past the deadline: got %q (code %d), want 3024 naming %q", err, code, waitingFor)
	}
	killed, kill := context.WithCancel(context.Background())
	time.AfterFunc(2*time.Second, kill)
	if err := wait(killed); dperr.KindOf(err) != dperr.Canceled {
		t.Errorf("waiting when killed: got %v (%v), want canceled", err, dperr.KindOf(err))
	}
}

// TestSynopsisWaitEndsWithTheStatementsContext: a statement of proxy 1
// waiting for the synopsis proxy 2 is building gets its timeout past its
// deadline and 1317 when killed, and neither pays anything: only the
// build is charged.
func TestSynopsisWaitEndsWithTheStatementsContext(t *testing.T) {
	ledgers := openLedgers(t, 2)
	waiter, builder := newSynopsisStore(ledgers[0]), newSynopsisStore(ledgers[1])
	waiter.poll = 20 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		*readData = true
		close(started)
		<-release
		return histogram.Identity(rand.NewChaCha8([32]byte{1}), make([]int64, 16), testSynopsisEpsilon)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, built, err := obtainOne(context.Background(), builder, testSpec(), []budget.Account{{Name: "user:a"}}, slow); err != nil || !built {
			t.Errorf("builder: built %v, err %v", built, err)
		}
	})
	<-started
	endedWaits(t, "the synopsis of t.x, which another statement is building", func(ctx context.Context) error {
		_, built, err := obtainOne(ctx, waiter, testSpec(), []budget.Account{{Name: "user:a"}}, quickBuild())
		if built {
			t.Error("the waiter built the synopsis another statement is building")
		}
		return err
	})
	close(release)
	wg.Wait()
	if rem := remaining(t, ledgers[0]); rem != 10-testSynopsisEpsilon {
		t.Errorf("remaining ε %v, want %v: only the build paid", rem, 10-testSynopsisEpsilon)
	}
	h, err := ledgers[0].History(context.Background(), "user:a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 {
		t.Errorf("user:a has %d reservations, want the build's only: %+v", len(h), h)
	}
}

// TestInteractiveWaitEndsWithTheStatementsContext: a count of proxy 1
// waiting for the interactive instance proxy 2 is creating gets its
// timeout past its deadline and 1317 when killed, and neither pays
// anything: only the creation is charged.
func TestInteractiveWaitEndsWithTheStatementsContext(t *testing.T) {
	f := newInteractiveFixture(t, 300, catalog.InteractiveHistogram)
	plan := f.plan(t, "SELECT COUNT(*) FROM t WHERE a = 1 OR b = 2")
	creator, waiter := New(f.back, f.ledger, nil), New(f.back, f.ledger, nil)
	waiter.interactive.poll = 20 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	create := func(ctx context.Context, maxHard int, readData *bool) (*interactiveInstance, []int64, error) {
		close(started)
		<-release
		return creator.createInteractive(ctx, "", plan.Interactive, rand.NewChaCha8([32]byte{6}), maxHard, readData)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, created, err := creator.interactive.obtain(context.Background(), plan.Interactive, []budget.Account{{Name: "user:a"}}, create); err != nil || !created {
			t.Errorf("creator: created %v, err %v", created, err)
		}
	})
	<-started
	endedWaits(t, "the interactive instance of table t, which another statement is creating", func(ctx context.Context) error {
		_, err := waiter.Run(ctx, "a", plan, rand.NewChaCha8([32]byte{7}))
		return err
	})
	close(release)
	wg.Wait()
	if rem := remaining(t, f.ledger); rem != 8 {
		t.Errorf("remaining ε %v, want 8: only the creation's 2 paid", rem)
	}
	h, err := f.ledger.History(context.Background(), "user:a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 {
		t.Errorf("user:a has %d reservations, want the creation's only: %+v", len(h), h)
	}
}
