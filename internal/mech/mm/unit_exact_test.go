package mm

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Exact privacy checks under unit neighbours: D' adds all the rows of one
// unit, k of them after bounding (k = max_rows_per_unit), in one cell or
// spread over several. On a table with a privacy unit the planner builds
// the instance at ε/k per row (mech.EvenShare: k·(ε/k) ≤ ε exactly) on the
// histogram over X bounded to k rows per unit, fixed for the instance
// (planner.InteractivePlan.RowEpsilon). Each count query, the row count
// and the gap s = |c − round(n̂·μ)| then move by at most k per unit, and
// the checks below compute the exact law of one run (H = 1, exact_test.go)
// and of two runs with the pool cut between them (H = 2,
// exact_h2_test.go) on such neighbours and assert the loss is at most ε.
// Mutation checks: the test or the answer noise cut by 25%, and k ignored
// (the instance built at ε, as on a row-level table), must each exceed ε.

// mmUnitCases returns the cases of mmExactCases with k − 1 further rows
// for D': in the added cell for the adversarial half (the concentrated
// unit, where the bound is reached), in random cells for the others.
func mmUnitCases(r *rand.Rand, count, k int) []mmExactCase {
	cases := mmExactCases(r, count)
	for i := range cases {
		c := &cases[i]
		for range k - 1 {
			x := c.added
			if c.adversarial == 0 {
				x = r.IntN(len(c.hist))
			}
			c.more = append(c.more, x)
		}
	}
	return cases
}

// mmUnitWorst returns the worst exact loss over the cases, as a fraction
// of the per-unit epsilon, of the H = 1 instance built at build with its
// laws' scales multiplied by testScale and answerScale.
func mmUnitWorst(t *testing.T, cases []mmExactCase, epsilon, build, testScale, answerScale float64) (float64, mmExactCase) {
	worst, at := 0.0, mmExactCase{}
	for _, c := range cases {
		m := mmExactInstance(t, c, build)
		loss, smallest := exactLoss(m, c, mmPlanLaws(t, m.plan, testScale, answerScale))
		if smallest < 1e-60 {
			t.Fatalf("an outcome of probability %g: the truncation bound does not hold", smallest)
		}
		if f := loss / epsilon; f > worst {
			worst, at = f, c
		}
	}
	return worst, at
}

// TestMMUnitExactPrivacy: at ε/k per row the H = 1 instance loses at
// most ε on neighbours that differ by a unit of k = 2 or 3 rows; with its
// test or answer noise cut by 25%, or built at ε (k ignored), it loses
// more.
func TestMMUnitExactPrivacy(t *testing.T) {
	if testing.Short() {
		t.Skip("exact laws of 2×800 cases")
	}
	for _, k := range []int{2, 3} {
		cases := mmUnitCases(rand.New(privtest.Seeded(t, 0x3e20+uint64(k))), 800, k)
		for _, eps := range []float64{2, 6} {
			rowEps := mech.EvenShare(eps, k)
			worst, at := mmUnitWorst(t, cases, eps, rowEps, 1, 1)
			t.Logf("k = %d, ε = %v (instance at %v per row): worst exact unit loss %.4f·ε at D=%v +cells %d %v, n̂=%d, T=%d",
				k, eps, rowEps, worst, at.hist, at.added, at.more, at.nHat, at.threshold)
			if worst > 1+1e-9 {
				t.Errorf("k = %d, ε = %v: worst unit loss %v·ε, want ≤ ε", k, eps, worst)
			}
		}
		mmCheckMutations(t, "units, H = 1, ε = 2", func(testScale, answerScale float64) float64 {
			w, _ := mmUnitWorst(t, cases, 2, mech.EvenShare(2, k), testScale, answerScale)
			return w
		})
		ignored, _ := mmUnitWorst(t, cases, 2, 2, 1, 1)
		t.Logf("k = %d, ε = 2, k ignored (built at ε): worst exact unit loss %.4f·ε", k, ignored)
		if ignored <= 1 {
			t.Errorf("k = %d: built at ε the unit loss %v·ε stays within ε (the check has no power)", k, ignored)
		}
	}
}

// mmUnitH2Worst is mmUnitWorst for H = 2 (exact_h2_test.go's law).
func mmUnitH2Worst(t *testing.T, cases []mmExactCase, epsilon, build, testScale, answerScale float64) float64 {
	worst := 0.0
	for _, c := range cases {
		m := mmExactH2Instance(t, c, build)
		x := &mmExactH2{laws: mmPlanLaws(t, m.plan, testScale, answerScale), cache: map[string]mmRunRatios{}}
		loss, smallest := x.worst(t, c, build)
		if smallest < 1e-60 {
			t.Fatalf("an outcome of probability %g: the truncation bound does not hold", smallest)
		}
		worst = max(worst, loss/epsilon)
	}
	return worst
}

// TestMMUnitExactPrivacyTwoHard: the two-run transcript at ε/k per row
// loses at most ε on unit neighbours of k = 2 rows (ε = 6, where the
// tests sit in the noise's tails; measured 0.906·ε); the mutations exceed
// ε (1.10·ε with the test noise cut, 1.01·ε with the answer noise cut,
// about 2·ε with k ignored).
func TestMMUnitExactPrivacyTwoHard(t *testing.T) {
	if testing.Short() {
		t.Skip("exact two-run laws")
	}
	const k, eps = 2, 6.0
	cases := mmUnitCases(rand.New(privtest.Seeded(t, 0x3e30)), 100, k)
	rowEps := mech.EvenShare(eps, k)
	worst := mmUnitH2Worst(t, cases, eps, rowEps, 1, 1)
	t.Logf("H = 2, k = %d, ε = %v: worst exact unit loss %.4f·ε", k, eps, worst)
	if worst > 1+1e-9 {
		t.Errorf("H = 2, k = %d: worst unit loss %v·ε, want ≤ ε", k, worst)
	}
	mmCheckMutations(t, "units, H = 2, ε = 6", func(testScale, answerScale float64) float64 {
		return mmUnitH2Worst(t, cases, eps, rowEps, testScale, answerScale)
	})
	if ignored := mmUnitH2Worst(t, cases, eps, eps, 1, 1); ignored <= 1 {
		t.Errorf("H = 2: built at ε the unit loss %v·ε stays within ε (the check has no power)", ignored)
	}
}
