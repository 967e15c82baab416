package laplace

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// The audits in this package run each mechanism on a dataset D and a
// neighbour D' (one row added or removed) and check that the 99.9%
// lower confidence bound on the privacy loss does not exceed the claimed ε
// (privtest's package comment). A correct mechanism fails one audit with
// probability ≤ 10⁻³; the seeds are fixed, so the outcome is deterministic.
// Each neighbouring pair is chosen where the mechanism's analysis is tight,
// so the logged point estimate should come close to ε.

func TestAuditDiscreteLaplace(t *testing.T) {
	d, _ := noise.NewDiscreteLaplace(1, 1)
	privtest.AuditDefault(t, 0xa1, 1, privtest.IntegerEdges(0, 22), func(src rand.Source, nb int) float64 {
		return float64(d.Release(src, int64(10+nb)))
	})
}

func TestAuditLaplace(t *testing.T) {
	l, _ := noise.NewLaplace(1, 1)
	privtest.AuditDefault(t, 0xa2, 1, nil, func(src rand.Source, nb int) float64 {
		return l.Release(src, float64(nb))
	})
}

// TestAuditCatchesBrokenNoise checks the audit has power: the same
// mechanisms with half the noise (true ε = 2, claimed 1) must fail it. At
// 2·10^5 samples the Laplace tail events carry a likelihood ratio e²
// against a claimed e¹, far outside the confidence bounds; the exponential
// mechanism with a halved utility sensitivity, on {2} (uniform output)
// against {2, 8}, has density ratio 0.1/(e⁻²/(6+4e⁻²)) = 4.8 on [8, 10]:
// a loss of 1.57 where the correct one has 0.71.
func TestAuditCatchesBrokenNoise(t *testing.T) {
	seed := privtest.Seed(t, 0xa3)
	d, _ := noise.NewDiscreteLaplace(1, 2)
	l, _ := noise.NewLaplace(0.5, 1)
	for _, tc := range []struct {
		name  string
		edges []float64
		mech  privtest.Mechanism
	}{
		{"discrete", privtest.IntegerEdges(0, 22), func(src rand.Source, nb int) float64 { return float64(d.Release(src, int64(10+nb))) }},
		{"grid", nil, func(src rand.Source, nb int) float64 { return l.Release(src, float64(nb)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := privtest.Run(privtest.Config{Epsilon: 1, Samples: privtest.AuditSamples, Seed: seed, Edges: tc.edges}, tc.mech)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε̂_lb=%.4f at %s, point %.4f", res.LowerBound, res.Event, res.PointEstimate)
			if res.LowerBound <= 1 {
				t.Errorf("lower bound got %v, want > 1 (the audit missed halved noise)", res.LowerBound)
			}
		})
	}
}

func TestAuditAggregates(t *testing.T) {
	// Each case: ε = 1 in total; D' is D with one row added at the value
	// that moves the statistic most (a bound), so the analysis is tight.
	type rows = []float64
	summary := func(b mech.Bounds, values rows) Summary {
		s := Summary{Count: int64(len(values))}
		for _, v := range values {
			c := b.Clamp(v)
			s.Sum += c
			s.SumSquares += c * c
		}
		return s
	}
	// sumOnGrid releases the exact grid sum of d or d2 (told apart by the
	// summary's count), the SUM mechanism (sum_grid.go).
	sumOnGrid := func(b mech.Bounds, d, d2 rows) func(rand.Source, mech.Bounds, Summary) float64 {
		g, err := mech.NewGrid(b)
		if err != nil {
			t.Fatal(err)
		}
		_, sums := g.Indices(d)
		_, sums2 := g.Indices(d2)
		return func(src rand.Source, b mech.Bounds, s Summary) float64 {
			of := sums
			if s.Count == int64(len(d2)) {
				of = sums2
			}
			r, _ := ReleaseUnitSumOnGrid(src, b, g, of, 1, 1)
			return r.Value()
		}
	}
	b := mech.Bounds{Lower: 0, Upper: 10}
	for _, tc := range []struct {
		name    string
		b       mech.Bounds
		d, d2   rows
		edges   []float64
		release func(src rand.Source, b mech.Bounds, s Summary) float64
	}{
		{"count from zero", b, rows{}, rows{7}, privtest.IntegerEdges(-12, 13), func(src rand.Source, _ mech.Bounds, s Summary) float64 {
			c, _ := ReleaseCount(src, s.Count, 1)
			return c.Value()
		}},
		{"sum at the upper bound", mech.Bounds{Lower: -3, Upper: 10}, rows{1, 3}, rows{1, 3, 10}, nil, sumOnGrid(mech.Bounds{Lower: -3, Upper: 10}, rows{1, 3}, rows{1, 3, 10})},
		{"sum at the lower bound", mech.Bounds{Lower: -10, Upper: 2}, rows{1, -3}, rows{1, -3, -10}, nil, sumOnGrid(mech.Bounds{Lower: -10, Upper: 2}, rows{1, -3}, rows{1, -3, -10})},
		{"mean, n = 2 plus a bound", b, rows{5, 5}, rows{5, 5, 10}, nil, meanRelease},
		{"mean, n = 0 and 1", b, rows{}, rows{0}, nil, meanRelease},
		{"variance plus a bound", b, rows{0, 10, 5}, rows{0, 10, 5, 10}, nil, varianceRelease},
		{"variance, n = 1 and 2", b, rows{10}, rows{10, 0}, nil, varianceRelease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, s2 := summary(tc.b, tc.d), summary(tc.b, tc.d2)
			privtest.AuditDefault(t, 0xa4, 1, tc.edges, func(src rand.Source, nb int) float64 {
				if nb == 1 {
					return tc.release(src, tc.b, s2)
				}
				return tc.release(src, tc.b, s)
			})
		})
	}
}

// meanRelease is BoundedMean's value at ε = 1, built from the primitives
// (the interval is post-processing and skipped for speed).
func meanRelease(src rand.Source, b mech.Bounds, s Summary) float64 {
	r, _ := releasePrimitives(src, b, s, 0.5, false)
	return meanOf(b, r[0].Value(), r[1].Value())
}

// varianceRelease is BoundedVariance's population value at ε = 1.
func varianceRelease(src rand.Source, b mech.Bounds, s Summary) float64 {
	r, _ := releasePrimitives(src, b, s, 1.0/3, true)
	return varianceOf(b, PopulationVariance, r[0].Value(), r[1].Value(), r[2].Value())
}
