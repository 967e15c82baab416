package bench

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// tinyData is a configuration small enough for CI: two synthetic columns
// and a tied integer one.
func tinyData(t *testing.T) []*Dataset {
	t.Helper()
	var data []*Dataset
	for _, kind := range []string{"normal", "ties"} {
		d, err := Synthetic(kind, 60, 7)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, d)
	}
	tied := &Dataset{Name: "tied", Values: []float64{0, 3, 3, 3, 3, 3, 3, 4, 9, 10}, Lower: 0, Upper: 10, Integer: true}
	return append(data, tied)
}

func TestRunTinyConfiguration(t *testing.T) {
	data := tinyData(t)
	cands := append(Candidates(), RuleCandidate())
	results := Run(Config{Statistics: Statistics, Data: data, Epsilons: []float64{1}, Candidates: cands, Trials: 5, Seed: 3, Workers: 2})
	want := 0
	for _, s := range Statistics {
		for _, c := range cands {
			if c.Supports(s) {
				want += len(data)
			}
		}
	}
	if len(results) != want {
		t.Fatalf("got %d results, want %d", len(results), want)
	}
	for _, r := range results {
		if r.Err != "" || r.Trials != 5 || math.IsNaN(r.MeanAbs) || r.MeanAbs < 0 || r.P90Abs < r.MedianAbs {
			t.Errorf("%s/%s/%s: got %+v, want 5 error-free trials with finite errors", r.Statistic, r.Dataset, r.Mechanism, r)
		}
	}
	var md bytes.Buffer
	err := WriteReport(&md, Report{Command: "go run ./bench/cmd/accuracy", Results: results, Data: data, Candidates: cands,
		Trials: 5, Elapsed: time.Second, Workers: 2, OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Findings", "#### median, ε = 1", "piecewise ≤ inverse", "preprocess vs smooth", "| variance | 1 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestRunIsReproducible(t *testing.T) {
	data := tinyData(t)[:1]
	cfg := Config{Statistics: Statistics[:1], Data: data, Epsilons: []float64{0.5}, Candidates: Candidates(), Trials: 4, Seed: 9, Workers: 2}
	a, b := Run(cfg), Run(cfg)
	for i := range a {
		if a[i].MeanAbs != b[i].MeanAbs || a[i].Mechanism != b[i].Mechanism {
			t.Errorf("run %d: got %v (%s), want %v (%s)", i, b[i].MeanAbs, b[i].Mechanism, a[i].MeanAbs, a[i].Mechanism)
		}
	}
}

func TestPreprocessCacheMatchesMechanism(t *testing.T) {
	// The candidate caches g per ñ and adds its own Laplace noise; fed the
	// same random stream, it must return exactly what the mechanism's
	// Release returns.
	spread, err := Synthetic("uniform", 200, 5)
	if err != nil {
		t.Fatal(err)
	}
	spread.Lower, spread.Upper = spread.Values[0], spread.Values[len(spread.Values)-1] // rows needed
	for _, d := range append(tinyData(t), spread) {
		c := NewColumn(d)
		n := int64(len(d.Values))
		for _, s := range []Statistic{Statistics[0], Statistics[3], Statistics[4]} {
			for _, nTilde := range []int64{n - 7, n, n + 7} {
				p, err := runPreprocess(s, c, 0.9, nTilde)
				if err != nil {
					t.Fatal(err)
				}
				for seed := range byte(5) {
					want, err := p.release(rand.NewChaCha8([32]byte{seed}))
					if err != nil {
						t.Fatal(err)
					}
					if got := p.noise.Release(rand.NewChaCha8([32]byte{seed}), p.g); got != want {
						t.Errorf("%s %s ñ=%d seed %d: got %v, want %v", d.Name, s.Name, nTilde, seed, got, want)
					}
				}
			}
		}
	}
}

func TestTruth(t *testing.T) {
	d := &Dataset{Values: []float64{1, 2, 4, 10}}
	for _, tc := range []struct {
		s    Statistic
		want float64
	}{
		{Statistic{Kind: QuantileStat, Quantile: 0.5}, 3},
		{Statistic{Kind: QuantileStat, Quantile: 0.1}, 1.3},
		{Statistic{Kind: QuantileStat, Quantile: 1}, 10},
		{Statistic{Kind: MeanStat}, 4.25},
		{Statistic{Kind: VarianceStat}, 12.1875},
	} {
		if got := Truth(tc.s, d); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v: got %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestGridMatchesPlanner(t *testing.T) {
	// internal/planner/exponential.go: unit bins over [L, U+1) for integer
	// columns with integer bounds less than 2^16 apart, else 2^14 bins.
	for _, tc := range []struct {
		d        Dataset
		lo, hi   float64
		bins     int
		unit     bool
		maxCount int64 // the count of the last bin for Values
	}{
		{Dataset{Lower: 0, Upper: 4095, Integer: true, Values: []float64{4095, 4095}}, 0, 4096, 4096, true, 2},
		{Dataset{Lower: 0, Upper: 500000, Integer: true, Values: []float64{500000}}, 0, 500000, 1 << 14, false, 1},
		{Dataset{Lower: 0, Upper: 1000, Values: []float64{1000}}, 0, 1000, 1 << 14, false, 1},
		{Dataset{Lower: 0.5, Upper: 10, Integer: true, Values: []float64{10}}, 0.5, 10, 1 << 14, false, 1},
	} {
		lo, hi, bins, unit := grid(&tc.d)
		if lo != tc.lo || hi != tc.hi || bins != tc.bins || unit != tc.unit {
			t.Errorf("%v: got [%v, %v] %d bins unit=%v, want [%v, %v] %d unit=%v", tc.d.Upper, lo, hi, bins, unit, tc.lo, tc.hi, tc.bins, tc.unit)
		}
		if h := NewColumn(&tc.d).Histogram(lo, hi, bins); h[bins-1] != tc.maxCount {
			t.Errorf("%v: last bin holds %d, want %d", tc.d.Upper, h[bins-1], tc.maxCount)
		}
	}
}

// BenchmarkRelease times one complete release of each main mechanism at
// n = 10^4 and 10^6 (ReleaseBenchmarks): go test ./bench -run '^$' -bench Release.
func BenchmarkRelease(b *testing.B) {
	bs, err := ReleaseBenchmarks()
	if err != nil {
		b.Fatal(err)
	}
	for _, rb := range bs {
		b.Run(rb.Name, func(b *testing.B) {
			src := trialSource(1, "timing", rb.Name)
			for b.Loop() {
				if err := rb.Release(src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
