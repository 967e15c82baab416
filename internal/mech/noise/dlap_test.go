package noise

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestUint128(t *testing.T) {
	const m = math.MaxUint64
	if got, want := mulAdd(m, m, m), (uint128{Hi: m, Lo: 0}); got != want {
		t.Errorf("(2^64-1)² + 2^64-1: got %v, want %v", got, want)
	}
	if got, want := (uint128{Hi: 3, Lo: 1}).quo(2), (uint128{Hi: 1, Lo: 1<<63 | 0}); got != want {
		t.Errorf("(3·2^64+1)/2: got %v, want %v", got, want)
	}
	if got, want := (uint128{Hi: 1, Lo: 5}).bigInt().String(), "18446744073709551621"; got != want {
		t.Errorf("bigInt: got %v, want %v", got, want)
	}
	if !(uint128{Lo: 1<<53 - 1}).below(53) || (uint128{Lo: 1 << 53}).below(53) || (uint128{Hi: 1}).below(53) {
		t.Errorf("below(53) wrong at the boundary")
	}
}

func TestNewDlapRoundsScaleUp(t *testing.T) {
	// Hand-derived: β = 1 → 2^62/2^62; β = 2 → 2^62/2^61; ε = 0.1 (the
	// float64 just above 1/10) → β slightly below 10, s = 2^58 and
	// t = ⌈2^58·2^55/3602879701896397⌉ = 2882303761517117281 (python
	// fractions), 159 below 10·2^58.
	for _, tc := range []struct {
		sens uint64
		eps  float64
		want Dlap
	}{
		{1, 1, Dlap{t: 1 << 62, s: 1 << 62}},
		{1, 0.5, Dlap{t: 1 << 62, s: 1 << 61}},
		{1, 0.1, Dlap{t: 2882303761517117281, s: 1 << 58}},
	} {
		got, err := NewDlap(tc.sens, tc.eps)
		if err != nil || got != tc.want {
			t.Errorf("newDlap(%v, %v): got %v (%v), want %v", tc.sens, tc.eps, got, err, tc.want)
		}
	}
	// Property: t/s is the smallest admissible rational ≥ Δ/ε.
	for _, eps := range []float64{mech.MinEpsilon, 1e-9, 0.3, 1 / 3.0, 2.5, 17, mech.MaxEpsilon} {
		for _, sens := range []uint64{1, 3, 1 << 9} {
			d, err := NewDlap(sens, eps)
			if err != nil {
				t.Fatalf("newDlap(%v, %v): %v", sens, eps, err)
			}
			want := new(big.Rat).Quo(new(big.Rat).SetUint64(sens), new(big.Rat).SetFloat64(eps))
			got := new(big.Rat).SetFrac(new(big.Int).SetUint64(d.t), new(big.Int).SetUint64(d.s))
			less := new(big.Rat).SetFrac(new(big.Int).SetUint64(d.t-1), new(big.Int).SetUint64(d.s))
			if got.Cmp(want) < 0 || less.Cmp(want) >= 0 || d.t > 1<<62 || d.s > 1<<62 || d.s&(d.s-1) != 0 {
				t.Errorf("newDlap(%v, %v) = %v/%v: not the least t/s ≥ %v", sens, eps, d.t, d.s, want.FloatString(20))
			}
		}
	}
	if _, err := NewDlap(1<<20, mech.MinEpsilon); err == nil {
		t.Errorf("scale 2^70: got nil error, want one")
	}
}

func TestDlapHalfWidth(t *testing.T) {
	// β = 1, 95%: P[|Z| > k] = 2e^-(k+1)/(1+e^-1) is 0.0728 at k = 2 and
	// 0.0268 at k = 3, so k = 3.
	d, _ := NewDlap(1, 1)
	if got := d.halfWidth(0.95); got != 3 {
		t.Errorf("got %v, want 3", got)
	}
	// Tiny scale: Z = 0 with probability tanh(50) > 0.95.
	d, _ = NewDlap(1, mech.MaxEpsilon)
	if got := d.halfWidth(0.95); got != 0 {
		t.Errorf("got %v, want 0", got)
	}
}

// dlapPMF returns P[Z = z] for scale β: (1-r)/(1+r)·r^|z|, r = e^(-1/β).
func dlapPMF(beta float64, z int) float64 {
	r := math.Exp(-1 / beta)
	return (1 - r) / (1 + r) * math.Pow(r, math.Abs(float64(z)))
}

