package ptr

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPTRLeastSquares(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want []float64 // nil: no unique fit
	}{
		// Exact solve: y = 1 + 2x through (0, 1) and (1, 3).
		{"two rows", []float64{0, 1}, []float64{1, 3}, []float64{1, 2}},
		// x̄ = 1, ȳ = 2: slope Σ(x−x̄)(y−ȳ)/Σ(x−x̄)² = (2 + 3)/2 = 2.5,
		// intercept 2 − 2.5 = −0.5.
		{"three rows", []float64{0, 1, 2}, []float64{0, 1, 5}, []float64{-0.5, 2.5}},
		{"one row", []float64{1}, []float64{1}, nil},
		{"equal x", []float64{3, 3, 3}, []float64{1, 2, 3}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, _ := SimpleRegressionRows(tc.x, tc.y)
			members := make([]int, len(tc.x))
			for i := range members {
				members[i] = i
			}
			beta, ok := newPTRLeastSquares(2).fit(rows, members)
			if tc.want == nil {
				if ok {
					t.Errorf("got %v, want no fit", beta)
				}
				return
			}
			if !ok || math.Abs(beta[0]-tc.want[0]) > 1e-12 || math.Abs(beta[1]-tc.want[1]) > 1e-12 {
				t.Errorf("got %v (ok=%v), want %v", beta, ok, tc.want)
			}
		})
	}
}

// TestPTRBlockFits checks the block step: a block's fit does not depend
// on its rows' order (canonical order), singular blocks map to the
// bounds' ends alternately, and every coefficient gets m sorted values.
func TestPTRBlockFits(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xb10c))
	x, y := make([]float64, 7), make([]float64, 7)
	for i := range x {
		x[i], y[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	rows, _ := SimpleRegressionRows(x, y)
	members := []int{0, 1, 2, 3, 4, 5, 6}
	want := slices.Clone(must(newPTRLeastSquares(2).fit(rows, members)))
	for range 20 {
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		slices.SortFunc(members, rows.compare)
		if got, _ := newPTRLeastSquares(2).fit(rows, members); !slices.Equal(got, want) {
			t.Fatalf("permuted rows: got %v, want %v", got, want)
		}
	}
	// All x equal: every block is singular, even blocks map to the lower
	// end and odd ones to the upper end.
	flat, _ := SimpleRegressionRows(ptrConstant(100, 2), ptrConstant(100, 1))
	coef := []mech.Bounds{{Lower: -5, Upper: 5}, {Lower: -7, Upper: 7}}
	fits, err := ptrBlockFits(context.Background(), privtest.Seeded(t, 0xb10d), flat, 9, coef)
	if err != nil {
		t.Fatal(err)
	}
	for d, f := range fits {
		want := append(ptrConstant(5, coef[d].Lower), ptrConstant(4, coef[d].Upper)...)
		if !slices.Equal(f, want) {
			t.Errorf("coefficient %d: got %v, want %v", d, f, want)
		}
	}
}

// must returns v, ignoring ok (test helper for fits known to exist).
func must(v []float64, _ bool) []float64 { return v }

func TestPTRShortcutRegressionInvalid(t *testing.T) {
	good := RegressionParams{Epsilon: 1, Delta: 1e-6, Size: 1000, Coefficients: []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}}
	for _, tc := range []struct {
		name   string
		edit   func(*RegressionParams)
		coords []int
		want   error
	}{
		{"no coefficient", func(p *RegressionParams) { p.Coefficients = nil }, nil, mech.ErrInvalidInput},
		{"bad bounds", func(p *RegressionParams) { p.Coefficients[1] = mech.Bounds{Lower: 1, Upper: 1} }, nil, mech.ErrInvalidBounds},
		{"coordinate out of range", func(*RegressionParams) {}, []int{2}, mech.ErrInvalidInput},
		{"coordinate twice", func(*RegressionParams) {}, []int{1, 1}, mech.ErrInvalidInput},
		{"empty coordinates", func(*RegressionParams) {}, []int{}, mech.ErrInvalidInput},
		{"zero δ", func(p *RegressionParams) { p.Delta = 0 }, nil, mech.ErrInvalidEpsilon},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			p.Coefficients = slices.Clone(good.Coefficients)
			tc.edit(&p)
			if _, err := NewShortcutRegression(p, tc.coords); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	r, _ := NewShortcutRegression(good, nil)
	for _, rows := range []RegressionRows{
		{P: 3, X: make([]float64, 3), Y: make([]float64, 1)},
		{P: 2, X: []float64{1, math.NaN()}, Y: []float64{0}},
		{P: 2, X: []float64{1, 0}, Y: []float64{math.Inf(1)}},
	} {
		if _, _, err := r.Release(context.Background(), privtest.Seeded(t, 1), rows); !errors.Is(err, mech.ErrInvalidInput) {
			t.Errorf("rows %+v: got %v, want %v", rows, err, mech.ErrInvalidInput)
		}
	}
}

// ptrLinearRows returns n rows of y = 1 + 2x + noise, x uniform on
// [0, 10], with Gaussian noise or (heavy) standard Cauchy noise.
func ptrLinearRows(rng *rand.Rand, n int, heavy bool) RegressionRows {
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 10 * rng.Float64()
		noise := rng.NormFloat64()
		if heavy {
			noise = math.Tan(math.Pi * (rng.Float64() - 0.5))
		}
		y[i] = 1 + 2*x[i] + noise
	}
	rows, _ := SimpleRegressionRows(x, y)
	return rows
}

