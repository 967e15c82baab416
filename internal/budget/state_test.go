package budget

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestState(t *testing.T) {
	allBytes := make([]byte, 256)
	for i := range allBytes {
		allBytes[i] = byte(i)
	}
	large := bytes.Repeat([]byte("synopsis"), 1<<17) // 1 MiB
	tests := []struct {
		name  string
		key   string
		value []byte
		want  []byte
	}{
		{"every byte value", "dawa:pums:age", allBytes, allBytes},
		{"overwrite", "dawa:pums:age", []byte("second"), []byte("second")},
		{"empty", "mm:pums", []byte{}, []byte{}},
		{"nil stored as empty", "mm:other", nil, []byte{}},
		{"large", "big", large, large},
		{"case-sensitive key", "Big", []byte("upper"), []byte("upper")},
	}
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		if _, ok, err := l.GetState(ctx, "missing"); ok || err != nil {
			t.Errorf("GetState of a missing key: got found=%v, %v, want not found", ok, err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := l.PutState(ctx, tt.key, tt.value); err != nil {
					t.Fatalf("PutState: %v", err)
				}
				got, ok, err := l.GetState(ctx, tt.key)
				if err != nil || !ok {
					t.Fatalf("GetState: got found=%v, %v, want found", ok, err)
				}
				if got == nil || !bytes.Equal(got, tt.want) {
					t.Errorf("GetState: got %d bytes %.20q, want %d bytes %.20q", len(got), got, len(tt.want), tt.want)
				}
			})
		}
		if got, _, _ := l.GetState(ctx, "big"); !bytes.Equal(got, large) {
			t.Errorf("key big after writing Big: got %d bytes, want %d", len(got), len(large))
		}
	})
}

// TestSwapState: the compare-and-swap writes only over the expected value
// (or into an empty key), and of proxies racing to swap from one value, or
// to store into an empty key, exactly one wins, on every ledger database;
// on MySQL also with clientFoundRows=true in the DSN, which counts a kept
// duplicate as a row written.
func TestSwapState(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend, dsn string) {
		testSwapState(t, b, dsn)
		if b.dialect == MySQL {
			cfg, err := mysql.ParseDSN(b.freshDSN(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.ClientFoundRows = true
			t.Run("clientFoundRows", func(t *testing.T) { testSwapState(t, b, cfg.FormatDSN()) })
		}
	})
}

