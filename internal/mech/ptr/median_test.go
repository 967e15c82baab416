package ptr

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPTRMedianFetch(t *testing.T) {
	p := ptrColumnParams(3, 1e-6, 1000, mech.Bounds{Lower: 0, Upper: 1})
	internal, _ := NewMedian(p, 0)
	public, _ := NewMedian(p, 0.5)
	if got := len(internal.Fetch().Windows); got != 3 {
		t.Errorf("internal scale: got %v windows, want 3", got)
	}
	if got := len(public.Fetch().Windows); got != 1 {
		t.Errorf("public scale: got %v windows, want 1", got)
	}
	// Budget split: ε/6 per step with the internal scale, ε/3 with a public one.
	if internal.core.epsilon != 0.5 || public.core.epsilon != 1 {
		t.Errorf("per-step ε: got %v and %v, want 0.5 and 1", internal.core.epsilon, public.core.epsilon)
	}
	for _, scale := range []float64{-1, math.Inf(1), math.NaN()} {
		if _, err := NewMedian(p, scale); !errors.Is(err, mech.ErrInvalidInput) {
			t.Errorf("scale %v: got %v, want %v", scale, err, mech.ErrInvalidInput)
		}
	}
	if _, _, err := internal.Release(privtest.Seeded(t, 1), Data{}); !errors.Is(err, mech.ErrWindowMismatch) {
		t.Errorf("no window: got %v, want %v", err, mech.ErrWindowMismatch)
	}
	xs := ptrGaussian(rand.New(privtest.Seeded(t, 2)), 1000)
	if _, _, err := internal.Release(privtest.Seeded(t, 1), ptrData(public.Fetch(), xs)); !errors.Is(err, mech.ErrWindowMismatch) {
		t.Errorf("public scale's windows given to the internal one: got %v, want %v", err, mech.ErrWindowMismatch)
	}
}

// TestPTRMedianPublicScaleLaw: with a public scale s and data whose
// median distance exceeds the cap, M − x_(r) is the Laplace noise of scale
// β = (s·N^(−1/3))/ε: |M − x_(r)| has median β·ln 2, inside the observed
// median's distribution-free 1−10⁻⁶ interval (false rejection 10⁻⁶; the
// bound clamp is 20 scales away).
func TestPTRMedianPublicScaleLaw(t *testing.T) {
	const n, runs = 10000, 4000
	xs := ptrGaussian(rand.New(privtest.Seeded(t, 0x3ed)), n)
	m, _ := NewMedian(ptrColumnParams(3, 1e-6, n, mech.Bounds{Lower: -10, Upper: 10}), 1.349)
	src := privtest.Seeded(t, 0x3ee)
	errs := make([]float64, 0, runs)
	for range runs {
		v, refused, err := m.Release(src, ptrData(m.Fetch(), xs))
		if err != nil || refused {
			t.Fatalf("got (%v, %v, %v), want an answer", v, refused, err)
		}
		errs = append(errs, math.Abs(v-xs[n/2-1]))
	}
	noise, _ := noise.NewLaplace(ptrBinWidth(1.349, n, 1.0/3, mech.Bounds{Lower: -10, Upper: 10}), 1)
	want := noise.Scale() * math.Ln2
	if lo, hi := ptrMedianCI(errs); want < lo || want > hi {
		t.Errorf("median |M − x_(r)|: got interval [%v, %v], want it to contain %v", lo, hi, want)
	}
}

