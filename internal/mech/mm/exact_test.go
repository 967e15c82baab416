package mm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// The exact privacy check of the median mechanism's test and hard answer.
//
// What is computed. Fix the pool (its seed is public, and privacy must hold
// for every pool) and the row count n̂ (public: the planner's release, which
// the instance takes as given, or a configured size), and take H = 1. Then
// the instance's whole transcript on any adaptive query sequence is
// determined by (j, a): the position j of the first hard query, or none,
// and its released answer a. Before the first hard query every answer is
// the pool's count, a function of public values, so an adaptive analyst's
// queries up to the hard one form a fixed sequence q_1, q_2, …; after it
// the instance has halted and only repeats or refuses. With the gaps
// s_i = |c_i − round(n̂·μ_i)| on the dataset,
//
//	P(j)    = Σ_ρ P[ρ] · Π_{i<j} P[ν ≤ T + ρ − s_i − 1] · P[ν ≥ T + ρ − s_j]
//	P(none) = Σ_ρ P[ρ] · Π_{i≤k} P[ν ≤ T + ρ − s_i − 1]
//	P(a|j)  = P[c_j + Z = a] for a ≥ 1,  P[c_j + Z ≤ 0] for a = 0,
//
// with ρ, ν and Z the plan's discrete Laplace laws, whose pmf and tails have
// closed forms (r = e^{−1/b} for scale b: P[Z = z] = (1−r)/(1+r)·r^|z|,
// P[Z ≥ k] = r^k/(1+r) for k ≥ 1). The loss of outcome (j, a) is
// |ln P_D(j, a) − ln P_D'(j, a)|; over a it is attained in a ∈ [0,
// max(c, c') + 1], since beyond that the ratio of the answer laws is
// constant. The check asserts the worst loss over all outcomes is at most
// the instance's ε (TestEpsilon + AnswerEpsilon; n̂ is paid by whoever
// released it), over random and adversarial neighbour pairs D, D' = D plus
// one row, both directions.
//
// Precision. The sum over ρ is truncated to |ρ| ≤ R with tail mass below
// 10^-121; every outcome probability is asserted to be above 10^-60, so
// truncation changes no log-ratio by more than 10^-60, and the float sums
// of at most a few thousand positive terms are accurate to about 10^-12
// relative: the assertion allows 10^-9.
//
// H = 1 is the unit of the guarantee: with H > 1 the transcript is an
// adaptive composition of H such runs (each with ε_test/H and ε_ans/H),
// and the loss adds up (svt.go); exact_h2_test.go computes the H = 2 law
// with the pool cut between the runs, exact_rowcount_test.go the law with
// the planner's noisy n̂ in front. TestMMExactLawMatchesSampler ties the
// computed law to the implementation's Answer by a chi-square test.

// mmExactLaws are the scales of the three discrete Laplace laws.
type mmExactLaws struct{ rho, nu, answer float64 }

// mmPlanLaws returns the plan's laws, the test scales multiplied by
// testScale and the answer's by answerScale (1, 1 for the real mechanism).
func mmPlanLaws(t *testing.T, p Plan, testScale, answerScale float64) mmExactLaws {
	n, err := p.noise()
	if err != nil {
		t.Fatal(err)
	}
	return mmExactLaws{rho: n.threshold.Scale() * testScale, nu: n.query.Scale() * testScale, answer: n.answer.Scale() * answerScale}
}

// dlapLogPMF is ln P[Z = z] for scale b.
func dlapLogPMF(b float64, z int64) float64 {
	r := math.Exp(-1 / b)
	return math.Log((1-r)/(1+r)) - math.Abs(float64(z))/b
}

// dlapAtLeast is P[Z ≥ k]; dlapAtMost is P[Z ≤ k]. Each tail is computed
// directly (r^k/(1+r)) where it is small, so no small value is the
// difference of two large ones.
func dlapAtLeast(b float64, k int64) float64 {
	if k >= 1 {
		return math.Exp(-float64(k)/b) / (1 + math.Exp(-1/b))
	}
	return 1 - dlapAtMost(b, k-1)
}

func dlapAtMost(b float64, k int64) float64 {
	if k <= -1 {
		return math.Exp(float64(k)/b) / (1 + math.Exp(-1/b))
	}
	return 1 - dlapAtLeast(b, k+1)
}