// TestPTRShortcutRegressionAccuracy: R_S on n = 10⁵ rows of
// y = 1 + 2x + noise with Gaussian and Cauchy noise, releasing the slope
// only (ε = 6: six steps of 1) and both coefficients (ε = 12), m = 25 000
// blocks. Both distances are far above the cap, so ⊥ has probability
// < 10⁻⁸ per run. Coefficient d's error is the block median's sampling
// error (5 standard errors: 0.03·IQR_d, IQR_d the block estimates' IQR)
// plus Laplace noise of scale λ_d·b^Z, λ_d = IQR_d·m^(−1/3)/ε_step, Z the
// scale's log noise. The test requires no ⊥, the median error over 20 runs
// below 3λ_d + 0.03·IQR_d (it exceeds it only if 10 of 20 draws do, each
// with probability about e⁻³·1.4: < 10⁻⁵), and every error below
// 20·b^20·λ_d + 0.03·IQR_d (probability < 2e⁻²⁰ per draw).
func TestPTRShortcutRegressionAccuracy(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0x4e6))
	src := privtest.Seeded(t, 0x4e7)
	for _, tc := range []struct {
		name    string
		heavy   bool
		epsilon float64
		coords  []int
	}{
		{"gaussian slope", false, 6, []int{1}},
		{"gaussian both", false, 12, nil},
		{"cauchy slope", true, 6, []int{1}},
		{"cauchy both", true, 12, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 100000
			rows := ptrLinearRows(rng, n, tc.heavy)
			coef := []mech.Bounds{{Lower: -100, Upper: 100}, {Lower: -100, Upper: 100}}
			r, err := NewShortcutRegression(RegressionParams{Epsilon: tc.epsilon, Delta: 1e-6, Size: n, Coefficients: coef}, tc.coords)
			if err != nil {
				t.Fatal(err)
			}
			fits, err := ptrBlockFits(context.Background(), rng, rows, r.blocks, coef)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := ptrQuartileRanks(int64(r.blocks))
			truth := []float64{1, 2}
			errs := make([][]float64, len(r.coords))
			for range 20 {
				beta, refused, err := r.Release(context.Background(), src, rows)
				if err != nil || refused {
					t.Fatalf("got (%v, %v, %v), want an answer", beta, refused, err)
				}
				for i, d := range r.coords {
					errs[i] = append(errs[i], math.Abs(beta[i]-truth[d]))
				}
			}
			for i, d := range r.coords {
				core := r.medians[i]
				iqr := fits[d][hi-1] - fits[d][lo-1]
				lambda := iqr * math.Pow(float64(r.blocks), -1.0/3) / core.epsilon
				b := math.Exp(core.scale.grid.w)
				median, worst := ptrMedianOf(errs[i]), slices.Max(errs[i])
				t.Logf("coefficient %d: block IQR %.3f, λ = %.4f, median error %.4f, largest %.4f", d, iqr, lambda, median, worst)
				if median > 3*lambda+0.03*iqr || worst > 20*math.Pow(b, 20)*lambda+0.03*iqr {
					t.Errorf("coefficient %d: got median error %v and largest %v, want ≤ %v and ≤ %v",
						d, median, worst, 3*lambda+0.03*iqr, 20*math.Pow(b, 20)*lambda+0.03*iqr)
				}
			}
		})
	}
}

