package planner

import (
	"context"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// autoRelease is a release of kind on an integer column over [0, 100]
// (unit-bin histogram of 101 bins) with ε.
func autoRelease(kind StatKind, epsilon float64) *Release {
	lo, hi := 0.0, 100.0
	col := &catalog.Column{Name: "x", Source: "x", Type: catalog.Integer, Lower: &lo, Upper: &hi}
	return &Release{Stat: Statistic{Kind: kind, Column: col}, Epsilon: epsilon}
}

// autoInputs are the summary terms (n, Σx, Σx²) and the unit-bin
// histogram of values.
func autoInputs(values []int) (terms []float64, hist []int64) {
	hist = make([]int64, 101)
	var n, s, q float64
	for _, v := range values {
		hist[v]++
		n++
		s += float64(v)
		q += float64(v * v)
	}
	return []float64{n, s, q}, hist
}

// repeatValues returns n values cycling through vs.
func repeatValues(n int, vs ...int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = vs[i%len(vs)]
	}
	return out
}

// gridEstimate runs an edge release's Step: its one request, the exact
// grid sums, answered from values as the database computes them
// (sqlrewrite.GridSums: n, Σk, Σk² of the grid indices).
func gridEstimate(t *testing.T, st Step, values []int) Estimate {
	t.Helper()
	src := noise.NewStream(3)
	more, done, _, err := st.Advance(context.Background(), src, nil)
	if err != nil || done || len(more) != 1 || more[0].GridSums == nil {
		t.Fatalf("want one grid-sums request: done=%v, %d requests, err %v", done, len(more), err)
	}
	g := more[0].GridSums
	out := sqlrewrite.GridTotals{Sum: new(big.Int), SumSquares: new(big.Int)}
	for _, v := range values {
		k := big.NewInt(int64(math.Floor((math.Min(math.Max(float64(v), g.Lower), g.Upper)-g.Lower)/g.Unit + 0.5)))
		out.Count++
		out.Sum.Add(out.Sum, k)
		out.SumSquares.Add(out.SumSquares, k.Mul(k, k))
	}
	more, done, est, err := st.Advance(context.Background(), src, []Fetched{{Grid: &out}})
	if err != nil || !done || len(more) != 0 {
		t.Fatalf("step not finished after the grid sums: done=%v, %d requests, err %v", done, len(more), err)
	}
	return est
}

// TestAutoMean checks autoMean on few and many rows: the edge sums
// answer, with an interval holding the answer, near the truth where n·ε
// is large.
func TestAutoMean(t *testing.T) {
	values := repeatValues(20000, 3, 4, 5, 6, 7) // mean 5, near the lower bound
	for _, c := range []struct {
		n   int
		tol float64
	}{{10, 100}, {20000, 0.1}} {
		terms, hist := autoInputs(values[:c.n])
		st, err := autoMean{}.Start(noise.NewStream(uint64(c.n)), autoRelease(StatMean, 1), terms, hist)
		if err != nil {
			t.Fatal(err)
		}
		est := gridEstimate(t, st, values[:c.n])
		if !strings.Contains(est.Note, "sums from both bounds") {
			t.Errorf("n=%d: note %q", c.n, est.Note)
		}
		if math.Abs(est.Value-5) > c.tol || !est.HasInterval || est.Low > est.Value || est.High < est.Value {
			t.Errorf("n=%d: %v in [%v, %v], want ≈ 5 within %v", c.n, est.Value, est.Low, est.High, c.tol)
		}
	}
}

// TestAutoVariance checks autoVariance on few and many rows near a
// bound and on spread data: the edge squares answer, with an interval
// holding the answer, near the truth where n·ε is large.
func TestAutoVariance(t *testing.T) {
	near := repeatValues(20000, 3, 5, 7) // VAR_POP 8/3
	spread := repeatValues(20000, 20, 50, 80)
	for _, c := range []struct {
		name   string
		values []int
		truth  float64
		tol    float64
	}{
		{"few rows", near[:10], 8.0 / 3, 2500},
		{"near a bound", near, 8.0 / 3, 1},
		{"spread", spread, 600, 5},
	} {
		terms, hist := autoInputs(c.values)
		st, err := autoVariance{}.Start(noise.NewStream(7), autoRelease(StatVariance, 1), terms, hist)
		if err != nil {
			t.Fatal(err)
		}
		est := gridEstimate(t, st, c.values)
		if !strings.Contains(est.Note, "squares from both bounds") {
			t.Errorf("%s: note %q", c.name, est.Note)
		}
		if math.Abs(est.Value-c.truth) > c.tol || !est.HasInterval || est.Low > est.Value || est.High < est.Value {
			t.Errorf("%s: variance %v in [%v, %v], want ≈ %v within %v", c.name, est.Value, est.Low, est.High, c.truth, c.tol)
		}
	}
}
