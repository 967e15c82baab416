package budget

import (
	"context"
	"testing"
	"time"
)

// TestStateUsageAndStaleDeletion: StateUsage counts the values under a
// prefix written since a time, and DeleteStaleStates deletes at most its
// limit of the older ones under the prefix only, keeping a value written
// again after the cut-off; LIKE's wildcards in a prefix match themselves.
func TestStateUsageAndStaleDeletion(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		put := func(key, value string) {
			t.Helper()
			if err := l.PutState(ctx, key, []byte(value)); err != nil {
				t.Fatalf("PutState(%s): %v", key, err)
			}
		}
		for _, k := range []string{"a_x:1", "a_x:2", "a_x:3", "aXx:1", "b:1"} {
			put(k, "12345")
		}
		time.Sleep(20 * time.Millisecond)
		cut := time.Now()
		time.Sleep(20 * time.Millisecond)
		put("a_x:3", "1234567") // written again after the cut-off
		put("a_x:4", "12")
		n, size, err := l.StateUsage(ctx, "a_x:", cut)
		if err != nil || n != 2 || size != 9 {
			t.Errorf("StateUsage(a_x:, cut) = %d, %d, %v; want 2, 9", n, size, err)
		}
		if n, size, err = l.StateUsage(ctx, "a_x:", time.Time{}); err != nil || n != 4 || size != 19 {
			t.Errorf("StateUsage(a_x:, 0) = %d, %d, %v; want 4, 19", n, size, err)
		}
		if d, err := l.DeleteStaleStates(ctx, "a_x:", cut, 1); err != nil || d != 1 {
			t.Errorf("DeleteStaleStates(limit 1) = %d, %v; want 1", d, err)
		}
		if d, err := l.DeleteStaleStates(ctx, "a_x:", cut, 10); err != nil || d != 1 {
			t.Errorf("DeleteStaleStates(limit 10) = %d, %v; want the one stale left", d, err)
		}
		for key, want := range map[string]bool{"a_x:1": false, "a_x:2": false, "a_x:3": true, "a_x:4": true, "aXx:1": true, "b:1": true} {
			if _, ok, err := l.GetState(ctx, key); err != nil || ok != want {
				t.Errorf("GetState(%s) found %v, %v; want %v", key, ok, err, want)
			}
		}
		if _, err := l.DeleteStaleStates(ctx, "", time.Now(), 10); err == nil {
			t.Error("DeleteStaleStates with an empty prefix succeeded")
		}
	})
}