// TestPTRMedianGaussianRate: M with its own scale on standard Gaussian
// data of growing n (ε = 3: per-step 0.5, δ = 10⁻⁶). Given the scale's
// noise Z (Laplace, scale 2, on log_b) the privacy error is
// |Lap(IQR(D)·b^Z·N^(−1/3)/ε_step)|, so its median over runs is
// IQR(D)·N^(−1/3)/ε_step times the median of E·b^Z, E ~ Exp(1),
// computed here by simulation (2·10⁵ draws). The test requires the
// observed median's distribution-free 1−10⁻⁶ interval to meet the
// simulated median's (false rejection < 2·10⁻⁶ per n): the error shrinks
// like n^(−1/3), a factor 2.15 per tenfold n (the ratio is logged). ⊥ must
// be rare at n = 10⁵: both distances are then far above the cap
// (≈ 440 and ≈ 290 against 72), so ⊥ has probability < 10⁻⁸ per run and
// more than 1% refusals cannot happen by chance. n = 10⁶ runs with
// DPPROXY_PTR_HEAVY=1.
func TestPTRMedianGaussianRate(t *testing.T) {
	sizes := []int{10000, 100000}
	if ptrHeavy() {
		sizes = append(sizes, 1000000)
	}
	const runs = 4000
	rng := rand.New(privtest.Seeded(t, 0x6a55))
	src := privtest.Seeded(t, 0x6a56)
	var previous float64
	for _, n := range sizes {
		xs := ptrGaussian(rng, n)
		m, _ := NewMedian(ptrColumnParams(3, 1e-6, n, mech.Bounds{Lower: -10, Upper: 10}), 0)
		lo, hi := ptrQuartileRanks(int64(n))
		iqr, median := xs[hi-1]-xs[lo-1], xs[(n+1)/2-1]
		var errs, total []float64
		refused := 0
		for range runs {
			v, ref, err := m.Release(src, ptrData(m.Fetch(), xs))
			if err != nil {
				t.Fatal(err)
			}
			if ref {
				refused++
				continue
			}
			errs = append(errs, math.Abs(v-median))
			total = append(total, math.Abs(v))
		}
		// Simulated law of the privacy error.
		w := m.core.scale.grid.w
		sim := make([]float64, 200000)
		for i := range sim {
			z := rng.ExpFloat64() * m.core.scale.release.Scale()
			if rng.IntN(2) == 0 {
				z = -z
			}
			sim[i] = rng.ExpFloat64() * math.Exp(z*w)
		}
		scale := iqr * math.Pow(float64(n), -1.0/3) / m.core.epsilon
		simLo, simHi := ptrMedianCI(sim)
		obsLo, obsHi := ptrMedianCI(errs)
		if obsHi < simLo*scale || obsLo > simHi*scale {
			t.Errorf("n=%d: median privacy error interval [%v, %v], want it to meet the model's [%v, %v]", n, obsLo, obsHi, simLo*scale, simHi*scale)
		}
		rate := float64(refused) / runs
		if n >= 100000 && rate > 0.01 {
			t.Errorf("n=%d: ⊥ rate got %v, want ≤ 0.01", n, rate)
		}
		obs := ptrMedianOf(errs)
		t.Logf("n=%d: ⊥ rate %.4f, median |M − x_(r)| = %.5f (model %.5f), median |M − 0| = %.5f", n, rate, obs, ptrMedianOf(sim)*scale, ptrMedianOf(total))
		if previous > 0 {
			t.Logf("ratio of median privacy errors to the previous n: %.3f (n^(−1/3) predicts 0.464)", obs/previous)
		}
		previous = obs
	}
}

// TestPTRMedianUnstable: the digest's unstable examples (§5.3), with
// δ = 10⁻⁹. (a) public scale 1, n = 10⁵, half 0 and half 1: x_(r) = 0 and
// x_(r+1) = 1 is across the gap in every grid, distance 1; (b) own scale,
// exactly half N(−10, 1) and half N(10, 1): the median is the top of the
// lower cluster, the next value 8 or more away while h ≤ 5. M answers with
// probability ≤ δ per run, so 200 refusals out of 200 fail with
// probability ≤ 2·10⁻⁷.
func TestPTRMedianUnstable(t *testing.T) {
	const n = 100000
	rng := rand.New(privtest.Seeded(t, 0x0b57))
	gap := append(ptrConstant(n/2, 0), ptrConstant(n/2, 1)...)
	mixture := ptrGaussian(rng, n)
	for i := range mixture {
		mixture[i] += []float64{-10, 10}[i*2/n]
	}
	for _, tc := range []struct {
		name   string
		xs     []float64
		bounds mech.Bounds
		scale  float64
	}{
		{"gap, public scale", gap, mech.Bounds{Lower: -1, Upper: 2}, 1},
		{"bimodal, own scale", mixture, mech.Bounds{Lower: -50, Upper: 50}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := NewMedian(ptrColumnParams(3, 1e-9, n, tc.bounds), tc.scale)
			src := privtest.Seeded(t, 0x0b58)
			for range 200 {
				if v, refused, err := m.Release(src, ptrData(m.Fetch(), tc.xs)); err != nil || !refused {
					t.Fatalf("got (%v, %v, %v), want ⊥", v, refused, err)
				}
			}
		})
	}
}

