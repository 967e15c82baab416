package ptr

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPTRTrimmedMeanParameters(t *testing.T) {
	// Hand-checked κ: N = 10⁴, ε = 4 (per step 1, release scale β = 1,
	// grid g = 2⁻⁴⁰), δ = 10⁻⁶: w = ln(1 + 1/ln 10⁴) = 0.1030742,
	// log_b N = 9.210340/0.1030742 = 89.35644, and
	// κ_min = (1 + 2g + ln 10⁶)/89.35644 = 0.1658024; then δ_tail = δ/2.
	tm, err := NewTrimmedMean(ptrColumnParams(4, 1e-6, 10000, mech.Bounds{Lower: 0, Upper: 1}), 0.1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tm.Kappa()-0.1658024) > 1e-6 || math.Abs(tm.DeltaTail()-5e-7) > 1e-12 {
		t.Errorf("got κ = %v, δ_tail = %v, want 0.1658024 and 5e-7", tm.Kappa(), tm.DeltaTail())
	}
	// Digest §3.2: n = 10, α = 0.25 gives lo = 2, hi = 8, c = 5.
	if lo, hi := tm.TrimmedRanks(10); lo != 1 || hi != 9 {
		t.Errorf("α = 0.1, n = 10: got ranks %d, %d, want 1, 9", lo, hi)
	}
	quarter := &TrimmedMean{alpha: 0.25}
	if lo, hi := quarter.TrimmedRanks(10); lo != 2 || hi != 8 {
		t.Errorf("α = 0.25, n = 10: got ranks %d, %d, want 2, 8", lo, hi)
	}
	for _, tc := range []struct {
		name         string
		size         float64
		alpha, kappa float64
	}{
		{"α = 0", 10000, 0, 0},
		{"α = 1", 10000, 1, 0},
		{"κ = 1", 10000, 0.1, 1},
		{"κ below the δ bound", 10000, 0.1, 0.1},
		{"too few rows for α", 8, 0.9, 0},
		{"size too small for δ", 20, 0.1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTrimmedMean(ptrColumnParams(4, 1e-6, int(tc.size), mech.Bounds{Lower: 0, Upper: 1}), tc.alpha, tc.kappa)
			if !errors.Is(err, mech.ErrInvalidInput) && !errors.Is(err, mech.ErrInvalidQuantile) {
				t.Errorf("got %v, want an invalid-input error", err)
			}
		})
	}
}

// TestPTRTrimmedMeanSum checks that the trimmed mean assembled from the
// two windows and the database's sum of grid indices between them is the
// exact average of the grid values of ranks lo+1 … hi−1, within a grid
// step of the plain average, whether the windows are apart or overlap.
func TestPTRTrimmedMeanSum(t *testing.T) {
	for _, n := range []int{12, 60, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i*i) / 7
		}
		tm, err := NewTrimmedMean(ptrColumnParams(100, 0.5, n, mech.Bounds{Lower: 0, Upper: 1e6}), 0.2, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		d := ptrData(tm.Fetch(), xs)
		lo, hi := tm.TrimmedRanks(int64(n))
		want := 0.0
		for i := lo + 1; i < hi; i++ {
			want += xs[i-1]
		}
		want /= float64(hi - lo - 1)
		indices := new(big.Int)
		for i := lo + 1; i < hi; i++ {
			indices.Add(indices, big.NewInt(tm.grid.Index(xs[i-1])))
		}
		exact := tm.grid.Value(new(big.Rat).SetFrac(indices, big.NewInt(hi-lo-1)))
		got := tm.trimmedMean(ptrSortedOrder(xs, mech.Bounds{Lower: 0, Upper: 1e6}), d.Windows[0].Ranks(), d.Windows[1].Ranks(), d.SumBetween, lo, hi)
		if got.Cmp(exact) != 0 {
			t.Errorf("n=%d: got %v, want %v", n, got.FloatString(9), exact.FloatString(9))
		}
		if f, _ := got.Float64(); math.Abs(f-want) > tm.grid.Unit {
			t.Errorf("n=%d: got %v, more than a grid step %v from the mean %v", n, f, tm.grid.Unit, want)
		}
	}
}

// TestPTRTrimmedMeanGaussian: α = 0.1 on Gaussian data with N = n, ε = 4,
// δ = 10⁻⁶. The spread's distance is far above the cap and n ≥ 0.9·N + 100,
// so ⊥ has probability < 10⁻⁸ per run: any refusal fails. The error
// against the data's trimmed mean is Laplace of scale
// s·N^κ/(c_min·ε_step) ≈ IQR_α·N^(κ−1)/(0.9(1−α)): its median over runs is
// logged, and every error must be below 60 such scales times b^|Z| with
// |Z| ≤ 60 (each has probability e⁻⁶⁰).
func TestPTRTrimmedMeanGaussian(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0x7a3))
	src := privtest.Seeded(t, 0x7a4)
	for _, n := range []int{10000, 100000} {
		xs := ptrGaussian(rng, n)
		tm, _ := NewTrimmedMean(ptrColumnParams(4, 1e-6, n, mech.Bounds{Lower: -10, Upper: 10}), 0.1, 0)
		lo, hi := tm.TrimmedRanks(int64(n))
		mean := 0.0
		for i := lo + 1; i < hi; i++ {
			mean += xs[i-1]
		}
		mean /= float64(hi - lo - 1)
		scale := (xs[hi-1] - xs[lo-1]) * tm.noiseFactor / tm.epsilon
		limit := 60 * scale * math.Exp(60*tm.scale.release.Scale()*tm.scale.grid.w)
		var errs []float64
		for range 1000 {
			v, refused, err := tm.Release(src, ptrData(tm.Fetch(), xs))
			if err != nil || refused || math.Abs(v-mean) > limit {
				t.Fatalf("n=%d: got (%v, %v, %v), want %v ± %v", n, v, refused, err, mean, limit)
			}
			errs = append(errs, math.Abs(v-mean))
		}
		t.Logf("n=%d: κ = %.3f, median |TM − m_α(D)| = %.5f (noise scale at s = IQR_α: %.5f), |m_α(D)| = %.5f",
			n, tm.Kappa(), ptrMedianOf(errs), scale, math.Abs(mean))
	}
}

