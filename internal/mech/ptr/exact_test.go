package ptr

import (
	"math"
	"sort"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Exact output laws of the PTR mechanisms (the exact privacy checks of
// exact_check_test.go).
//
// Each PTR test passes iff min(A, K) + Z ≥ T with Z ~ DLap(β_t) on the
// integers, so its pass probability is a closed form of A (ptrPassProb).
// A release given a pass is g·(round(x/g) + Y), Y ~ DLap(β) on the
// integers (noise.Laplace): a discrete Laplace on the grid gℤ centred at
// round(x/g). So the law of a PTR output on one dataset is a finite
// mixture: atoms (⊥, the scale's exact zero) and discrete Laplace
// components that share one grid and one β, with centres and weights given
// by the data. ptrHockeyStick evaluates
//
//	δ(ε) = Σ_o max(0, P[o] − e^ε·P'[o])
//
// over every output o (⊥, the atoms and every grid point) in closed form:
// between consecutive centres the difference of the two densities is
// P·r^j + Q·r^(m−j), which changes sign at most once, and its geometric
// sums have closed forms. (ε, δ)-DP on the pair holds iff δ(ε) ≤ δ in both
// directions. The laws are those of the value before the final clamp to
// the bounds and before the scale's exponentiation: both are
// post-processing, so the check is of a release at least as revealing.
// The only inexactness is float64 evaluation of the closed forms
// (relative error of order 10⁻¹², far below the margins asserted).

// ptrComponent is a discrete Laplace component: weight w, centre c (an
// integer, as a float64, on the release grid).
type ptrComponent struct{ weight, centre float64 }

// ptrLaw is the exact law of one PTR output on one dataset.
type ptrLaw struct {
	refused float64 // P[⊥]
	zero    float64 // P[the exact zero of a passed zero bin]
	comps   []ptrComponent
}

// add adds weight w at centre c.
func (l *ptrLaw) add(w, c float64) {
	if w > 0 {
		l.comps = append(l.comps, ptrComponent{w, c})
	}
}

// ptrPassProb returns P[min(a, K) + Z ≥ T] for the test t.
func ptrPassProb(t ptrStabilityTest, a int64) float64 {
	pass, _ := ptrTestProbs(t, a)
	return pass
}

// ptrTestProbs returns the pass and fail probabilities of t on distance a,
// each from its own closed form (the smaller one is never 1 minus a
// number near 1): with m = T − min(a, K), a pass is Z ≥ m, and
// P[Z ≥ m] = r^m/(1+r) for m ≥ 1, P[Z < m] = P[Z ≥ 1−m] for m ≤ 0.
func ptrTestProbs(t ptrStabilityTest, a int64) (pass, fail float64) {
	r := math.Exp(-1 / t.noise.Scale())
	m := t.threshold - min(a, t.cap)
	if m >= 1 {
		pass = math.Pow(r, float64(m)) / (1 + r)
		return pass, 1 - pass
	}
	fail = math.Pow(r, float64(1-m)) / (1 + r)
	return 1 - fail, fail
}

// ptrReleaseGrid returns the grid step g and the integer scale β of a
// Laplace release.
func ptrReleaseGrid(l *noise.Laplace) (g, beta float64) {
	return l.Granularity(), l.Scale() / l.Granularity()
}

// ptrCentre returns the grid index round(x/g) of noise.Laplace's release.
func ptrCentre(x, g float64) float64 { return math.Round(x / g) }

// ptrHockeyStick returns δ(ε) of law a against law b, both with release
// noise DLap(beta) on one grid.
func ptrHockeyStick(a, b ptrLaw, beta, epsilon float64) float64 {
	e := math.Exp(epsilon)
	d := math.Max(0, a.refused-e*b.refused) + math.Max(0, a.zero-e*b.zero)
	var comps []ptrComponent
	comps = append(comps, a.comps...)
	for _, c := range b.comps {
		comps = append(comps, ptrComponent{-e * c.weight, c.centre})
	}
	return d + ptrMixturePositive(comps, beta)
}

// ptrMixturePositive returns Σ_k max(0, Σ_i w_i·f(k − c_i)) over the
// integers k, f the DLap(β) pmf K·r^|d|, K = (1−r)/(1+r), r = e^(−1/β).
func ptrMixturePositive(comps []ptrComponent, beta float64) float64 {
	if len(comps) == 0 {
		return 0
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i].centre < comps[j].centre })
	var centres []float64
	for _, c := range comps {
		if len(centres) == 0 || c.centre > centres[len(centres)-1] {
			centres = append(centres, c.centre)
		}
	}
	k := math.Tanh(1 / (2 * beta)) // (1−r)/(1+r)
	pow := func(x float64) float64 { return math.Exp(-x / beta) }
	oneMinusR := -math.Expm1(-1 / beta)
	// sumPow returns Σ_{j=lo}^{hi} r^j (0 if hi < lo).
	sumPow := func(lo, hi float64) float64 {
		if hi < lo {
			return 0
		}
		return pow(lo) * -math.Expm1(-(hi-lo+1)/beta) / oneMinusR
	}
	total := 0.0
	// k ≤ c_0: D(c_0 − j) = S·r^j, j ≥ 0.
	first := 0.0
	for _, c := range comps {
		first += c.weight * k * pow(c.centre-centres[0])
	}
	total += math.Max(first, 0) / oneMinusR
	// c_t < k ≤ c_{t+1}: D(L + j) = P·r^j + Q·r^(m−j), j ∈ [1, m].
	for t := 0; t+1 < len(centres); t++ {
		lo, hi := centres[t], centres[t+1]
		m := hi - lo
		var p, q float64
		for _, c := range comps {
			if c.centre <= lo {
				p += c.weight * k * pow(lo-c.centre)
			} else {
				q += c.weight * k * pow(c.centre-hi)
			}
		}
		total += ptrPositiveSum(p, q, m, beta, sumPow)
	}
	// k > c_last: D(c_last + j) = P·r^j, j ≥ 1.
	last := 0.0
	for _, c := range comps {
		last += c.weight * k * pow(centres[len(centres)-1]-c.centre)
	}
	total += math.Max(last, 0) * pow(1) / oneMinusR
	return total
}

