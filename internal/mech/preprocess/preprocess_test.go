package preprocess

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/oracle"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// spAlgorithm is one fast preprocessing algorithm with its reference
// statistic (nil reference: the variance, g(∅) = 0).
type spAlgorithm struct {
	name string
	fast func(p Params, sorted []float64) (float64, error)
	ref  oracle.Statistic
}

// spAlgorithms are the fast algorithms under test.
var spAlgorithms = []spAlgorithm{
	{"median", fastMedian, oracle.Median},
	{"mean", fastMean, oracle.Mean},
	{"variance", fastVariance, nil},
	{"trimmed mean 1/4", fastOrdered(TrimmedMean, 0.25), oracle.TrimmedMean(0.25)},
	{"trimmed mean 1/3", fastOrdered(TrimmedMean, 1.0/3), oracle.TrimmedMean(1.0 / 3)},
	{"minimum", fastOrdered(Minimum, 0), oracle.Min},
	{"maximum", fastOrdered(Maximum, 0), oracle.Max},
}

func fastMedian(p Params, sorted []float64) (float64, error) {
	m, err := NewMedian(p, 1)
	if err != nil {
		return 0, err
	}
	return m.Value(mech.WindowOf(m.Window(), sorted))
}

func fastMean(p Params, sorted []float64) (float64, error) {
	m, err := NewMean(p, 1)
	if err != nil {
		return 0, err
	}
	s, idx := SummaryOf(m.Grid(), sorted)
	return m.Value(s, idx)
}

func fastVariance(p Params, sorted []float64) (float64, error) {
	m, err := NewVariance(p, 1)
	if err != nil {
		return 0, err
	}
	s, idx := SummaryOf(m.Grid(), sorted)
	return m.Value(s, idx)
}

func fastOrdered(stat OrderedStatistic, alpha float64) func(Params, []float64) (float64, error) {
	return func(p Params, sorted []float64) (float64, error) {
		m, err := NewOrdered(stat, alpha, p, 1)
		if err != nil {
			return 0, err
		}
		return m.Value(sorted)
	}
}

// reference returns the oracle's g as a float64.
func (a spAlgorithm) reference(p Params, sorted []float64, ref func([]*big.Rat, *big.Rat, *big.Rat, oracle.Statistic) *big.Rat) float64 {
	delta := new(big.Rat).SetFloat64(p.Delta)
	if a.ref == nil {
		if ref == nil {
			return oracle.Float(oracle.Preprocess(oracle.Rats(sorted), delta, new(big.Rat), oracle.Variance))
		}
		return oracle.Float(oracle.Algorithm3(oracle.Rats(sorted), delta))
	}
	center := new(big.Rat).SetFloat64(p.Center)
	if ref == nil {
		return oracle.Float(oracle.Preprocess(oracle.Rats(sorted), delta, center, a.ref))
	}
	return oracle.Float(ref(oracle.Rats(sorted), delta, center, a.ref))
}

func TestPreprocessVectors(t *testing.T) {
	// Digest §7, from the brute-force oracle. The Δ = 1/7 case is not on
	// the power-of-two grid: Δ is rounded down to it (by < 2^-45), so g
	// moves by less than 10^-12.
	wide := mech.Bounds{Lower: -128, Upper: 1024}
	for _, tc := range []struct {
		alg          int // index in spAlgorithms
		data         []float64
		delta, c, gD float64
	}{
		{0, []float64{1, 2, 10}, 1, 0, 2},
		{0, []float64{1, 2, 3, 4, 5, 6, 7}, 1, 0, 4},
		{0, []float64{0, 0, 0, 1, 1, 1, 1}, 1.0 / 7, 0.5, 9.0 / 14},
		{0, []float64{5, 5, 5, 5}, 1, 0, 4},
		{0, []float64{-100, 0, 1, 2, 3, 1000}, 1, 1.5, 1.5},
		{0, []float64{3, 9}, 2, 5, 5},
		{1, []float64{1, 2, 3, 100}, 1, 2, 3},
		{1, []float64{0, 10}, 1, 5, 5},
		{1, []float64{2, 4, 6, 8}, 2, 5, 5},
		{1, []float64{-50, 1, 2, 3, 4, 5}, 0.5, 3, 2.5},
		{2, []float64{1, 2, 3, 100}, 1, 0, 5.0 / 3},
		{2, []float64{0, 10}, 1, 0, 1},
		{2, []float64{0, 1, 2, 3, 4}, 0.5, 0, 5.0 / 3},
		{2, []float64{0, 0, 0, 9}, 3, 0, 3},
	} {
		a := spAlgorithms[tc.alg]
		p := Params{Bounds: wide, Delta: tc.delta, Center: tc.c}
		got, err := a.fast(p, tc.data)
		if err != nil {
			t.Fatalf("%s %v: %v", a.name, tc.data, err)
		}
		if math.Abs(got-tc.gD) > 1e-12 {
			t.Errorf("%s %v Δ=%v c=%v: got %v, want %v", a.name, tc.data, tc.delta, tc.c, got, tc.gD)
		}
	}
}

