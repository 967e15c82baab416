package piecewise

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/oracle"
)

// quantileTestGrid is the value grid of the brute-force tests; its bounds
// [0, 4] are the column bounds.
var quantileTestGrid = []float64{0, 1, 2, 3, 4}

var quantileTestQs = []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1}

func TestPiecewiseQuantileBreakpointsBruteForce(t *testing.T) {
	// The breakpoints must be the exact sup and inf of f over each ball of
	// radius ℓ ≤ 3 (add/remove), for every dataset of at most 4 values.
	b := mech.Bounds{Lower: 0, Upper: 4}
	for _, q := range quantileTestQs {
		m, err := NewQuantile(b, q, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range oracle.Multisets(quantileTestGrid, 4) {
			bp, err := m.Breakpoints(mech.WindowOf(m.Window(), x))
			if err != nil {
				t.Fatalf("q=%v %v: %v", q, x, err)
			}
			hi, lo := oracle.BallExtremes(x, quantileTestGrid, 3, oracle.Percentile(q, b.Lower))
			for l := range 4 {
				if want := oracle.Float(hi[l]); bp.Up[l] != want {
					t.Errorf("q=%v x=%v: u_%d got %v, want %v", q, x, l, bp.Up[l], want)
				}
				if want := oracle.Float(lo[l]); bp.Down[l] != want {
					t.Errorf("q=%v x=%v: d_%d got %v, want %v", q, x, l, bp.Down[l], want)
				}
			}
		}
	}
}

func TestPiecewiseQuantileV3(t *testing.T) {
	// The validity contract on every neighbouring pair (one value of the
	// grid added, or one value removed), at every depth including the tail:
	// u_ℓ(x) ≤ u_{ℓ+1}(x') and d_ℓ(x) ≥ d_{ℓ+1}(x'), and V1, V2, V4.
	b := mech.Bounds{Lower: 0, Upper: 4}
	for _, q := range quantileTestQs {
		m, _ := NewQuantile(b, q, 1, 0)
		bpOf := func(x []float64) Breakpoints {
			bp, err := m.Breakpoints(mech.WindowOf(m.Window(), x))
			if err != nil {
				t.Fatal(err)
			}
			if err := bp.validate(b); err != nil {
				t.Fatalf("q=%v %v: %v", q, x, err)
			}
			return bp
		}
		for _, x := range oracle.Multisets(quantileTestGrid, 4) {
			bx := bpOf(x)
			var neighbours [][]float64
			for i := range x {
				neighbours = append(neighbours, slices.Delete(slices.Clone(x), i, i+1))
			}
			for _, v := range quantileTestGrid {
				y := append(slices.Clone(x), v)
				slices.Sort(y)
				neighbours = append(neighbours, y)
			}
			for _, y := range neighbours {
				by := bpOf(y)
				for l := 0; l+1 < len(bx.Up); l++ {
					if bx.Up[l] > by.Up[l+1] || bx.Down[l] < by.Down[l+1] {
						t.Fatalf("q=%v x=%v x'=%v: V3 fails at ℓ=%d: u %v > %v or d %v < %v",
							q, x, y, l, bx.Up[l], by.Up[l+1], bx.Down[l], by.Down[l+1])
					}
				}
			}
		}
	}
}

func TestPiecewiseDigestVector(t *testing.T) {
	// Digest §6.1: x = [2, 3, 5, 7, 11] in [0, 20], lower median, swap
	// breakpoints u = [5, 7, 11, 20], d = [5, 3, 2, 0], ρ = 0 (the sampler
	// takes any valid breakpoints). Piece probabilities, E|err| of PLM and
	// INV, hand-checkable from the closed forms of digest §2.3.
	bp := Breakpoints{Up: []float64{5, 7, 11, 20}, Down: []float64{5, 3, 2, 0}}
	r := mech.Bounds{Lower: 0, Upper: 20}
	for _, tc := range []struct {
		eps, plm, inv float64
		probs         []float64 // +1, +2, +3, −1, −2, −3
	}{
		{2, 3.079403, 3.367542, []float64{0.272923, 0.200805, 0.166212, 0.272923, 0.050201, 0.036936}},
		{1, 4.591538, 4.777227, []float64{0.180516, 0.218977, 0.298837, 0.180516, 0.054744, 0.066408}},
	} {
		plm, err := newPiecewiseSampler(plmKind, r, tc.eps, 0)
		if err != nil {
			t.Fatal(err)
		}
		inv, _ := newPiecewiseSampler(invKind, r, tc.eps, 0)
		if got := plm.expectedAbsError(bp); math.Abs(got-tc.plm) > 1e-6 {
			t.Errorf("ε=%v PLM E|err|: got %v, want %v", tc.eps, got, tc.plm)
		}
		if got := inv.expectedAbsError(bp); math.Abs(got-tc.inv) > 1e-6 {
			t.Errorf("ε=%v INV E|err|: got %v, want %v", tc.eps, got, tc.inv)
		}
		// The grid weights reproduce the continuous piece probabilities
		// (the centre is the single grid point 5, of negligible weight).
		probs := pieceProbabilities(plm, bp)
		if len(probs) != 7 {
			t.Fatalf("ε=%v: got %d pieces, want 7", tc.eps, len(probs))
		}
		for i, want := range tc.probs {
			if got := probs[i+1]; math.Abs(got-want) > 1e-6 {
				t.Errorf("ε=%v piece %d: got probability %v, want %v", tc.eps, i, got, want)
			}
		}
	}
}

// pieceProbabilities returns the probability of each piece of s for bp,
// in the order of s.pieces (centre, upper pieces, lower pieces).
func pieceProbabilities(s piecewiseSampler, bp Breakpoints) []float64 {
	ps := s.pieces(bp)
	w := make([]float64, len(ps))
	total := 0.0
	for i, pc := range ps {
		w[i] = math.Exp(s.logWeight(pc))
		total += w[i]
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

func TestPiecewiseDominatesInverse(t *testing.T) {
	// Theorem 2: for every dataset, E|PLM − f| ≤ E|INV − f| (analytic).
	// The theorem is for ρ = 0 only: with ρ > 0 the ρ-smooth INV weighs its
	// flat centre e^0 against PLM's e^(−ε/2), and can win (digest §4).
	b := mech.Bounds{Lower: 0, Upper: 4}
	for _, eps := range []float64{0.5, 1, 2} {
		for _, rho := range []float64{0} {
			plm, _ := NewQuantile(b, 0.5, eps, rho)
			inv, _ := NewInverseSensitivityQuantile(b, 0.5, eps, rho)
			for _, x := range oracle.Multisets(quantileTestGrid, 4) {
				w := mech.WindowOf(plm.Window(), x)
				p, _ := plm.ExpectedAbsError(w)
				i, _ := inv.ExpectedAbsError(w)
				if p > i*(1+1e-12) {
					t.Errorf("ε=%v ρ=%v %v: E|PLM| got %v, want ≤ E|INV| = %v", eps, rho, x, p, i)
				}
			}
		}
	}
}

func TestPiecewiseQuantileWindow(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 1000}
	m, err := NewQuantile(b, 0.5, 1, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	// Digest §3.0: K = 60 at ε = 1, b−a = 1000, ρ = ½.
	if got := m.Depth(); got != 60 {
		t.Errorf("depth: got %d, want 60", got)
	}
	spec := m.Window()
	if spec.Below != 61 || spec.Above != 62 {
		t.Errorf("window: got %+v, want 61 below and 62 above", spec)
	}
	sorted := make([]float64, 1001)
	for i := range sorted {
		sorted[i] = float64(i)
	}
	w := mech.WindowOf(spec, sorted)
	if got, want := w.Ranks(), (mech.RankRange{First: 440, Last: 563}); got != want {
		t.Errorf("ranks for n=1001: got %+v, want %+v", got, want)
	}
	short := mech.SortedWindow{Count: w.Count, First: w.First + 1, Values: w.Values[1:]}
	if _, err := m.Breakpoints(short); !errors.Is(err, mech.ErrWindowMismatch) {
		t.Errorf("short window: got %v, want %v", err, mech.ErrWindowMismatch)
	}
	if _, err := NewQuantile(b, 1.5, 1, 0); !errors.Is(err, mech.ErrInvalidQuantile) {
		t.Errorf("q=1.5: got %v, want %v", err, mech.ErrInvalidQuantile)
	}
	if _, err := NewQuantile(b, 0.5, 1e-7, 0); !errors.Is(err, mech.ErrInvalidEpsilon) {
		t.Errorf("ε=1e-7: got %v, want %v", err, mech.ErrInvalidEpsilon)
	}
}