// TestPTRTrimmedMeanRefusals: a constant column passes the zero bin and
// returns the constant exactly; a column with half the rows of the public
// size fails the count floor (distance n − ⌈0.9N⌉ + 1 < 1), so TM answers
// with probability ≤ 2δ0 = δ/2 per run: with δ = 10⁻⁹, 200 refusals out of
// 200 fail with probability 10⁻⁷. Small counts must not fail.
func TestPTRTrimmedMeanRefusals(t *testing.T) {
	src := privtest.Seeded(t, 0x7a5)
	constant, _ := NewTrimmedMean(ptrColumnParams(4, 1e-6, 2000, mech.Bounds{Lower: 0, Upper: 10}), 0.1, 0)
	floor, _ := NewTrimmedMean(ptrColumnParams(4, 1e-9, 2000, mech.Bounds{Lower: -10, Upper: 10}), 0.1, 0)
	xs := ptrGaussian(rand.New(privtest.Seeded(t, 0x7a6)), 1000)
	for range 200 {
		if v, refused, err := constant.Release(src, ptrData(constant.Fetch(), ptrConstant(2000, 7.5))); err != nil || refused || v != 7.5 {
			t.Fatalf("constant: got (%v, %v, %v), want 7.5", v, refused, err)
		}
		if v, refused, err := floor.Release(src, ptrData(floor.Fetch(), xs)); err != nil || !refused {
			t.Fatalf("half the public size: got (%v, %v, %v), want ⊥", v, refused, err)
		}
	}
	for k := range 4 {
		if _, _, err := constant.Release(src, ptrData(constant.Fetch(), []float64{1, 2, 3}[:min(k, 3)])); err != nil {
			t.Fatalf("n=%d: got %v, want no error", k, err)
		}
	}
}

// TestPTRTrimmedMeanExactOnHostileData: on values far from 0 for their
// spread (an independent review's datasets: two tied blocks just above
// 2^52, on bounds whose grid step is 2^−17), the exact means of D and
// D + v differ by no more than step 1's bound on the grid,
// (W + 2·Unit)/min(c, c'), about 0.01, while the doubles nearest to them,
// 1 apart at 2^52, differ by 1 for the pairs it checks: a mean rounded to
// float64 (as the database's SUM and a float division made it) before
// the noise breaks the bound by 100×, and the noise no longer covers it.
func TestPTRTrimmedMeanExactOnHostileData(t *testing.T) {
	const base = 0x1p52
	b := mech.Bounds{Lower: base, Upper: base + 0x1p13}
	tm, err := NewTrimmedMean(Params{Epsilon: 10, Delta: 1e-3, Size: 3000, Bounds: b}, 0.1, 0)
	if err != nil {
		t.Fatal(err)
	}
	mean := func(xs []float64) (*big.Rat, int64) {
		n := int64(len(xs))
		lo, hi := tm.TrimmedRanks(n)
		whole := mech.RankRange{First: 1, Last: n}
		return tm.trimmedMean(ptrSortedOrder(xs, b), whole, whole, nil, lo, hi), hi - lo - 1
	}
	straddling := 0
	for low := 1400; low < 1700; low++ {
		xs := append(ptrConstant(low, base+2951), ptrConstant(905, base+2975)...)
		n := int64(len(xs))
		lo, hi := tm.TrimmedRanks(n)
		m1, c1 := mean(xs)
		m2, c2 := mean(ptrInsert(xs, base+2975))
		bound := (xs[hi-1] - xs[lo-1] + 2*tm.grid.Unit) / float64(min(c1, c2))
		diff, _ := new(big.Rat).Abs(new(big.Rat).Sub(m1, m2)).Float64()
		if diff > bound {
			t.Fatalf("%d×2951, 905×2975 (+2^52) + one 2975: exact means differ by %v, above the bound %v", low, diff, bound)
		}
		f1, _ := m1.Float64()
		f2, _ := m2.Float64()
		if f1 != f2 {
			if straddling == 0 {
				t.Logf("%d×2951, 905×2975 (+2^52) + one 2975: exact means differ by %.3g (bound %.3g), the nearest doubles by %v", low, diff, bound, math.Abs(f1-f2))
			}
			straddling++
		}
	}
	if straddling == 0 {
		t.Errorf("no pair's means straddle a rounding boundary of float64: the test checks nothing a float mean would break")
	}
	t.Logf("%d of 300 pairs straddle a boundary of float64", straddling)
}
