package budget

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

func TestReserveCommitCancel(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})

		committed := reserve(t, l, Cost{Epsilon: 0.3}, "user:alice")
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.7})
		if err := committed.Commit(ctx); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.7})

		cancelled := reserve(t, l, Cost{Epsilon: 0.2}, "user:alice")
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.5})
		if err := cancelled.Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.7})

		if got, want := cancelled.ID(), committed.ID(); got <= want {
			t.Errorf("ID of the later reservation: got %v, want > %v", got, want)
		}
		if got, want := committed.Cost(), (Cost{Epsilon: 0.3}); got != want {
			t.Errorf("Cost: got %v, want %v", got, want)
		}
	})
}

func TestSettleExactlyOnce(t *testing.T) {
	type settle func(*Reservation, context.Context) error
	commit, cancel := (*Reservation).Commit, (*Reservation).Cancel
	tests := []struct {
		name          string
		first, second settle
		wantRemaining float64 // of a limit of 1 after reserving 0.25
	}{
		{"commit twice", commit, commit, 0.75},
		{"cancel after commit", commit, cancel, 0.75},
		{"commit after cancel", cancel, commit, 1},
		{"cancel twice", cancel, cancel, 1},
	}
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				setLimits(t, l, map[string]Cost{"user:bob": {Epsilon: 1}})
				if err := l.Reset(ctx); err != nil {
					t.Fatalf("Reset: %v", err)
				}
				r := reserve(t, l, Cost{Epsilon: 0.25}, "user:bob")
				if err := tt.first(r, ctx); err != nil {
					t.Fatalf("first settle: %v", err)
				}
				err := tt.second(r, ctx)
				if !errors.Is(err, ErrSettled) {
					t.Errorf("second settle: got %v, want an error wrapping ErrSettled", err)
				}
				wantRemaining(t, l, "user:bob", Cost{Epsilon: tt.wantRemaining})
			})
		}
	})
}

func TestSettleAfterReset(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, backends[0], backends[0].freshDSN(t))
	setLimits(t, l, map[string]Cost{"user:a": {Epsilon: 1}})
	r := reserve(t, l, Cost{Epsilon: 0.5}, "user:a")
	if err := l.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if err := r.Commit(ctx); !errors.Is(err, ErrSettled) {
		t.Errorf("Commit after Reset: got %v, want an error wrapping ErrSettled", err)
	}
	wantRemaining(t, l, "user:a", Cost{Epsilon: 1})
}

func TestLimitTolerance(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:carol": {Epsilon: 1}})
		for i := range 10 {
			r := reserve(t, l, Cost{Epsilon: 0.1}, "user:carol")
			if err := r.Commit(ctx); err != nil {
				t.Fatalf("Commit %d: %v", i, err)
			}
		}
		remaining, err := l.Remaining(ctx, "user:carol")
		if err != nil {
			t.Fatalf("Remaining: %v", err)
		}
		if got, want := remaining, (Cost{}); got != want {
			t.Errorf("Remaining after 10 × 0.1: got %v, want exactly %v", got, want)
		}
		_, err = l.Reserve(ctx, stored("user:carol"), Cost{Epsilon: 0.1}, "11th")
		if got, want := dperr.KindOf(err), dperr.BudgetExhausted; got != want {
			t.Errorf("11th Reserve: got kind %v (%v), want %v", got, err, want)
		}
	})
}

func TestExhaustedMessage(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, backends[0], backends[0].freshDSN(t))
	setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
	reserve(t, l, Cost{Epsilon: 0.95}, "user:alice")
	_, err := l.Reserve(ctx, stored("user:alice"), Cost{Epsilon: 0.1}, "")
	want := "privacy budget exhausted for user alice: remaining epsilon=0.05, delta=0; this query needs epsilon=0.1, delta=0"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %v", err, want)
	}
	if code, state := dperr.BudgetExhausted.Code(); code != 1226 || state != "42000" {
		t.Errorf("code: got %v %v, want 1226 42000", code, state)
	}
}

// TestDeltaExhaustedMessage: a cost whose ε fits but whose δ does not is
// refused saying that δ is what is missing, with the account's δ budget
// and what remains of it, and wraps ErrDeltaExhausted; when ε does not fit
// either, the message is the general one.
func TestDeltaExhaustedMessage(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, backends[0], backends[0].freshDSN(t))
	setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
	_, err := l.Reserve(ctx, stored("user:alice"), Cost{Epsilon: 0.1, Delta: 1e-7}, "")
	want := "privacy budget exhausted for user alice: this query needs delta=1e-07, and the delta budget of user alice is 0, of which 0 remains (its epsilon would fit: it needs epsilon=0.1 of the 1 remaining)"
	if err == nil || err.Error() != want || !errors.Is(err, ErrDeltaExhausted) || dperr.KindOf(err) != dperr.BudgetExhausted {
		t.Errorf("got %v, want %v wrapping ErrDeltaExhausted", err, want)
	}
	_, err = l.Reserve(ctx, stored("user:alice"), Cost{Epsilon: 2, Delta: 1e-7}, "")
	if err == nil || errors.Is(err, ErrDeltaExhausted) || !strings.Contains(err.Error(), "remaining epsilon=1, delta=0") {
		t.Errorf("ε and δ short: got %v, want the general message", err)
	}
}

