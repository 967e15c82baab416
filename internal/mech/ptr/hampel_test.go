package ptr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

func TestPTRZonotopeDistance(t *testing.T) {
	// Hand-checked: dist(0, c + Z) = dist(−c, Z). Parallelogram of
	// (1,0), (0,1): the square [−1,1]²; hexagon of (1,0), (1,1), (0,1):
	// its right side is x = 2, y ∈ [0, 2], its corner (2, 2).
	square := []ptrVec{{1, 0}, {0, 1}}
	hexagon := []ptrVec{{0, 1}, {1, 0}, {1, 1}}
	for _, tc := range []struct {
		name   string
		gens   []ptrVec
		center ptrVec
		want   float64
	}{
		{"inside the square", square, ptrVec{0.5, -0.5}, 0},
		{"right of the square", square, ptrVec{-3, 0}, 2},
		{"corner of the square", square, ptrVec{-4, -5}, 5},
		{"inside the hexagon", hexagon, ptrVec{1, 1}, 0},
		{"right of the hexagon", hexagon, ptrVec{-10, 0}, 8},
		{"left of the hexagon", hexagon, ptrVec{10, 0}, 8},
		{"corner of the hexagon", hexagon, ptrVec{-10, -10}, 8 * math.Sqrt2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := ptrZonotope{gens: slices.Clone(tc.gens)}
			if got := z.distance(tc.center); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// ptrBruteG returns g(β) = dist(0, ∂f(β)) summed directly over the lines
// (a line within 10⁻⁹ of β counts as through it).
func ptrBruteG(lines []ptrLine, p ptrVec) float64 {
	var center ptrVec
	var gens []ptrVec
	for _, l := range lines {
		r := l.c - l.u.dot(p)
		if math.Abs(r) <= 1e-9*(1+p.norm()) {
			gens = append(gens, l.u.scale(l.w))
			continue
		}
		center = center.add(l.u.scale(-l.w * ptrSign(r)))
	}
	switch len(gens) {
	case 0:
		return center.norm()
	case 1:
		return ptrSegmentDistance(center, gens[0])
	}
	z := ptrZonotope{gens: gens}
	return z.distance(center)
}

// ptrBruteDistances computes ptrHampelDistances in O(n³): every pairwise
// intersection, and every edge of every line represented by an inner
// point, with g recomputed from all lines.
func ptrBruteDistances(lines []ptrLine, cells [4]ptrCell) (dist [4]float64, minVertex float64) {
	minVertex = math.Inf(1)
	for j := range dist {
		dist[j] = math.Inf(1)
	}
	visit := func(g float64, out func(ptrCell) bool) {
		for j, c := range cells {
			if out(c) {
				dist[j] = math.Min(dist[j], g)
			}
		}
	}
	for i, li := range lines {
		dir, base := ptrVec{-li.u[1], li.u[0]}, li.u.scale(li.c)
		var ts []float64
		for j, lj := range lines {
			if d := lj.u.dot(dir); j != i && d != 0 {
				ts = append(ts, (lj.c-lj.u.dot(base))/d)
			}
		}
		slices.Sort(ts)
		ts = slices.CompactFunc(ts, func(a, b float64) bool { return math.Abs(b-a) <= 1e-9*(1+math.Abs(a)) })
		for k, tk := range ts {
			p := ptrAlong(base, dir, tk)
			g := ptrBruteG(lines, p)
			minVertex = math.Min(minVertex, g)
			visit(g, func(c ptrCell) bool { return !c.interior(p) })
			if k+1 < len(ts) {
				q := ptrAlong(base, dir, ts[k+1])
				mid := p.add(q).scale(0.5)
				visit(ptrBruteG(lines, mid), func(c ptrCell) bool { return !(c.closed(p) && c.closed(q) && c.interior(mid)) })
			}
		}
		first, last := -1.0, 1.0
		if len(ts) > 0 {
			first, last = ts[0]-1, ts[len(ts)-1]+1
		}
		visit(ptrBruteG(lines, ptrAlong(base, dir, first)), func(ptrCell) bool { return true })
		visit(ptrBruteG(lines, ptrAlong(base, dir, last)), func(ptrCell) bool { return true })
	}
	return dist, minVertex
}

// ptrRandomRows returns n rows of a simple regression: integer x and y
// (ties, duplicate rows, parallel and concurrent lines) or continuous.
func ptrRandomRows(rng *rand.Rand, n int, integer bool) RegressionRows {
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		if integer {
			x[i], y[i] = float64(rng.IntN(5)-2), float64(rng.IntN(7)-3)
		} else {
			x[i], y[i] = rng.NormFloat64(), 1+2*x[i]+rng.NormFloat64()
		}
	}
	rows, _ := SimpleRegressionRows(x, y)
	return rows
}

// ptrRandomCells returns the four product-grid cells of random widths
// holding p.
func ptrRandomCells(rng *rand.Rand, p ptrVec) [4]ptrCell {
	var cells [4]ptrCell
	widths := ptrVec{0.2 + 2*rng.Float64(), 0.2 + 2*rng.Float64()}
	for j := range cells {
		for d := range 2 {
			grid := ptrLinearGrid{origin: -7, width: widths[d]}
			cells[j].lower[d], cells[j].upper[d] = grid.bin(p[d], ptrOffsets[j>>d&1])
		}
	}
	return cells
}

// TestPTRArrangementBruteForce compares the O(n² log n) walk with the
// O(n³) enumeration on random small datasets, including integer data with
// duplicate rows, parallel lines and three or more lines through a point,
// and checks that the estimate is a minimizer (g = 0) whenever some vertex
// is.
func TestPTRArrangementBruteForce(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xa77))
	for trial := range 400 {
		rows := ptrRandomRows(rng, 1+rng.IntN(9), trial%2 == 0)
		lines := ptrLines(rows)
		est := ptrHampelEstimate(lines)
		cells := ptrRandomCells(rng, est)
		got := ptrHampelDistances(lines, cells, 1e9)
		want, minVertex := ptrBruteDistances(lines, cells)
		name := fmt.Sprintf("trial %d rows %v %v", trial, rows.X, rows.Y)
		for j := range got {
			if math.Abs(got[j]-want[j]) > 1e-7*(1+want[j]) {
				t.Fatalf("%s: cell %d: got %v, want %v", name, j, got[j], want[j])
			}
		}
		if g := ptrBruteG(lines, est); len(lines) > 1 && !math.IsInf(minVertex, 1) && g > minVertex+1e-9 {
			t.Fatalf("%s: estimate %v has g = %v, the best vertex %v", name, est, g, minVertex)
		}
	}
}

