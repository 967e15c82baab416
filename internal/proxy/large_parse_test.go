package proxy

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/dperr"
)

// TestParseGateBounds: however many statements of 100 KiB one user sends
// at once, at most userParseBytes of that user's text and
// parseBudgetBytes of everyone's are parsed at once, another user's
// statement gets in after at most one more of the first user's, and a
// statement of at most gatedStatementBytes never waits (a reviewer's
// analyst with 40 connections of 255 KiB statements, then ungated, took
// the proxy to 2.27 GB and out of memory).
func TestParseGateBounds(t *testing.T) {
	g := newParseGate()
	ctx := context.Background()
	var (
		mu              sync.Mutex
		inFlight        = map[string]int{}
		total, maxTotal int
		maxUser         = map[string]int{}
		order           []string
		wg              sync.WaitGroup
	)
	parse := func(user string, n int) {
		defer wg.Done()
		release, err := g.enter(ctx, user, int64(n))
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		inFlight[user] += n
		total += n
		maxUser[user] = max(maxUser[user], inFlight[user])
		maxTotal = max(maxTotal, total)
		order = append(order, user)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		inFlight[user] -= n
		total -= n
		mu.Unlock()
		release()
	}
	// Hold the shared budget so that everyone queues.
	hold, err := g.enter(ctx, "x", parseBudgetBytes)
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		wg.Add(1)
		go parse("a", 100<<10)
	}
	for _, u := range []string{"c", "d", "e"} {
		for range 4 {
			wg.Add(1)
			go parse(u, 200<<10)
		}
	}
	time.Sleep(50 * time.Millisecond)
	wg.Add(1)
	go parse("b", 100<<10)
	time.Sleep(50 * time.Millisecond)
	// A short statement does not wait.
	small, err := g.enter(ctx, "a", gatedStatementBytes)
	if err != nil {
		t.Fatal(err)
	}
	small()
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := g.enter(short, "f", 20<<10); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("a wait whose context's deadline passes: %v, want a timeout (3024)", err)
	}
	hold()
	wg.Wait()
	if maxUser["a"] > userParseBytes || maxTotal > parseBudgetBytes {
		t.Errorf("at most %d KiB of a's text and %d KiB in all parsed at once, want at most %d and %d", maxUser["a"]>>10, maxTotal>>10, userParseBytes>>10, parseBudgetBytes>>10)
	}
	ahead := 0
	for _, u := range order {
		if u == "b" {
			break
		}
		if u == "a" {
			ahead++
		}
	}
	// a had at most two statements waiting in the shared queue when b
	// joined it (userParseBytes of them), and b's enters after them.
	if ahead > userParseBytes/(100<<10) {
		t.Errorf("b parsed after %d of a's statements, want at most %d: %v", ahead, userParseBytes/(100<<10), order)
	}
}

// TestParseWaitsForGate: a session's statement over gatedStatementBytes
// (well under largeStatementBytes, which alone was gated before) waits
// while its user's parses hold their share, and its wait ends with the
// statement's context; a short statement is parsed meanwhile.
func TestParseWaitsForGate(t *testing.T) {
	s := newTestSession(t)
	hold, err := s.engine.parses.enter(context.Background(), s.user, userParseBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	long := "SELECT COUNT(*) FROM pums WHERE age IN (1" + strings.Repeat(",1", 20<<10) + ")"
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.parse(ctx, long); dperr.KindOf(err) != dperr.Timeout {
		t.Errorf("a %d KiB statement while its user's share is held: %v, want it to wait until its timeout (3024)", len(long)>>10, err)
	}
	if _, err := s.parse(context.Background(), "SELECT COUNT(*) FROM pums"); err != nil {
		t.Errorf("a short statement: %v", err)
	}
}
