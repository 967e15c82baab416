package noise

import (
	"math"
	"math/big"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// expNegReference returns exp(−x) at 800 bits as 1/Σ x^i/i! (positive
// terms, no cancellation), an independent reference for moderate x.
func expNegReference(x *big.Rat) *big.Float {
	const prec = 800
	xf := new(big.Float).SetPrec(prec).SetRat(x)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := int64(1); i < 100000; i++ {
		term.Mul(term, xf)
		term.Quo(term, new(big.Float).SetInt64(i))
		sum.Add(sum, term)
		if term.MantExp(nil) < sum.MantExp(nil)-prec-8 {
			break
		}
	}
	return new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), sum)
}

// relativeError returns |w/ref − 1|.
func relativeError(w Weight, ref *big.Float) float64 {
	got := new(big.Float).SetPrec(800).SetMantExp(new(big.Float).SetUint64(w.Mant), int(w.Exp))
	d := new(big.Float).SetPrec(800).Quo(got, ref)
	d.Sub(d, big.NewFloat(1))
	f, _ := d.Float64()
	return math.Abs(f)
}

func TestLn2Constant(t *testing.T) {
	// ln 2 to 40 hex digits (from the series; cross-checked with math.Ln2
	// and the identity exp(−ln 2) = ½ below).
	if f, _ := ln2Const().Float64(); f != math.Ln2 {
		t.Errorf("ln 2 rounds to %v, want %v", f, math.Ln2)
	}
	var k int64
	half := fullExpNeg(ln2Const(), &k) // exp(−ln 2) = r·2^(−k)
	half.SetMantExp(half, int(-k))
	d := new(big.Float).Sub(half, big.NewFloat(0.5))
	if d.Sign() != 0 && d.MantExp(nil) > -180 {
		t.Errorf("exp(−ln 2) − ½ = %v, want below 2^−180", d)
	}
}

func TestExpNegAccuracy(t *testing.T) {
	// Every weight within ExpWeightError of the 800-bit reference, from
	// 0 to 5000 (weights down to 2^−7213) and at awkward rationals.
	xs := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(1, 3), big.NewRat(1, 1<<50),
		big.NewRat(355, 113), big.NewRat(5000, 1), big.NewRat(123456789, 1000000)}
	src := privtest.Seeded(t, 0xe1)
	for range 300 {
		xs = append(xs, big.NewRat(int64(src.Uint64()>>44), int64(src.Uint64()>>50)+1))
	}
	for _, x := range xs {
		w, err := ExpNeg(x)
		if err != nil {
			t.Fatal(err)
		}
		if w.Mant < 1<<62 || w.Mant > 1<<63 {
			t.Errorf("exp(−%v): mantissa %x outside [2^62, 2^63]", x, w.Mant)
		}
		if e := relativeError(w, expNegReference(x)); e > ExpWeightError {
			t.Errorf("exp(−%v): relative error %g, want ≤ 2^−62", x.FloatString(6), e)
		}
	}
	if w, _ := ExpNeg(new(big.Rat)); w != (Weight{Mant: 1 << 62, Exp: -62}) {
		t.Errorf("exp(0) = %+v, want 2^62·2^−62", w)
	}
	// Huge arguments: the exponent is right and the identity
	// exp(−(a+b)) = exp(−a)·exp(−b) holds to 3η.
	a, b := big.NewRat(1<<59, 1), big.NewRat(987654321, 7)
	wa, _ := ExpNeg(a)
	wb, _ := ExpNeg(b)
	wab, _ := ExpNeg(new(big.Rat).Add(a, b))
	prod := new(big.Float).SetPrec(300).SetMantExp(new(big.Float).SetUint64(wa.Mant), 0)
	prod.Mul(prod, new(big.Float).SetUint64(wb.Mant))
	ratio := new(big.Float).SetPrec(300).Quo(prod, new(big.Float).SetUint64(wab.Mant))
	ratio.SetMantExp(ratio, int(wa.Exp+wb.Exp-wab.Exp))
	if f, _ := ratio.Float64(); math.Abs(f-1) > 3*ExpWeightError {
		t.Errorf("exp(−a)exp(−b)/exp(−(a+b)) = %v, want 1 ± 3η", f)
	}
	if _, err := ExpNeg(big.NewRat(-1, 2)); err == nil {
		t.Error("negative exponent accepted")
	}
	if _, err := ExpNeg(big.NewRat(1<<61, 1)); err == nil {
		t.Error("exponent 2^61 accepted")
	}
}

func TestExpNegPowersMatchesExpNeg(t *testing.T) {
	x0, step := big.NewRat(7, 3), big.NewRat(1, 1<<20+1)
	ms := []uint64{0, 0, 1, 2, 3, 97, 98, 1000, 1 << 20, 1<<20 + 12345, 1 << 33}
	got, err := ExpNegPowers(x0, step, ms)
	if err != nil {
		t.Fatal(err)
	}
	for j, m := range ms {
		x := new(big.Rat).Add(x0, new(big.Rat).Mul(step, new(big.Rat).SetInt(new(big.Int).SetUint64(m))))
		if m < 1<<32 {
			if e := relativeError(got[j], expNegReference(x)); e > ExpWeightError {
				t.Errorf("m = %d: relative error %g", m, e)
			}
		}
		want, _ := ExpNeg(x)
		if d := int64(got[j].Mant) - int64(want.Mant); got[j].Exp != want.Exp || d < -1 || d > 1 {
			t.Errorf("m = %d: %+v, ExpNeg %+v", m, got[j], want)
		}
	}
	if _, err := ExpNegPowers(x0, step, []uint64{2, 1}); err == nil {
		t.Error("unsorted multiples accepted")
	}
	if _, err := ExpNegPowers(x0, big.NewRat(1<<40, 1), []uint64{1 << 30}); err == nil {
		t.Error("exponent 2^70 accepted")
	}
}

