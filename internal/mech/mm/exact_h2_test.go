package mm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// The exact privacy check of two runs: H = 2, with the first hard answer's
// value, the pool cut it causes and the second sparse-vector run.
//
// What is computed. As in exact_test.go the pool seed and n̂ are public
// and fixed. The first run is the H = 1 law with the plan's H = 2 scales:
// P(j₁) for the first hard position, P(a₁ | j₁) for its answer. The hard
// answer cuts the pool around a₁ (a public function of the seed, the query
// and a₁: pool.cut, refill and mixing draw from the public stream) and
// redraws ρ, independently of everything before. The analyst then asks
// the queries of the second run, chosen from what it has seen: here the
// case's candidate queries not asked before (those are cached and repeat
// their answer without a test), arranged against the new pool by
// mmExactArrange (the adversarial order, so the sequence depends on a₁),
// or in the case's order; the second run's law is the H = 1 law on the
// new pool's gaps, with its hard answer a₂, after which the instance
// halts. So the transcript law factorises,
//
//	P(j₁, a₁, j₂, a₂) = P₁(j₁)·P(a₁ | c_{j₁})·P₂(j₂ | pool(a₁))·P(a₂ | c_{j₂}),
//
// and the loss of an outcome is the sum of the signed log-ratios of the
// factors: for each (j₁, a₁) the check takes the second run's least and
// greatest signed log-ratio over its outcomes (j₂, a₂ and "none").
//
// Which a₁. Every a₁ from 0 to n̂ + w + 1 (w the cut half-width): past
// max(c, c') + 1 the answer law's ratio is constant, and past n̂ + w no
// candidate meets the cut and the pool is rebuilt by the widening repair;
// a few values in that regime (n̂ + w + 2^i) are checked too. For the
// other a₁ the first factor's ratio equals the last one checked and the
// second is a run on some pool, which exact_test.go checks on random
// pools: the composition bound covers them, and this check shows that it
// is reached, not exceeded, where the two runs interact.

