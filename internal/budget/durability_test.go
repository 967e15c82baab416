package budget

import (
	"context"
	"slices"
	"testing"
)

func TestDurableAcrossReopen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		ctx := context.Background()
		first := openDB(t, b, dsn)
		l, err := Open(ctx, first, b.dialect)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1, Delta: 1e-6}})
		if err := reserve(t, l, Cost{Epsilon: 0.2}, "user:alice").Commit(ctx); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		if err := reserve(t, l, Cost{Epsilon: 0.1}, "user:alice").Cancel(ctx); err != nil {
			t.Fatalf("Cancel: %v", err)
		}
		// Left pending, as by a proxy killed while answering: it stays spent.
		pending := reserve(t, l, Cost{Epsilon: 0.3, Delta: 1e-7}, "user:alice")
		if err := first.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}

		reopened := openLedger(t, b, dsn)
		wantRemaining(t, reopened, "user:alice", Cost{Epsilon: 0.5, Delta: 9e-7})
		history, err := reopened.History(ctx, "user:alice", 0)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		var states []State
		for _, e := range history {
			states = append(states, e.State)
		}
		if got, want := states, []State{Reserved, Cancelled, Committed}; !slices.Equal(got, want) {
			t.Errorf("states, newest first: got %v, want %v", got, want)
		}
		if got, want := history[0].ID, pending.ID(); got != want {
			t.Errorf("newest entry: got id %v, want %v", got, want)
		}
	})
}

func TestSetLimitKeepsHistory(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
		if err := reserve(t, l, Cost{Epsilon: 0.4}, "user:alice").Commit(ctx); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		tests := []struct {
			name  string
			limit Cost
			want  Cost
		}{
			{"raised", Cost{Epsilon: 2, Delta: 1e-5}, Cost{Epsilon: 1.6, Delta: 1e-5}},
			{"lowered below the spending", Cost{Epsilon: 0.3}, Cost{}},
			{"restored", Cost{Epsilon: 1}, Cost{Epsilon: 0.6}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				setLimits(t, l, map[string]Cost{"user:alice": tt.limit})
				wantRemaining(t, l, "user:alice", tt.want)
				history, err := l.History(ctx, "user:alice", 0)
				if err != nil {
					t.Fatalf("History: %v", err)
				}
				if got, want := len(history), 1; got != want {
					t.Errorf("history length: got %v, want %v", got, want)
				}
			})
		}
	})
}

func TestReset(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 1}})
		reserve(t, l, Cost{Epsilon: 0.7}, "user:alice")
		if err := l.PutState(ctx, "dawa:pums", []byte{1}); err != nil {
			t.Fatalf("PutState: %v", err)
		}
		if err := l.Reset(ctx); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		wantRemaining(t, l, "user:alice", Cost{Epsilon: 1})
		history, err := l.History(ctx, "user:alice", 0)
		if err != nil || len(history) != 0 {
			t.Errorf("History after Reset: got %v, %v, want no entries", history, err)
		}
		if _, ok, err := l.GetState(ctx, "dawa:pums"); ok || err != nil {
			t.Errorf("GetState after Reset: got found=%v, %v, want not found", ok, err)
		}
	})
}
