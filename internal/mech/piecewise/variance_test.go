package piecewise

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/oracle"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// sketchOf returns the variance sketch of sorted values in bounds b, as
// the database computes it: exact sums of grid indices and the k smallest
// and largest indices.
func sketchOf(b mech.Bounds, sorted []float64, k int64) VarianceSketch {
	g, err := mech.NewGrid(b)
	if err != nil {
		panic(err)
	}
	idx, sums := g.Indices(sorted)
	k = min(k, int64(len(idx)))
	return VarianceSketch{Sums: sums, Smallest: idx[:k], Largest: idx[int64(len(idx))-k:]}
}

// varianceOrZero is the population variance with Var(∅) = 0.
func varianceOrZero(s []float64) *big.Rat {
	if len(s) == 0 {
		return new(big.Rat)
	}
	return oracle.Variance(oracle.Rats(s))
}

func TestPiecewiseVarianceBreakpointsBruteForce(t *testing.T) {
	// Lower side: the exact minimum over each ball (rounded down). The
	// minimum inserts values at a window's mean, so the exact check (ℓ ≤ 2,
	// n ≤ 3) inserts from the grid of step 1/6, which holds every mean of at
	// most 3 integers; the integer grid gives a one-sided check up to ℓ = 3. Upper
	// side: at least the exact maximum (the hybrid is an upper bound; the
	// maximum inserts at the bounds, so the integer grid is exact).
	b := mech.Bounds{Lower: 0, Upper: 4}
	m, err := NewVariance(b, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fine []float64
	for i := range 25 {
		fine = append(fine, float64(i)/6)
	}
	for _, x := range oracle.Multisets(quantileTestGrid, 4) {
		bp, err := m.Breakpoints(sketchOf(b, x, m.Extremes()))
		if err != nil {
			t.Fatal(err)
		}
		hi, lo := oracle.BallExtremes(x, quantileTestGrid, 3, varianceOrZero)
		var exact []*big.Rat
		if len(x) <= 3 {
			_, exact = oracle.BallExtremes(x, fine, 2, varianceOrZero)
		}
		for l := range 4 {
			if l > 0 && l < len(exact) && bp.Down[l] != roundRat(exact[l], big.ToNegativeInf) {
				t.Errorf("%v: d_%d got %v, want %v", x, l, bp.Down[l], roundRat(exact[l], big.ToNegativeInf))
			}
			if bp.Down[l] > oracle.Float(lo[l]) {
				t.Errorf("%v: d_%d got %v, want ≤ %v", x, l, bp.Down[l], oracle.Float(lo[l]))
			}
			if bp.Up[l] < oracle.Float(hi[l]) {
				t.Errorf("%v: u_%d got %v, want ≥ %v", x, l, bp.Up[l], oracle.Float(hi[l]))
			}
		}
		if f := oracle.Float(varianceOrZero(x)); bp.F() != f {
			t.Errorf("%v: f got %v, want %v", x, bp.F(), f)
		}
	}
}

func TestPiecewiseVarianceV3(t *testing.T) {
	// The validity contract on every neighbouring pair, at every depth.
	b := mech.Bounds{Lower: 0, Upper: 4}
	m, _ := NewVariance(b, 1, 0)
	bpOf := func(x []float64) Breakpoints {
		bp, err := m.Breakpoints(sketchOf(b, x, m.Extremes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := bp.validate(m.sampler.rng); err != nil {
			t.Fatalf("%v: %v", x, err)
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
					t.Fatalf("x=%v x'=%v: V3 fails at ℓ=%d: u %v > %v or d %v < %v",
						x, y, l, bx.Up[l], by.Up[l+1], bx.Down[l], by.Down[l+1])
				}
			}
		}
	}
}

func TestPiecewiseVarianceRejects(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	m, err := NewVariance(b, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	sorted := make([]float64, 300)
	for i := range sorted {
		sorted[i] = float64(i%10) + 0.5
	}
	slices.Sort(sorted)
	s := sketchOf(b, sorted, m.Extremes())
	s.Smallest = s.Smallest[1:]
	if _, err := m.Breakpoints(s); !errors.Is(err, mech.ErrWindowMismatch) {
		t.Errorf("too few extremes: got %v, want %v", err, mech.ErrWindowMismatch)
	}
	s = sketchOf(b, sorted, m.Extremes())
	s.Largest = slices.Clone(s.Largest)
	s.Largest[0] = m.Grid().Top + 1
	if _, err := m.Breakpoints(s); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("extreme outside bounds: got %v, want %v", err, mech.ErrInvalidInput)
	}
}

func TestPiecewiseVarianceInt128PathsMatchRationals(t *testing.T) {
	// The int128 fast paths (n < 2^31) return the same exact numbers as
	// the rational paths, on random tied data over a coarse and the full
	// 2^30-step grid (values at the top of the grid give the largest
	// products).
	rng := rand.New(privtest.Seeded(t, 0x128))
	for _, b := range []mech.Bounds{{Lower: 0, Upper: 4}, {Lower: -1e6, Upper: 1e6}, {Lower: 0.1, Upper: 0.3}} {
		m, err := NewVariance(b, 0.5, 0)
		if err != nil {
			t.Fatal(err)
		}
		for range 40 {
			n := rng.IntN(60)
			vals := []float64{b.Lower, b.Upper, b.Lower + (b.Upper-b.Lower)*rng.Float64(), b.Upper - (b.Upper-b.Lower)*1e-9}
			x := make([]float64, n)
			for i := range x {
				x[i] = vals[rng.IntN(len(vals))]
			}
			slices.Sort(x)
			v, err := m.newVarianceInputs(m.Sketch(x))
			if err != nil {
				t.Fatal(err)
			}
			poll := mech.NewPoll(context.Background())
			fast, err := v.minWindowSSDsInt128(poll, m.depth)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := v.minWindowSSDsRat(poll, m.depth)
			if err != nil {
				t.Fatal(err)
			}
			for i := range fast {
				if fast[i].Cmp(slow[i]) != 0 {
					t.Fatalf("%v: SSD_min(n−%d) int128 %v, rational %v", x, i, fast[i], slow[i])
				}
			}
			for j := range min(m.depth, int64(n)-1) { // Breakpoints asks for j ≤ n−2
				for _, up := range []bool{true, false} {
					if f, r := v.meanBreakpointInt128(j, up), v.meanBreakpointRat(j, up); f.Cmp(r) != 0 {
						t.Fatalf("%v: mean breakpoint %d (up %v) int128 %v, rational %v", x, j, up, f, r)
					}
				}
			}
		}
	}
}

// TestPiecewiseVarianceStopsWhenContextEnds: the breakpoints of a column of
// n ≥ K rows take O(K·n) steps (20000 distinct values at ε = 2^-16, K ≈
// 5.5·10^6: about 12 s on one core); a release whose context ends meanwhile
// (the statement timeout, KILL QUERY) returns the context's error within a
// few PollEvery steps instead of running to the end.
func TestPiecewiseVarianceStopsWhenContextEnds(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 500000}
	m, err := NewVariance(b, 0x1p-16, 0)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 20000)
	for i := range x {
		x[i] = float64(i) * 7.3
	}
	sketch := m.Sketch(x)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Release(ctx, privtest.Seeded(t, 1), sketch)
	if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
		t.Errorf("got %v after %v, want the context's deadline within 2 s", err, took)
	}
	gone, kill := context.WithCancel(context.Background())
	kill()
	if _, err := m.Release(gone, privtest.Seeded(t, 1), sketch); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v, want context.Canceled", err)
	}
}
