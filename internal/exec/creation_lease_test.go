package exec

import (
	"context"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
)

// TestCreationLeaseOutlivesTheStatement: a statement whose context ended
// as it went to store its creation's lease still stores and holds it, so
// its claim, which read nothing, is cancelled: a lease read with the
// statement's context failed, left the lease unheld, and the claim was
// then committed (an overcharge).
func TestCreationLeaseOutlivesTheStatement(t *testing.T) {
	l := openLedgers(t, 1)[0]
	claim := claimAccount(testSpec().Key)
	res, err := reserveClaim(context.Background(), l, []budget.Account{{Name: "user:a"}}, claim, testSynopsisEpsilon, "test")
	if err != nil || res == nil {
		t.Fatalf("claim: %v, %v", res, err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	hold, err := holdCreation(ended, l, claim, res, time.Minute)
	if err != nil {
		t.Errorf("holding the lease: %v", err)
	}
	if err := hold.settle(res, false); err != nil {
		t.Fatal(err)
	}
	if rem := remaining(t, l); rem != 10 {
		t.Errorf("remaining ε %v, want 10: a claim that read nothing is cancelled", rem)
	}
}
