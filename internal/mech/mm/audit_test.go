package mm

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// The privacy audit of the median mechanism (privtest's package comment):
// the whole instance, from the noisy row count to the refusal, runs on a
// tiny dataset D = [6, 3, 2, 1] over 4 cells and on D' with one row added
// to cell 0, answering a fixed adaptive sequence of 3 queries: the first
// is {0}; each next query depends on whether the previous one was hard
// ({0, 1} then {0, 2} after a hard answer, {1} then {2} after an easy one).
// H = 2, so a third hard classification is a refusal. The threshold T = 3
// rows is set by hand (privacy holds for any public T) so that the tests
// go both ways. Two outcomes are audited: the hard/easy/refused pattern
// and the first released answer. The "public n" variants take n̂ = 12 from
// the configuration and fix the pool's seed (privacy holds for every pool
// seed), which removes the blur of the noisy n̂ and the random pool and
// makes the tests' own privacy loss visible. A correct mechanism fails
// each audit with probability ≤ 10⁻³; the seeds are fixed.
//
// This sampled audit covers the whole instance (noisy n̂, random pool,
// H = 2) as a smoke test; it has little power (with the test noise 8
// times too small its lower bound was 0.57 to 1.09 depending on the
// pool). The check with power is exact_test.go: the exact output law of
// the test and the hard answer, with its mutation checks.

// mmAuditSamples is the number of runs per dataset in an audit.
const mmAuditSamples = 100000

// mmAuditConfig is the audited configuration.
var mmAuditConfig = Config{Epsilon: 1, Alpha: 0.5, CountShare: 0.2, HardCap: 2, PoolSize: 8, MixingSteps: 1, PlannedQueries: 10}

// mmAuditRun returns the audited mechanism: it reports the transcript
// through outcome (hard pattern and answers) and returns its value.
func mmAuditRun(t *testing.T, publicRows int64, outcome func(pattern int, answers []int64) float64) privtest.Mechanism {
	cfg := mmAuditConfig
	cfg.PublicRows = publicRows
	cfg = cfg.withDefaults()
	countBound, err := mmCountBound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(xs ...int) Predicate { p, _ := NewPredicate(4, xs); return p }
	hardNext := []Predicate{cell(0, 1), cell(0, 2)}
	easyNext := []Predicate{cell(1), cell(2)}
	return func(src rand.Source, nb int) float64 {
		hist := []int64{6 + int64(nb), 3, 2, 1}
		nHat, err := mmReleaseRowCount(src, 12+int64(nb), cfg)
		if err != nil {
			panic(err)
		}
		plan, err := mmPlanWithCap(cfg, nHat, countBound, cfg.HardCap)
		if err != nil {
			panic(err)
		}
		plan.Threshold = 3
		m, err := newMMFromPlan(src, 4, cfg, plan)
		if err != nil {
			panic(err)
		}
		if publicRows > 0 {
			m.pool = newMMPool(4, cfg.PoolSize, cfg.MixingSteps, 7)
		}
		q, pattern := cell(0), 0
		var answers []int64
		for i := range 3 {
			a, err := m.Answer(src, q, mmCount(hist, q), nil)
			if errors.Is(err, ErrHardQueryCapReached) {
				pattern |= 1 << 3
				break
			}
			if err != nil {
				panic(err)
			}
			answers = append(answers, a.Count)
			if a.Hard {
				pattern |= 1 << i
			}
			if i < 2 {
				q = map[bool][]Predicate{true: hardNext, false: easyNext}[a.Hard][i]
			}
		}
		return outcome(pattern, answers)
	}
}

// mmPattern is the outcome "which queries were hard (and was one refused)".
func mmPattern(pattern int, _ []int64) float64 { return float64(pattern) }

// mmFirstAnswer is the outcome "the released answer to the first query".
func mmFirstAnswer(_ int, answers []int64) float64 { return float64(answers[0]) }

func TestMMAudit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		seed       uint64
		publicRows int64
		edges      []float64
		outcome    func(int, []int64) float64
	}{
		{"hard pattern", 0x3e01, 0, mmIntegerEdges(0, 16), mmPattern},
		{"first answer", 0x3e02, 0, mmIntegerEdges(0, 40), mmFirstAnswer},
		{"hard pattern, public n", 0x3e03, 12, mmIntegerEdges(0, 16), mmPattern},
		{"first answer, public n", 0x3e04, 12, mmIntegerEdges(0, 40), mmFirstAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := privtest.Config{Epsilon: mmAuditConfig.Epsilon, Samples: mmAuditSamples, Seed: privtest.Seed(t, tc.seed), Edges: tc.edges}
			privtest.Audit(t, cfg, mmAuditRun(t, tc.publicRows, tc.outcome))
		})
	}
}

// mmIntegerEdges returns bucket edges k+½ for k in [lo, hi), separating
// the integers lo..hi.
func mmIntegerEdges(lo, hi int) []float64 {
	var e []float64
	for k := lo; k < hi; k++ {
		e = append(e, float64(k)+0.5)
	}
	return e
}
