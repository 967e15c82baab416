package ptr

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// PTR privacy audits (privtest): each mechanism runs on D and on a
// neighbour D' (one row added or removed, n private), at its claimed
// (ε, δ), and the 99.9% lower confidence bound on the privacy loss must not
// exceed ε (privtest's package comment; a correct mechanism fails one audit
// with probability ≤ 10⁻³; the seeds are fixed, so the outcome is
// deterministic). ⊥ is the NaN outcome, an event of its own. The pairs
// cover ties at the quartiles and the median, values at the bounds,
// n = 0, 1, 2, the count floor of TM, outlier rows for the regressions, and
// (the "answering" cases) datasets stable enough that the mechanism
// answers most of the time: a pair that answers ⊥ with probability above
// 1 − δ carries no information at that δ. These audits are a smoke test:
// the composed claim is far above what one pair can show, so they cannot
// see a 25% cut in the noise; the exact checks (exact_check_test.go,
// steps_check_test.go) carry the privacy argument and its mutation checks.
// δ is 0.01 (0.1 for the regressions, whose tests pass less often at the
// small sizes an audit can afford): large enough that the tests pass often
// on these small datasets, so that the outputs carry the information.

// ptrAuditSamples is the number of runs per dataset of a column audit.
const ptrAuditSamples = 30000

// ptrColumnAudit audits a column mechanism built by mk on the sorted
// datasets d0 and d1.
func ptrColumnAudit(t *testing.T, seed uint64, epsilon, delta float64, d0, d1 []float64, release func(src noise.Source, xs []float64) (float64, bool, error)) {
	t.Helper()
	cfg := privtest.Config{Epsilon: epsilon, Delta: delta, Samples: ptrAuditSamples, Seed: privtest.Seed(t, seed)}
	privtest.Audit(t, cfg, func(src rand.Source, nb int) float64 {
		v, refused, err := release(src, [][]float64{d0, d1}[nb])
		if err != nil {
			t.Fatal(err)
		}
		if refused {
			return math.NaN()
		}
		return v
	})
}

// ptrWith returns sorted xs with v added, or with v removed when remove.
func ptrWith(xs []float64, v float64, remove bool) []float64 {
	if !remove {
		return ptrInsert(xs, v)
	}
	i, _ := slices.BinarySearch(xs, v)
	return slices.Delete(slices.Clone(xs), i, i+1)
}

// ptrTies returns counts[k] copies of k/scale for each k, sorted.
func ptrTies(counts []int, scale float64) []float64 {
	var xs []float64
	for k, c := range counts {
		xs = append(xs, ptrConstant(c, float64(k)/scale)...)
	}
	return xs
}

func TestAuditPTRScale(t *testing.T) {
	ties := ptrTies([]int{10, 20, 20, 10}, 1) // n = 60, quartiles 1 and 2
	for _, tc := range []struct {
		name   string
		d0, d1 []float64
	}{
		{"ties, add a value at the upper bound", ties, ptrWith(ties, 3, false)},
		{"ties, remove a value at a quartile", ties, ptrWith(ties, 1, true)},
		{"n = 0 against n = 1", nil, []float64{3}},
		{"n = 1 against n = 2 at the bounds", []float64{0}, []float64{0, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := NewScale(ptrColumnParams(3, 0.01, 60, mech.Bounds{Lower: 0, Upper: 3}))
			ptrColumnAudit(t, 0xa501, 3, 0.01, tc.d0, tc.d1, func(src noise.Source, xs []float64) (float64, bool, error) {
				return s.Release(src, ptrData(s.Fetch(), xs))
			})
		})
	}
}

