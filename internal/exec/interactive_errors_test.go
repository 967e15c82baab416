package exec

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/backend"
	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
	"github.com/dpproxy/dpproxy/internal/testdb"
)

// TestInteractiveFailuresKeepTheirCode: a count of the Median Mechanism
// whose ledger or backend fails gets that failure's own client error (the
// ledger's message, the backend's query-id error), as every other
// statement does, and never the driver's text; both were the generic
// "internal error: interactive mechanism failed" (checked: this failed).
func TestInteractiveFailuresKeepTheirCode(t *testing.T) {
	ctx := context.Background()
	f := newInteractiveFixture(t, 3000, catalog.InteractiveMedian)
	// client is what package wire sends: the code and message of the
	// *dperr.Error in err's chain.
	client := func(err error) (dperr.Kind, string) {
		var e *dperr.Error
		if !errors.As(err, &e) {
			t.Fatalf("%v: no client error in the chain", err)
		}
		return e.Kind, e.Error()
	}
	const create = "SELECT COUNT(*) FROM t WHERE a < 0 OR b < 0" // empty: creates, tests nothing
	const test = "SELECT COUNT(*) FROM t WHERE a < 8 OR b = 1"

	// The ledger fails after the instance was created: the test turn
	// cannot be taken.
	dsn := testdb.SQLiteDSN(t)
	db := testdb.Open(t, "sqlite", dsn)
	l, err := budget.Open(ctx, db, budget.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(ctx, "user:a", budget.Cost{Epsilon: 10}); err != nil {
		t.Fatal(err)
	}
	e := New(f.back, l, nil)
	src := rand.NewChaCha8([32]byte{1})
	if _, err := f.count(t, e, src, create); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = f.count(t, e, src, test)
	kind, msg := client(err)
	if kind != dperr.Internal || msg != "privacy budget ledger failed" || strings.Contains(msg, "closed") {
		t.Errorf("count with the ledger down: %v %q, want the ledger's own error without the driver's text", kind, msg)
	}

	// The backend fails in another proxy sharing the ledger of an
	// instance: its count cannot be read.
	if _, err := f.count(t, New(f.back, f.ledger, nil), src, create); err != nil {
		t.Fatal(err)
	}
	broken := testdb.SQLite(t)
	broken.Close()
	_, err = f.count(t, New(backend.New(broken, sqlrewrite.SQLite, nil), f.ledger, nil), src, test)
	kind, msg = client(err)
	if kind != dperr.Backend || !strings.Contains(msg, "query id") || strings.Contains(msg, "closed") {
		t.Errorf("count with the backend down: %v %q, want the backend's query-id error without the driver's text", kind, msg)
	}
}
