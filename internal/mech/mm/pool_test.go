package mm

import (
	"math"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// mmTestPool returns a pool holding the given candidates.
func mmTestPool(cells, stepsPerCell int, points [][]float64) *mmPool {
	p := newMMPool(cells, len(points), stepsPerCell, 1)
	for i, pt := range points {
		copy(p.point(i), pt)
	}
	p.rebuild()
	return p
}

// mmCheckPool fails t unless every candidate lies on the simplex and
// satisfies every cut.
func mmCheckPool(t *testing.T, p *mmPool) {
	t.Helper()
	for i := range p.size {
		sum := 0.0
		for _, f := range p.point(i) {
			sum += f
			if f < 0 {
				t.Fatalf("candidate %d: got entry %v, want ≥ 0", i, f)
			}
		}
		if math.Abs(sum-1) > mmFeasibleTolerance || !mmSatisfies(p.point(i), p.cuts) {
			t.Fatalf("candidate %d: got sum %v and cuts satisfied %v, want 1 and true", i, sum, mmSatisfies(p.point(i), p.cuts))
		}
	}
}

func TestMMPoolMedian(t *testing.T) {
	first, _ := NewPredicate(4, []int{0})
	firstTwo, _ := NewPredicate(4, []int{0, 1})
	mk := func(vs ...float64) [][]float64 {
		var pts [][]float64
		for _, v := range vs {
			pts = append(pts, []float64{v, 1 - v, 0, 0})
		}
		return pts
	}
	for _, tc := range []struct {
		name   string
		points [][]float64
		pred   Predicate
		want   float64
	}{
		{"odd pool: the middle value", mk(0.1, 0.5, 0.3, 0.9, 0.2), first, 0.3},
		{"even pool: the lower middle", mk(0.4, 0.1, 0.3, 0.2), first, 0.2},
		{"constant", mk(0.4, 0.1, 0.3), firstTwo, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mmTestPool(4, 1, tc.points).median(tc.pred); math.Abs(got-tc.want) > 1e-15 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMMPoolCut checks the update after a hard answer, with no mixing so
// the result is exact: survivors keep their places, clones of survivors
// fill the rest; a cut nobody satisfies restarts from a feasible point; an
// inconsistent cut is widened by doublings until it is consistent.
func TestMMPoolCut(t *testing.T) {
	a, b, c, d := []float64{0.5, 0.25, 0.25}, []float64{0.2, 0.4, 0.4}, []float64{0.6, 0.2, 0.2}, []float64{0.1, 0.45, 0.45}
	first, _ := NewPredicate(3, []int{0})
	rest, _ := NewPredicate(3, []int{1, 2})

	t.Run("survivors and clones", func(t *testing.T) {
		p := mmTestPool(3, 0, [][]float64{a, b, c, d})
		got := p.cut(mmConstraint{pred: first, center: 55, halfWidth: 6, scale: 100}) // [0.49, 0.61]
		if got.halfWidth != 6 || p.repairs != 0 {
			t.Errorf("half-width, repairs: got %v, %v, want 6, 0", got.halfWidth, p.repairs)
		}
		if !slices.Equal(p.point(0), a) || !slices.Equal(p.point(1), c) {
			t.Errorf("survivors: got %v, %v, want %v, %v", p.point(0), p.point(1), a, c)
		}
		for i := 2; i < 4; i++ {
			if !slices.Equal(p.point(i), a) && !slices.Equal(p.point(i), c) {
				t.Errorf("clone %d: got %v, want a copy of a survivor", i, p.point(i))
			}
		}
		mmCheckPool(t, p)
	})
	t.Run("no survivor", func(t *testing.T) {
		p := mmTestPool(3, 0, [][]float64{a, b, c, d})
		got := p.cut(mmConstraint{pred: first, center: 90, halfWidth: 5, scale: 100}) // [0.85, 0.95]
		if got.halfWidth != 5 || p.repairs != 0 {
			t.Errorf("half-width, repairs: got %v, %v, want 5, 0", got.halfWidth, p.repairs)
		}
		mmCheckPool(t, p)
	})
	t.Run("inconsistent", func(t *testing.T) {
		p := mmTestPool(3, 0, [][]float64{a, b, c, d})
		p.cut(mmConstraint{pred: first, center: 55, halfWidth: 6, scale: 100})       // F₀ ∈ [0.49, 0.61]
		got := p.cut(mmConstraint{pred: rest, center: 90, halfWidth: 5, scale: 100}) // 1 − F₀ ∈ [0.85, 0.95]
		if p.repairs < 1 || got.halfWidth != 5<<p.repairs {
			t.Errorf("half-width, repairs: got %v, %v, want 5·2^repairs with repairs ≥ 1", got.halfWidth, p.repairs)
		}
		mmCheckPool(t, p)
	})
}

// TestMMPoolMixStaysFeasible adds random cuts around a fixed point and
// checks the whole pool stays on the simplex and inside every cut.
func TestMMPoolMixStaysFeasible(t *testing.T) {
	r := privtest.Seeded(t, 0x3a01)
	const cells = 12
	truth := []float64{0.3, 0.2, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.04, 0.03, 0.02, 0.01}
	p := newMMPool(cells, 40, 5, 2)
	for range 15 {
		var members []int
		for x := range cells {
			if r.Uint64()&1 == 1 {
				members = append(members, x)
			}
		}
		q, _ := NewPredicate(cells, members)
		center := int64(math.Round(1000 * q.sumDirect(truth)))
		p.cut(mmConstraint{pred: q, center: center + int64(noise.Uniform(r, 11)) - 5, halfWidth: 10, scale: 1000})
		mmCheckPool(t, p)
	}
	if !mmSatisfies(truth, p.cuts) {
		t.Errorf("the point the cuts were built around: got outside, want inside")
	}
}

// TestMMPoolMixLaw checks that hit-and-run targets the uniform law on the
// region. From one starting point, 160 steps per candidate must give
// 3000 independent candidates with the uniform law's marginals: on the
// whole simplex over 6 cells F₀ ~ Beta(1, 5); inside the cut
// S = F₀ + F₁ ∈ [0.2, 0.4], S is Beta(2, 4) truncated to [0.2, 0.4]. Each
// chi-square test over ten equiprobable bins rejects a correct sampler
// with probability 10⁻³ (asymptotically; 300 expected per bin).
func TestMMPoolMixLaw(t *testing.T) {
	const cells, size = 6, 3000
	start := []float64{0.15, 0.15, 0.175, 0.175, 0.175, 0.175}
	pair, _ := NewPredicate(cells, []int{0, 1})
	beta15 := func(x float64) float64 { return 1 - math.Pow(1-x, 5) }
	beta24 := func(x float64) float64 { return 1 - math.Pow(1-x, 5) - 5*x*math.Pow(1-x, 4) }
	seed := privtest.Seed(t, 0x3a02)
	for _, tc := range []struct {
		name string
		cuts []mmConstraint
		stat func(pt []float64) float64
		cdf  func(float64) float64
	}{
		{"simplex", nil, func(pt []float64) float64 { return pt[0] }, beta15},
		{"cut", []mmConstraint{{pred: pair, center: 3, halfWidth: 1, scale: 10}},
			func(pt []float64) float64 { return pt[0] + pt[1] },
			func(x float64) float64 { return (beta24(x) - beta24(0.2)) / (beta24(0.4) - beta24(0.2)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newMMPool(cells, size, 160/cells+1, seed)
			for i := range size {
				copy(p.point(i), start)
			}
			p.cuts = tc.cuts
			p.rebuild()
			p.mix()
			counts := make([]int, 10)
			for i := range size {
				u := tc.cdf(tc.stat(p.point(i)))
				counts[min(int(u*10), 9)]++
			}
			stat, crit, err := privtest.ChiSquare(counts, slices.Repeat([]float64{0.1}, 10), 1e-3)
			t.Logf("chi-square %.2f (critical %.2f) of %v", stat, crit, counts)
			if err != nil || stat > crit {
				t.Errorf("chi-square of %v: got %v (err %v), want ≤ %v", counts, stat, err, crit)
			}
		})
	}
}

func TestMMProjectSimplex(t *testing.T) {
	for _, tc := range []struct{ in, want []float64 }{
		{[]float64{0.5, 0.5, 0.5}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{[]float64{2, 0, 0}, []float64{1, 0, 0}},
		{[]float64{0.6, 0.6, -0.2}, []float64{0.5, 0.5, 0}},
		{[]float64{0.1, 0.2, 0.7}, []float64{0.1, 0.2, 0.7}},
	} {
		got := slices.Clone(tc.in)
		mmProjectSimplex(got)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("projection of %v: got %v, want %v", tc.in, got, tc.want)
				break
			}
		}
	}
}