// spSmallBounds are the bounds of the oracle tests: every integer and every
// Δ below is exact on the fixed-point grid, so fast and oracle agree exactly.
var spSmallBounds = mech.Bounds{Lower: -8, Upper: 8}

func TestPreprocessMatchesOracleExhaustive(t *testing.T) {
	// Every multiset of at most 5 values from {-2, 0, 1, 3, 8} (252 of
	// them), three Δ and three centres: includes n = 0, 1, 2, ties, values
	// at the bound and Δ large enough to make g = f.
	values := []float64{-2, 0, 1, 3, 8}
	var sets [][]float64
	var grow func(prefix []float64, from int)
	grow = func(prefix []float64, from int) {
		sets = append(sets, slices.Clone(prefix))
		if len(prefix) == 5 {
			return
		}
		for i := from; i < len(values); i++ {
			grow(append(prefix, values[i]), i)
		}
	}
	grow(nil, 0)
	for _, a := range spAlgorithms {
		deltas := []float64{0.25, 1, 2.5}
		if a.ref == nil {
			deltas = []float64{0.25, 2, 9}
		}
		for _, set := range sets {
			for _, d := range deltas {
				for _, c := range []float64{-2, 0.5, 3} {
					p := Params{Bounds: spSmallBounds, Delta: d, Center: c}
					checkAgainst(t, a, p, set, nil)
				}
			}
		}
	}
}

func TestPreprocessMatchesOracleRandom(t *testing.T) {
	r := rand.New(privtest.Seeded(t, 0x5e01))
	for _, a := range spAlgorithms {
		for range 120 {
			set := randomSorted(r, r.IntN(9), 8)
			p := randomParams(r, a.ref == nil)
			checkAgainst(t, a, p, set, nil)
		}
	}
}

func TestPreprocessMatchesAlgorithm2(t *testing.T) {
	// Longer inputs against the O(n²) Algorithms 2 and 3: spread values and
	// a small Δ keep the mean off its Lemma 5.13 fast path, so the hull and
	// the variance pruning do the work.
	r := rand.New(privtest.Seeded(t, 0x5e02))
	for _, a := range spAlgorithms[:3] {
		for range 25 {
			set := randomSorted(r, 10+r.IntN(50), 8)
			p := randomParams(r, a.ref == nil)
			p.Delta = math.Ldexp(p.Delta, -r.IntN(4)) // dyadic: exact on the grid
			checkAgainst(t, a, p, set, oracle.Algorithm2)
		}
	}
}

// checkAgainst compares the fast algorithm with the oracle (ref nil) or a
// reference algorithm, exactly.
func checkAgainst(t *testing.T, a spAlgorithm, p Params, set []float64, ref func([]*big.Rat, *big.Rat, *big.Rat, oracle.Statistic) *big.Rat) {
	t.Helper()
	got, err := a.fast(p, set)
	if err != nil {
		t.Fatalf("%s %v %+v: %v", a.name, set, p, err)
	}
	if want := a.reference(p, set, ref); got != want {
		t.Errorf("%s %v Δ=%v c=%v: got %v, want %v", a.name, set, p.Delta, p.Center, got, want)
	}
}

// randomSorted returns n sorted integers in [-span, span] with many ties.
func randomSorted(r *rand.Rand, n, span int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(r.IntN(2*span+1) - span)
		if r.IntN(4) == 0 {
			xs[i] = float64(r.IntN(3)) // ties
		}
	}
	slices.Sort(xs)
	return xs
}

// randomParams returns dyadic Δ and an integer or half-integer centre in
// spSmallBounds (larger Δ for the variance, whose Δ is in squared units).
func randomParams(r *rand.Rand, variance bool) Params {
	d := float64(1+r.IntN(16)) / 8
	if variance {
		d *= 4
	}
	return Params{Bounds: spSmallBounds, Delta: d, Center: float64(r.IntN(33)-16) / 2}
}