// mmExactH2Instance returns the H = 2 instance of a case.
func mmExactH2Instance(t *testing.T, c mmExactCase, epsilon float64) *MedianMechanism {
	cfg := Config{Epsilon: epsilon, Alpha: 0.5, HardCap: 2, PoolSize: 9, MixingSteps: 1, PlannedQueries: 10, PublicRows: c.nHat}.withDefaults()
	plan, err := mmPlanWithCap(cfg, c.nHat, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	plan.Threshold = c.threshold
	m, err := newMMFromPlan(privtest.NewSource(1, 1), len(c.hist), cfg, plan)
	if err != nil {
		t.Fatal(err)
	}
	m.pool = newMMPool(len(c.hist), cfg.PoolSize, cfg.MixingSteps, c.poolSeed)
	return m
}

// mmRunRatios is the signed log-ratio law of one run on D against D'.
type mmRunRatios struct {
	position []float64 // ln P_D(j) − ln P_D'(j), the last entry for "none"
	small    float64   // the smallest outcome probability
}

// mmExactH2 holds the laws of one check, with the second runs' laws cached
// by their gaps (many a₁ give the same pool medians).
type mmExactH2 struct {
	laws  mmExactLaws
	cache map[string]mmRunRatios
}

func (x *mmExactH2) run(s1, s2 []int64, threshold int64) mmRunRatios {
	key := fmt.Sprint(s1, s2, threshold)
	if r, ok := x.cache[key]; ok {
		return r
	}
	p1, p2 := x.laws.runLaw(s1, threshold), x.laws.runLaw(s2, threshold)
	r := mmRunRatios{small: math.Inf(1)}
	for j := range p1 {
		r.position = append(r.position, math.Log(p1[j])-math.Log(p2[j]))
		r.small = min(r.small, p1[j], p2[j])
	}
	x.cache[key] = r
	return r
}

// gapsAndCounts returns each query's gap and true count on hist.
func gapsAndCounts(m *MedianMechanism, queries []Predicate, hist []int64) (gaps, counts []int64) {
	for _, q := range queries {
		cnt := q.Count(hist)
		g := cnt - m.poolCount(q)
		gaps, counts = append(gaps, max(g, -g)), append(counts, cnt)
	}
	return gaps, counts
}

// answerLogRatio is ln P_D(a) − ln P_D'(a) for the hard answer a ≥ 0.
func (l mmExactLaws) answerLogRatio(c, c2, a int64) float64 {
	logP := func(c int64) float64 {
		if a == 0 {
			return math.Log(dlapAtMost(l.answer, -c))
		}
		return dlapLogPMF(l.answer, a-c)
	}
	return logP(c) - logP(c2)
}

// worst returns the case's worst loss over all outcomes of the two runs,
// and the smallest outcome probability of a run seen.
func (x *mmExactH2) worst(t *testing.T, c mmExactCase, epsilon float64) (loss, smallest float64) {
	m := mmExactH2Instance(t, c, epsilon)
	first := mmExactArrange(m, c)
	d2 := c.neighbour()
	s1, c1 := gapsAndCounts(m, first, c.hist)
	s2, c2 := gapsAndCounts(m, first, d2)
	run1 := x.run(s1, s2, c.threshold)
	smallest = run1.small
	loss = math.Abs(run1.position[len(first)]) // no hard query in the first run
	w := m.plan.SlabHalfWidth
	last := c.nHat + w + 1
	values := make([]int64, 0, last+12)
	for a := int64(0); a <= last; a++ {
		values = append(values, a)
	}
	for i := range 10 {
		values = append(values, last+1<<i)
	}
	for j1, q := range first {
		asked := first[:j1+1]
		var rest []Predicate
		for _, p := range c.queries {
			if !slices.ContainsFunc(asked, func(a Predicate) bool { return a.key() == p.key() }) {
				rest = append(rest, p)
			}
		}
		for _, a1 := range values {
			r1 := run1.position[j1] + x.laws.answerLogRatio(c1[j1], c2[j1], a1)
			if len(rest) == 0 {
				loss = max(loss, math.Abs(r1))
				continue
			}
			after := mmExactH2Instance(t, c, epsilon)
			after.pool.cut(mmConstraint{pred: q, center: a1, halfWidth: w, scale: float64(c.nHat)})
			second := mmExactArrange(after, mmExactCase{hist: c.hist, added: c.added, more: c.more, queries: rest,
				adversarial: c.adversarial, length: c.length})
			if c.adversarial == 0 {
				second = rest[:min(len(rest), 6)]
			}
			g1, k1 := gapsAndCounts(after, second, c.hist)
			g2, k2 := gapsAndCounts(after, second, d2)
			run2 := x.run(g1, g2, c.threshold)
			smallest = min(smallest, run2.small)
			lo, hi := run2.position[len(second)], run2.position[len(second)] // none
			for j2 := range second {
				alo, ahi := x.laws.answerLogRatioRange(k1[j2], k2[j2])
				lo, hi = min(lo, run2.position[j2]+alo), max(hi, run2.position[j2]+ahi)
			}
			loss = max(loss, math.Abs(r1+lo), math.Abs(r1+hi))
		}
	}
	return loss, smallest
}

// mmExactH2Worst runs the check over the cases with the H = 2 plan's laws
// scaled by testScale and answerScale; it returns the worst loss as a
// fraction of the claimed ε', and the case.
func mmExactH2Worst(t *testing.T, cases []mmExactCase, epsilon, testScale, answerScale float64) (float64, mmExactCase) {
	worst, at := 0.0, mmExactCase{}
	for _, c := range cases {
		m := mmExactH2Instance(t, c, epsilon)
		x := &mmExactH2{laws: mmPlanLaws(t, m.plan, testScale, answerScale), cache: map[string]mmRunRatios{}}
		loss, smallest := x.worst(t, c, epsilon)
		if smallest < 1e-60 {
			t.Fatalf("an outcome of probability %g: the truncation bound does not hold", smallest)
		}
		if f := loss / (m.plan.TestEpsilon + m.plan.AnswerEpsilon); f > worst {
			worst, at = f, c
		}
	}
	return worst, at
}

// mmExactH2CaseCount is the number of neighbour pairs per ε for H = 2,
// half adversarial: each costs a pool cut and a second-run law per (j₁, a₁).
const mmExactH2CaseCount = 150

// TestMMExactPrivacyTwoHard asserts the worst exact loss of the two-run
// transcript is at most ε' (the H = 2 plan's ε_test + ε_ans).
func TestMMExactPrivacyTwoHard(t *testing.T) {
	cases := mmExactCases(rand.New(privtest.Seeded(t, 0x3e12)), mmExactH2CaseCount)
	for _, eps := range []float64{2, 6} {
		worst, at := mmExactH2Worst(t, cases, eps, 1, 1)
		t.Logf("H = 2, ε' = %v: worst exact loss %.4f·ε' (%.4f) at D=%v +cell %d, n̂=%d, T=%d",
			eps, worst, worst*eps, at.hist, at.added, at.nHat, at.threshold)
		if worst > 1+1e-9 {
			t.Errorf("H = 2, ε' = %v: worst loss %v·ε', want ≤ ε'", eps, worst)
		}
	}
}

// TestMMExactPrivacyTwoHardHasPower is the mutation check for H = 2: with
// the test noise or the answer noise 25% too small the check finds a loss
// above ε'.
func TestMMExactPrivacyTwoHardHasPower(t *testing.T) {
	cases := mmExactCases(rand.New(privtest.Seeded(t, 0x3e12)), mmExactH2CaseCount)
	mmCheckMutations(t, "H = 2, ε' = 6", func(testScale, answerScale float64) float64 {
		worst, _ := mmExactH2Worst(t, cases, 6, testScale, answerScale)
		return worst
	})
}

// TestMMExactTwoHardPoolMatchesInstance ties the check's second-run pool
// to the mechanism: after the real instance's first hard answer a₁, its
// pool medians equal those of the pool the check rebuilds (a fresh pool
// from the seed, cut around a₁), for every query of the domain, and its ρ
// is redrawn.
func TestMMExactTwoHardPoolMatchesInstance(t *testing.T) {
	cells := 4
	var all []Predicate
	for mask := 1; mask < 1<<cells; mask++ {
		var members []int
		for x := range cells {
			if mask>>x&1 == 1 {
				members = append(members, x)
			}
		}
		p, _ := NewPredicate(cells, members)
		all = append(all, p)
	}
	c := mmExactCase{hist: []int64{5, 3, 0, 6}, nHat: 14, threshold: 1, poolSeed: 11}
	src := privtest.Seeded(t, 0x3e13)
	hard := 0
	for trial := 0; hard < 20 && trial < 2000; trial++ {
		m := mmExactH2Instance(t, c, 6)
		m.rho = m.noise.drawThreshold(src)
		for _, q := range all {
			a, err := m.Answer(src, q, mmCount(c.hist, q), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !a.Hard {
				continue
			}
			hard++
			rebuilt := mmExactH2Instance(t, c, 6)
			rebuilt.pool.cut(mmConstraint{pred: q, center: a.Count, halfWidth: m.plan.SlabHalfWidth, scale: float64(c.nHat)})
			for _, p := range all {
				if got, want := m.poolCount(p), rebuilt.poolCount(p); got != want {
					t.Fatalf("after a₁ = %d on %v: the instance's pool count of %v is %d, the check's %d", a.Count, q, p, got, want)
				}
			}
			break
		}
	}
	if hard < 20 {
		t.Fatalf("only %d first hard answers in 2000 trials", hard)
	}
}