func testSwapState(t *testing.T, b backend, dsn string) {
	ctx := context.Background()
	l := openLedger(t, b, dsn)
	swap := func(old, value string, want bool) {
		t.Helper()
		var o []byte
		if old != "-" {
			o = []byte(old)
		}
		got, err := l.SwapState(ctx, "mm:k", o, []byte(value))
		if err != nil || got != want {
			t.Errorf("SwapState(%q → %q): got %v, %v, want %v", old, value, got, err, want)
		}
	}
	swap("x", "y", false) // nothing stored
	swap("-", "v1", true)
	swap("-", "v2", false) // already stored
	swap("v0", "v2", false)
	swap("v1", "v2", true)
	if got, _, _ := l.GetState(ctx, "mm:k"); string(got) != "v2" {
		t.Errorf("stored %q, want v2", got)
	}
	if _, err := l.SwapState(ctx, "mm:k", []byte("v2"), []byte("v2")); err == nil {
		t.Error("a swap that changes nothing: got nil error")
	}
	const proxies = 6
	var others []*Ledger
	for range proxies {
		others = append(others, openLedger(t, b, dsn))
	}
	// race runs one swap per proxy at once and returns how many won.
	race := func(key string, old []byte, value func(i int) []byte) int64 {
		var wins atomic.Int64
		var wg sync.WaitGroup
		for i, other := range others {
			wg.Go(func() {
				ok, err := other.SwapState(ctx, key, old, value(i))
				if err != nil {
					t.Errorf("proxy %d: %v", i, err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		return wins.Load()
	}
	if won := race("mm:k", []byte("v2"), func(i int) []byte { return []byte(fmt.Sprintf("v3-%d", i)) }); won != 1 {
		t.Errorf("%d of %d racing swaps won, want exactly 1", won, proxies)
	}
	if won := race("synopsis:k", nil, func(i int) []byte { return []byte(fmt.Sprintf("built by %d", i)) }); won != 1 {
		t.Errorf("%d of %d racing stores into an empty key won, want exactly 1", won, proxies)
	}
}

// TestSwapStatesAllOrNothing: several swaps in one transaction write all
// or nothing, whichever key (the lease or the state) finds another value;
// on every ledger database.
func TestSwapStatesAllOrNothing(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		for key, value := range map[string]string{"turn": "a 0", "state": "s0"} {
			if err := l.PutState(ctx, key, []byte(value)); err != nil {
				t.Fatal(err)
			}
		}
		check := func(what, turn, state string) {
			t.Helper()
			for key, want := range map[string]string{"turn": turn, "state": state} {
				if got, _, err := l.GetState(ctx, key); err != nil || string(got) != want {
					t.Errorf("%s: %s holds %q (%v), want %q", what, key, got, err, want)
				}
			}
		}
		swaps := func(turnOld, turnNew, stateOld, stateNew string) []StateSwap {
			return []StateSwap{{"turn", []byte(turnOld), []byte(turnNew)}, {"state", []byte(stateOld), []byte(stateNew)}}
		}
		if ok, err := l.SwapStates(ctx, swaps("b 0", "b 1", "s0", "s1")...); ok || err != nil {
			t.Errorf("turn held by another: got %v, %v, want false", ok, err)
		}
		check("turn lost", "a 0", "s0")
		if ok, err := l.SwapStates(ctx, swaps("a 0", "a 1", "s9", "s1")...); ok || err != nil {
			t.Errorf("state changed: got %v, %v, want false", ok, err)
		}
		check("state changed", "a 0", "s0")
		if ok, err := l.SwapStates(ctx, swaps("a 0", "a 1", "s0", "s1")...); !ok || err != nil {
			t.Errorf("both as expected: got %v, %v, want true", ok, err)
		}
		check("both swapped", "a 1", "s1")
		if _, err := l.SwapStates(ctx, StateSwap{"k", nil, []byte("x")}, StateSwap{"k", []byte("x"), []byte("y")}); err == nil {
			t.Error("one key swapped twice: got nil error")
		}
	})
}

// TestCancelIf: a reservation is cancelled, giving its cost back, only
// together with its swap; when the swap's key holds another value (the
// claim's lease was taken over) it stays pending and can be committed.
func TestCancelIf(t *testing.T) {
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		ctx := context.Background()
		setLimits(t, l, map[string]Cost{"user:a": {Epsilon: 1}, "claim": {Epsilon: 1}})
		remaining := func(account string) float64 {
			t.Helper()
			r, err := l.Remaining(ctx, account)
			if err != nil {
				t.Fatal(err)
			}
			return r.Epsilon
		}
		res, err := l.Reserve(ctx, stored("user:a", "claim"), Cost{Epsilon: 1}, "taken over")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.PutState(ctx, "lease", []byte("taken by b")); err != nil {
			t.Fatal(err)
		}
		if ok, err := res.CancelIf(ctx, StateSwap{"lease", []byte("held by a"), []byte("free")}); ok || err != nil {
			t.Errorf("lease taken over: CancelIf got %v, %v, want false", ok, err)
		}
		if r := remaining("claim"); r != 0 {
			t.Errorf("lease taken over: claim has %v free, want 0", r)
		}
		if err := res.Commit(ctx); err != nil {
			t.Errorf("commit after a refused cancel: %v", err)
		}
		if err := l.SetLimit(ctx, "claim", Cost{Epsilon: 2}); err != nil {
			t.Fatal(err)
		}
		if err := l.SetLimit(ctx, "user:a", Cost{Epsilon: 2}); err != nil {
			t.Fatal(err)
		}
		res, err = l.Reserve(ctx, stored("user:a", "claim"), Cost{Epsilon: 1}, "held")
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := res.CancelIf(ctx, StateSwap{"lease", []byte("taken by b"), []byte("free")}); !ok || err != nil {
			t.Errorf("lease held: CancelIf got %v, %v, want true", ok, err)
		}
		if r := remaining("claim"); r != 1 {
			t.Errorf("lease held: claim has %v free after the cancel, want 1", r)
		}
		if lease, _, err := l.GetState(ctx, "lease"); err != nil || string(lease) != "free" {
			t.Errorf("lease held: stored %q (%v) after the cancel, want free", lease, err)
		}
	})
}

// TestStateValueLimit: every ledger takes values of MaxStateValue bytes,
// the limit at MariaDB's default max_allowed_packet (16 MiB): stored,
// swapped for another of that size (the statement then carries both, and
// bytes such as 0x00 that escaping doubles) and read back, on every
// backend.
func TestStateValueLimit(t *testing.T) {
	ctx := context.Background()
	forEachLedger(t, func(t *testing.T, l *Ledger) {
		limit, err := l.StateValueLimit(ctx)
		if err != nil || limit != MaxStateValue {
			t.Fatalf("limit: %d, %v; want %d (the server's max_allowed_packet is MariaDB's default)", limit, err, MaxStateValue)
		}
		first, second := make([]byte, limit), make([]byte, limit)
		for i := range second {
			second[i] = "\x00'\\\n"[i%4]
		}
		if ok, err := l.SwapState(ctx, "big", nil, first); err != nil || !ok {
			t.Fatalf("store %d bytes: %v, %v", limit, ok, err)
		}
		if ok, err := l.SwapState(ctx, "big", first, second); err != nil || !ok {
			t.Fatalf("swap %d bytes: %v, %v", limit, ok, err)
		}
		if got, ok, err := l.GetState(ctx, "big"); err != nil || !ok || !bytes.Equal(got, second) {
			t.Fatalf("read back: %d bytes, found %v, %v", len(got), ok, err)
		}
	})
}
