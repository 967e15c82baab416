package mm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// The row count's share composes as documented. The planner releases
// n̂ = max(n + DLap(1/ε_n), 1) once (internal/exec createInteractive, with
// ε_n = ε·DefaultCountShare) and gives the instance Config{Epsilon: ε',
// PublicRows: n̂, RowCountEpsilon: ε_n} (planner.InteractivePlan.
// MedianConfig), ε_n + ε' ≤ ε (mech.SplitShare). The instance must then
// spend nothing on the row count (Plan.CountEpsilon = 0), and the whole
// release (n̂, transcript) must be ε-DP: its law is P(n̂)·P(transcript | n̂),
// with the plan (T, the pool counts round(n̂·μ), the cut slab with E_n) a
// public function of n̂, so the loss of an outcome is the n̂ factor's signed
// log-ratio plus the run's. The check enumerates n̂ from 1 to 2n + 12 (the
// n̂ factor's ratio is +ε_n for 2 ≤ n̂ ≤ n, −ε_n above, in between at the
// clamp n̂ = 1) and, for each, the exact H = 1 law of exact_test.go with
// the plan the configuration gives at that n̂, its threshold replaced by
// the public T(n̂) = ⌊n̂/2⌋ − 3 (the plan's own T is negative at these
// tiny n̂, where every query is hard). For larger n̂ the first factor's
// ratio is −ε_n again and the run is covered by exact_test.go.

// mmRowCountInstance returns the instance the planner would build at n̂ for a
// case, with the public threshold T(n̂).
func mmRowCountInstance(t *testing.T, c mmExactCase, restEpsilon, countEpsilon float64, nHat int64) *MedianMechanism {
	cfg := Config{Epsilon: restEpsilon, Alpha: 0.5, HardCap: 1, PoolSize: 9, MixingSteps: 1, PlannedQueries: 10,
		PublicRows: nHat, RowCountEpsilon: countEpsilon}.withDefaults()
	countBound, err := mmCountBound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := mmPlanWithCap(cfg, nHat, countBound, 1)
	if err != nil {
		t.Fatal(err)
	}
	if plan.CountEpsilon != 0 || plan.TestEpsilon+plan.AnswerEpsilon > restEpsilon*(1+1e-15) {
		t.Fatalf("n̂ = %d: the instance spends %v on the row count and %v + %v on its runs, want 0 and ≤ ε' = %v",
			nHat, plan.CountEpsilon, plan.TestEpsilon, plan.AnswerEpsilon, restEpsilon)
	}
	plan.Threshold = nHat/2 - 3
	m, err := newMMFromPlan(privtest.NewSource(1, 1), len(c.hist), cfg, plan)
	if err != nil {
		t.Fatal(err)
	}
	m.pool = newMMPool(len(c.hist), cfg.PoolSize, cfg.MixingSteps, c.poolSeed)
	return m
}

// signedLossRange returns the least and greatest signed log-ratio
// ln P_D − ln P_D' over the outcomes of one run and its hard answer.
func signedLossRange(m *MedianMechanism, c mmExactCase, laws mmExactLaws) (lo, hi, smallest float64) {
	queries := mmExactArrange(m, c)
	d2 := c.neighbour()
	s1, c1 := gapsAndCounts(m, queries, c.hist)
	s2, c2 := gapsAndCounts(m, queries, d2)
	p1, p2 := laws.runLaw(s1, m.plan.Threshold), laws.runLaw(s2, m.plan.Threshold)
	none := math.Log(p1[len(queries)]) - math.Log(p2[len(queries)])
	lo, hi, smallest = none, none, math.Inf(1)
	for j := range p1 {
		smallest = min(smallest, p1[j], p2[j])
		if j == len(queries) {
			continue
		}
		run := math.Log(p1[j]) - math.Log(p2[j])
		alo, ahi := laws.answerLogRatioRange(c1[j], c2[j])
		lo, hi = min(lo, run+alo), max(hi, run+ahi)
	}
	return lo, hi, smallest
}

// rowCountLogRatio is ln P_D(n̂) − ln P_D'(n̂) for n̂ = max(n + Z, 1) on D
// (n rows) and D' (n + 1), Z ~ DLap with scale b.
func rowCountLogRatio(b float64, n, nHat int64) float64 {
	logP := func(n int64) float64 {
		if nHat == 1 {
			return math.Log(dlapAtMost(b, 1-n))
		}
		return dlapLogPMF(b, nHat-n)
	}
	return logP(n) - logP(n+1)
}

// mmRowCountWorst returns the worst loss of (n̂, transcript) over the
// cases as a fraction of ε, with the row count's noise scale multiplied
// by countScale (1 for the mechanism as built).
func mmRowCountWorst(t *testing.T, cases []mmExactCase, epsilon, countScale float64) float64 {
	countEpsilon, restEpsilon := mech.SplitShare(epsilon, DefaultCountShare)
	worst := 0.0
	for _, c := range cases {
		var n int64
		for _, h := range c.hist {
			n += h
		}
		for nHat := int64(1); nHat <= 2*n+12; nHat++ {
			m := mmRowCountInstance(t, c, restEpsilon, countEpsilon, nHat)
			lo, hi, smallest := signedLossRange(m, c, mmPlanLaws(t, m.plan, 1, 1))
			if smallest < 1e-60 {
				t.Fatalf("an outcome of probability %g: the truncation bound does not hold", smallest)
			}
			r := rowCountLogRatio(countScale/countEpsilon, n, nHat)
			worst = max(worst, math.Abs(r+lo)/epsilon, math.Abs(r+hi)/epsilon)
		}
	}
	return worst
}

// mmRowCountCaseCount is the number of neighbour pairs of the check.
const mmRowCountCaseCount = 300

// TestMMExactRowCountComposes asserts the worst exact loss of the row
// count and the transcript together is at most ε = ε_n + ε', and (the
// mutation check) that with the row count's noise cut by 25% it is not.
func TestMMExactRowCountComposes(t *testing.T) {
	cases := mmExactCases(rand.New(privtest.Seeded(t, 0x3e14)), mmRowCountCaseCount)
	for _, eps := range []float64{2, 6} {
		worst := mmRowCountWorst(t, cases, eps, 1)
		t.Logf("ε = %v (ε_n = %v·ε): worst exact loss of (n̂, transcript) %.4f·ε", eps, DefaultCountShare, worst)
		if worst > 1+1e-9 {
			t.Errorf("ε = %v: worst loss %v·ε, want ≤ ε", eps, worst)
		}
	}
	worst := mmRowCountWorst(t, cases, 6, 0.75)
	t.Logf("row count noise cut 25%%, ε = 6: worst exact loss %.4f·ε", worst)
	if worst <= 1 {
		t.Errorf("row count noise cut 25%%: worst loss %v·ε, want > ε (the check has no power)", worst)
	}
}