// TestPTRBlockCountIsBounded: the block count comes from a public size
// clamped to ptrMaxSize, whatever the noisy count says: a count noised at
// ε = 10^-9 (10^10 and beyond) once made the block step allocate and fit
// billions of blocks.
func TestPTRBlockCountIsBounded(t *testing.T) {
	for _, tc := range []struct {
		size float64
		want int
	}{
		{-5, 2}, {1000, 250}, {ptrMaxSize, ptrMaxSize / 4}, {1e10, ptrMaxSize / 4}, {math.MaxFloat64, ptrMaxSize / 4},
	} {
		if got := ptrBlockCount(tc.size, 2); got != tc.want {
			t.Errorf("size %v: %d blocks, want %d", tc.size, got, tc.want)
		}
	}
}

// TestPTRShortcutRegressionStopsWhenContextEnds: the block step of R_S on
// many rows runs O(n + m) steps (10^6 rows into 2^22 blocks here); a
// release whose context has ended (the statement timeout, KILL QUERY, the
// client gone) returns the context's error within PollEvery rows instead
// of fitting every block, and one that ends midway stops there.
func TestPTRShortcutRegressionStopsWhenContextEnds(t *testing.T) {
	rows := ptrLinearRows(rand.New(privtest.Seeded(t, 0xc7c)), 1_000_000, false)
	coef := []mech.Bounds{{Lower: -100, Upper: 100}, {Lower: -100, Upper: 100}}
	r, err := NewShortcutRegression(RegressionParams{Epsilon: 6, Delta: 1e-6, Size: ptrMaxSize, Coefficients: coef}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	gone, kill := context.WithCancel(context.Background())
	kill()
	start := time.Now()
	if _, _, err := r.Release(gone, privtest.Seeded(t, 1), rows); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v, want context.Canceled", err)
	}
	// A generous bound, as the deadline's below: on a loaded 2-core
	// machine 100 ms failed (175 ms); a release that never looked at the
	// context would take the whole fit of 10^6 rows.
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancelled context: returned after %v", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, err = r.Release(ctx, privtest.Seeded(t, 1), rows)
	if took := time.Since(start); err != nil && (!errors.Is(err, context.DeadlineExceeded) || took > time.Second) {
		t.Errorf("deadline: got %v after %v, want the deadline's error within a second", err, took)
	}
}

// TestPTRStabilityCapIsBounded: a stability test whose cap K would exceed
// ptrMaxCap is refused with ErrInvalidEpsilon (at a step ε of 10^-7 K is
// about 4·10^8: minutes of two-pointer steps and windows of that many
// ranks), and the largest accepted one is within it.
func TestPTRStabilityCapIsBounded(t *testing.T) {
	for _, eps := range []float64{1e-7, 1e-6, 5e-6, mech.MinEpsilon} {
		if _, err := newPTRStabilityTest(eps, 1e-8); !errors.Is(err, mech.ErrInvalidEpsilon) {
			t.Errorf("step ε %v: got %v, want ErrInvalidEpsilon", eps, err)
		}
	}
	for _, eps := range []float64{1e-5, 1e-3, 1} {
		test, err := newPTRStabilityTest(eps, 1e-8)
		if err != nil || test.cap > ptrMaxCap {
			t.Errorf("step ε %v: cap %d (%v), want accepted within 2^22", eps, test.cap, err)
		}
	}
}