func TestExpTableLaw(t *testing.T) {
	// Weights 3·e^0, 1·e^−1, 0·e^−2, 2·e^−1/2, and one e^−1000 (far):
	// LogProb against the closed form, then χ² of 200,000 draws (the far
	// entry has probability e^−1000 and is pooled with entry 0),
	// false rejection 10⁻⁶.
	xs := []*big.Rat{big.NewRat(0, 1), big.NewRat(1, 1), big.NewRat(2, 1), big.NewRat(1, 2), big.NewRat(1000, 1)}
	counts := []uint64{3, 1, 0, 2, 1}
	ws := make([]Weight, len(xs))
	for i, x := range xs {
		ws[i], _ = ExpNeg(x)
	}
	table, err := NewExpTable(counts, ws)
	if err != nil {
		t.Fatal(err)
	}
	z := 3 + math.Exp(-1) + 2*math.Exp(-0.5)
	want := []float64{math.Log(3 / z), -1 - math.Log(z), math.Inf(-1), math.Log(2) - 0.5 - math.Log(z), -1000 - math.Log(z)}
	for i, w := range want {
		if got := table.LogProb(i); !(got == w || math.Abs(got-w) < 1e-12) {
			t.Errorf("LogProb(%d) = %v, want %v", i, got, w)
		}
	}
	src := privtest.Seeded(t, 0xe2)
	observed := make([]int, 4)
	for range 200000 {
		i := table.Draw(src)
		if i == 4 {
			i = 0
		}
		observed[i]++
	}
	probs := []float64{3 / z, math.Exp(-1) / z, 0, 2 * math.Exp(-0.5) / z}
	if observed[2] != 0 {
		t.Errorf("zero-multiplicity entry drawn %d times", observed[2])
	}
	stat, crit, err := privtest.ChiSquare([]int{observed[0], observed[1], observed[3]}, []float64{probs[0], probs[1], probs[3]}, 1e-6)
	if err != nil || stat > crit {
		t.Errorf("χ² %v > %v (%v): %v", stat, crit, err, observed)
	}
	if _, err := NewExpTable([]uint64{0}, ws[:1]); err == nil {
		t.Error("a table without positive weight was accepted")
	}
}

func TestExpTableFarEntries(t *testing.T) {
	// Two weights e^−0 and e^−2000: the far one has proposal mass 1 out of
	// 2^199+1 (the largest, 2^62·2^−62, has its top bit scaled to 2^199) and acceptance e^−2000·2^200 (tiny). Forcing the uniform onto
	// it (the last value) and then a 64-bit word that is not 0 rejects it,
	// and the next draw lands on entry 0.
	w0, _ := ExpNeg(new(big.Rat))
	w1, _ := ExpNeg(big.NewRat(2000, 1))
	table, err := NewExpTable(nil, []Weight{w0, w1})
	if err != nil {
		t.Fatal(err)
	}
	total := table.cumulative[1]
	if total.Cmp(new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 199), big.NewInt(1))) != 0 {
		t.Fatalf("proposal total %v, want 2^199+1", total)
	}
	// uniformBig draws 4 words big-endian and keeps the top 200 bits: the
	// word 1<<63 then zeros gives exactly 2^199 → entry 1; the word 5
	// rejects it; then zeros give 0 → entry 0.
	seq := &privtest.SeqSource{Vals: []uint64{1 << 63, 0, 0, 0, 5, 0, 0, 0, 0}}
	if got := table.Draw(seq); got != 0 {
		t.Errorf("got %d, want the far entry rejected and then 0", got)
	}
	if lp := table.LogProb(1); math.Abs(lp+2000) > 1e-9 {
		t.Errorf("LogProb(far) = %v, want −2000", lp)
	}
}

func TestBernoulliDyadic(t *testing.T) {
	// P = 3/(5·2^2) = 0.15, and P = 1/(1·2^70) decided by the 64-bit words.
	src := privtest.Seeded(t, 0xe3)
	hits := 0
	const draws = 100000
	for range draws {
		if bernoulliDyadic(src, big.NewInt(3), 2, big.NewInt(5)) {
			hits++
		}
	}
	if se := math.Sqrt(0.15 * 0.85 / draws); math.Abs(float64(hits)/draws-0.15) > privtest.Z6*se {
		t.Errorf("frequency %v, want 0.15 ± %v", float64(hits)/draws, privtest.Z6*se)
	}
	if bernoulliDyadic(&privtest.SeqSource{Vals: []uint64{1}}, big.NewInt(1), 200, big.NewInt(1)) {
		t.Error("a non-zero first word must reject at shift 200")
	}
}