func TestDeltaAccounting(t *testing.T) {
	tests := []struct {
		name    string
		limit   Cost
		costs   []Cost // reserved in order; all but the last must fit
		lastFit bool
	}{
		{"delta against a zero delta limit", Cost{Epsilon: 1}, []Cost{{Epsilon: 0.1, Delta: 1e-9}}, false},
		{"pure epsilon against a zero delta limit", Cost{Epsilon: 1}, []Cost{{Epsilon: 0.1}}, true},
		{"ten deltas fill the delta limit", Cost{Epsilon: 10, Delta: 1e-6},
			[]Cost{{0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}}, true},
		{"the eleventh delta is refused", Cost{Epsilon: 10, Delta: 1e-6},
			[]Cost{{0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}, {0.1, 1e-7}}, false},
	}
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				account := "user:d" + string(rune('0'+i))
				setLimits(t, l, map[string]Cost{account: tt.limit})
				last := len(tt.costs) - 1
				for _, c := range tt.costs[:last] {
					reserve(t, l, c, account)
				}
				_, err := l.Reserve(ctx, stored(account), tt.costs[last], "")
				if tt.lastFit && err != nil {
					t.Errorf("last Reserve: got %v, want success", err)
				}
				if !tt.lastFit && dperr.KindOf(err) != dperr.BudgetExhausted {
					t.Errorf("last Reserve: got %v, want kind %v", err, dperr.BudgetExhausted)
				}
			})
		}
	})
}

func TestMultiAccountAllOrNothing(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{
			"user:alice": {Epsilon: 1},
			"user:bob":   {Epsilon: 1},
			"table:pums": {Epsilon: 0.5},
		})
		reserve(t, l, Cost{Epsilon: 0.4}, "user:alice", "table:pums")
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.6})
		wantRemaining(t, l, "table:pums", Cost{Epsilon: 0.1})

		// bob can pay, the table cap cannot: nobody is charged.
		_, err := l.Reserve(ctx, stored("user:bob", "table:pums"), Cost{Epsilon: 0.2}, "")
		if dperr.KindOf(err) != dperr.BudgetExhausted {
			t.Fatalf("Reserve over the table cap: got %v, want kind %v", err, dperr.BudgetExhausted)
		}
		want := "privacy budget exhausted for table pums: remaining epsilon=0.1, delta=0; this query needs epsilon=0.2, delta=0"
		if err.Error() != want {
			t.Errorf("got %v, want %v", err, want)
		}
		wantRemaining(t, l, "user:bob", Cost{Epsilon: 1})
		wantRemaining(t, l, "table:pums", Cost{Epsilon: 0.1})

		// An unknown account in the set: nobody is charged.
		_, err = l.Reserve(ctx, stored("user:bob", "table:nope"), Cost{Epsilon: 0.1}, "")
		if !errors.Is(err, ErrUnknownAccount) {
			t.Errorf("Reserve with an unknown account: got %v, want an error wrapping ErrUnknownAccount", err)
		}
		wantRemaining(t, l, "user:bob", Cost{Epsilon: 1})

		// A repeated account is charged once.
		r := reserve(t, l, Cost{Epsilon: 0.3}, "user:bob", "user:bob")
		wantRemaining(t, l, "user:bob", Cost{Epsilon: 0.7})
		if got := r.Accounts(); len(got) != 1 || got[0] != "user:bob" {
			t.Errorf("Accounts: got %v, want [user:bob]", got)
		}

		// Cancel gives the cost back to every account.
		r = reserve(t, l, Cost{Epsilon: 0.05}, "user:alice", "table:pums")
		if err := r.Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 0.6})
		wantRemaining(t, l, "table:pums", Cost{Epsilon: 0.1})
	})
}

func TestAccountNamesAreCaseSensitive(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}, "user:Alice": {Epsilon: 2}})
		reserve(t, l, Cost{Epsilon: 0.5}, "user:Alice")
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 1})
		wantRemaining(t, l, "user:Alice", Cost{Epsilon: 1.5})
	})
}

