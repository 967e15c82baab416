package ptr

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// ptrColumnParams returns Params for a column of n values.
func ptrColumnParams(epsilon, delta float64, n int, b mech.Bounds) Params {
	return Params{Epsilon: epsilon, Delta: delta, Size: float64(n), Bounds: b}
}

func TestPTRScaleInvalid(t *testing.T) {
	good := ptrColumnParams(1, 1e-6, 1000, mech.Bounds{Lower: 0, Upper: 1})
	for _, tc := range []struct {
		name string
		edit func(*Params)
		want error
	}{
		{"zero ε", func(p *Params) { p.Epsilon = 0 }, mech.ErrInvalidEpsilon},
		{"per-step ε too small", func(p *Params) { p.Epsilon = 0x1p-50 }, mech.ErrInvalidEpsilon},
		{"zero δ", func(p *Params) { p.Delta = 0 }, mech.ErrInvalidEpsilon},
		{"δ above ½", func(p *Params) { p.Delta = 0.6 }, mech.ErrInvalidEpsilon},
		{"NaN size", func(p *Params) { p.Size = math.NaN() }, mech.ErrInvalidInput},
		{"inverted bounds", func(p *Params) { p.Bounds = mech.Bounds{Lower: 1, Upper: 0} }, mech.ErrInvalidBounds},
		{"bounds too wide", func(p *Params) { p.Bounds = mech.Bounds{Lower: -1e300, Upper: 1e300} }, mech.ErrInvalidBounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.edit(&p)
			if _, err := NewScale(p); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := NewScale(good); err != nil {
		t.Errorf("valid params: got %v, want nil", err)
	}
}

func TestPTRScaleInvalidData(t *testing.T) {
	s, _ := NewScale(ptrColumnParams(1, 1e-6, 100, mech.Bounds{Lower: 0, Upper: 10}))
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i) / 10
	}
	good := ptrData(s.Fetch(), xs)
	for _, tc := range []struct {
		name string
		edit func(d *Data)
		want error
	}{
		{"one window", func(d *Data) { d.Windows = d.Windows[:1] }, mech.ErrWindowMismatch},
		{"different counts", func(d *Data) { d.Windows[1].Count++ }, mech.ErrInvalidInput},
		{"window too short", func(d *Data) { d.Windows[0].Values = d.Windows[0].Values[:3] }, mech.ErrWindowMismatch},
		{"unsorted", func(d *Data) { d.Windows[0].Values[0] = 9 }, mech.ErrInvalidInput},
		{"outside the bounds", func(d *Data) { d.Windows[1].Values[0] = -1 }, mech.ErrInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ptrData(s.Fetch(), xs)
			for i := range d.Windows {
				d.Windows[i].Values = append([]float64(nil), d.Windows[i].Values...)
			}
			tc.edit(&d)
			if _, _, err := s.Release(privtest.Seeded(t, 1), d); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, _, err := s.Release(privtest.Seeded(t, 1), good); err != nil {
		t.Errorf("valid data: got %v, want nil", err)
	}
}

// TestPTRScaleWindowsSuffice checks that the capped windows of Fetch give
// exactly the release of the whole column (same noise, same output): the
// distances read no rank outside them.
func TestPTRScaleWindowsSuffice(t *testing.T) {
	xs := ptrGaussian(rand.New(privtest.Seeded(t, 0x5ca)), 3000)
	s, _ := NewScale(ptrColumnParams(3, 1e-6, 3000, mech.Bounds{Lower: -10, Upper: 10}))
	whole := mech.SortedWindow{Count: 3000, First: 1, Values: xs}
	for i := range 50 {
		a, ra, err1 := s.Release(ptrReplaySource(i), ptrData(s.Fetch(), xs))
		b, rb, err2 := s.Release(ptrReplaySource(i), Data{Windows: []mech.SortedWindow{whole, whole}})
		if err1 != nil || err2 != nil || a != b || ra != rb {
			t.Fatalf("run %d: windows gave (%v, %v, %v), whole column (%v, %v, %v)", i, a, ra, err1, b, rb, err2)
		}
	}
}

// TestPTRScaleReleaseLaw: on Gaussian data with n = 10⁴ every grid's
// distance is far above the cap (about 0.05·n·w ≈ 500 under add/remove,
// cap 72), so S answers except with probability 2·10⁻⁹ per run, and
// log_b(S/IQR(D)) is the Laplace noise of the release: its absolute value
// has median β·ln 2. The observed median's distribution-free 1−10⁻⁶
// interval must contain it (false rejection 10⁻⁶).
func TestPTRScaleReleaseLaw(t *testing.T) {
	const n, runs = 10000, 4000
	xs := ptrGaussian(rand.New(privtest.Seeded(t, 0x1a7)), n)
	s, _ := NewScale(ptrColumnParams(3, 1e-6, n, mech.Bounds{Lower: -10, Upper: 10}))
	lo, hi := ptrQuartileRanks(n)
	iqr := xs[hi-1] - xs[lo-1]
	src := privtest.Seeded(t, 0x1a8)
	errs := make([]float64, 0, runs)
	for range runs {
		v, refused, err := s.Release(src, ptrData(s.Fetch(), xs))
		if err != nil || refused {
			t.Fatalf("got (%v, %v, %v), want an answer", v, refused, err)
		}
		errs = append(errs, math.Abs(math.Log(v/iqr)/s.core.grid.w))
	}
	want := s.core.release.Scale() * math.Ln2
	if lo, hi := ptrMedianCI(errs); want < lo || want > hi {
		t.Errorf("median |log_b(S/IQR)|: got interval [%v, %v], want it to contain %v", lo, hi, want)
	}
	t.Logf("n=%d: median |ln(S/IQR)| = %.4f (multiplicative error), β·ln2 in log_b units = %.4f", n, ptrMedianOf(errs)*s.core.grid.w, want)
}

// TestPTRScaleStableAndUnstable: a constant column is the zero bin with
// distance above the cap, so S returns exactly 0 (⊥ with probability
// ≤ 10⁻¹⁸ per run); exponentially spaced data x_i = e^(0.2 i), n = 3000
// (digest §5.3): one rank step multiplies the IQR by e^0.2 = 1.22 > b =
// 1.125, so both grids have distance 1 and S answers with probability at
// most δ = 10⁻⁹ per run: 200 refusals out of 200 fail with probability
// ≤ 2·10⁻⁷.
func TestPTRScaleStableAndUnstable(t *testing.T) {
	src := privtest.Seeded(t, 0x57ab)
	exponential := make([]float64, 3000)
	for i := range exponential {
		exponential[i] = math.Exp(0.2 * float64(i+1))
	}
	for _, tc := range []struct {
		name    string
		xs      []float64
		bounds  mech.Bounds
		refused bool
	}{
		{"constant", ptrConstant(1000, 4.25), mech.Bounds{Lower: 0, Upper: 10}, false},
		{"exponential", exponential, mech.Bounds{Lower: 0, Upper: math.Exp(601)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := NewScale(ptrColumnParams(3, 1e-9, len(tc.xs), tc.bounds))
			for range 200 {
				v, refused, err := s.Release(src, ptrData(s.Fetch(), tc.xs))
				if err != nil || refused != tc.refused || (!refused && v != 0) {
					t.Fatalf("got (%v, %v, %v), want refused=%v (value 0)", v, refused, err, tc.refused)
				}
			}
		})
	}
}

// TestPTRScaleSmallCounts runs S on n = 0, 1, 2, 3 (and a public size far
// from the truth): no error, outputs within [0, U−L].
func TestPTRScaleSmallCounts(t *testing.T) {
	src := privtest.Seeded(t, 0x5a11)
	for n := range 4 {
		xs := []float64{0, 10, 10}[:min(n, 3)]
		if n == 3 {
			xs = []float64{0, 5, 10}
		}
		for _, size := range []float64{-3, 2, 1e6} {
			s, _ := NewScale(Params{Epsilon: 30, Delta: 0.5, Size: size, Bounds: mech.Bounds{Lower: 0, Upper: 10}})
			for range 100 {
				v, refused, err := s.Release(src, ptrData(s.Fetch(), xs))
				if err != nil || (!refused && !(v >= 0 && v <= 10)) {
					t.Fatalf("n=%d size=%v: got (%v, %v, %v)", n, size, v, refused, err)
				}
			}
		}
	}
}

// ptrReplaySource returns the i-th deterministic stream for replaying the
// same noise twice.
func ptrReplaySource(i int) *rand.ChaCha8 {
	var key [32]byte
	key[0], key[1] = byte(i), byte(i>>8)
	return rand.NewChaCha8(key)
}
