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
