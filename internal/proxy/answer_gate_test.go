package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/demo"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestAnswerGate: the answers a user's sessions hold unwritten (executed,
// Answered not yet called) never pass the user's budget of answer
// bounds, nor all users' the process-wide one: a statement that would
// pass either waits, before anything is charged, until its context ends
// (3024 here) or an answer is written or its connection closed; another
// analyst's statement whose bound is under ungatedAnswerBytes is answered
// meanwhile. The budgets are set to 2 and 3 answers of the large
// statement's bound (the review's 64 connections of one analyst held 64
// such answers of 64 MiB each, about 11 GB, with no budget at all).
func TestAnswerGate(t *testing.T) {
	ctx := context.Background()
	a := newDataSession(t)
	e := a.engine
	if err := e.ledger.SetLimit(ctx, catalog.UserAccount(demo.SHA2User), budget.Cost{Epsilon: 100, Delta: 1e-3}); err != nil {
		t.Fatal(err)
	}
	const (
		large = "SELECT educ, race, COUNT(*), REPEAT('x', 1000) FROM pums GROUP BY educ, race"
		small = "SELECT educ, COUNT(*) FROM pums GROUP BY educ"
	)
	bound := func(sql string) int64 {
		stmt, err := a.parse(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		qp, err := e.planner.PlanQuery(stmt.(*sqlrewrite.Query), a.settings())
		if err != nil {
			t.Fatal(err)
		}
		return qp.ResultBound()
	}
	b := bound(large)
	if b <= ungatedAnswerBytes || bound(small) > ungatedAnswerBytes {
		t.Fatalf("bounds %d and %d, want the large one's over %d and the small one's not", b, bound(small), ungatedAnswerBytes)
	}
	e.answers = newByteGate(ungatedAnswerBytes, 3*b, 2*b, "lock wait", "timeout")

	answers := func(s *Session, sql string) {
		t.Helper()
		if _, err := s.Execute(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	waits := func(s *Session, what string) {
		t.Helper()
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := s.Execute(short, large); dperr.KindOf(err) != dperr.Timeout {
			t.Errorf("%s: %v, want it to wait until its deadline (3024)", what, err)
		}
	}
	a1, a2, a3 := a, e.Open(demo.User, 8), e.Open(demo.User, 9)
	b1, b2, b3 := e.Open(demo.SHA2User, 10), e.Open(demo.SHA2User, 11), e.Open(demo.SHA2User, 12)

	answers(a1, large)
	answers(a2, large)
	waits(a3, "a third unwritten answer of one user, over the user's budget")
	answers(b1, large)
	waits(b2, "another user's answer over the process-wide budget")
	answers(b3, small) // under ungatedAnswerBytes: never waits
	b3.Answered()

	a1.Answered() // written: a3's answer fits
	answers(a3, large)
	a2.Close() // closed: b2's fits
	answers(b2, large)
	for _, s := range []*Session{a1, a3, b1, b2} {
		s.Answered()
	}
	// Nothing held: every budget is whole again.
	if !e.answers.total.TryAcquire(3 * b) {
		t.Error("the process-wide budget is not whole once every answer was written")
	}
}
