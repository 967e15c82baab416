package exec

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestStoreReleaseRetriesWithinTheStatement: a ledger that fails a
// release's write and works again before the next attempt (storeBackoff
// later) has the release stored by the statement that created it.
func TestStoreReleaseRetriesWithinTheStatement(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.SQLiteDSN(t)
	l := sharedLedgers(t, budget.SQLite, dsn, 1)[0]
	allow := refuseLargeStates(t, budget.SQLite, dsn, "synopsis:", 600)
	value := bytes.Repeat([]byte{7}, 1000)
	if _, err := l.SwapState(ctx, "synopsis:test", nil, value); err == nil {
		t.Fatal("the ledger took the value; want it refused")
	}
	time.AfterFunc(storeBackoff/2, allow)
	stored, err := storeRelease(ctx, l, "synopsis:test", value, synopsisLease/3)
	if err != nil || !stored {
		t.Fatalf("storeRelease: stored %v, %v; want stored at a later attempt", stored, err)
	}
	if got, ok, err := l.GetState(ctx, "synopsis:test"); err != nil || !ok || !bytes.Equal(got, value) {
		t.Errorf("stored value: %v, %v; want the release", ok, err)
	}
}