func TestPreprocessSensitivity(t *testing.T) {
	// The property that makes the release private: adding any one row moves
	// g by at most Δ (digest §3.2), checked on the fast algorithms with
	// adversarial additions (the bounds, a tie with the median, the centre).
	r := rand.New(privtest.Seeded(t, 0x5e03))
	for _, a := range spAlgorithms {
		for range 150 {
			set := randomSorted(r, r.IntN(25), 8)
			p := randomParams(r, a.ref == nil)
			g, err := a.fast(p, set)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []float64{-8, 8, p.Center, float64(r.IntN(17) - 8)} {
				bigger := append(slices.Clone(set), x)
				slices.Sort(bigger)
				g2, err := a.fast(p, bigger)
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(g2 - g); d > p.Delta*(1+1e-15) {
					t.Errorf("%s %v + %v, Δ=%v: g moved by %v", a.name, set, x, p.Delta, d)
				}
			}
		}
	}
}

func TestPreprocessMedianWindow(t *testing.T) {
	// With Δ large next to (U−L)/n the walk needs only a window; the value
	// from the window must equal the value from the whole column, and a
	// window missing needed ranks must be refused.
	r := rand.New(privtest.Seeded(t, 0x5e04))
	for range 200 {
		set := randomSorted(r, 1+r.IntN(300), 8)
		p := Params{Bounds: spSmallBounds, Delta: float64(1+r.IntN(8)) / 4, Center: float64(r.IntN(17) - 8)}
		m, err := NewMedian(p, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(set))
		full, err := m.Value(mech.SortedWindow{Count: n, First: 1, Values: set})
		if err != nil {
			t.Fatal(err)
		}
		w := mech.WindowOf(m.Window(), set)
		got, err := m.Value(w)
		if err != nil {
			t.Fatalf("%v Δ=%v c=%v window %+v: %v", set, p.Delta, p.Center, w.Ranks(), err)
		}
		if got != full {
			t.Errorf("%v Δ=%v c=%v: window value got %v, want %v", set, p.Delta, p.Center, got, full)
		}
		if w.First > 1 {
			short := mech.SortedWindow{Count: n, First: w.First + 1, Values: w.Values[1:]}
			if _, err := m.Value(short); !errors.Is(err, mech.ErrWindowMismatch) {
				t.Errorf("window without rank %d: got %v, want %v", w.First, err, mech.ErrWindowMismatch)
			}
		}
	}
}

func TestPreprocessSummaryPaths(t *testing.T) {
	// The aggregate checks settle g without rows exactly when the closed
	// conditions hold, and then agree with the row computation.
	b := mech.Bounds{Lower: 0, Upper: 100}
	for _, tc := range []struct {
		name     string
		data     []float64
		delta    float64
		mean     bool
		wantRows bool
	}{
		{"mean fits", []float64{40, 50, 60}, 10, true, false},
		{"mean too spread", []float64{0, 50, 100}, 10, true, true},
		{"mean window far from centre", []float64{95, 96, 97}, 10, true, true},
		{"variance small", []float64{49, 50, 51}, 4, false, false},
		{"variance outlier", []float64{49, 50, 51, 100}, 4, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{Bounds: b, Delta: tc.delta, Center: 50}
			var needs bool
			var err error
			var fromSummary, fromRows *big.Rat
			if tc.mean {
				m, _ := NewMean(p, 1)
				s, xs := SummaryOf(m.Grid(), tc.data)
				needs, err = m.NeedsRows(s)
				fromSummary = new(big.Rat).SetFrac(s.Sums.Sum, big.NewInt(s.Sums.Count))
				fromRows, _ = preprocessMeanGrid(xs, m.center, m.delta)
			} else {
				m, _ := NewVariance(p, 1)
				s, xs := SummaryOf(m.Grid(), tc.data)
				needs, err = m.NeedsRows(s)
				fromSummary = exactVariance(s.Sums)
				fromRows, _ = preprocessVarianceGrid(xs, m.delta)
			}
			if err != nil {
				t.Fatal(err)
			}
			if needs != tc.wantRows {
				t.Fatalf("NeedsRows: got %v, want %v", needs, tc.wantRows)
			}
			if !needs && fromSummary.Cmp(fromRows) != 0 {
				t.Errorf("settled value got %v, want %v (rows)", fromSummary, fromRows)
			}
		})
	}
}