// dlapMoment returns E[Z^p] for even p, summed from the pmf.
func dlapMoment(beta float64, p int) float64 {
	m := 0.0
	for z := 1; z < int(80*beta)+80; z++ {
		m += 2 * math.Pow(float64(z), float64(p)) * dlapPMF(beta, z)
	}
	return m
}

func TestDlapMatchesPMF(t *testing.T) {
	// χ² of 10^5 draws against the exact pmf on [-m, m] plus the two tails
	// pooled, false rejection 10⁻⁶ per scale; then the variance
	// 2r/(1-r)² with tolerance privtest.Z6·sd(sample variance), the sd from the
	// exact fourth moment (normal approximation of the sample variance).
	src := privtest.Seeded(t, 0x03)
	const draws = 100000
	for _, eps := range []float64{0.05, 0.3, 1, 2.5, 20} {
		d, _ := NewDlap(1, eps)
		beta := d.Scale()
		m := int(math.Ceil(beta*math.Log(draws))) + 1
		counts := make([]int, 2*m+2) // z = -m..m, then z < -m, z > m
		probs := make([]float64, len(counts))
		r := math.Exp(-1 / beta)
		for z := -m; z <= m; z++ {
			probs[z+m] = dlapPMF(beta, z)
		}
		// P[Z > m] = Σ_{z>m} (1-r)/(1+r)·r^z = r^(m+1)/(1+r).
		tail := math.Pow(r, float64(m+1)) / (1 + r)
		probs[2*m+1], probs[2*m] = tail, tail
		var sum, sumSq float64
		for range draws {
			neg, mag := d.Sample(src)
			z := int(mag.Lo)
			if neg {
				z = -z
			}
			switch {
			case z < -m:
				counts[2*m]++
			case z > m:
				counts[2*m+1]++
			default:
				counts[z+m]++
			}
			f := float64(z)
			sum, sumSq = sum+f, sumSq+f*f
		}
		stat, crit, err := privtest.ChiSquare(counts, probs, 1e-6)
		if err != nil || stat > crit {
			t.Errorf("ε=%v: χ² got %v (err %v), want ≤ %v", eps, stat, err, crit)
		}
		variance := 2 * r / ((1 - r) * (1 - r))
		sampleVar := sumSq/draws - (sum/draws)*(sum/draws)
		sd := math.Sqrt((dlapMoment(beta, 4) - variance*variance) / draws)
		if math.Abs(sampleVar-variance) > privtest.Z6*sd {
			t.Errorf("ε=%v: variance got %v, want %v ± %v", eps, sampleVar, variance, privtest.Z6*sd)
		}
	}
}

// TestDlapScaleIsTheRoundedQuotient: Scale is t/s rounded once to the
// nearest float64, ties to even, as big.Rat computes it, for scales of
// NewDlap and for numerators of 54 to 62 significant bits, ties and
// their neighbours included, over every shift.
func TestDlapScaleIsTheRoundedQuotient(t *testing.T) {
	check := func(d Dlap) {
		t.Helper()
		want, _ := new(big.Rat).SetFrac(new(big.Int).SetUint64(d.t), new(big.Int).SetUint64(d.s)).Float64()
		if got := d.Scale(); got != want {
			t.Errorf("Dlap{t: %d, s: %d}.Scale() = %v, want %v", d.t, d.s, got, want)
		}
	}
	for _, eps := range []float64{mech.MinEpsilon, 1e-9, 0.1, 0.3, 1 / 3.0, 1.25, 2.5, 17, mech.MaxEpsilon} {
		for _, sens := range []uint64{1, 3, 1 << 9, 123456789} {
			if d, err := NewDlap(sens, eps); err == nil {
				check(d)
			}
		}
	}
	src := rand.New(rand.NewPCG(7, 11))
	for shift := range 63 {
		for bitsT := 54; bitsT <= 62; bitsT++ {
			tie := uint64(1)<<(bitsT-1) | uint64(1)<<(bitsT-54) // halfway between two float64s
			for _, num := range []uint64{tie - 1, tie, tie + 1, tie | uint64(1)<<(bitsT-53), 1<<bitsT - 1, src.Uint64N(1<<bitsT-1) + 1} {
				check(Dlap{t: num, s: 1 << shift})
			}
		}
		check(Dlap{t: 1, s: 1 << shift})
	}
}
