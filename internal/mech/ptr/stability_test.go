package ptr

import (
	"errors"
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPTRStabilityTestThresholds(t *testing.T) {
	// Hand-checked: with β = 1/ε and r = e^(−1/β), m is the smallest
	// integer ≥ β·(ln(1/δ0) − ln(1+r)): ε = 1, δ0 = 10⁻³ gives 6.5945 → 7,
	// threshold 8, and the cap adds ⌈20.410⌉ = 21 for η = 10⁻⁹; ε = 0.5,
	// δ0 = 10⁻⁶ gives 26.683 → 27, threshold 28, cap 28 + ⌈40.498⌉ = 69.
	for _, tc := range []struct {
		epsilon, delta0 float64
		threshold, cap  int64
	}{
		{1, 1e-3, 8, 29},
		{0.5, 1e-6, 28, 69},
	} {
		test, err := newPTRStabilityTest(tc.epsilon, tc.delta0)
		if err != nil {
			t.Fatal(err)
		}
		if test.threshold != tc.threshold || test.cap != tc.cap {
			t.Errorf("ε=%v δ0=%v: got threshold %d cap %d, want %d and %d", tc.epsilon, tc.delta0, test.threshold, test.cap, tc.threshold, tc.cap)
		}
		// The threshold is the smallest with P[pass | A = 1] ≤ δ0.
		r := math.Exp(-tc.epsilon)
		tail := func(m int64) float64 { return math.Pow(r, float64(m)) / (1 + r) }
		if m := test.threshold - 1; tail(m) > tc.delta0 || tail(m-1) <= tc.delta0 {
			t.Errorf("ε=%v δ0=%v: P[Z ≥ %d] = %v, P[Z ≥ %d] = %v: threshold not minimal", tc.epsilon, tc.delta0, m, tail(m), m-1, tail(m-1))
		}
	}
}

// TestPTRStabilityTestPassRate compares the pass rate with the exact
// discrete Laplace tail: at A = T−1 a pass is Z ≥ 1, probability
// r/(1+r); at A = T−2 it is r²/(1+r); far above the cap it is
// 1 − r^(cap−T+1)/(1+r). Each count is checked within privtest.Z6 standard
// errors: false rejection ≤ 3·10⁻⁶.
func TestPTRStabilityTestPassRate(t *testing.T) {
	src := privtest.Seeded(t, 0x7e57)
	test, err := newPTRStabilityTest(1, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	r := math.Exp(-1)
	const runs = 100000
	for _, tc := range []struct {
		a    int64
		want float64
	}{
		{test.threshold - 1, r / (1 + r)},
		{test.threshold - 2, r * r / (1 + r)},
		{test.cap + 1000, 1 - math.Pow(r, float64(test.cap-test.threshold+1))/(1+r)},
	} {
		passed := 0
		for range runs {
			if test.pass(src, tc.a) {
				passed++
			}
		}
		got := float64(passed) / runs
		se := math.Max(math.Sqrt(tc.want*(1-tc.want)/runs), 1.0/runs)
		if math.Abs(got-tc.want) > privtest.Z6*se {
			t.Errorf("A=%d: pass rate got %v, want %v ± %v", tc.a, got, tc.want, privtest.Z6*se)
		}
	}
}

// TestPTRRefusesUnderflowingDelta: a δ whose per-test share underflows to
// 0 would make the threshold −∞ (−ln 0) and pass every test, releasing
// the statistic without noise; every PTR mechanism refuses it when built,
// before any data is read (an independent review got exact REGR_SLOPE
// answers at @dp_delta = 5e-324). A tiny per-test δ that stays positive
// gets a finite threshold.
func TestPTRRefusesUnderflowingDelta(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 100}
	coef := []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}
	build := map[string]func(delta float64) error{
		"median": func(d float64) error {
			_, err := NewMedian(Params{Epsilon: 1, Delta: d, Size: 1000, Bounds: b}, 0)
			return err
		},
		"median, public scale": func(d float64) error {
			_, err := NewMedian(Params{Epsilon: 1, Delta: d, Size: 1000, Bounds: b}, 1)
			return err
		},
		"scale": func(d float64) error {
			_, err := NewScale(Params{Epsilon: 1, Delta: d, Size: 1000, Bounds: b})
			return err
		},
		"trimmed": func(d float64) error {
			_, err := NewTrimmedMean(Params{Epsilon: 1, Delta: d, Size: 1e6, Bounds: b}, 0.1, 0)
			return err
		},
		"regression": func(d float64) error {
			_, err := NewShortcutRegression(RegressionParams{Epsilon: 1, Delta: d, Size: 1000, Coefficients: coef}, []int{0, 1})
			return err
		},
		"hampel": func(d float64) error {
			_, err := NewHampelRegression(RegressionParams{Epsilon: 1, Delta: d, Size: 1000, Coefficients: coef}, 1<<20)
			return err
		},
	}
	for name, f := range build {
		if err := f(5e-324); !errors.Is(err, mech.ErrInvalidEpsilon) {
			t.Errorf("%s at δ = 5e-324: got %v, want ErrInvalidEpsilon", name, err)
		}
		if err := f(1e-6); err != nil {
			t.Errorf("%s at δ = 1e-6: %v", name, err)
		}
	}
	test, err := newPTRStabilityTest(1, 1e-300/24)
	if err != nil || test.threshold < 690 || test.cap <= test.threshold {
		t.Errorf("δ0 = 1e-300/24: threshold %d cap %d (%v), want about ln(1/δ0) ≈ 694", test.threshold, test.cap, err)
	}
}
