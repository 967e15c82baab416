package quantile

import (
	"crypto/rand"
	"fmt"
	"math"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// lawPrec is the precision of the exact laws: 512 bits.
const lawPrec = 512

// expNegBig returns exp(−x) for a rational x ≥ 0 at lawPrec:
// exp(−1)^⌊x⌋ by binary powering times exp(−f), f = x − ⌊x⌋ ∈ [0, 1), from
// its Taylor series at f/2^16 (terms until below 2^−560) squared 16 times.
// Its relative error is below 2^−480 for x ≤ 2^20.
func expNegBig(x *big.Rat) *big.Float {
	small := func(f *big.Rat) *big.Float {
		y := new(big.Float).SetPrec(lawPrec + 32).SetRat(f)
		y.SetMantExp(y, -16)
		sum := new(big.Float).SetPrec(lawPrec + 32).SetInt64(1)
		term := new(big.Float).SetPrec(lawPrec + 32).SetInt64(1)
		for i := int64(1); term.Sign() != 0 && term.MantExp(nil) > -560; i++ {
			term.Mul(term, y)
			term.Quo(term, big.NewFloat(float64(-i)))
			sum.Add(sum, term)
		}
		for range 16 {
			sum.Mul(sum, sum)
		}
		return sum
	}
	whole := new(big.Int).Quo(x.Num(), x.Denom())
	r := small(new(big.Rat).Sub(x, new(big.Rat).SetInt(whole)))
	pow := small(big.NewRat(1, 1))
	for k := new(big.Int).Set(whole); k.Sign() > 0; k.Rsh(k, 1) {
		if k.Bit(0) == 1 {
			r.Mul(r, pow)
		}
		pow.Mul(pow, pow)
	}
	return r.SetPrec(lawPrec)
}

// pfLaw returns permute-and-flip's law for exponents xs (p_s = exp(−x_s)):
// P(r) = p_r·∫_0^1 Π_{s≠r}(1 − τ·p_s) dτ, from the coefficients of
// Π_s (1 − τ·p_s) at lawPrec, divided by (1 − τ·p_r) for each r (stable:
// p_r ≤ 1) and integrated term by term. Every integral is at least 1/B
// (each factor is at least 1 − τ) and the coefficients at most 2^B, so for
// B ≤ 64 the masses are exact to 2^−440 relative.
func pfLaw(xs []*big.Rat) []*big.Float {
	ps := make([]*big.Float, len(xs))
	poly := []*big.Float{new(big.Float).SetPrec(lawPrec).SetInt64(1)}
	for s, x := range xs {
		ps[s] = expNegBig(x)
		next := make([]*big.Float, len(poly)+1)
		for k := range next {
			next[k] = new(big.Float).SetPrec(lawPrec)
			if k < len(poly) {
				next[k].Set(poly[k])
			}
			if k > 0 {
				next[k].Sub(next[k], new(big.Float).SetPrec(lawPrec).Mul(ps[s], poly[k-1]))
			}
		}
		poly = next
	}
	law := make([]*big.Float, len(xs))
	for r := range xs {
		integral := new(big.Float).SetPrec(lawPrec)
		q := new(big.Float).SetPrec(lawPrec)
		for k := range len(poly) - 1 { // Q_k = P_k + p_r·Q_{k−1}
			q.Add(poly[k], q.Mul(q, ps[r]))
			integral.Add(integral, new(big.Float).SetPrec(lawPrec).Quo(q, big.NewFloat(float64(k+1))))
		}
		law[r] = integral.Mul(integral, ps[r])
	}
	return law
}

// pfExponentsOf returns the mechanism's x_j for every bin of counts.
func pfExponentsOf(t *testing.T, m *GridPermuteFlip, counts []int64) []*big.Rat {
	t.Helper()
	e, err := m.exponents(counts)
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]*big.Rat, len(counts))
	for j := range xs {
		xs[j] = e.exponent(j)
	}
	return xs
}

