package noise

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestUniformDeterministic(t *testing.T) {
	// Lemire: the result is the high word of x·n; x·3 for x = 2^63 is
	// 1.5·2^64 → 1. For n = 3 the low words below 2^64 mod 3 = 1 are
	// rejected: x = 0 gives lo = 0 < 1 and is redrawn.
	for _, tc := range []struct {
		name string
		vals []uint64
		n    uint64
		want uint64
	}{
		{name: "half", vals: []uint64{1 << 63}, n: 3, want: 1},
		{name: "max", vals: []uint64{math.MaxUint64}, n: 10, want: 9},
		{name: "rejected zero", vals: []uint64{0, math.MaxUint64}, n: 3, want: 2},
		{name: "n one", vals: []uint64{12345}, n: 1, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Uniform(&privtest.SeqSource{Vals: tc.vals}, tc.n); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUniformChiSquare(t *testing.T) {
	// n = 7 is not a power of two, so bias would show. χ² against the
	// uniform law; false rejection 10⁻⁶.
	src := privtest.Seeded(t, 0x01)
	const n, draws = 7, 70000
	counts := make([]int, n)
	probs := make([]float64, n)
	for i := range probs {
		probs[i] = 1.0 / n
	}
	for range draws {
		counts[Uniform(src, n)]++
	}
	stat, crit, err := privtest.ChiSquare(counts, probs, 1e-6)
	if err != nil || stat > crit {
		t.Errorf("χ² got %v (err %v), want ≤ %v; counts %v", stat, err, crit, counts)
	}
}

func TestBernoulliFrequencies(t *testing.T) {
	// Each frequency is tested at privtest.Z6: false rejection 10⁻⁶ per case.
	src := privtest.Seeded(t, 0x02)
	const draws = 200000
	for _, tc := range []struct {
		name string
		draw func() bool
		p    float64
	}{
		{name: "1/3", draw: func() bool { return Bernoulli(src, 1, 3) }, p: 1.0 / 3},
		{name: "exp(-0)", draw: func() bool { return BernoulliExp(src, 0, 5) }, p: 1},
		{name: "exp(-1/2)", draw: func() bool { return BernoulliExp(src, 1, 2) }, p: math.Exp(-0.5)},
		{name: "exp(-1)", draw: func() bool { return BernoulliExp(src, 7, 7) }, p: math.Exp(-1)},
		{name: "exp(-7/3)", draw: func() bool { return BernoulliExp(src, 7, 3) }, p: math.Exp(-7.0 / 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := 0
			for range draws {
				if tc.draw() {
					hits++
				}
			}
			se := math.Sqrt(tc.p * (1 - tc.p) / draws)
			if got := float64(hits) / draws; math.Abs(got-tc.p) > privtest.Z6*se {
				t.Errorf("frequency got %v, want %v ± %v", got, tc.p, privtest.Z6*se)
			}
		})
	}
}

func TestSamplersPanicOnBadArguments(t *testing.T) {
	src := rand.NewChaCha8([32]byte{})
	for name, f := range map[string]func(){
		"Uniform 0":         func() { Uniform(src, 0) },
		"Bernoulli num>den": func() { Bernoulli(src, 3, 2) },
		"BernoulliExp den0": func() { BernoulliExp(src, 1, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("got no panic, want one")
				}
			}()
			f()
		})
	}
}