// ptrAnswering is n = 200 in blocks of 25, 50, 50, 50, 25 at 0, ¼, ½, ¾, 1:
// the quartiles and the median sit 25 ranks inside their blocks, so the
// tests pass most of the time. ptrTrimAnswering (blocks of 40) does the
// same for the trimmed ranks 20 and 180 of α = 0.2.
var (
	ptrAnswering     = ptrTies([]int{25, 50, 50, 50, 25}, 4)
	ptrTrimAnswering = ptrTies([]int{40, 40, 40, 40, 40}, 4)
)

// ptrAnswerRate returns the fraction of 2000 runs of release on xs that
// answer.
func ptrAnswerRate(t *testing.T, release func(src noise.Source, xs []float64) (float64, bool, error), xs []float64) float64 {
	src := privtest.NewSource(privtest.Seed(t, 0xa5ff), 1)
	answered := 0
	for range 2000 {
		if _, refused, err := release(src, xs); err == nil && !refused {
			answered++
		}
	}
	return float64(answered) / 2000
}

func TestAuditPTRMedian(t *testing.T) {
	// Public scale 1 and N = 21: h = 21^(−1/3) = 0.36. D's median is 0.3,
	// D'‘s (one 0 added) is 0: the same bin, both far from its edges
	// (distances 11 and 12), so both answer and the releases' centres
	// differ by 0.83h.
	shifted := append(ptrConstant(10, 0), ptrConstant(11, 0.3)...)
	// n = 56 in {0, ¼, ½, ¾, 1}: quartiles ¼ and ¾, median ½, each tied
	// over 10 to 20 ranks (spread distance 9, median distance 5 or more).
	ties := ptrTies([]int{3, 20, 10, 20, 3}, 4)
	for _, tc := range []struct {
		name   string
		scale  float64
		d0, d1 []float64
	}{
		{"public scale, median moves within a bin", 1, shifted, ptrWith(shifted, 0, false)},
		{"own scale, ties, add a value at the upper bound", 0, ties, ptrWith(ties, 1, false)},
		{"own scale, ties, remove the median", 0, ties, ptrWith(ties, 0.5, true)},
		{"own scale, n = 1 against n = 2", 0, []float64{0.5}, []float64{0.5, 1}},
		{"own scale, answering: blocks around the quartiles and the median", 0, ptrAnswering, ptrWith(ptrAnswering, 1, false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := NewMedian(ptrColumnParams(3, 0.01, max(len(tc.d0), 21), mech.Bounds{Lower: 0, Upper: 1}), tc.scale)
			release := func(src noise.Source, xs []float64) (float64, bool, error) {
				return m.Release(src, ptrData(m.Fetch(), xs))
			}
			if strings.HasPrefix(tc.name, "own scale, answering") {
				rate := min(ptrAnswerRate(t, release, tc.d0), ptrAnswerRate(t, release, tc.d1))
				t.Logf("answers %.1f%% of runs", 100*rate)
				if rate < 0.5 {
					t.Errorf("the pair answers only %.1f%% of runs: it carries little information", 100*rate)
				}
			}
			ptrColumnAudit(t, 0xa502, 3, 0.01, tc.d0, tc.d1, release)
		})
	}
}

func TestAuditPTRTrimmedMean(t *testing.T) {
	// N = 40: the count floor is n ≥ 36; 37 values against 36 sits on it.
	spread := make([]float64, 40)
	for i := range spread {
		spread[i] = float64(i/4) / 10 // ties in blocks of 4
	}
	for _, tc := range []struct {
		name   string
		d0, d1 []float64
	}{
		{"add a value at the upper bound", spread, ptrWith(spread, 1, false)},
		{"remove a value at the trimming rank", spread, ptrWith(spread, spread[4], true)},
		{"at the count floor", spread[:37], spread[:36]},
		{"answering: add a value at the upper bound", ptrTrimAnswering, ptrWith(ptrTrimAnswering, 1, false)},
		{"answering: remove a value at the trimming rank", ptrTrimAnswering, ptrWith(ptrTrimAnswering, ptrTrimAnswering[20], true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := 40 // the count floor is n ≥ 36
			if len(tc.d0) >= 200 {
				size = len(tc.d0)
			}
			tm, err := NewTrimmedMean(ptrColumnParams(4, 0.01, size, mech.Bounds{Lower: 0, Upper: 1}), 0.2, 0)
			if err != nil {
				t.Fatal(err)
			}
			release := func(src noise.Source, xs []float64) (float64, bool, error) {
				return tm.Release(src, ptrData(tm.Fetch(), xs))
			}
			if len(tc.d0) >= 200 {
				rate := min(ptrAnswerRate(t, release, tc.d0), ptrAnswerRate(t, release, tc.d1))
				t.Logf("answers %.1f%% of runs", 100*rate)
				if rate < 0.5 {
					t.Errorf("the pair answers only %.1f%% of runs: it carries little information", 100*rate)
				}
			}
			ptrColumnAudit(t, 0xa503, 4, 0.01, tc.d0, tc.d1, release)
		})
	}
}

