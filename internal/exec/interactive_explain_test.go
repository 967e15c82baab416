package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/planner"
)

// TestForcedMedianExplainNamesTheFallback: with the Median Mechanism
// forced, the creation takes the noisy histogram when MM-SVT is
// infeasible at the released n̂, and EXPLAIN says so with the public
// condition, n̂ below InteractivePlan.MedianRows: on 200 rows the
// instance is a histogram with n̂ below that threshold, on 3000 a Median
// Mechanism with n̂ at or above it. EXPLAIN promised the Median Mechanism
// in both (checked: this failed).
func TestForcedMedianExplainNamesTheFallback(t *testing.T) {
	for _, tc := range []struct {
		rows      int
		mechanism string
	}{{200, planner.InteractiveHistogram}, {3000, planner.InteractiveMedian}} {
		f := newInteractiveFixture(t, tc.rows, catalog.InteractiveMedian)
		plan := f.plan(t, "SELECT COUNT(*) FROM t WHERE a < 3 OR b = 2")
		threshold := plan.Interactive.MedianRows()
		_, rows := plan.Explain()
		explained := fmt.Sprint(rows[0])
		for _, want := range []string{planner.InteractiveMedian, planner.InteractiveHistogram, fmt.Sprintf("if n̂ ≥ %d rows", threshold)} {
			if threshold <= 0 || !strings.Contains(explained, want) {
				t.Errorf("EXPLAIN %s: want %q (threshold %d)", explained, want, threshold)
			}
		}
		e := New(f.back, f.ledger, nil)
		if _, err := e.Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{5})); err != nil {
			t.Fatal(err)
		}
		h := e.interactive.cached(plan.Interactive.Key).header
		if h.Mechanism != tc.mechanism || (h.NHat >= threshold) != (tc.mechanism == planner.InteractiveMedian) {
			t.Errorf("%d rows: %s at n̂ = %d, threshold %d: the mechanism that runs is not the one EXPLAIN's condition names", tc.rows, h.Mechanism, h.NHat, threshold)
		}
	}
}

// TestInteractiveExplainStatesTheAccuracyThatHolds: EXPLAIN of an
// interactive count states each mechanism's accuracy with its condition,
// the noisy histogram's as the bound its answer's note gives, within α·n̂
// only when n̂ is large enough. On 150 rows, below the rule's histogram
// threshold and MM-SVT's, the instance is a noisy histogram whose answer
// is within ±23 rows of 64 cells, more than α·n̂: EXPLAIN claimed
// "within α·n̂ with probability 1 − β" whatever n̂ (checked: this failed).
func TestInteractiveExplainStatesTheAccuracyThatHolds(t *testing.T) {
	f := newInteractiveFixture(t, 150, catalog.InteractiveAuto)
	q := "SELECT COUNT(*) FROM t WHERE b <= 3"
	plan := f.plan(t, q)
	_, rows := plan.Explain()
	explained := fmt.Sprint(rows[1][6])
	if strings.Contains(explained, "within α·n̂ with probability") {
		t.Errorf("EXPLAIN claims α-accuracy whatever n̂: %s", explained)
	}
	i := strings.Index(explained, "within ±")
	if i < 0 {
		t.Fatalf("EXPLAIN states no bound in rows: %s", explained)
	}
	var bound, above int64
	if _, err := fmt.Sscanf(explained[i:], "within ±%d rows with probability 0.95 for this query (the noise of its 64 cells), which is within α·n̂ (α = 0.1) only when n̂ ≥ %d", &bound, &above); err != nil {
		t.Fatalf("EXPLAIN %q: %v", explained, err)
	}
	res, err := New(f.back, f.ledger, nil).Run(context.Background(), "a", plan, rand.NewChaCha8([32]byte{5}))
	if err != nil {
		t.Fatal(err)
	}
	note := res.Warnings[0].Message
	if !strings.Contains(note, "mechanism="+planner.InteractiveHistogram) || !strings.Contains(note, fmt.Sprintf("accuracy ±%d rows", bound)) {
		t.Errorf("answer note %q: want the noisy histogram's ±%d rows that EXPLAIN states", note, bound)
	}
	var nHat int64
	if i = strings.Index(note, "noisy n̂ = "); i < 0 {
		t.Fatalf("answer note %q: no noisy n̂", note)
	} else if _, err := fmt.Sscanf(note[i:], "noisy n̂ = %d", &nHat); err != nil {
		t.Fatal(err)
	}
	if nHat >= above {
		t.Errorf("n̂ = %d ≥ %d: the histogram is within α·n̂ here, so the case proves nothing", nHat, above)
	}
}