func TestInvalidRequests(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, backends[0], backends[0].freshDSN(t))
	setLimits(t, l, map[string]Cost{"user:a": {Epsilon: 1}})
	long := strings.Repeat("a", maxNameLen+1)
	reserveErr := func(accounts []string, cost Cost) func() error {
		return func() error { _, err := l.Reserve(ctx, stored(accounts...), cost, ""); return err }
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"no accounts", reserveErr(nil, Cost{Epsilon: 0.1})},
		{"empty account", reserveErr([]string{""}, Cost{Epsilon: 0.1})},
		{"negative epsilon", reserveErr([]string{"user:a"}, Cost{Epsilon: -0.1})},
		{"NaN delta", reserveErr([]string{"user:a"}, Cost{Epsilon: 0.1, Delta: math.NaN()})},
		{"infinite limit", func() error { return l.SetLimit(ctx, "user:b", Cost{Epsilon: math.Inf(1)}) }},
		{"newline in name", func() error { return l.SetLimit(ctx, "user:b\nuser:c", Cost{Epsilon: 1}) }},
		{"name too long", func() error { return l.SetLimit(ctx, long, Cost{Epsilon: 1}) }},
		{"unknown account", func() error { _, err := l.Remaining(ctx, "user:nobody"); return err }},
		{"history of an unknown account", func() error { _, err := l.History(ctx, "user:nobody", 0); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); err == nil {
				t.Errorf("got nil, want an error")
			}
		})
	}
	wantRemaining(t, l, "user:a", Cost{Epsilon: 1})
}

func TestCleanMemo(t *testing.T) {
	long := strings.Repeat("x", maxMemoLen-1) + "é" // é straddles the limit
	tests := []struct {
		name, memo, want string
	}{
		{"plain", "SELECT COUNT(*) FROM pums", "SELECT COUNT(*) FROM pums"},
		{"NUL removed", "a\x00b", "ab"},
		{"invalid UTF-8 replaced", "a\xffb", "a\uFFFDb"},
		{"cut at a character boundary", long, long[:maxMemoLen-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cleanMemo(tt.memo); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTinyCostsCount: a cost below half an ulp of the usage still counts
// (the usage is rounded up, never to nearest): at ε_used = 20 three
// statements of ε = 2^-50 and δ = 1e-30 over δ_used = 1e-5 move both
// totals up, where rounded sums stayed at exactly 20 and 1e-5 (an
// independent review). Cancelling a cost gives back at most that cost: the
// usage stays at or above the exact sum of what it holds.
func TestTinyCostsCount(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:tiny": {Epsilon: 1000, Delta: 1e-3}})
		commit(t, reserve(t, l, Cost{Epsilon: 20, Delta: 1e-5}, "user:tiny"))
		used := func() Cost {
			var u map[string]usage
			if err := l.inTx(ctx, func(tx *sql.Tx) (err error) {
				u, err = l.lockAccounts(ctx, tx, []string{"user:tiny"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return u["user:tiny"].used
		}
		base := used()
		tiny := Cost{Epsilon: 0x1p-50, Delta: 1e-30}
		for range 3 {
			commit(t, reserve(t, l, tiny, "user:tiny"))
		}
		after := used()
		if !(after.Epsilon > base.Epsilon) || !(after.Delta > base.Delta) {
			t.Errorf("used before three tiny statements %v, after %v: want both higher", base, after)
		}
		// 0.1 + 0.2 rounds to nearest below 0.3 + ulp; cancelling 0.2
		// must not leave less than 0.1 used.
		setLimits(t, l, map[string]Cost{"user:cancel": {Epsilon: 1}})
		commit(t, reserve(t, l, Cost{Epsilon: 0.1}, "user:cancel"))
		r := reserve(t, l, Cost{Epsilon: 0.2}, "user:cancel")
		if err := r.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		rem, err := l.Remaining(ctx, "user:cancel")
		if err != nil {
			t.Fatal(err)
		}
		if rem.Epsilon > 0.9 {
			t.Errorf("after 0.1 committed and 0.2 cancelled: %v remaining, above 1 − 0.1", rem.Epsilon)
		}
	})
}

func TestAddUp(t *testing.T) {
	for _, tc := range []struct{ a, b, want float64 }{
		{1, 2, 3},
		{20, 0x1p-50, math.Nextafter(20, 21)},
		{0.1, 0.2, 0.30000000000000004},  // the nearest sum is above: kept
		{0.3, -0.1, 0.19999999999999998}, // exact: kept
		{0.13436424411240122, -0.0008474337369372327, 0.133516810375464}, // nearest is below: one ulp up
		{1e300, 1e-300, math.Nextafter(1e300, math.Inf(1))},
		{5, -5, 0},
	} {
		if got := addUp(tc.a, tc.b); got != tc.want {
			t.Errorf("addUp(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// commit commits r or fails the test.
func commit(t testing.TB, r *Reservation) {
	t.Helper()
	if err := r.Commit(context.Background()); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}
