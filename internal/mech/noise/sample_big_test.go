package noise

import (
	"math"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// TestUniformBigExactLaw enumerates every pattern of the b = bitlen(n)
// bits UniformBig reads, for n = 5 (one word) and n = 2^64 + 3 (two
// words, the second cut to one bit), with garbage in the bits it must
// ignore: each pattern below n must give its own value, and each pattern
// at or above n a redraw (then the next pattern, 0). So every value of
// [0, n) comes from exactly one of the 2^b equally likely patterns and the
// law, conditioned on not redrawing, is uniform on [0, n) exactly.
func TestUniformBigExactLaw(t *testing.T) {
	const garbage = 0xdead_beef_0000_0000
	// n = 5: patterns 0..7 in the low 3 bits.
	n := big.NewInt(5)
	seen := map[int64]bool{}
	for v := uint64(0); v < 8; v++ {
		src := &privtest.SeqSource{Vals: []uint64{v | garbage, 0}}
		got := UniformBig(src, n)
		if v < 5 {
			if got.Int64() != int64(v) || len(src.Vals) != 1 {
				t.Errorf("n=5, pattern %d: got %v (%d values left), want %d in one draw", v, got, len(src.Vals), v)
			}
			seen[got.Int64()] = true
		} else if got.Sign() != 0 || len(src.Vals) != 0 {
			t.Errorf("n=5, pattern %d: got %v (%d values left), want a redraw giving 0", v, got, len(src.Vals))
		}
	}
	if len(seen) != 5 {
		t.Errorf("n=5: values %v, want each of 0..4 once", seen)
	}
	// n = 2^64 + 3: bit 64 comes from the second word's lowest bit.
	n = new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(3))
	for _, hi := range []uint64{0, 1} {
		for _, lo := range []uint64{0, 2, 3, 4, math.MaxUint64} {
			want := new(big.Int).Add(new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64), new(big.Int).SetUint64(lo))
			src := &privtest.SeqSource{Vals: []uint64{lo, hi | garbage, 7, 0}}
			got := UniformBig(src, n)
			if want.Cmp(n) < 0 {
				if got.Cmp(want) != 0 || len(src.Vals) != 2 {
					t.Errorf("n=2^64+3, pattern %v: got %v, want it in one draw", want, got)
				}
			} else if got.Int64() != 7 || len(src.Vals) != 0 {
				t.Errorf("n=2^64+3, pattern %v: got %v, want a redraw giving 7", want, got)
			}
		}
	}
}

// TestBernoulliBigExactLaw: for den = 5 and every num in 0..5, exactly num
// of the 5 accepted patterns of UniformBig (TestUniformBigExactLaw) give
// true, so P[true] = num/5 exactly.
func TestBernoulliBigExactLaw(t *testing.T) {
	den := big.NewInt(5)
	for num := int64(0); num <= 5; num++ {
		hits := 0
		for v := uint64(0); v < 5; v++ {
			if BernoulliBig(&privtest.SeqSource{Vals: []uint64{v}}, big.NewInt(num), den) {
				hits++
			}
		}
		if hits != int(num) {
			t.Errorf("%d/5: %d of 5 patterns true, want %d", num, hits, num)
		}
	}
}

// TestBernoulliExpRatFrequencies draws Bernoulli(exp(−x)) for rationals
// whose numerator and denominator do not fit 64 bits, and one that does,
// and compares the frequencies with exp(−x) by a chi-square test on
// (true, false) whose false-rejection probability is 10⁻⁶ per case.
func TestBernoulliExpRatFrequencies(t *testing.T) {
	src := privtest.Seeded(t, 0x03)
	const draws = 200000
	pow := func(k uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), k) }
	for _, tc := range []struct {
		name string
		x    *big.Rat
	}{
		{"0", new(big.Rat)},
		{"(2^80+1)/(3·2^79)", new(big.Rat).SetFrac(new(big.Int).Add(pow(80), big.NewInt(1)), new(big.Int).Mul(big.NewInt(3), pow(79)))},
		{"(5·2^90+7)/2^90", new(big.Rat).SetFrac(new(big.Int).Add(new(big.Int).Mul(big.NewInt(5), pow(90)), big.NewInt(7)), pow(90))},
		{"1/(2^70+1)", new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Add(pow(70), big.NewInt(1)))},
		{"7/3", big.NewRat(7, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xf, _ := tc.x.Float64()
			p := math.Exp(-xf)
			counts := make([]int, 2)
			for range draws {
				if BernoulliExpRat(src, tc.x) {
					counts[0]++
				} else {
					counts[1]++
				}
			}
			if p == 1 {
				if counts[1] != 0 {
					t.Errorf("exp(−0): %d false draws", counts[1])
				}
				return
			}
			stat, crit, err := privtest.ChiSquare(counts, []float64{p, 1 - p}, 1e-6)
			if err != nil || stat > crit {
				t.Errorf("χ² %v (err %v), want ≤ %v; counts %v, p %v", stat, err, crit, counts, p)
			}
		})
	}
}

func TestBigSamplersPanicOnBadArguments(t *testing.T) {
	src := &privtest.SeqSource{Vals: []uint64{0}}
	for name, f := range map[string]func(){
		"UniformBig 0":          func() { UniformBig(src, new(big.Int)) },
		"BernoulliBig num>den":  func() { BernoulliBig(src, big.NewInt(3), big.NewInt(2)) },
		"BernoulliBig num<0":    func() { BernoulliBig(src, big.NewInt(-1), big.NewInt(2)) },
		"BernoulliExpRat x < 0": func() { BernoulliExpRat(src, big.NewRat(-1, 2)) },
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