// TestPTRMedianConstant: a constant column has IQR 0, so h = N^(−1/2); the
// median's distance is above the cap, and M returns the constant plus
// Laplace noise of scale 6·N^(−1/2)/ε: within 40 scales (probability
// 1 − e⁻⁴⁰) and never ⊥ (probability ≤ 4·10⁻⁹ per run). Small counts
// (n = 0, 1, 2) must not fail.
func TestPTRMedianConstant(t *testing.T) {
	const n = 10000
	m, _ := NewMedian(ptrColumnParams(3, 1e-6, n, mech.Bounds{Lower: 0, Upper: 10}), 0)
	src := privtest.Seeded(t, 0xc0)
	limit := 40 * 6 / math.Sqrt(n) / 3
	for range 200 {
		v, refused, err := m.Release(src, ptrData(m.Fetch(), ptrConstant(n, 3.7)))
		if err != nil || refused || math.Abs(v-3.7) > limit {
			t.Fatalf("got (%v, %v, %v), want 3.7 ± %v", v, refused, err, limit)
		}
	}
	for k := range 3 {
		xs := []float64{1, 9}[:k]
		for range 100 {
			if v, refused, err := m.Release(src, ptrData(m.Fetch(), xs)); err != nil || (!refused && !(v >= 0 && v <= 10)) {
				t.Fatalf("n=%d: got (%v, %v, %v)", k, v, refused, err)
			}
		}
	}
}

// TestBinSpanBoundsEveryBin checks the median's Laplace sensitivity
// against the float edges of the bins it covers: two values of one bin
// are at most binSpan apart, for the narrowest widths ptrWidthLimits
// allows, where rounded edges make bins wider than the width itself (the
// test also finds such a bin, so the width alone would fail it).
func TestBinSpanBoundsEveryBin(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	widerThanWidth := 0
	for _, b := range []mech.Bounds{{Lower: -1e6, Upper: 1e6}, {Lower: -6.7e8, Upper: 6.7e8}, {Lower: 0, Upper: 100}, {Lower: -1, Upper: 1e15}} {
		lo, hi := ptrWidthLimits(b)
		for _, w := range []float64{lo, lo * 1.125, lo * 1.5, lo * 2.5, lo * 3.7, 1e-9, 3.3e-9, 1e-6, 0.37, hi} {
			w = math.Min(math.Max(w, lo), hi)
			g := ptrLinearGrid{origin: b.Lower, width: w}
			span := g.binSpan(b)
			xs := []float64{b.Lower, b.Upper, 0, 1e-12, -1e-12, 0.3, 7}
			for range 200 {
				xs = append(xs, b.Lower+rng.Float64()*(b.Upper-b.Lower), (rng.Float64()-0.5)*1e3*w)
			}
			for _, x := range xs {
				x = b.Clamp(x)
				for _, off := range ptrOffsets {
					l, u := g.bin(x, off)
					if !(l <= x && x < u) {
						t.Fatalf("bounds %v width %g: %v not in its bin [%v, %v)", b, w, x, l, u)
					}
					// The widest gap between two values of [l, u), exactly.
					gap := new(big.Float).Sub(big.NewFloat(math.Nextafter(u, math.Inf(-1))), big.NewFloat(l))
					if gap.Cmp(big.NewFloat(span)) > 0 {
						t.Errorf("bounds %v width %g: bin [%v, %v) spans %v > binSpan %v", b, w, l, u, gap, span)
					}
					if gap.Cmp(big.NewFloat(w)) > 0 {
						widerThanWidth++
					}
				}
			}
		}
	}
	if widerThanWidth == 0 {
		t.Error("no bin wider than its width: the test no longer exercises the rounding of the edges")
	}
	t.Logf("%d bins wider than their width, none wider than binSpan", widerThanWidth)
}