// ptrPositiveSum returns Σ_{j=1}^{m} max(0, p·r^j + q·r^(m−j)).
func ptrPositiveSum(p, q, m, beta float64, sumPow func(lo, hi float64) float64) float64 {
	f := func(j float64) float64 { return p*math.Exp(-j/beta) + q*math.Exp(-(m-j)/beta) }
	sum := func(lo, hi float64) float64 { // Σ_{j=lo}^{hi} f(j)
		if hi < lo {
			return 0
		}
		return p*sumPow(lo, hi) + q*sumPow(m-hi, m-lo)
	}
	switch {
	case p >= 0 && q >= 0:
		return sum(1, m)
	case p <= 0 && q <= 0:
		return 0
	}
	// One sign change, at r^(2j−m) = −q/p.
	root := (m - beta*math.Log(-q/p)) / 2
	j := math.Max(1, math.Min(m, math.Floor(root)))
	if p > 0 { // f decreasing: positive on [1, j*]
		for j >= 1 && f(j) <= 0 {
			j--
		}
		for j+1 <= m && f(j+1) > 0 {
			j++
		}
		return sum(1, j)
	}
	// f increasing: positive on [j*, m]
	for j <= m && f(j) <= 0 {
		j++
	}
	for j-1 >= 1 && f(j-1) > 0 {
		j--
	}
	return sum(j, m)
}

// ptrExactEpsilon returns the smallest ε' (to 10⁻⁶, capped at 60) with
// δ(ε') ≤ delta in both directions: the exact privacy loss of the pair at
// that δ.
func ptrExactEpsilon(a, b ptrLaw, beta, delta float64) float64 {
	ok := func(e float64) bool {
		return ptrHockeyStick(a, b, beta, e) <= delta && ptrHockeyStick(b, a, beta, e) <= delta
	}
	lo, hi := 0.0, 60.0
	if ok(0) {
		return 0
	}
	if !ok(hi) {
		return math.Inf(1)
	}
	for hi-lo > 1e-6 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// scaleLaw returns the exact law of ptrScaleCore.run on ranks lo, hi of o
// with the test statistic capped at limit: the released log position on
// the release grid, the zero bin as an atom.
func (c ptrScaleCore) scaleLaw(o ptrOrder, lo, hi, limit int64) ptrLaw {
	g, _ := ptrReleaseGrid(c.release)
	q := ptrSpread(o.at(hi), o.at(lo))
	reach := 1.0
	var law ptrLaw
	for _, offset := range ptrOffsets {
		bin, position := ptrSpreadBin{zero: true}, 0.0
		if q > 0 {
			bin, position = c.grid.bin(q, offset)
		}
		pass, fail := ptrTestProbs(c.test, min(c.distance(o, lo, hi, bin), limit))
		if bin.zero {
			law.zero += reach * pass
		} else {
			law.add(reach*pass, ptrCentre(position, g))
		}
		reach *= fail
	}
	law.refused = reach
	return law
}

// law returns the exact law of Scale.Release on the sorted column xs.
func (s *Scale) law(xs []float64) ptrLaw {
	lo, hi := ptrQuartileRanks(int64(len(xs)))
	return s.core.scaleLaw(ptrSortedOrder(xs, s.bounds), lo, hi, math.MaxInt64)
}

// beta returns the release noise's integer scale.
func (s *Scale) beta() float64 { _, b := ptrReleaseGrid(s.core.release); return b }

// law returns the exact law of Median.Release on xs for a public scale
// (the release centre and noise do not depend on which grid passed).
func (m *Median) law(xs []float64) (ptrLaw, float64) {
	c := m.core
	if c.scale != nil {
		panic("Median.law: the own-scale median's law mixes over ~10^14 released scales; see steps_check_test.go")
	}
	o := ptrSortedOrder(xs, c.bounds)
	grid := c.grid(c.publicScale)
	release, err := c.releaseNoise(grid)
	if err != nil {
		panic(err)
	}
	g, beta := ptrReleaseGrid(release)
	r := (o.n + 1) / 2
	x := o.at(r)
	reach := 1.0
	var law ptrLaw
	for _, offset := range ptrOffsets {
		lower, upper := grid.bin(x, offset)
		pass, fail := ptrTestProbs(c.test, ptrMedianDistance(o, r, lower, upper, c.test.cap))
		law.add(reach*pass, ptrCentre(x, g))
		reach *= fail
	}
	law.refused = reach
	return law, beta
}
