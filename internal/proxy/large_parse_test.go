package proxy

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestLargeParseGate: one large parse runs at a time, and however many
// large statements one user sends at once, at most one of them waits for
// the shared slot, so another user's statement gets it after at most one
// more of theirs (a reviewer's analyst with 12 connections had delayed
// another's statement by 7 s). Every wait ends with its context.
func TestLargeParseGate(t *testing.T) {
	g := newLargeParseGate()
	ctx := context.Background()
	release, err := g.enter(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	parse := func(user string) {
		defer wg.Done()
		r, err := g.enter(ctx, user)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, user)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		r()
	}
	for range 10 {
		wg.Add(1)
		go parse("a")
	}
	time.Sleep(50 * time.Millisecond)
	wg.Add(1)
	go parse("b")
	time.Sleep(50 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := g.enter(short, "c"); dperr.KindOf(err) != dperr.Timeout && dperr.KindOf(err) != dperr.Canceled {
		t.Errorf("a wait whose context ends: %v, want it to end with it", err)
	}
	release()
	wg.Wait()
	for i, u := range order {
		if u == "b" {
			if i > 1 {
				t.Errorf("b parsed after %d of a's statements, want at most 1: %v", i, order)
			}
			return
		}
	}
	t.Errorf("b never parsed: %v", order)
}
