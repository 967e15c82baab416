package budget

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestLedgerErrorKinds: a ledger call cut by the statement timeout is a
// timeout (3024), as the same deadline in the backend is, and one cut by
// the client (KILL, hang-up) is canceled (1317); the driver's text stays
// out of the message.
func TestLedgerErrorKinds(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind dperr.Kind
	}{
		{fmt.Errorf("driver: %w", context.DeadlineExceeded), dperr.Timeout},
		{fmt.Errorf("driver: %w", context.Canceled), dperr.Canceled},
		{fmt.Errorf("driver: connection refused"), dperr.Internal},
	} {
		got := ledgerError(c.err)
		if dperr.KindOf(got) != c.kind {
			t.Errorf("ledgerError(%v): kind %v, want %v", c.err, dperr.KindOf(got), c.kind)
		}
		if msg := got.Error(); len(msg) == 0 || strings.Contains(msg, "driver") {
			t.Errorf("ledgerError(%v) = %q: the driver's text reaches the message", c.err, msg)
		}
	}
}
