package privtest

import (
	"math"
	"math/big"
	"testing"
)

func TestExactLossRandomizedResponse(t *testing.T) {
	// Randomised response at ε = ln 3: P = (3/4, 1/4), Q = (1/4, 3/4).
	// Worst ln 3; at ε = ln 2 the mass above is 3/4 − 2·1/4 = 1/4.
	lnP := []float64{math.Log(0.75), math.Log(0.25)}
	lnQ := []float64{math.Log(0.25), math.Log(0.75)}
	l, err := ExactLoss(lnP, lnQ, math.Ln2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l.Worst-math.Log(3)) > 1e-15 || math.Abs(l.MassAbove-0.25) > 1e-15 || l.ZeroMismatch != 0 {
		t.Errorf("got %+v, want worst ln 3, mass above 1/4", l)
	}
	if l.Holds(math.Ln2, 0) || !l.Holds(math.Log(3), 0) || !l.Holds(math.Ln2, 0.25) || l.Holds(math.Ln2, 0.24) {
		t.Errorf("Holds wrong for %+v", l)
	}
}

func TestExactLossZeroCells(t *testing.T) {
	// A cell of probability 0 on one side only: infinite loss, and the
	// mass above ε is that cell's probability (1/2 − e^ε·0 on one side).
	l, err := ExactLossMaps(map[float64]float64{1: 0.5, 2: 0.5}, map[float64]float64{1: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(l.Worst, 1) || l.ZeroMismatch != 1 || math.Abs(l.MassAbove-0.5) > 1e-15 {
		t.Errorf("got %+v", l)
	}
	if l.Holds(100, 0) || !l.Holds(100, 0.5) {
		t.Errorf("Holds wrong for %+v", l)
	}
	// Cells with probability 0 on both sides are ignored.
	if l, _ := ExactLoss([]float64{0, math.Inf(-1)}, []float64{0, math.Inf(-1)}, 1); l.Worst != 0 || l.MassAbove != 0 {
		t.Errorf("identical laws: got %+v", l)
	}
}

func TestExactLossRejects(t *testing.T) {
	for name, c := range map[string][2][]float64{
		"lengths":     {{0}, {0, math.Inf(-1)}},
		"not summing": {{math.Log(0.5)}, {0}},
		"NaN":         {{math.NaN()}, {0}},
	} {
		if _, err := ExactLoss(c[0], c[1], 1); err == nil {
			t.Errorf("%s: got nil error", name)
		}
	}
}

func TestMaxLoss(t *testing.T) {
	var m MaxLoss
	m.Add("a", Loss{Worst: 0.5, MassAbove: 0.1})
	m.Add("b", Loss{Worst: 0.7})
	m.Add("c", Loss{Worst: 0.2, MassAbove: 0.3})
	if m.Pair != "b" || m.Worst != 0.7 || m.MassAbove != 0.3 || m.Pairs != 3 {
		t.Errorf("got %+v", m)
	}
}

func TestExactLossMasses(t *testing.T) {
	// Unnormalised masses (3, 1) against (1, 3): randomised response at
	// ln 3 again. Then two laws 2^−50 apart in log-ratio, where float64
	// log-probabilities would be lost in rounding: the loss is 2^−50 to
	// 10^−15 relative. Then a cell far below float64's range.
	l, err := ExactLossMasses([]*big.Float{big.NewFloat(3), big.NewFloat(1)}, []*big.Float{big.NewFloat(1), big.NewFloat(3)}, math.Ln2)
	if err != nil || math.Abs(l.Worst-math.Log(3)) > 1e-15 || math.Abs(l.MassAbove-0.25) > 1e-15 {
		t.Errorf("got %+v, %v", l, err)
	}
	tiny := 0x1p-50
	a := new(big.Float).SetPrec(256).SetFloat64(1)
	b := new(big.Float).SetPrec(256).SetFloat64(math.Exp(tiny))
	b.Add(b, new(big.Float).SetMantExp(big.NewFloat(1), -300)) // below float64 resolution of 1+x
	l, err = ExactLossMasses([]*big.Float{a, b}, []*big.Float{b, a}, tiny)
	if err != nil || math.Abs(l.Worst-tiny)/tiny > 1e-12 {
		t.Errorf("tiny ε: got %+v, %v, want worst %v", l, err, tiny)
	}
	far := new(big.Float).SetMantExp(big.NewFloat(1), -100000)
	l, err = ExactLossMasses([]*big.Float{big.NewFloat(1), far}, []*big.Float{big.NewFloat(1), nil}, 1)
	if err != nil || l.ZeroMismatch != 1 || !math.IsInf(l.Worst, 1) {
		t.Errorf("far cell: got %+v, %v", l, err)
	}
	if _, err := ExactLossMasses([]*big.Float{big.NewFloat(-1)}, []*big.Float{big.NewFloat(1)}, 1); err == nil {
		t.Error("negative mass accepted")
	}
}