func TestPreprocessRejects(t *testing.T) {
	b := mech.Bounds{Lower: 0, Upper: 10}
	good := Params{Bounds: b, Delta: 1, Center: 5}
	for _, tc := range []struct {
		name string
		p    Params
		eps  float64
		want error
	}{
		{"bad ε", good, 0, mech.ErrInvalidEpsilon},
		{"zero Δ", Params{Bounds: b, Delta: 0, Center: 5}, 1, mech.ErrInvalidSensitivity},
		{"infinite Δ", Params{Bounds: b, Delta: math.Inf(1), Center: 5}, 1, mech.ErrInvalidSensitivity},
		{"centre outside", Params{Bounds: b, Delta: 1, Center: 11}, 1, mech.ErrInvalidInput},
		{"bad bounds", Params{Bounds: mech.Bounds{Lower: 1, Upper: 1}, Delta: 1}, 1, mech.ErrInvalidBounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewMedian(tc.p, tc.eps); !errors.Is(err, tc.want) {
				t.Errorf("median: got %v, want %v", err, tc.want)
			}
			if _, err := NewMean(tc.p, tc.eps); !errors.Is(err, tc.want) {
				t.Errorf("mean: got %v, want %v", err, tc.want)
			}
		})
	}
	m, _ := NewMean(Params{Bounds: b, Delta: 0.1, Center: 5}, 1)
	s, _ := SummaryOf(m.Grid(), []float64{0, 1, 10})
	if _, err := m.Value(s, []int64{s.Min, s.Max}); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("mean with missing rows: got %v, want %v", err, mech.ErrInvalidInput)
	}
	if _, err := m.Value(s, []int64{s.Max, m.Grid().Index(1), s.Min}); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("mean with unsorted rows: got %v, want %v", err, mech.ErrInvalidInput)
	}
	if _, err := m.Value(s, []int64{s.Min, m.Grid().Index(2), s.Max}); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("mean with rows that disagree with the sums: got %v, want %v", err, mech.ErrInvalidInput)
	}
	if _, err := NewOrdered(TrimmedMean, 0.5, good, 1); !errors.Is(err, mech.ErrInvalidQuantile) {
		t.Errorf("trim 1/2: got %v, want %v", err, mech.ErrInvalidQuantile)
	}
	if _, err := DefaultParams(MedianStatistic, b, math.NaN()); !errors.Is(err, mech.ErrInvalidInput) {
		t.Errorf("NaN noisy count: got %v, want %v", err, mech.ErrInvalidInput)
	}
}

func TestDefaultPreprocessParams(t *testing.T) {
	b := mech.Bounds{Lower: 10, Upper: 30}
	for _, tc := range []struct {
		stat  Statistic
		noisy float64
		want  Params
	}{
		{MedianStatistic, 99.6, Params{Bounds: b, Delta: 0.2, Center: 20}},
		{MeanStatistic, -3, Params{Bounds: b, Delta: 20, Center: 20}},
		{VarianceStatistic, 40, Params{Bounds: b, Delta: 10}},
	} {
		got, err := DefaultParams(tc.stat, b, tc.noisy)
		if err != nil || got != tc.want {
			t.Errorf("stat %d ñ=%v: got %+v %v, want %+v", tc.stat, tc.noisy, got, err, tc.want)
		}
	}
}

func TestVarianceWindowsLackMongeStructure(t *testing.T) {
	// Why the variance has no O(n log n) algorithm here (preprocess_variance.go):
	// V(l,r) = Var(x_l..x_r) of sorted data is neither Monge nor inverse
	// Monge (V(l,r) + V(l',r') − V(l,r') − V(l',r) takes both signs for
	// l < l' ≤ r < r'), and the best left end of Var(window) + trimΔ is not
	// monotone in the right end: the quadrangle inequality, SMAWK and
	// divide-and-conquer optimisation do not apply.
	v := func(x []float64, l, r int) *big.Rat { return oracle.Variance(oracle.Rats(x[l : r+1])) }
	quad := func(x []float64) int {
		d := new(big.Rat).Add(v(x, 0, 1), v(x, 1, 2))
		d.Sub(d, v(x, 0, 2)).Sub(d, v(x, 1, 1))
		return d.Sign()
	}
	if got := quad([]float64{1, 7, 7, 7}); got != 1 {
		t.Errorf("[1 7 7 7]: quadrangle sign got %d, want 1 (Monge violated)", got)
	}
	if got := quad([]float64{1, 2, 4, 9}); got != -1 {
		t.Errorf("[1 2 4 9]: quadrangle sign got %d, want -1 (inverse Monge violated)", got)
	}
	x := []float64{0, 3, 4, 4, 7, 7}
	delta := big.NewRat(5, 2)
	best := func(r int) int { // leftmost best left end for right end r
		arg, min := 0, (*big.Rat)(nil)
		for l := 0; l <= r; l++ {
			c := new(big.Rat).Mul(delta, big.NewRat(int64(len(x)-(r-l+1)), 1))
			c.Add(c, v(x, l, r))
			if min == nil || c.Cmp(min) < 0 {
				arg, min = l, c
			}
		}
		return arg
	}
	if l2, l3 := best(2), best(3); l2 <= l3 {
		t.Errorf("%v Δ=5/2: best left ends %d (r=2), %d (r=3), want decreasing", x, l2, l3)
	}
}
