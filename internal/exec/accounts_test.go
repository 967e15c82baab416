package exec

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/budget"
	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/dperr"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestProxiesShareUsageUnderTheirOwnLimits: two executors (two proxies)
// share a ledger with different configurations. A gives alice ε = 1 and
// caps table t at 2; B gives alice ε = 100 (and stored it, as proxies
// used to at start) and names the same relation t_v2, without a cap.
// Alice's ε = 5 through B counts against A's limits: A refuses her, and
// refuses bob by the table cap, whose remaining amount it does not state
// (an independent review: A enforced B's stored 100, and B's statements
// on the uncapped, renamed table were charged to no table account).
func TestProxiesShareUsageUnderTheirOwnLimits(t *testing.T) {
	f := newAnswersFixture(t)
	ctx := context.Background()
	capped, renamed := f.cat.Tables[0], f.cat.Tables[0]
	capped.Epsilon = 2
	renamed.Name = "t_v2"
	catA := &catalog.Config{Tables: []catalog.Table{capped}}
	catB := &catalog.Config{Tables: []catalog.Table{renamed}}
	limits := func(budgets map[string]float64) func(string) (budget.Cost, bool) {
		return func(user string) (budget.Cost, bool) {
			eps, ok := budgets[user]
			return budget.Cost{Epsilon: eps}, ok
		}
	}
	a, b := f.executor(t, 0), f.executor(t, 0)
	a.SetUserLimits(limits(map[string]float64{"alice": 1, "bob": 10}))
	b.SetUserLimits(limits(map[string]float64{"alice": 100}))
	if err := f.ledger.SetLimit(ctx, catalog.UserAccount("alice"), budget.Cost{Epsilon: 100}); err != nil {
		t.Fatal(err)
	}
	plan := func(cat *catalog.Config, table string, eps float64) *planner.Plan {
		st, err := sqlrewrite.NewParser(cat).Parse("SELECT COUNT(*) FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		p, err := planner.New(cat).Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: eps, Mechanism: "auto", Trim: planner.DefaultTrim})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	src := rand.NewChaCha8([32]byte{})
	if _, err := b.Run(ctx, "alice", plan(catB, "t_v2", 5), src); err != nil {
		t.Fatalf("alice on B: %v", err)
	}
	_, err := a.Run(ctx, "alice", plan(catA, "t", 0.5), src)
	if dperr.KindOf(err) != dperr.BudgetExhausted || !strings.Contains(err.Error(), "user alice: remaining epsilon=0") {
		t.Errorf("alice on A after spending 5 through B: got %v, want A's own limit of 1 exhausted", err)
	}
	_, err = a.Run(ctx, "bob", plan(catA, "t", 0.5), src)
	if dperr.KindOf(err) != dperr.BudgetExhausted || !strings.Contains(err.Error(), "table t:") || strings.Contains(err.Error(), "remaining") {
		t.Errorf("bob on A after 5 spent on the relation through B: got %v, want the cap of 2 exhausted, its remaining not stated", err)
	}
	if _, err := a.Run(ctx, "carol", plan(catA, "t", 0.5), src); dperr.KindOf(err) != dperr.Internal {
		t.Errorf("a user A does not configure: got %v, want a refusal", err)
	}
	if c, err := f.ledger.RemainingUnder(ctx, catalog.UserAccount("bob"), budget.Cost{Epsilon: 10}); err != nil || c.Epsilon != 10 {
		t.Errorf("bob's remaining after the refusal: %v, %v; want 10, nothing charged", c, err)
	}
}
