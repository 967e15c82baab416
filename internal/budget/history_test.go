package budget

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestHistory(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:alice": {Epsilon: 5, Delta: 1e-5}, "table:pums": {Epsilon: 10}})
		before := time.Now().Add(-time.Second)
		first := reserve(t, l, Cost{Epsilon: 0.5}, "user:alice", "table:pums")
		if err := first.Commit(ctx); err != nil {
			t.Fatalf("Commit: %v", err)
		}
		r, err := l.Reserve(ctx, stored("user:alice"), Cost{Epsilon: 0.25, Delta: 1e-7}, "SELECT MEDIAN(age) FROM pums")
		if err != nil {
			t.Fatalf("Reserve: %v", err)
		}

		got, err := l.History(ctx, "user:alice", 0)
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		if len(got) != 2 {
			t.Fatalf("History length: got %v, want 2", len(got))
		}
		newest, oldest := got[0], got[1]
		if newest.ID != r.ID() || newest.State != Reserved || newest.Memo != "SELECT MEDIAN(age) FROM pums" ||
			newest.Cost != (Cost{Epsilon: 0.25, Delta: 1e-7}) || !newest.SettledAt.IsZero() {
			t.Errorf("newest entry: got %+v, want the pending reservation %d", newest, r.ID())
		}
		if oldest.ID != first.ID() || oldest.State != Committed || !slices.Equal(oldest.Accounts, []string{"table:pums", "user:alice"}) ||
			oldest.ReservedAt.Before(before) || oldest.SettledAt.Before(oldest.ReservedAt) {
			t.Errorf("oldest entry: got %+v, want the committed reservation %d of both accounts", oldest, first.ID())
		}

		limited, err := l.History(ctx, "user:alice", 1)
		if err != nil || len(limited) != 1 || limited[0].ID != r.ID() {
			t.Errorf("History limit 1: got %+v, %v, want only reservation %d", limited, err, r.ID())
		}
		table, err := l.History(ctx, "table:pums", 0)
		if err != nil || len(table) != 1 || table[0].ID != first.ID() {
			t.Errorf("History of the table: got %+v, %v, want only reservation %d", table, err, first.ID())
		}
	})
}