// TestPermuteFlipExponents checks x_j = ε·(dist_j − d*)/(2Δu) by hand on
// GridExponential's example (TestGridQuantileWeights: counts [2, 3, 0, 5],
// distances listed there) at ε = 1, and on two tiny histograms: [1, 1]
// with q = 3/4 (t = 3/4, distances 3/4 and 1/4, Δu = 3/4) at ε = 3/2,
// and [0, 4, 0] with the median (t = 3/2: the empty bins at 5/2) at ε = 1;
// and n = 0 (all distances equal). It also checks that lower(j) is an
// integer at most x_j, and equal to min(⌊x_j⌋, 64) where the offset is the
// whole distance from d*.
func TestPermuteFlipExponents(t *testing.T) {
	for _, tc := range []struct {
		q, eps float64
		counts []int64
		want   []*big.Rat
	}{
		// dist 3.5, 0.5, 0.5, 0.5; Δu = 1/2.
		{0.5, 1, []int64{2, 3, 0, 5}, []*big.Rat{big.NewRat(3, 1), big.NewRat(0, 1), big.NewRat(0, 1), big.NewRat(0, 1)}},
		// dist 7.1, 4.1, 4.1, 0 with q = 0.9's float: x = (dist − 0)/1.8 = 3.9444…, 2.2777…, 2.2777…, 0.
		{0.9, 1, []int64{2, 3, 0, 5}, nil},
		// dist 3.21875, 0.21875, 0.78125, 0.78125; Δu = 17/32, so the scale is 16/17.
		{15.0 / 32, 1, []int64{2, 3, 0, 5}, []*big.Rat{big.NewRat(48, 17), big.NewRat(0, 1), big.NewRat(9, 17), big.NewRat(9, 17)}},
		// dist 3.78125, 0.78125, 0.78125, 0.21875.
		{17.0 / 32, 1, []int64{2, 3, 0, 5}, []*big.Rat{big.NewRat(57, 17), big.NewRat(9, 17), big.NewRat(9, 17), big.NewRat(0, 1)}},
		{0.75, 1.5, []int64{1, 1}, []*big.Rat{big.NewRat(1, 2), big.NewRat(0, 1)}},
		{0.5, 1, []int64{0, 4, 0}, []*big.Rat{big.NewRat(5, 2), big.NewRat(0, 1), big.NewRat(5, 2)}},
		{0.3, 1, []int64{0, 0, 0}, []*big.Rat{big.NewRat(0, 1), big.NewRat(0, 1), big.NewRat(0, 1)}},
		// 100 rows in bin 0, the median far below bin 2's 40 rows: x = 0, 20·2, 40·2 − … at ε = 2 (scale 2).
		{0.5, 2, []int64{100, 0, 40}, nil},
	} {
		m, err := NewGridPermuteFlip(tc.q, tc.eps, len(tc.counts))
		if err != nil {
			t.Fatal(err)
		}
		got := pfExponentsOf(t, m, tc.counts)
		want := tc.want
		if want == nil { // from the definition, exactly (gridDistances)
			dist := gridDistances(tc.q, tc.counts)
			lowest := dist[0]
			for _, d := range dist {
				if d.Cmp(lowest) < 0 {
					lowest = d
				}
			}
			for _, d := range dist {
				want = append(want, new(big.Rat).Mul(new(big.Rat).Sub(d, lowest), m.scale))
			}
		}
		e, _ := m.exponents(tc.counts)
		for j := range got {
			if got[j].Cmp(want[j]) != 0 {
				t.Errorf("q=%v ε=%v %v: x = %v, want %v", tc.q, tc.eps, tc.counts, got, want)
				break
			}
			k := e.lower(j)
			if big.NewRat(int64(k), 1).Cmp(got[j]) > 0 {
				t.Errorf("q=%v %v: lower(%d) = %d > x = %v", tc.q, tc.counts, j, k, got[j])
			}
		}
	}
	// [100, 0, 40] at the median: t = 69.5 in bin 0 (ranks 0..99), bin 1
	// (empty, a = 100) at 30.5 and bin 2 (ranks 100..139) at 30.5; the
	// offset of bins 1 and 2 on the above side is their whole distance
	// from r' = 70, so lower = ⌊scale·30⌋ = 60 there.
	m, _ := NewGridPermuteFlip(0.5, 1, 3)
	e, _ := m.exponents([]int64{100, 0, 40})
	if got := []int{e.lower(0), e.lower(1), e.lower(2)}; got[0] != 0 || got[1] != 30 || got[2] != 30 {
		t.Errorf("lower = %v, want [0 30 30]", got)
	}
}

