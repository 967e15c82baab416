package piecewise

import (
	"math"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Seeded statistical tests: on fixed data, each mechanism's output law
// matches its theory. Each states its false-rejection probability.

// piecewiseCellProbabilities returns, for prepared law pp, the probability
// of each (piece, quarter of its points) cell: the piece probability
// exp(lw)/Σexp(lw) times, inside, the truncated-geometric mass
// (r^j0 − r^j1)/(1 − r^N) of points j0 ≤ j < j1 (PLM) or (j1−j0)/N (INV and
// the centre).
func piecewiseCellProbabilities(pp *preparedPiecewise) []float64 {
	lw := make([]float64, len(pp.pieces))
	top := math.Inf(-1)
	for i, pc := range pp.pieces {
		lw[i] = pp.p.logWeight(pc)
		top = math.Max(top, lw[i])
	}
	total := 0.0
	for i := range lw {
		total += math.Exp(lw[i] - top)
	}
	var probs []float64
	for i, pc := range pp.pieces {
		p := math.Exp(lw[i]-top) / total
		n := float64(pc.count)
		for q := range 4 {
			j0, j1 := math.Floor(float64(q)*n/4), math.Floor(float64(q+1)*n/4)
			inside := (j1 - j0) / n
			if pc.side != 0 && pp.p.kind == plmKind && pc.count > 1 {
				a := pp.p.ratio(pc)
				inside = (math.Exp(-a*j0) - math.Exp(-a*j1)) / -math.Expm1(-a*n)
			}
			probs = append(probs, p*inside)
		}
	}
	return probs
}

// checkPiecewiseLaw draws from pp and runs a chi-square test on the
// (piece, quarter) cells. False rejection 10^−6 (chi-square critical value
// at 1 − 10^−6; privtest.ChiSquare pools cells expected below 5).
func checkPiecewiseLaw(t *testing.T, name string, pp *preparedPiecewise, src noise.Source, draws int) {
	t.Helper()
	counts := make([]int, 4*len(pp.pieces))
	for range draws {
		i, j, err := pp.drawPoint(src)
		if err != nil {
			t.Fatal(err)
		}
		n, q := float64(pp.pieces[i].count), 0
		for k := 1; k <= 3; k++ {
			if float64(j) >= math.Floor(float64(k)*n/4) {
				q = k
			}
		}
		counts[4*i+q]++
	}
	stat, critical, err := privtest.ChiSquare(counts, piecewiseCellProbabilities(pp), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if stat > critical {
		t.Errorf("%s: chi-square got %v, want ≤ %v", name, stat, critical)
	}
}

func TestPiecewiseSamplerLaw(t *testing.T) {
	src := privtest.Seeded(t, 0x5a01)
	b := mech.Bounds{Lower: 0, Upper: 20}
	data := []float64{2, 3, 5, 5, 5, 7, 11, 12, 19}
	for _, tc := range []struct {
		name string
		kind piecewiseKind
		q    float64
		rho  float64
	}{
		{"PLM median ρ=½", plmKind, 0.5, 0.5},
		{"PLM 0.9 ρ=0", plmKind, 0.9, 0},
		{"INV median ρ=½", invKind, 0.5, 0.5},
	} {
		m, err := newBreakpointQuantile(tc.kind, b, tc.q, 1, tc.rho)
		if err != nil {
			t.Fatal(err)
		}
		bp, err := m.Breakpoints(mech.WindowOf(m.Window(), data))
		if err != nil {
			t.Fatal(err)
		}
		pp, err := m.sampler.prepare(bp)
		if err != nil {
			t.Fatal(err)
		}
		checkPiecewiseLaw(t, tc.name, pp, src, 200000)
	}
	v, _ := NewVariance(b, 1, 0)
	bp, err := v.Breakpoints(sketchOf(b, data, v.Extremes()))
	if err != nil {
		t.Fatal(err)
	}
	pp, _ := v.sampler.prepare(bp)
	checkPiecewiseLaw(t, "PLM variance", pp, src, 200000)
}

func TestPiecewiseMeanAbsError(t *testing.T) {
	// The mean |output − f| over 10^5 releases (before the clamp, which
	// this data never reaches: ρ = 0 and f far inside) matches the analytic
	// E|err| of the continuous mechanism (the grid shifts it by O(h), far
	// below the tolerance). The CLT tolerance privtest.Z6·s/√N falsely rejects with
	// probability about 10^−6.
	src := privtest.Seeded(t, 0x5a02)
	b := mech.Bounds{Lower: -100, Upper: 100}
	data := make([]float64, 301)
	for i := range data {
		data[i] = float64(i-150) / 10
	}
	for _, kind := range []piecewiseKind{plmKind, invKind} {
		m, _ := newBreakpointQuantile(kind, b, 0.5, 0.5, 0)
		w := mech.WindowOf(m.Window(), data)
		bp, _ := m.Breakpoints(w)
		pp, _ := m.sampler.prepare(bp)
		want, _ := m.ExpectedAbsError(w)
		const n = 100000
		var sum, sum2 float64
		for range n {
			i, j, err := pp.drawPoint(src)
			if err != nil {
				t.Fatal(err)
			}
			pc := pp.pieces[i]
			step := pc.side
			if step == 0 {
				step = 1
			}
			e := math.Abs(float64(pc.first+step*j)*pp.p.step - bp.F())
			sum += e
			sum2 += e * e
		}
		mean := sum / n
		sd := math.Sqrt(sum2/n - mean*mean)
		if math.Abs(mean-want) > privtest.Z6*sd/math.Sqrt(n) {
			t.Errorf("kind %d: mean |err| got %v, want %v ± %v", kind, mean, want, privtest.Z6*sd/math.Sqrt(n))
		}
	}
}
