package quantile

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/oracle"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// medianRatOr is the median with med(∅) = empty, exactly.
// smoothTestGrid is the value grid of the brute-force tests; its bounds
// [0, 4] are the column bounds.
var smoothTestGrid = []float64{0, 1, 2, 3, 4}

func medianRatOr(empty float64) func([]float64) *big.Rat {
	return func(s []float64) *big.Rat {
		if len(s) == 0 {
			return new(big.Rat).SetFloat64(empty)
		}
		return oracle.Median(oracle.Rats(s))
	}
}

func TestMedianLSAtDistanceBruteForce(t *testing.T) {
	// A^(k)(x) = max LS(z) over every z within k additions or removals of
	// x, LS(z) = max |med(z') − med(z)| over z's neighbours (additions at
	// the bounds are the extreme ones: med is monotone in the added value).
	b := mech.Bounds{Lower: 0, Upper: 4}
	med := medianRatOr(b.Mid())
	ls := func(z []float64) *big.Rat {
		best := new(big.Rat)
		var neighbours [][]float64
		for i := range z {
			neighbours = append(neighbours, append(append([]float64{}, z[:i]...), z[i+1:]...))
		}
		neighbours = append(neighbours, append([]float64{b.Lower}, z...), append(append([]float64{}, z...), b.Upper))
		for _, y := range neighbours {
			d := new(big.Rat).Sub(med(y), med(z))
			if d.Abs(d).Cmp(best) > 0 {
				best = d
			}
		}
		return best
	}
	for _, x := range oracle.Multisets(smoothTestGrid, 5) {
		hi, _ := oracle.BallExtremes(x, smoothTestGrid, 3, ls)
		w := mech.SortedWindow{Count: int64(len(x)), First: 1, Values: x}
		at := func(r int64) (float64, error) { v, _ := w.At(b, r); return v, nil }
		for k := range 4 {
			got, _ := medianLSAtDistance(int64(len(x)), int64(k), at)
			if want := oracle.Float(hi[k]); got != want {
				t.Errorf("%v: A^(%d) got %v, want %v", x, k, got, want)
			}
		}
	}
}

