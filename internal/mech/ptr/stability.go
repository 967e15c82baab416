package ptr

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The private stability test of one PTR grid (digest §2.2, §2.3, §2.4).
//
// Test. A is an integer distance to instability with sensitivity 1 and the
// property "A ≥ 2 ⇒ every neighbour's statistic is in the current bin".
// The test passes iff min(A, K) + Z ≥ T with Z ~ DLap(1/ε) the exact
// discrete Laplace (DiscreteLaplace): ε-DP, since min(A, K) has
// sensitivity 1 too.
//
// Threshold from δ0 (decision: the paper's T = (ln n)² + 1 gives a δ that
// is far from negligible at practical n and ε, digest §2.3). With
// r = e^(−1/β) and β ≥ 1/ε the sampler's scale, P[Z ≥ m] = r^m/(1+r)
// for m ≥ 1. If A ≤ 1 a pass needs Z ≥ T − 1, so T = 1 + m with m the
// smallest integer ≥ 1 with r^m/(1+r) ≤ δ0 gives P[pass | A ≤ 1] ≤ δ0:
// the δ of a PTR function (Definition 24(4)). The computed m is rounded up
// after a relative slack of 10^-9, so float rounding can only make it
// larger.
//
// Cap K (digest §2.4 property 4, reviewed). The distance routines stop at
// a public K and return min(A, K): still 1-Lipschitz (a minimum with a
// constant), and min(A, K) ≥ 2 ⇔ A ≥ 2 for K ≥ 2, so the privacy argument
// is exactly the uncapped one; and because the routines read only ranks
// within K of the statistic's ranks, the value computed from the fetched
// windows is identical to min(A, K) on the whole column. K depends on ε
// and δ only (public). The cap only costs utility: K = T + m_η with
// P[Z ≤ −m_η] ≤ η = 10^-9, so a database with A ≥ K passes with
// probability ≥ 1 − η.
type ptrStabilityTest struct {
	noise     *noise.DiscreteLaplace
	threshold int64
	cap       int64
}

// ptrCapSlack is η: the largest loss of pass probability the cap causes.
const ptrCapSlack = 1e-9

// ptrMaxCap bounds the cap K, which sizes a release's work whatever the
// data: the column mechanisms read windows of about 2K ranks around each
// statistic's ranks (Fetch), and the substitution spread distance runs
// O(K) steps (ptrTwoPointer). K grows like ln(1/δ0)/ε: at the ε of a
// regression's step at @dp_epsilon = 10^-7 it is about 10^9, minutes of
// computation and gigabytes of windows. A test whose K exceeds 2^22 is
// refused when the mechanism is built, before anything is read (the
// planner checks every release first), so the refusal depends on ε and δ
// only. Such a test has a threshold T of about 2^20 ranks or more (T/K ≥
// ln(1/δ0)/(ln(1/δ0) + ln(1/η)) ≥ 1/4 for δ0 ≤ 10^-3): the scale step S,
// which every PTR release of the planner runs first, has distance at most
// 2N+1 on N values (ptrSpreadDistanceAddRemove: both ranks reach the
// padding by k = N+1; ptrSpreadDistanceSubstitution: a + b ≤ 2N+1), so on
// fewer than T/4 values (a column's rows, a regression's blocks) a grid
// passes with probability at most P[Z ≥ T/2] ≈ √δ0: the answer would be
// ⊥. Capped this way every rank computed from K stays far from int64
// overflow.
const ptrMaxCap = 1 << 22

// newPTRStabilityTest returns the test for one step's ε and per-test δ0.
// It refuses a δ0 outside (0, 1) (a δ so small that its share underflows
// to 0 would make the threshold −∞ and pass every test: an independent
// review's exact answers at @dp_delta = 5e-324) and a cap K beyond
// ptrMaxCap (with ErrInvalidEpsilon: a larger ε, or δ, lowers K).
func newPTRStabilityTest(epsilon, delta0 float64) (ptrStabilityTest, error) {
	if !(delta0 > 0 && delta0 < 1) {
		return ptrStabilityTest{}, fmt.Errorf("%w: per-test δ %v, must be in (0, 1)", mech.ErrInvalidEpsilon, delta0)
	}
	noise, err := noise.NewDiscreteLaplace(1, epsilon)
	if err != nil {
		return ptrStabilityTest{}, err
	}
	beta := noise.Scale()
	m, capTail := ptrDlapTail(beta, delta0), ptrDlapTail(beta, ptrCapSlack)
	if !(1+m+capTail <= ptrMaxCap) {
		return ptrStabilityTest{}, fmt.Errorf("%w: the stability test at a step ε of %.3g and per-test δ %.3g needs a distance cap of %.3g ranks, beyond 2^22: it would read windows that wide and answer No Reply on all but huge, very stable data",
			mech.ErrInvalidEpsilon, epsilon, delta0, 1+m+capTail)
	}
	threshold := 1 + int64(m)
	return ptrStabilityTest{noise: noise, threshold: threshold, cap: threshold + int64(capTail)}, nil
}

// ptrDlapTail returns the smallest integer m ≥ 1 with
// P[Z ≥ m] = r^m/(1+r) ≤ p for Z ~ DLap(β), r = e^(−1/β), as a float
// (+Inf when p underflows; the caller checks the range).
func ptrDlapTail(beta, p float64) float64 {
	r := math.Exp(-1 / beta)
	m := math.Ceil(beta * (-math.Log(p) - math.Log1p(r)) * (1 + 1e-9))
	return math.Max(m, 1)
}

// pass runs the test on distance a.
func (t ptrStabilityTest) pass(src noise.Source, a int64) bool {
	return t.noise.Release(src, min(a, t.cap)) >= t.threshold
}
