package planner_test

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
	"github.com/dpproxy/dpproxy/internal/mech/preprocess"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
	"github.com/dpproxy/dpproxy/internal/planner"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// TestPlannedReleasesDrawTheCheckedMechanisms: each planned quantile and
// variance release draws exactly what the mechanism of package mech that
// its doc comment names draws at the release's ε, with the same public
// parameters (ρ, bounds, grid) and the same random stream, so the exact
// privacy checks of those mechanisms (piecewise.TestExactPrivacyPiecewise,
// quantile.TestGridExactPrivacy, TestPermuteFlipExactPrivacy,
// TestSmoothMedianExactPrivacy, preprocess.TestExactPrivacyPreprocess,
// each failing with the noise cut by 25%) are checks of what the planner
// releases. For preprocessing the stream first draws the noisy count at
// ε·CountShare (TestNoisyCountExactPrivacy), then the median at the rest.
// The planner's output must equal the mechanism's on 20 seeds (for the
// grid mechanisms: lie in the bin the mechanism draws). ε·4/3 handed by
// the planner to any of these mechanisms, or to the preprocessing
// median's count or statistic, changes some draw and fails the test. It
// is deterministic: no false rejections.
func TestPlannedReleasesDrawTheCheckedMechanisms(t *testing.T) {
	cat := testCatalog()
	p := planner.New(cat)
	parser := sqlrewrite.NewParser(cat)
	ages := []float64{3, 17, 17, 25, 31, 31, 31, 40, 44, 52, 58, 58, 63, 70, 71, 88, 90, 99}
	incomes := []float64{1200.5, 18000, 23999.25, 31000, 31000, 47250.75, 52000, 88000.125, 120000, 310000.5, 499999}
	bounds := func(r *planner.Release) mech.Bounds {
		lo, hi, _ := r.Stat.Column.Bounds()
		return mech.Bounds{Lower: lo, Upper: hi}
	}
	exactly := func(v float64, err error) (float64, float64, error) { return v, v, err }
	windowed := func(build func(r *planner.Release) (windowedQuantile, error)) func(rand.Source, *planner.Release, []float64) (float64, float64, error) {
		return func(src rand.Source, r *planner.Release, data []float64) (float64, float64, error) {
			m, err := build(r)
			if err != nil {
				return 0, 0, err
			}
			return exactly(m.Release(src, mech.WindowOf(m.Window(), data)))
		}
	}
	integerRho := func(r *planner.Release) float64 {
		return piecewise.DefaultRho(bounds(r), r.Stat.Column.Type == catalog.Integer)
	}
	grid := func(build func(r *planner.Release, bins int) (gridQuantile, error)) func(rand.Source, *planner.Release, []float64) (float64, float64, error) {
		return func(src rand.Source, r *planner.Release, data []float64) (float64, float64, error) {
			h := r.Mechanism.Histogram(r)
			m, err := build(r, h.Bins)
			if err != nil {
				return 0, 0, err
			}
			bin, err := m.Release(src, binCounts(data, h))
			w := (h.Upper - h.Lower) / float64(h.Bins)
			return h.Lower + float64(bin)*w, h.Lower + float64(bin+1)*w, err
		}
	}
	for _, tc := range []struct {
		mechanism, query string
		data             []float64
		ref              func(src rand.Source, r *planner.Release, data []float64) (lo, hi float64, err error)
	}{
		{"piecewise", "SELECT MEDIAN(age) FROM pums", ages, windowed(func(r *planner.Release) (windowedQuantile, error) {
			return piecewise.NewQuantile(bounds(r), r.Stat.Quantile, r.Epsilon, integerRho(r))
		})},
		{"piecewise", "SELECT PERCENTILE_CONT(income, 0.9) FROM pums", incomes, windowed(func(r *planner.Release) (windowedQuantile, error) {
			return piecewise.NewQuantile(bounds(r), r.Stat.Quantile, r.Epsilon, integerRho(r))
		})},
		{"inverse", "SELECT MEDIAN(age) FROM pums", ages, windowed(func(r *planner.Release) (windowedQuantile, error) {
			return piecewise.NewInverseSensitivityQuantile(bounds(r), r.Stat.Quantile, r.Epsilon, integerRho(r))
		})},
		{"inverse", "SELECT PERCENTILE_CONT(income, 0.25) FROM pums", incomes, windowed(func(r *planner.Release) (windowedQuantile, error) {
			return piecewise.NewInverseSensitivityQuantile(bounds(r), r.Stat.Quantile, r.Epsilon, integerRho(r))
		})},
		{"smooth", "SELECT MEDIAN(income) FROM pums", incomes, windowed(func(r *planner.Release) (windowedQuantile, error) {
			return quantile.NewSmoothMedian(bounds(r), r.Epsilon)
		})},
		{"piecewise", "SELECT VARIANCE(age) FROM pums", ages, func(src rand.Source, r *planner.Release, data []float64) (float64, float64, error) {
			m, err := piecewise.NewVariance(bounds(r), r.Epsilon, piecewise.DefaultVarianceRho(bounds(r)))
			if err != nil {
				return 0, 0, err
			}
			return exactly(m.Release(context.Background(), src, m.Sketch(data)))
		}},
		{"exponential", "SELECT MEDIAN(age) FROM pums", ages, grid(func(r *planner.Release, bins int) (gridQuantile, error) {
			return quantile.NewGridExponential(r.Stat.Quantile, r.Epsilon, bins)
		})},
		{"permute-flip", "SELECT PERCENTILE_CONT(age, 0.75) FROM pums", ages, grid(func(r *planner.Release, bins int) (gridQuantile, error) {
			return quantile.NewGridPermuteFlip(r.Stat.Quantile, r.Epsilon, bins)
		})},
		{"preprocess", "SELECT MEDIAN(income) FROM pums", incomes, func(src rand.Source, r *planner.Release, data []float64) (float64, float64, error) {
			countEpsilon, rest := mech.SplitShare(r.Epsilon, planner.CountShare)
			count, err := laplace.ReleaseCount(src, int64(len(data)), countEpsilon)
			if err != nil {
				return 0, 0, err
			}
			params, err := preprocess.DefaultParams(preprocess.MedianStatistic, bounds(r), count.Value())
			if err != nil {
				return 0, 0, err
			}
			m, err := preprocess.NewMedian(params, rest)
			if err != nil {
				return 0, 0, err
			}
			return exactly(m.Release(src, mech.WindowOf(m.Window(), data)))
		}},
	} {
		st, err := parser.Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.Plan(st.(*sqlrewrite.Select), planner.Settings{Epsilon: 0.8, Mechanism: tc.mechanism})
		if err != nil || len(plan.Releases) != 1 || plan.Releases[0].Mechanism.Name() != tc.mechanism {
			t.Fatalf("%s by %s: plan %v, %v", tc.query, tc.mechanism, plan, err)
		}
		r := plan.Releases[0]
		for seed := range uint64(20) {
			var key [32]byte
			binary.LittleEndian.PutUint64(key[:], seed)
			est, err := driveRelease(rand.NewChaCha8(key), r, tc.data, []float64{float64(len(tc.data)), 0, 0})
			if err != nil {
				t.Fatalf("%s by %s: %v", tc.query, tc.mechanism, err)
			}
			lo, hi, err := tc.ref(rand.NewChaCha8(key), r, tc.data)
			if err != nil {
				t.Fatalf("%s by %s, the mechanism: %v", tc.query, tc.mechanism, err)
			}
			if !(est.Value >= lo && est.Value <= hi) {
				t.Errorf("%s by %s, seed %d: planned release %v, the mechanism at ε = %v draws %v (to %v)", tc.query, tc.mechanism, seed, est.Value, r.Epsilon, lo, hi)
			}
		}
	}
}

// windowedQuantile is a mechanism of package mech on a window of order
// statistics.
type windowedQuantile interface {
	Window() mech.RankWindowSpec
	Release(src noise.Source, w mech.SortedWindow) (float64, error)
}

// gridQuantile is a mechanism of package quantile over a grid histogram.
type gridQuantile interface {
	Release(src noise.Source, counts []int64) (int, error)
}

// binCounts is the grid histogram h of data, as the database counts it.
func binCounts(data []float64, h *sqlrewrite.Histogram) []int64 {
	counts := make([]int64, h.Bins)
	for _, v := range data {
		bin := int(math.Floor((v - h.Lower) / (h.Upper - h.Lower) * float64(h.Bins)))
		counts[max(min(bin, h.Bins-1), 0)]++
	}
	return counts
}
