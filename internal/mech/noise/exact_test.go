package noise

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// dlapPow returns r^e = exp(−e·s/t) at 192 bits.
func dlapPow(d Dlap, e uint64) *big.Float {
	x := new(big.Float).SetPrec(expPrec).SetUint64(e)
	x.Mul(x, new(big.Float).SetUint64(d.s))
	x.Quo(x, new(big.Float).SetPrec(expPrec).SetUint64(d.t))
	var k int64
	r := fullExpNeg(x, &k)
	return r.SetMantExp(r, int(-k))
}

// dlapShiftLoss returns the exact loss between c + Z and c + diff + Z,
// Z ~ DLap(t/s), diff ≥ 0, at ε; with clamp ≥ diff, every output at or
// above c + clamp is one atom (a release clamped there), else clamp < 0.
// Unnormalised cells (the law's common factor (1−r)/(1+r) cancels), with
// k the output minus c: the tail k < 0, where the ratio is r^−diff; the
// points 0..diff−1 one by one when diff ≤ 64, else as one run (its
// per-point log-ratios lie strictly between the tails' ±diff·s/t, so the
// worst log-ratio is still exact; only the mass above ε of the run is
// averaged); and the points from diff to the upper cell's start U, and
// the tail k ≥ U (ratio r^diff; the clamp atom when clamping).
func dlapShiftLoss(t *testing.T, d Dlap, diff uint64, clamp int64, epsilon float64) privtest.Loss {
	t.Helper()
	const prec = 256
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	r := dlapPow(d, 1)
	oneMinusR := new(big.Float).SetPrec(prec).Sub(one, r)
	geomTail := func(e uint64) *big.Float { // Σ_{j≥0} r^(e+j) = r^e/(1−r)
		return new(big.Float).SetPrec(prec).Quo(dlapPow(d, e), oneMinusR)
	}
	absDiff := func(a, b uint64) uint64 {
		if a > b {
			return a - b
		}
		return b - a
	}
	var p, q []*big.Float
	// k < 0: Σ r^(−k) = r/(1−r) and Σ r^(diff−k) = r^(diff+1)/(1−r).
	p, q = append(p, geomTail(1)), append(q, geomTail(diff+1))
	upper := diff + 1
	if clamp >= 0 {
		upper = uint64(clamp)
	}
	if diff <= 64 {
		for k := uint64(0); k < upper; k++ {
			p, q = append(p, dlapPow(d, k)), append(q, dlapPow(d, absDiff(k, diff)))
		}
	} else {
		// The run 0..diff−1: (1 − r^diff)/(1−r) and (r − r^(diff+1))/(1−r);
		// then the points diff..upper−1 one by one.
		run := new(big.Float).SetPrec(prec).Sub(one, dlapPow(d, diff))
		p = append(p, run.Quo(run, oneMinusR))
		run2 := new(big.Float).SetPrec(prec).Sub(r, dlapPow(d, diff+1))
		q = append(q, run2.Quo(run2, oneMinusR))
		for k := diff; k < upper; k++ {
			p, q = append(p, dlapPow(d, k)), append(q, dlapPow(d, k-diff))
		}
	}
	// k ≥ upper: Σ r^k = r^upper/(1−r) and Σ r^(k−diff) = r^(upper−diff)/(1−r).
	p, q = append(p, geomTail(upper)), append(q, geomTail(upper-diff))
	l, err := privtest.ExactLossMasses(p, q, epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// laplaceEpsilons are the ε of the exact checks.
var laplaceEpsilons = []float64{mech.MinEpsilon, 1e-9, 1e-3, 0.1, 0.5, 1, 2.5, 17, mech.MaxEpsilon}

// TestDiscreteLaplaceExactPrivacy: the law of n + Z clamped to int64 on
// add/remove neighbours n and n + d, |d| ≤ Δ, for Δ = 1, 2, 7, 1000,
// at n in the middle and next to MaxInt64 (the clamp atom), at every ε.
func TestDiscreteLaplaceExactPrivacy(t *testing.T) {
	for _, eps := range laplaceEpsilons {
		var worst privtest.MaxLoss
		for _, sens := range []int64{1, 2, 7, 1000} {
			m, err := NewDiscreteLaplace(sens, eps)
			if err != nil {
				t.Fatal(err)
			}
			for _, diff := range []uint64{1, uint64(sens)} {
				for _, clamp := range []int64{-1, int64(diff), int64(diff) + 1, int64(diff) + 3} {
					name := fmt.Sprintf("Δ=%d d=%d clamp=%d", sens, diff, clamp)
					l := dlapShiftLoss(t, m.noise, diff, clamp, eps)
					l.Check(t, name, eps, 0)
					worst.Add(name, l)
				}
			}
		}
		t.Logf("ε = %v: worst exact loss %.17g (ratio %.17g) over %d pairs at %s", eps, worst.Worst, worst.Worst/eps, worst.Pairs, worst.Pair)
	}
}

// TestLaplaceExactPrivacy: the Laplace mechanism on its grid. The output
// is g·(round(x/g) + Z) rounded to float64 (post-processing), so its law
// on neighbours x, x' is the shifted discrete Laplace law with shift
// round(x'/g) − round(x/g) grid steps, computed here from the
// implementation's own rounding. Pairs: random x and x' = x ± u·Δ, and x
// just below a grid half-point with x' = x + Δ (the rounding pushes them
// apart the most), for Δ from 2^−30 to 10^6 and every ε.
func TestLaplaceExactPrivacy(t *testing.T) {
	src := privtest.Seeded(t, 0xd1)
	for _, eps := range laplaceEpsilons {
		var worst privtest.MaxLoss
		for _, sens := range []float64{0x1p-30, 0.75, 1, 3, 1e6} {
			l, err := NewLaplace(sens, eps)
			if err != nil {
				t.Fatal(err)
			}
			g := l.Granularity()
			for i := range 40 {
				x := (float64(src.Uint64()>>11)*0x1p-53 - 0.5) * 1000 * sens
				x2 := x + sens*float64(src.Uint64()>>11)*0x1p-53
				switch i % 4 {
				case 0: // just below a half-point, the neighbour a full Δ up
					x = (math.Round(x/g) + 0.5) * g
					x = math.Nextafter(x, math.Inf(-1))
					x2 = x + sens
				case 1:
					x2 = x - sens
				}
				if math.Abs(x2-x) > sens {
					x2 = math.Nextafter(x2, x)
				}
				shift := new(big.Rat).Sub(new(big.Rat).SetFloat64(roundToGrid(x2, g)), new(big.Rat).SetFloat64(roundToGrid(x, g)))
				shift.Quo(shift, new(big.Rat).SetFloat64(g))
				if !shift.IsInt() {
					t.Fatalf("grid shift %v not an integer", shift)
				}
				diff := new(big.Int).Abs(shift.Num()).Uint64()
				name := fmt.Sprintf("Δ=%v x=%v x'=%v (%d steps)", sens, x, x2, diff)
				loss := dlapShiftLoss(t, l.noise, diff, -1, eps)
				loss.Check(t, name, eps, 0)
				worst.Add(name, loss)
			}
		}
		t.Logf("ε = %v: worst exact loss %.17g (ratio %.17g) over %d pairs at %s", eps, worst.Worst, worst.Worst/eps, worst.Pairs, worst.Pair)
	}
}

// TestLaplaceExactCatchesCutNoise: both Laplace mechanisms with the noise
// scale t/s cut by 25% fail the exact check on the pair that shifts by
// the full sensitivity.
func TestLaplaceExactCatchesCutNoise(t *testing.T) {
	for _, eps := range []float64{mech.MinEpsilon, 0.1, 1, mech.MaxEpsilon} {
		d, err := NewDiscreteLaplace(1, eps)
		if err != nil {
			t.Fatal(err)
		}
		cut := d.noise
		cut.t = cut.t / 4 * 3
		if l := dlapShiftLoss(t, cut, 1, -1, eps); l.Holds(eps, 0) {
			t.Errorf("DiscreteLaplace ε = %v: cut scale passed (loss %v)", eps, l.Worst)
		} else {
			t.Logf("DiscreteLaplace ε = %v, scale cut 25%%: loss %.6g (ratio %.4f)", eps, l.Worst, l.Worst/eps)
		}
		lp, err := NewLaplace(1, eps)
		if err != nil {
			t.Fatal(err)
		}
		cut = lp.noise
		cut.t = cut.t / 4 * 3
		steps := uint64(math.Floor(1/lp.Granularity())) + 1
		if l := dlapShiftLoss(t, cut, steps, -1, eps); l.Holds(eps, 0) {
			t.Errorf("Laplace ε = %v: cut scale passed (loss %v)", eps, l.Worst)
		} else {
			t.Logf("Laplace ε = %v, scale cut 25%%: loss %.6g (ratio %.4f)", eps, l.Worst, l.Worst/eps)
		}
	}
}
