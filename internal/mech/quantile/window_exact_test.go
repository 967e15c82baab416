package quantile

import (
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// windowLoss returns the exact loss between the laws of m on the sorted
// values d and d2. Each law is a list of pieces of grid points with a
// constant probability per point; the cells are the intervals between the
// pieces' ends of both laws, so both laws are uniform on each cell and its
// mass is piece mass × cell points / piece points.
func windowLoss(t *testing.T, m *WindowExponential, d, d2 []float64) privtest.Loss {
	t.Helper()
	type law struct {
		ps     []piece
		masses []*big.Float
	}
	var laws [2]law
	var ends []int64
	for k, data := range [2][]float64{d, d2} {
		ps, table, err := m.law(mech.WindowOf(m.Window(), data))
		if err != nil {
			t.Fatal(err)
		}
		laws[k].ps = ps
		for i, p := range ps {
			laws[k].masses = append(laws[k].masses, table.Mass(i))
			ends = append(ends, p.after, p.after+p.points)
		}
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	var cells [2][]*big.Float
	for c := 1; c < len(ends); c++ {
		from, to := ends[c-1], ends[c]
		for k, l := range laws {
			i := slices.IndexFunc(l.ps, func(p piece) bool { return p.points > 0 && p.after <= from && to <= p.after+p.points })
			if i < 0 {
				t.Fatalf("cell (%d, %d] outside the pieces of law %d", from, to, k)
			}
			mass := new(big.Float).SetPrec(256).Mul(l.masses[i], new(big.Float).SetInt64(to-from))
			cells[k] = append(cells[k], mass.Quo(mass, new(big.Float).SetInt64(l.ps[i].points)))
		}
	}
	loss, err := privtest.ExactLossMasses(cells[0], cells[1], m.epsilon)
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

// windowPair is one neighbouring pair: d2 is d with one value added.
type windowPair struct {
	name  string
	q     float64
	k     int64
	d, d2 []float64
}

// windowPairs returns the pairs of the exact checks on bounds [0, 10]:
// n = 0 → 1 and 1 → 2 with values at the bounds; ties at the target rank
// (the added value tied too); all values equal; half at each bound; a
// clipped window (k = 1, 2 on 30 values); and random datasets of up to 12
// values drawn from a few tied values and the bounds, for quantiles 0,
// 0.25, 0.5, 0.9, 1 and 1/3 and windows k = 1, 2, 3 and DefaultWindow.
func windowPairs(t *testing.T, eps float64) []windowPair {
	src := privtest.Seeded(t, 0xa6)
	spread := ranks(30)
	fixed := []struct {
		name string
		d    []float64
		v    float64
	}{
		{"n=0→1 at 10", nil, 10},
		{"n=0→1 at 0", nil, 0},
		{"n=1→2 at the bounds", []float64{0}, 10},
		{"ties at the target", []float64{1, 5, 5, 5, 9}, 5},
		{"ties, added above", []float64{1, 5, 5, 5, 9}, 10},
		{"all equal", []float64{5, 5, 5, 5}, 10},
		{"all equal, added equal", []float64{5, 5, 5, 5}, 5},
		{"half and half", []float64{0, 0, 0, 10, 10, 10}, 10},
		{"values at the bounds", []float64{0, 0, 10, 10}, 0},
		{"spread", spread[:10], 9.5},
		{"spread 30", spread[:30:30], 0},
	}
	qs := []float64{0, 0.25, 0.5, 0.9, 1, 1.0 / 3}
	var pairs []windowPair
	for _, q := range qs {
		for _, k := range []int64{1, 2, 3, DefaultWindow(eps, q)} {
			for _, f := range fixed {
				d := slices.Clone(f.d)
				for i := range d {
					d[i] = min(d[i], 10)
				}
				d2 := append(slices.Clone(d), f.v)
				slices.Sort(d2)
				pairs = append(pairs, windowPair{fmt.Sprintf("%s q=%v k=%d", f.name, q, k), q, k, d, d2})
			}
		}
	}
	values := []float64{0, 0, 2.5, 5, 5, 5, 7.25, 10, 10}
	for i := range 600 {
		n := int(src.Uint64() % 13)
		d := make([]float64, n)
		for j := range d {
			d[j] = values[src.Uint64()%uint64(len(values))]
		}
		slices.Sort(d)
		d2 := append(slices.Clone(d), values[src.Uint64()%uint64(len(values))])
		slices.Sort(d2)
		q := qs[i%len(qs)]
		k := []int64{1, 2, 3, DefaultWindow(eps, q)}[i%4]
		pairs = append(pairs, windowPair{fmt.Sprintf("random %v + %v q=%v k=%d", d, d2, q, k), q, k, d, d2})
	}
	return pairs
}

// TestWindowExactPrivacy computes both output laws of every pair, at ε
// from MinEpsilon to MaxEpsilon, from the exact masses the sampler draws
// with, and checks the worst log-ratio ≤ ε.
func TestWindowExactPrivacy(t *testing.T) {
	for _, eps := range []float64{mech.MinEpsilon, 1e-3, 0.3, 1, 4, 30, mech.MaxEpsilon} {
		var worst privtest.MaxLoss
		for _, p := range windowPairs(t, eps) {
			m, err := NewWindowExponential(mech.Bounds{Lower: 0, Upper: 10}, p.q, eps, p.k)
			if err != nil {
				t.Fatal(err)
			}
			l := windowLoss(t, m, p.d, p.d2)
			l.Check(t, p.name, eps, 0)
			worst.Add(p.name, l)
		}
		t.Logf("ε = %v: worst exact loss %.17g (ratio to ε %.17g) over %d pairs, at %s", eps, worst.Worst, worst.Worst/eps, worst.Pairs, worst.Pair)
	}
}

// TestWindowExactCatchesCutNoise: with the noise scale cut by 25% (the
// exponent per rank ×4/3), the exact check must fail on some pair. This
// replaces the sampled audit that only caught a halved scale.
func TestWindowExactCatchesCutNoise(t *testing.T) {
	for _, eps := range []float64{mech.MinEpsilon, 0.3, 1, 4} {
		var worst privtest.MaxLoss
		for _, p := range windowPairs(t, eps) {
			m, err := NewWindowExponential(mech.Bounds{Lower: 0, Upper: 10}, p.q, eps, p.k)
			if err != nil {
				t.Fatal(err)
			}
			m.scale.Mul(m.scale, big.NewRat(4, 3))
			worst.Add(p.name, windowLoss(t, m, p.d, p.d2))
		}
		t.Logf("ε = %v, scale cut 25%%: worst exact loss %.6g (ratio %.4f) at %s", eps, worst.Worst, worst.Worst/eps, worst.Pair)
		if worst.Holds(eps, 0) {
			t.Errorf("ε = %v: the exact check missed a 25%% noise cut (worst loss %v)", eps, worst.Worst)
		}
	}
}