// TestPTRHampelDistanceLipschitz: adding one row changes the distance of
// every cell by at most 1 (the property the test relies on), on random
// small datasets and random added rows, integer and continuous.
func TestPTRHampelDistanceLipschitz(t *testing.T) {
	rng := rand.New(privtest.Seeded(t, 0xa78))
	for trial := range 300 {
		integer := trial%2 == 0
		rows := ptrRandomRows(rng, 2+rng.IntN(8), integer)
		extra := ptrRandomRows(rng, 1, integer)
		bigger := RegressionRows{P: 2, X: append(slices.Clone(rows.X), extra.X...), Y: append(slices.Clone(rows.Y), extra.Y...)}
		cells := ptrRandomCells(rng, ptrHampelEstimate(ptrLines(rows)))
		a := ptrHampelDistances(ptrLines(rows), cells, 1e9)
		b := ptrHampelDistances(ptrLines(bigger), cells, 1e9)
		for j := range a {
			if math.Abs(a[j]-b[j]) > 1+1e-9 {
				t.Fatalf("trial %d cell %d: distances %v and %v after adding %v", trial, j, a[j], b[j], extra)
			}
		}
	}
}

func TestPTRHampelInvalid(t *testing.T) {
	good := RegressionParams{Epsilon: 1, Delta: 1e-6, Size: 1000, Coefficients: []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}}
	if _, err := NewHampelRegression(RegressionParams{Epsilon: 1, Delta: 1e-6, Size: 1000, Coefficients: good.Coefficients[:1]}, 0); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("one coefficient: got %v, want %v", err, mech.ErrInvalidInput)
	}
	if _, err := NewHampelRegression(good, 8); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("8 rows: got %v, want %v", err, mech.ErrInvalidInput)
	}
	r, err := NewHampelRegression(good, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Release(context.Background(), privtest.Seeded(t, 1), RegressionRows{P: 1, X: []float64{1}, Y: []float64{1}}); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("P = 1 rows: got %v, want %v", err, mech.ErrInvalidInput)
	}
	// Sampling rate: N = 10⁶ and 2048 rows keep ⌊2048/10⁶·2³²⌋/2³².
	big, _ := NewHampelRegression(RegressionParams{Epsilon: 1, Delta: 1e-6, Size: 1e6, Coefficients: good.Coefficients}, 0)
	if want := uint64(math.Floor(2048.0 / 1e6 * (1 << 32))); big.keep != want || r.keep != 1<<32 {
		t.Errorf("keep: got %d and %d, want %d and 2^32", big.keep, r.keep, want)
	}
}

// TestPTRHampelExactFit: 400 rows exactly on y = 1 + 2x (x = 0 … 9): all
// lines meet at (1, 2), every block fit is exact (zero IQR, so
// h = N_q^(−1/2)), and away from (1, 2) at least a quarter of the lines lie
// on each side, so the distance exceeds the cap at ε = 60 (threshold 5)
// and R_H answers (1, 2) plus Laplace noise of scale 2h/ε_step = 0.018:
// within 40 scales except with probability e⁻⁴⁰; ⊥ has probability
// below 10⁻⁸ per run. Tiny inputs (0, 1, 2 rows) must not fail.
func TestPTRHampelExactFit(t *testing.T) {
	x, y := make([]float64, 400), make([]float64, 400)
	for i := range x {
		x[i] = float64(i % 10)
		y[i] = 1 + 2*x[i]
	}
	rows, _ := SimpleRegressionRows(x, y)
	r, err := NewHampelRegression(RegressionParams{Epsilon: 60, Delta: 1e-6, Size: 400, Coefficients: []mech.Bounds{{Lower: -10, Upper: 10}, {Lower: -10, Upper: 10}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	src := privtest.Seeded(t, 0xa79)
	limit := 40 * 2 / math.Sqrt(400) / (60.0 / 11)
	for range 20 {
		beta, refused, err := r.Release(context.Background(), src, rows)
		if err != nil || refused || math.Abs(beta[0]-1) > limit || math.Abs(beta[1]-2) > limit {
			t.Fatalf("got (%v, %v, %v), want (1, 2) ± %v", beta, refused, err, limit)
		}
	}
	for k := range 3 {
		tiny, _ := SimpleRegressionRows([]float64{1, 2}[:k], []float64{3, 5}[:k])
		if _, _, err := r.Release(context.Background(), src, tiny); err != nil {
			t.Fatalf("%d rows: got %v, want no error", k, err)
		}
	}
}
