package budget

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestOwnLimitsShareUsage: two ledgers in one database (two proxies) each
// enforce their own limits against the usage both add to; a limit stored
// by the other (SetLimit, as proxies did at start) changes nothing, and an
// account charged without a limit still counts for the one that bounds it.
func TestOwnLimitsShareUsage(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ctx := context.Background()
		a, other := openLedger(t, b, dsn), openLedger(t, b, dsn)
		alice := func(eps float64) Account {
			return Account{Name: "user:alice", Limit: OwnLimit(Cost{Epsilon: eps}), Disclose: true}
		}
		capped := Account{Name: "table:pums", Limit: OwnLimit(Cost{Epsilon: 2})}
		uncapped := Account{Name: "table:pums", Limit: NoLimit()}

		// Missing accounts with their own limit, or none, are created.
		if _, err := a.Reserve(ctx, []Account{alice(1), capped}, Cost{Epsilon: 0.75}, "a"); err != nil {
			t.Fatalf("first Reserve: %v", err)
		}
		// The other proxy stores a large limit: a still enforces its own.
		if err := other.SetLimit(ctx, "user:alice", Cost{Epsilon: 100}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Reserve(ctx, []Account{alice(1), capped}, Cost{Epsilon: 0.5}, "a"); dperr.KindOf(err) != dperr.BudgetExhausted {
			t.Fatalf("a over its own limit of 1 after another stored 100: got %v, want BudgetExhausted", err)
		}
		if got, err := a.RemainingUnder(ctx, "user:alice", Cost{Epsilon: 1}); err != nil || !near(got.Epsilon, 0.25) {
			t.Errorf("RemainingUnder(1): got %v, %v, want 0.25", got, err)
		}
		// The other proxy, with its own larger limits and no table cap,
		// charges the same accounts.
		if _, err := other.Reserve(ctx, []Account{alice(100), uncapped}, Cost{Epsilon: 1}, "other"); err != nil {
			t.Fatalf("Reserve without a table cap: %v", err)
		}
		if got, err := a.RemainingUnder(ctx, "user:alice", Cost{Epsilon: 1}); err != nil || got.Epsilon != 0 {
			t.Errorf("a's remaining after the other's spending: got %v, %v, want 0", got, err)
		}
		_, err := a.Reserve(ctx, []Account{alice(10), capped}, Cost{Epsilon: 0.5}, "a")
		if dperr.KindOf(err) != dperr.BudgetExhausted || !strings.Contains(err.Error(), "table pums") {
			t.Errorf("a over the table cap the other's spending used: got %v, want the table's refusal", err)
		}
		// All or nothing: the refused reservation charged no account.
		if got, err := a.RemainingUnder(ctx, "user:alice", Cost{Epsilon: 10}); err != nil || !near(got.Epsilon, 8.25) {
			t.Errorf("alice's remaining under 10: got %v, %v, want 8.25", got, err)
		}
		if got, err := a.RemainingUnder(ctx, "user:nobody", Cost{Epsilon: 3}); err != nil || got.Epsilon != 3 {
			t.Errorf("RemainingUnder of a missing account: got %v, %v, want the whole limit", got, err)
		}
		// The zero Limit is still the stored one, and a missing account
		// with it is refused.
		if _, err := a.Reserve(ctx, []Account{{Name: "claim:x"}}, Cost{Epsilon: 0.1}, ""); !errors.Is(err, ErrUnknownAccount) {
			t.Errorf("stored limit of a missing account: got %v, want ErrUnknownAccount", err)
		}
	})
}

// TestUndisclosedRefusal: a refusal by an account not marked Disclose (a
// table cap) does not state what remains of it, and names it by its
// label; the analyst's own account still states what remains.
func TestUndisclosedRefusal(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, backends[0], backends[0].freshDSN(t))
	table := Account{Name: "table:pums", Limit: OwnLimit(Cost{Epsilon: 1, Delta: 1e-6}), Label: "table pums_v2"}
	user := Account{Name: "user:bob", Limit: OwnLimit(Cost{Epsilon: 10, Delta: 1e-4}), Disclose: true}
	if _, err := l.Reserve(ctx, []Account{user, table}, Cost{Epsilon: 0.7}, ""); err != nil {
		t.Fatal(err)
	}
	for _, cost := range []Cost{{Epsilon: 0.5}, {Epsilon: 0.1, Delta: 1e-5}} {
		_, err := l.Reserve(ctx, []Account{user, table}, cost, "")
		if dperr.KindOf(err) != dperr.BudgetExhausted || errors.Is(err, ErrDeltaExhausted) {
			t.Fatalf("%v over the table cap: got %v, want a BudgetExhausted refusal not wrapping ErrDeltaExhausted", cost, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "for table pums_v2:") || !strings.Contains(msg, cost.String()) || strings.Contains(msg, "0.3") || strings.Contains(msg, "remaining") {
			t.Errorf("%v over the table cap: %q names the cap's remaining ε 0.3, or not the table and the cost", cost, msg)
		}
	}
	_, err := l.Reserve(ctx, []Account{{Name: "user:bob", Limit: OwnLimit(Cost{Epsilon: 1}), Disclose: true}}, Cost{Epsilon: 0.5}, "")
	if err == nil || !strings.Contains(err.Error(), "remaining epsilon=0.3") {
		t.Errorf("over the analyst's own budget: got %v, want the remaining 0.3", err)
	}
}

// TestNamesCompareByteForByte: names that differ only in trailing spaces
// are two accounts (MySQL/MariaDB's VARCHAR compared them as one, padded).
func TestNamesCompareByteForByte(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}, "user:alice ": {Epsilon: 1}})
		reserve(t, l, Cost{Epsilon: 1}, "user:alice")
		wantRemaining(t, l, "user:alice", Cost{})
		wantRemaining(t, l, "user:alice ", Cost{Epsilon: 1})
		if _, ok, _ := l.GetState(context.Background(), "k "); ok {
			t.Fatal("a state key with a trailing space exists before it was stored")
		}
		if err := l.PutState(context.Background(), "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := l.GetState(context.Background(), "k "); err != nil || ok {
			t.Errorf("GetState(\"k \") after PutState(\"k\"): found %v, %v; want nothing", ok, err)
		}
	})
}

// TestCarryOver: an account's usage is carried to another once, whichever
// ledger sharing the database asks and however often.
func TestCarryOver(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ctx := context.Background()
		l, other := openLedger(t, b, dsn), openLedger(t, b, dsn)
		setLimits(t, l, map[string]Cost{"table:pums_v2": {Epsilon: 5}})
		reserve(t, l, Cost{Epsilon: 1.5}, "table:pums_v2")
		if carried, err := l.CarryOver(ctx, "table:nope", "table:pums"); err != nil || carried {
			t.Errorf("CarryOver of a missing account: %v, %v; want nothing carried", carried, err)
		}
		for i, ledger := range []*Ledger{l, other, l} {
			carried, err := ledger.CarryOver(ctx, "table:pums_v2", "table:pums")
			if err != nil || carried != (i == 0) {
				t.Errorf("CarryOver %d: %v, %v; want carried only the first time", i, carried, err)
			}
		}
		if got, err := l.RemainingUnder(ctx, "table:pums", Cost{Epsilon: 2}); err != nil || !near(got.Epsilon, 0.5) {
			t.Errorf("remaining of the new account under 2: %v, %v; want 0.5", got, err)
		}
		wantRemaining(t, l, "table:pums_v2", Cost{Epsilon: 3.5})
	})
}