// TestPermuteFlipLawByHand checks pfLaw, the exact law the privacy check
// uses, against the integral computed by hand: [1, 1] with q = 3/4 at
// ε = 3/2 (x = 1/2, 0, p = e^−½): P0 = p·∫(1 − τ) = p/2, P1 = ∫(1 − τp)
// = 1 − p/2. [0, 4, 0], median, ε = 1 (x = 5/2, 0, 5/2, p = e^−5/2):
// P0 = P2 = p·∫(1 − τ)(1 − τp) = p·(1/2 − p/6), P1 = ∫(1 − τp)² = 1 − p +
// p²/3. [2, 3, 0, 5], median, ε = 1 (x = 3, 0, 0, 0, p = e^−3): P0 =
// p·∫(1 − τ)³ = p/4, P1 = P2 = P3 = ∫(1 − τp)(1 − τ)² = 1/3 − p/12.
// Each law sums to 1.
func TestPermuteFlipLawByHand(t *testing.T) {
	half, five, three := math.Exp(-0.5), math.Exp(-2.5), math.Exp(-3)
	for _, tc := range []struct {
		q, eps float64
		counts []int64
		want   []float64
	}{
		{0.75, 1.5, []int64{1, 1}, []float64{half / 2, 1 - half/2}},
		{0.5, 1, []int64{0, 4, 0}, []float64{five * (0.5 - five/6), 1 - five + five*five/3, five * (0.5 - five/6)}},
		{0.5, 1, []int64{2, 3, 0, 5}, []float64{three / 4, 1.0/3 - three/12, 1.0/3 - three/12, 1.0/3 - three/12}},
	} {
		m, _ := NewGridPermuteFlip(tc.q, tc.eps, len(tc.counts))
		law := pfLaw(pfExponentsOf(t, m, tc.counts))
		total := new(big.Float).SetPrec(lawPrec)
		for j, p := range law {
			total.Add(total, p)
			if got, _ := p.Float64(); math.Abs(got-tc.want[j]) > 1e-15 {
				t.Errorf("q=%v %v: P%d = %v, want %v", tc.q, tc.counts, j, got, tc.want[j])
			}
		}
		if d := new(big.Float).Sub(total, big.NewFloat(1)); d.Sign() != 0 && d.MantExp(nil) > -400 {
			t.Errorf("q=%v %v: law sums to 1 + %v", tc.q, tc.counts, d)
		}
	}
}

