package exec

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
)

// TestClaimWaitEndsWithTheStatementsContext: statement X of proxy 1 needs
// synopses A and B, claims A and waits for B, which proxy 2 is building
// slowly, holding the process's lock of A meanwhile. Statement Y of proxy
// 1, which needs only A, waits for that lock only until its own deadline
// (the lock was a plain mutex: Y waited for X's whole wait, past its
// timeout and KILL). When X's own deadline ends its wait, its claim of A,
// which read nothing, is cancelled: X and Y are charged nothing, and only
// proxy 2's build of B is paid.
func TestClaimWaitEndsWithTheStatementsContext(t *testing.T) {
	ledgers := openLedgers(t, 2)
	st1, st2 := newSynopsisStore(ledgers[0]), newSynopsisStore(ledgers[1])
	a := testSpec() // its key sorts before b's: X claims A first
	b := testSpec()
	b.Column = &catalog.Column{Name: "y"}
	b.Key = "v2|t|y|[0, 16) in 16 bins||eps=1|mechanism=identity|workload=all-ranges"
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		*readData = true
		close(started)
		<-release
		return histogram.Identity(rand.NewChaCha8([32]byte{1}), make([]int64, 16), testSynopsisEpsilon)
	}
	built := make(chan error, 1)
	go func() { // proxy 2 builds B slowly
		_, _, err := obtainOne(context.Background(), st2, b, []budget.Account{{Name: "user:a"}}, slow)
		built <- err
	}()
	<-started
	xctx, xcancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer xcancel()
	xdone := make(chan error, 1)
	go func() { // X needs A and B
		_, _, err := st1.obtain(xctx, []budget.Account{{Name: "user:a"}}, []synopsisRequest{
			{spec: a, memo: "a", build: quickBuild()},
			{spec: b, memo: "b", build: quickBuild()},
		}, budget.Cost{})
		xdone <- err
	}()
	time.Sleep(300 * time.Millisecond) // X holds A's claim and polls for B
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := obtainOne(ctx, st1, a, []budget.Account{{Name: "user:a"}}, quickBuild()) // Y needs only A
	if d := time.Since(start); d > time.Second || dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("Y (300 ms deadline) waited %v for A's lock and got %v; want its timeout within its deadline", d, err)
	}
	if err := <-xdone; dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("X got %v, want its timeout", err)
	}
	close(release)
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if rem := remaining(t, ledgers[0]); rem != 10-testSynopsisEpsilon {
		t.Errorf("remaining ε %v, want %v: only proxy 2's build of B paid", rem, 10-testSynopsisEpsilon)
	}
	h, err := ledgers[0].History(context.Background(), claimAccount(a.Key), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range h {
		if r.State != budget.Cancelled {
			t.Errorf("claim of A: reservation %d is %v, want cancelled (X read nothing)", r.ID, r.State)
		}
	}
	// A is free again: a statement with time builds it.
	if _, builtNow, err := obtainOne(context.Background(), st1, a, []budget.Account{{Name: "user:a"}}, quickBuild()); err != nil || !builtNow {
		t.Errorf("building A afterwards: built %v, err %v", builtNow, err)
	}
}

// quickBuild builds an Identity synopsis at once.
func quickBuild() buildFunc {
	return func(ctx context.Context, readData *bool) (*histogram.Synopsis, error) {
		*readData = true
		return histogram.Identity(rand.NewChaCha8([32]byte{2}), make([]int64, 16), testSynopsisEpsilon)
	}
}
