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

// ptrMaxTail bounds the threshold and the cap, so that the ranks computed
// from them (windows of about 2K ranks around ranks ≤ n) stay far from
// int64 overflow; at ε = 2^-50 split a dozen ways and δ0 = 2^-1000 the
// tail is about 2^63.
const ptrMaxTail = 1 << 60

// newPTRStabilityTest returns the test for one step's ε and per-test δ0.
// It refuses a δ0 outside (0, 1) (a δ so small that its share underflows
// to 0 would make the threshold −∞ and pass every test: an independent
// review's exact answers at @dp_delta = 5e-324) and a threshold or cap
// beyond ptrMaxTail.
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
	if !(m+capTail <= ptrMaxTail) {
		return ptrStabilityTest{}, fmt.Errorf("%w: the stability test at ε %v and δ %v needs a threshold of %v ranks, beyond %d", mech.ErrInvalidEpsilon, epsilon, delta0, m, int64(ptrMaxTail))
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