func TestSmoothMedianSensitivityIsSmooth(t *testing.T) {
	// S(x) ≥ LS(x) = A^(0)(x) and S(x) ≤ e^β·S(x') for every neighbour:
	// the two properties the calibration rests on.
	b := mech.Bounds{Lower: 0, Upper: 4}
	m, err := NewSmoothMedian(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	sOf := func(x []float64) float64 {
		s, err := m.SmoothSensitivity(mech.WindowOf(m.Window(), x))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, x := range oracle.Multisets(smoothTestGrid, 5) {
		sx := sOf(x)
		w := mech.SortedWindow{Count: int64(len(x)), First: 1, Values: x}
		ls, _ := medianLSAtDistance(int64(len(x)), 0, func(r int64) (float64, error) { v, _ := w.At(b, r); return v, nil })
		if sx < ls {
			t.Errorf("%v: S got %v, want ≥ LS = %v", x, sx, ls)
		}
		var neighbours [][]float64
		for i := range x {
			neighbours = append(neighbours, append(append([]float64{}, x[:i]...), x[i+1:]...))
		}
		for _, v := range smoothTestGrid {
			y := append([]float64{}, x...)
			y = append(y, v)
			sortFloats(y)
			neighbours = append(neighbours, y)
		}
		for _, y := range neighbours {
			if sy := sOf(y); sx > math.Exp(m.beta)*sy*(1+1e-12) {
				t.Errorf("%v → %v: S %v > e^β·%v", x, y, sx, sy)
			}
		}
	}
}

// sortFloats sorts a small slice ascending (insertion sort keeps the test
// helpers free of extra imports).
func sortFloats(s []float64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestGridCauchy(t *testing.T) {
	// Chi-square goodness of fit of the exact grid Cauchy against its law
	// P[k] = φ((k−t)/σ)/Z, φ(z) = 1/(1+z²), Z = πσ(1 + O(e^(−2πσ))) by
	// Poisson summation, with the two tails as cells (their mass by the
	// midpoint rule, exact to 10^−6 relative here). 10^5 draws; the test
	// falsely rejects with probability 10^−6 (chi-square critical value).
	src := privtest.Seeded(t, 0xca01)
	for _, tc := range []struct{ t, sigma float64 }{{0.3, 5}, {-1234.75, 40}} {
		const draws, span = 100000, 200
		t0 := new(big.Rat).SetFloat64(tc.t)
		centre := math.Round(tc.t)
		counts := make([]int, 2*span+3) // k−centre in [−span, span], then the two tails
		for range draws {
			k := noise.NewGridCauchy(t0, tc.sigma).Draw(src)
			d := float64(k.Int64()) - centre
			switch {
			case d < -span:
				counts[2*span+1]++
			case d > span:
				counts[2*span+2]++
			default:
				counts[int(d)+span]++
			}
		}
		z := math.Pi * tc.sigma
		probs := make([]float64, len(counts))
		for i := -span; i <= span; i++ {
			u := (centre + float64(i) - tc.t) / tc.sigma
			probs[i+span] = 1 / (1 + u*u) / z
		}
		probs[2*span+1] = (math.Atan((centre-span-0.5-tc.t)/tc.sigma) + math.Pi/2) / math.Pi
		probs[2*span+2] = (math.Pi/2 - math.Atan((centre+span+0.5-tc.t)/tc.sigma)) / math.Pi
		stat, critical, err := privtest.ChiSquare(counts, probs, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		if stat > critical {
			t.Errorf("t=%v σ=%v: chi-square got %v, want ≤ %v", tc.t, tc.sigma, stat, critical)
		}
	}
}

func TestSmoothMedianErrorDistribution(t *testing.T) {
	// The release is med + (S/α)·Cauchy: |error| ≤ S/α with probability ½
	// exactly (up to the grid), on data where clamping never bites. With
	// N = 20000 draws the count of |error| ≤ scale is Binomial(N, ½): the
	// test falsely rejects with probability 10^−6 (privtest.Z6 standard errors).
	src := privtest.Seeded(t, 0xca02)
	b := mech.Bounds{Lower: -1000, Upper: 1000}
	m, err := NewSmoothMedian(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	sorted := make([]float64, 2001)
	for i := range sorted {
		sorted[i] = float64(i-1000) / 10 // spacing 0.1 around 0
	}
	w := mech.WindowOf(m.Window(), sorted)
	scale, _ := m.NoiseScale(w)
	const n = 20000
	within := 0
	for range n {
		y, err := m.Release(src, w)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(y) <= scale {
			within++
		}
	}
	if d := math.Abs(float64(within) - n/2); d > privtest.Z6*math.Sqrt(n)/2 {
		t.Errorf("|error| ≤ scale %v in %d of %d draws, want %d ± %.0f", scale, within, n, n/2, privtest.Z6*math.Sqrt(n)/2)
	}
	// A ramp with spacing 0.1 has A^(k) = 0.1·(k+1)/2 (gap of k+1 steps),
	// so S = max_k e^(−kβ)·0.05(k+1) = 0.05 (k = 0: β ≈ 0.73 > ln 2 at
	// ε = 1) and the scale is 0.05/α, α = 2 sinh(½) up to 10^−9.
	if want := 0.05 / (2 * math.Sinh(0.5)); math.Abs(scale-want) > 1e-8 {
		t.Errorf("noise scale got %v, want %v", scale, want)
	}
}

func TestSmoothMedianRejects(t *testing.T) {
	if _, err := NewSmoothMedian(mech.Bounds{Lower: 0, Upper: 1}, 1e-6); !errors.Is(err, mech.ErrInvalidEpsilon) {
		t.Errorf("ε = 1e-6: got %v, want %v", err, mech.ErrInvalidEpsilon)
	}
	if _, err := NewSmoothMedian(mech.Bounds{Lower: 1, Upper: 0}, 1); !errors.Is(err, mech.ErrInvalidBounds) {
		t.Errorf("bad bounds: got %v, want %v", err, mech.ErrInvalidBounds)
	}
	m, _ := NewSmoothMedian(mech.Bounds{Lower: 0, Upper: 100}, 1)
	sorted := make([]float64, 500)
	for i := range sorted {
		sorted[i] = float64(i) / 5
	}
	w := mech.WindowOf(m.Window(), sorted)
	short := mech.SortedWindow{Count: w.Count, First: w.First + 1, Values: w.Values[1:]}
	if _, err := m.Release(privtest.Seeded(t, 1), short); !errors.Is(err, mech.ErrWindowMismatch) {
		t.Errorf("short window: got %v, want %v", err, mech.ErrWindowMismatch)
	}
}
