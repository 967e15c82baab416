package exec

import (
	"context"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
)

// TestAnsweredStatementIsCommitted: the commit of an answered statement
// runs after the answer; once Wait returns it is in the ledger, and until
// then the reservation already counts as spent.
func TestAnsweredStatementIsCommitted(t *testing.T) {
	f := newAnswersFixture(t)
	e := f.executor(t, 0)
	f.run(t, e, "a", repeatQuery, 0.5, 1)
	if got := f.remaining(t, "a"); got != 9.5 {
		t.Errorf("remaining right after the answer: %v, want 9.5", got)
	}
	e.Wait()
	history, err := f.ledger.History(context.Background(), "user:a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 1 || history[0].State != budget.Committed {
		t.Fatalf("history after Wait: %+v, want one committed reservation", history)
	}
}