// TestPermuteFlipMatchesLaw draws 200,000 releases from each histogram and
// compares the bin frequencies with pfLaw by a chi-square test whose
// false-rejection probability is 10⁻⁶ per case. ε = 0.7 keeps every
// coin's whole part 0 or small; ε = 6 sends most bins through the
// Bernoulli(exp(−1)) steps of lower(j) before the exact remainder.
func TestPermuteFlipMatchesLaw(t *testing.T) {
	src := privtest.Seeded(t, 0x9a5)
	counts := []int64{1, 0, 3, 2, 2, 0, 1, 4, 0, 2}
	for _, tc := range []struct {
		q, eps float64
		counts []int64
	}{
		{0.3, 0.7, counts},
		{0.9, 6, counts},
		{0.5, 2, []int64{0, 4, 0, 0, 1}},
	} {
		m, _ := NewGridPermuteFlip(tc.q, tc.eps, len(tc.counts))
		law := pfLaw(pfExponentsOf(t, m, tc.counts))
		probs := make([]float64, len(law))
		for i, p := range law {
			probs[i], _ = p.Float64()
		}
		observed := make([]int, len(tc.counts))
		for range 200000 {
			bin, err := m.Release(src, tc.counts)
			if err != nil {
				t.Fatal(err)
			}
			observed[bin]++
		}
		stat, crit, err := privtest.ChiSquare(observed, probs, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if stat > crit {
			t.Errorf("q=%v ε=%v: chi-square %v > critical %v: frequencies %v, probabilities %v", tc.q, tc.eps, stat, crit, observed, probs)
		}
	}
}

// pfLoss returns the exact loss between the laws of m on d and on d with
// one row added to bin added, from pfLaw on the mechanism's exponents.
func pfLoss(t *testing.T, m *GridPermuteFlip, d []int64, added int) privtest.Loss {
	t.Helper()
	l, err := privtest.ExactLossMasses(pfLaw(pfExponentsOf(t, m, d)), pfLaw(pfExponentsOf(t, m, add(d, added, 1))), m.epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPermuteFlipExactPrivacy computes both output laws of the pairs of
// gridPairs (the grid exponential mechanism's exact checks: n = 0, 1, 2,
// rows at both bounds, tied blocks, ties straddling the target, random
// sparse and dense histograms, seven quantiles) at every ε of
// gridEpsilons, each ε a third of the pairs, and checks the worst
// log-ratio ≤ ε (privtest's relative tolerance 10⁻⁹ covers the laws'
// 2^−440).
func TestPermuteFlipExactPrivacy(t *testing.T) {
	pairs := gridPairs(t)
	for ei, eps := range gridEpsilons {
		worst := pfWorstLoss(t, pairs, ei, eps, false)
		t.Logf("ε = %v: worst exact loss %.17g (ratio to ε %.6f) over %d pairs, at %s", eps, worst.Worst, worst.Worst/eps, worst.Pairs, worst.Pair)
	}
}

// TestPermuteFlipExactCatchesCutNoise: with the scale cut by 25% in the
// constructor's path (Δu taken as 0.75·max(q, 1−q), so every exponent
// grows by 4/3), the exact check must fail on some pair at every ε of
// gridEpsilons.
func TestPermuteFlipExactCatchesCutNoise(t *testing.T) {
	pairs := gridPairs(t)
	for ei, eps := range gridEpsilons {
		worst := pfWorstLoss(t, pairs, ei, eps, true)
		t.Logf("ε = %v, scale cut 25%%: worst exact loss %.6g (ratio %.4f) at %s", eps, worst.Worst, worst.Worst/eps, worst.Pair)
		if worst.Holds(eps, 0) {
			t.Errorf("ε = %v: the exact check missed a 25%% noise cut (worst loss %v)", eps, worst.Worst)
		}
	}
}

// pfWorstLoss computes the exact loss of permute-and-flip at eps on the
// third of pairs that the ε of index ei takes, and returns the worst. As
// shipped (cut false) each pair's loss must be ≤ ε; with cut, Δu is taken
// as 0.75·max(q, 1−q) in the constructor's path (setScale), the 25% noise
// cut the check must catch.
func pfWorstLoss(t *testing.T, pairs []gridPair, ei int, eps float64, cut bool) privtest.MaxLoss {
	t.Helper()
	var worst privtest.MaxLoss
	for pi, p := range pairs {
		if (pi+ei)%3 != 0 {
			continue
		}
		m, err := NewGridPermuteFlip(p.q, eps, len(p.d))
		if err != nil {
			t.Fatal(err)
		}
		if cut {
			m.sensitivity = new(big.Rat).Mul(m.sensitivity, big.NewRat(3, 4))
			m.setScale()
		}
		l := pfLoss(t, m, p.d, p.added)
		if !cut {
			l.Check(t, p.name, eps, 0)
		}
		worst.Add(p.name, l)
	}
	return worst
}

func TestPermuteFlipRejects(t *testing.T) {
	if _, err := NewGridPermuteFlip(1.5, 1, 4); err == nil {
		t.Error("q = 1.5 accepted")
	}
	if _, err := NewGridPermuteFlip(0.5, 0, 4); err == nil {
		t.Error("ε = 0 accepted")
	}
	if _, err := NewGridPermuteFlip(0.5, 1, MaxGridBins+1); err == nil {
		t.Error("2^20 + 1 bins accepted")
	}
	m, _ := NewGridPermuteFlip(0.5, 1, 4)
	if _, err := m.Release(mrand.NewChaCha8([32]byte{}), []int64{1, 2}); err == nil {
		t.Error("a histogram with the wrong number of bins was accepted")
	}
	if _, err := m.Release(mrand.NewChaCha8([32]byte{}), []int64{1, -2, 0, 0}); err == nil {
		t.Error("a negative count was accepted")
	}
}

// BenchmarkPermuteFlip times one release with the production source
// (noise.NewCryptoSource) on B unit bins holding 10^5 rows spread over
// 3,000 consecutive bins (a column of 4096 values at most, as the anchors'),
// p90 at ε = 1 and 0.1, against GridExponential's release on the same
// histogram. Most visits land on far bins, which cost a Uniform and about
// 1.6 Bernoulli(exp(−1)) trials; a release visits about B over the number
// of bins whose coin succeeds.
func BenchmarkPermuteFlip(b *testing.B) {
	var seed [32]byte
	_, _ = rand.Read(seed[:])
	fill := mrand.NewChaCha8(seed)
	for _, bins := range []int{4096, 1 << 16, MaxGridBins} {
		counts := make([]int64, bins)
		for range 100000 {
			counts[int(fill.Uint64()%3000)]++
		}
		for _, eps := range []float64{1, 0.1} {
			src := noise.NewCryptoSource()
			pf, _ := NewGridPermuteFlip(0.9, eps, bins)
			b.Run(fmt.Sprintf("permute-flip/bins=%d/eps=%v", bins, eps), func(b *testing.B) {
				for range b.N {
					if _, err := pf.Release(src, counts); err != nil {
						b.Fatal(err)
					}
				}
			})
			em, _ := NewGridExponential(0.9, eps, bins)
			b.Run(fmt.Sprintf("exponential/bins=%d/eps=%v", bins, eps), func(b *testing.B) {
				for range b.N {
					if _, err := em.Release(src, counts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestPermuteFlipMatchesDefinition checks every exponent against the
// definition computed directly (gridDistances: x_j = scale·(dist_j −
// min dist)) on both histograms of every pair of the exact checks, at
// ε = 1 and 0.05, and that lower(j), the integer whose Bernoulli(exp(−1))
// trials come first, is at most x_j.
func TestPermuteFlipMatchesDefinition(t *testing.T) {
	for _, p := range gridPairs(t) {
		for _, eps := range []float64{1, 0.05} {
			m, err := NewGridPermuteFlip(p.q, eps, len(p.d))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range [][]int64{p.d, add(p.d, p.added, 1)} {
				e, err := m.exponents(h)
				if err != nil {
					t.Fatal(err)
				}
				dist := gridDistances(p.q, h)
				lowest := dist[0]
				for _, d := range dist {
					if d.Cmp(lowest) < 0 {
						lowest = d
					}
				}
				for j, d := range dist {
					want := new(big.Rat).Mul(new(big.Rat).Sub(d, lowest), m.scale)
					x := e.exponent(j)
					if x.Cmp(want) != 0 || big.NewRat(int64(e.lower(j)), 1).Cmp(x) > 0 {
						t.Fatalf("%s ε=%v, histogram %v: bin %d has x = %v, lower %d, want x = %v", p.name, eps, h, j, x, e.lower(j), want)
					}
				}
			}
		}
	}
}
