package ptr

import (
	"math"

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

// newPTRStabilityTest returns the test for one step's ε and per-test δ0.
func newPTRStabilityTest(epsilon, delta0 float64) (ptrStabilityTest, error) {
	noise, err := noise.NewDiscreteLaplace(1, epsilon)
	if err != nil {
		return ptrStabilityTest{}, err
	}
	beta := noise.Scale()
	threshold := 1 + ptrDlapTail(beta, delta0)
	return ptrStabilityTest{noise: noise, threshold: threshold, cap: threshold + ptrDlapTail(beta, ptrCapSlack)}, nil
}

// ptrDlapTail returns the smallest integer m ≥ 1 with
// P[Z ≥ m] = r^m/(1+r) ≤ p for Z ~ DLap(β), r = e^(−1/β).
func ptrDlapTail(beta, p float64) int64 {
	r := math.Exp(-1 / beta)
	m := math.Ceil(beta * (-math.Log(p) - math.Log1p(r)) * (1 + 1e-9))
	return int64(math.Max(m, 1))
}

// pass runs the test on distance a.
func (t ptrStabilityTest) pass(src noise.Source, a int64) bool {
	return t.noise.Release(src, min(a, t.cap)) >= t.threshold
}