// TestAuditPTRRegression audits R_S (slope only, 6 steps) and R_H (11
// steps) on exact linear data against the same data with an outlier row:
// the outlier changes one block estimate and adds a line off the common
// point. The released slope is the outcome.
func TestAuditPTRRegression(t *testing.T) {
	const samples = 8000
	x, y := make([]float64, 60), make([]float64, 60)
	for i := range x {
		x[i] = float64(i % 10)
		y[i] = 1 + 2*x[i]
	}
	d0, _ := SimpleRegressionRows(x, y)
	d1, _ := SimpleRegressionRows(append(slices.Clone(x), 9), append(slices.Clone(y), -5))
	coef := []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}
	shortcut, _ := NewShortcutRegression(RegressionParams{Epsilon: 6, Delta: 0.1, Size: 60, Coefficients: coef}, []int{1})
	hampel, _ := NewHampelRegression(RegressionParams{Epsilon: 11, Delta: 0.1, Size: 60, Coefficients: coef}, 0)
	for _, tc := range []struct {
		name    string
		epsilon float64
		release func(context.Context, noise.Source, RegressionRows) ([]float64, bool, error)
		slope   int
	}{
		{"short-cut", 6, shortcut.Release, 0},
		{"hampel", 11, hampel.Release, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := privtest.Config{Epsilon: tc.epsilon, Delta: 0.1, Samples: samples, Seed: privtest.Seed(t, 0xa504)}
			privtest.Audit(t, cfg, func(src rand.Source, nb int) float64 {
				beta, refused, err := tc.release(context.Background(), src, []RegressionRows{d0, d1}[nb])
				if err != nil {
					t.Fatal(err)
				}
				if refused {
					return math.NaN()
				}
				return beta[tc.slope]
			})
		})
	}
}

// TestAuditPTRMedianHasPower: the public-scale pair above is informative:
// its release loses 0.83·ε_step = 0.83 (centres 0.83h apart), so an audit
// claiming ε = 0.4 must refute it (the lower bound there is about 0.73).
func TestAuditPTRMedianHasPower(t *testing.T) {
	shifted := append(ptrConstant(10, 0), ptrConstant(11, 0.3)...)
	m, _ := NewMedian(ptrColumnParams(3, 0.01, 21, mech.Bounds{Lower: 0, Upper: 1}), 1)
	res, err := privtest.Run(privtest.Config{Epsilon: 0.4, Delta: 0.01, Samples: ptrAuditSamples, Seed: privtest.Seed(t, 0xa505)},
		func(src rand.Source, nb int) float64 {
			v, refused, _ := m.Release(src, ptrData(m.Fetch(), [][]float64{shifted, ptrWith(shifted, 0, false)}[nb]))
			if refused {
				return math.NaN()
			}
			return v
		})
	if err != nil || res.LowerBound <= 0.4 {
		t.Errorf("got lower bound %v (err %v), want above 0.4", res.LowerBound, err)
	}
}