// runLaw returns P(j) for j = 0..k−1 (first hard query at position j) and,
// last, P(none), for gaps s and threshold T.
func (l mmExactLaws) runLaw(s []int64, threshold int64) []float64 {
	radius := int64(math.Ceil(l.rho*280)) + 1 // r^R ≤ e^-280 ≈ 10^-121
	var most int64
	for _, g := range s {
		most = max(most, g)
	}
	// atLeast[k − lo] = P[ν ≥ k] and below[k − lo] = P[ν ≤ k − 1] for
	// every k = T + ρ − g that occurs, each computed from its own tail.
	lo, hi := threshold-radius-most, threshold+radius
	atLeast, below := make([]float64, hi-lo+1), make([]float64, hi-lo+1)
	for k := lo; k <= hi; k++ {
		atLeast[k-lo], below[k-lo] = dlapAtLeast(l.nu, k), dlapAtMost(l.nu, k-1)
	}
	out := make([]float64, len(s)+1)
	for rho := -radius; rho <= radius; rho++ {
		w := math.Exp(dlapLogPMF(l.rho, rho))
		for j, g := range s {
			k := threshold + rho - g - lo
			out[j] += w * atLeast[k]
			w *= below[k]
		}
		out[len(s)] += w
	}
	return out
}

// answerLogRatioRange returns the least and greatest ln P_D(a) − ln P_D'(a)
// over a ≥ 0 for true counts c (on D) and c2 (on D').
func (l mmExactLaws) answerLogRatioRange(c, c2 int64) (lo, hi float64) {
	logP := func(c, a int64) float64 {
		if a == 0 {
			return math.Log(dlapAtMost(l.answer, -c))
		}
		return dlapLogPMF(l.answer, a-c)
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for a := int64(0); a <= max(c, c2)+2; a++ {
		d := logP(c, a) - logP(c2, a)
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// mmExactCase is one neighbour pair with one query sequence.
type mmExactCase struct {
	hist  []int64 // D; D' adds one row to cell added (and one to each cell of more)
	added int
	// more are the cells of the unit's further rows (unit_exact_test.go):
	// D' adds 1 + len(more) rows; empty for one-row neighbours.
	more      []int
	queries   []Predicate
	nHat      int64
	threshold int64
	poolSeed  uint64
	// adversarial, when 1 or 2, asks mmExactArrange to pick length of the
	// queries: first those whose gap the added row raises (1) or lowers
	// (2), then one that moves it the other way.
	adversarial, length int
}

// neighbour returns D', the case's D with its added rows.
func (c mmExactCase) neighbour() []int64 {
	d2 := append([]int64(nil), c.hist...)
	d2[c.added]++
	for _, x := range c.more {
		d2[x]++
	}
	return d2
}

// mmExactArrange returns the case's query sequence: the adversarial order
// makes the earlier (easy-leaning) tests and the last one move in opposite
// directions on D', the pattern on which the sparse-vector bound is tight.
func mmExactArrange(m *MedianMechanism, c mmExactCase) []Predicate {
	if c.adversarial == 0 {
		return c.queries
	}
	d2 := c.neighbour()
	gap := func(q Predicate, hist []int64) int64 {
		g := q.Count(hist) - m.poolCount(q)
		return max(g, -g)
	}
	up := int64(3 - 2*c.adversarial) // +1 or −1
	var first, last []Predicate
	for _, q := range c.queries {
		switch d := (gap(q, d2) - gap(q, c.hist)) * up; {
		case d > 0:
			first = append(first, q)
		case d < 0:
			last = append(last, q)
		}
	}
	out := first[:min(len(first), c.length-1)]
	if len(last) > 0 {
		out = append(out, last[0])
	}
	if len(out) == 0 {
		return c.queries[:1]
	}
	return out
}

// mmExactInstance returns the H = 1 instance of a case over the public n̂
// with the case's pool; plan is the real plan with the case's threshold.
func mmExactInstance(t *testing.T, c mmExactCase, epsilon float64) *MedianMechanism {
	cfg := Config{Epsilon: epsilon, Alpha: 0.5, HardCap: 1, PoolSize: 9, MixingSteps: 1, PlannedQueries: 10, PublicRows: c.nHat}.withDefaults()
	plan, err := mmPlanWithCap(cfg, c.nHat, 0, 1)
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

// exactLoss returns the worst loss over the case's outcomes under laws,
// and the smallest outcome probability seen.
func exactLoss(m *MedianMechanism, c mmExactCase, laws mmExactLaws) (loss, smallest float64) {
	c.queries = mmExactArrange(m, c)
	d2 := c.neighbour()
	gaps := func(hist []int64) ([]int64, []int64) {
		var s, counts []int64
		for _, q := range c.queries {
			cnt := q.Count(hist)
			g := cnt - m.poolCount(q)
			s, counts = append(s, max(g, -g)), append(counts, cnt)
		}
		return s, counts
	}
	s1, c1 := gaps(c.hist)
	s2, c2 := gaps(d2)
	p1 := laws.runLaw(s1, c.threshold)
	p2 := laws.runLaw(s2, c.threshold)
	smallest = math.Inf(1)
	for j := range p1 {
		smallest = min(smallest, p1[j], p2[j])
		run := math.Log(p1[j]) - math.Log(p2[j])
		if j == len(c.queries) {
			loss = max(loss, math.Abs(run))
			continue
		}
		lo, hi := laws.answerLogRatioRange(c1[j], c2[j])
		loss = max(loss, run+hi, -(run + lo))
	}
	return loss, smallest
}

// mmExactCases returns random and adversarial cases over small domains.
func mmExactCases(r *rand.Rand, count int) []mmExactCase {
	var cases []mmExactCase
	for len(cases) < count {
		cells := 3 + r.IntN(3)
		hist := make([]int64, cells)
		for x := range hist {
			hist[x] = int64(r.IntN(8))
			if r.IntN(4) == 0 {
				hist[x] = 0
			}
		}
		var n int64
		for _, h := range hist {
			n += h
		}
		c := mmExactCase{hist: hist, added: r.IntN(cells), nHat: max(1, n+int64(r.IntN(5))-2),
			threshold: int64(r.IntN(8)), poolSeed: r.Uint64()}
		all := (1 << cells) - 1
		subset := func(mask int) Predicate {
			var members []int
			for x := range cells {
				if mask>>x&1 == 1 {
					members = append(members, x)
				}
			}
			p, _ := NewPredicate(cells, members)
			return p
		}
		k := 1 + r.IntN(6)
		if len(cases)%2 == 0 {
			// Adversarial: the queries holding the added cell, ordered by
			// mmExactArrange once the pool is known.
			c.adversarial = 1 + len(cases)/2%2
			for mask := 1; mask <= all; mask++ {
				if mask>>c.added&1 == 1 {
					c.queries = append(c.queries, subset(mask))
				}
			}
			r.Shuffle(len(c.queries), func(i, j int) { c.queries[i], c.queries[j] = c.queries[j], c.queries[i] })
			c.length = k
		} else {
			for _, mask := range r.Perm(all)[:min(k, all)] {
				c.queries = append(c.queries, subset(mask+1))
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// mmExactEpsilons are the instance ε' of the check: small, where the noise
// dwarfs these tiny counts, and large, where the tests' thresholds sit in
// the noise's tails and the loss comes close to the bound.
var mmExactEpsilons = []float64{0.5, 2, 6}

// mmExactWorst runs the check over the cases with the laws of the plan
// scaled by testScale and answerScale; it returns the worst loss as a
// fraction of the claimed ε, and the case.
func mmExactWorst(t *testing.T, cases []mmExactCase, epsilon, testScale, answerScale float64) (float64, mmExactCase) {
	worst, at := 0.0, mmExactCase{}
	for _, c := range cases {
		m := mmExactInstance(t, c, epsilon)
		laws := mmPlanLaws(t, m.plan, testScale, answerScale)
		loss, smallest := exactLoss(m, c, laws)
		if smallest < 1e-60 {
			t.Fatalf("an outcome of probability %g: the truncation bound does not hold", smallest)
		}
		if f := loss / (m.plan.TestEpsilon + m.plan.AnswerEpsilon); f > worst {
			worst, at = f, c
		}
	}
	return worst, at
}

// mmExactCaseCount is the number of neighbour pairs (each with its query
// sequence, n̂, T and pool) per ε, half of them adversarial.
const mmExactCaseCount = 2500

// TestMMExactPrivacy asserts the worst exact loss is at most ε over the
// random and adversarial neighbour pairs, at each ε.
func TestMMExactPrivacy(t *testing.T) {
	cases := mmExactCases(rand.New(privtest.Seeded(t, 0x3e10)), mmExactCaseCount)
	for _, eps := range mmExactEpsilons {
		worst, at := mmExactWorst(t, cases, eps, 1, 1)
		t.Logf("ε' = %v: worst exact loss %.4f·ε' (%.4f) at D=%v +cell %d, n̂=%d, T=%d, %d queries",
			eps, worst, worst*eps, at.hist, at.added, at.nHat, at.threshold, len(mmExactArrange(mmExactInstance(t, at, eps), at)))
		if worst > 1+1e-9 {
			t.Errorf("ε' = %v: worst loss %v·ε', want ≤ ε'", eps, worst)
		}
	}
}

// TestMMExactPrivacyHasPower is the mutation check: with the test noise
// (ρ and ν) or the answer noise 25% too small, the exact check finds a
// loss above the claimed ε (at ε' = 2: 1.23·ε' and 1.09·ε').
func TestMMExactPrivacyHasPower(t *testing.T) {
	cases := mmExactCases(rand.New(privtest.Seeded(t, 0x3e10)), mmExactCaseCount)
	mmCheckMutations(t, "H = 1, ε' = 2", func(testScale, answerScale float64) float64 {
		worst, _ := mmExactWorst(t, cases, 2, testScale, answerScale)
		return worst
	})
}

// mmCheckMutations runs an exact check (worst returns its worst loss in
// units of ε' for the given scale factors of the test and answer noise)
// with each noise cut by 25%, and fails t unless each loss exceeds ε'.
func mmCheckMutations(t *testing.T, label string, worst func(testScale, answerScale float64) float64) {
	t.Helper()
	for _, tc := range []struct {
		name                   string
		testScale, answerScale float64
	}{
		{"test noise cut 25%", 0.75, 1},
		{"answer noise cut 25%", 1, 0.75},
	} {
		w := worst(tc.testScale, tc.answerScale)
		t.Logf("%s, %s: worst exact loss %.4f·ε'", label, tc.name, w)
		if w <= 1 {
			t.Errorf("%s, %s: worst loss %v·ε', want > ε' (the check has no power)", label, tc.name, w)
		}
	}
}

// TestMMExactLawMatchesSampler ties the computed law to the mechanism:
// the real instance (Answer, with the plan's noise) run 20000 times on one
// case must give the first-hard position with the computed probabilities
// (chi-square, false rejection 10^-4).
func TestMMExactLawMatchesSampler(t *testing.T) {
	cells := 4
	q := func(xs ...int) Predicate { p, _ := NewPredicate(cells, xs); return p }
	c := mmExactCase{hist: []int64{5, 3, 0, 6}, added: 0, queries: []Predicate{q(0), q(0, 1), q(1, 3), q(2)},
		nHat: 14, threshold: 2, poolSeed: 11}
	src := privtest.Seeded(t, 0x3e11)
	ref := mmExactInstance(t, c, 2)
	law := mmPlanLaws(t, ref.plan, 1, 1)
	var s []int64
	for _, p := range c.queries {
		g := p.Count(c.hist) - ref.poolCount(p)
		s = append(s, max(g, -g))
	}
	probs := law.runLaw(s, c.threshold)
	observed := make([]int, len(probs))
	for range 20000 {
		m := mmExactInstance(t, c, 2)
		m.rho = m.noise.drawThreshold(src)
		pos := len(c.queries)
		for i, p := range c.queries {
			a, err := m.Answer(src, p, mmCount(c.hist, p), nil)
			if err != nil && !errors.Is(err, ErrHardQueryCapReached) {
				t.Fatal(err)
			}
			if a.Hard {
				pos = i
				break
			}
		}
		observed[pos]++
	}
	stat, critical, err := privtest.ChiSquare(observed, probs, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first hard position: observed %v, law %v, χ² %.2f (critical %.2f)", observed, fmt.Sprintf("%.4f", probs), stat, critical)
	if stat > critical {
		t.Errorf("the sampler's first-hard positions %v do not follow the exact law %v (χ² %.2f > %.2f)", observed, probs, stat, critical)
	}
}
