package planner

import (
	"context"
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/preprocess"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// CountShare is the share of a release's ε spent on the noisy count ñ of
// mechanisms that need one (sensitivity preprocessing: Δ = (U−L)/ñ); the
// rest goes to the statistic. The benchmark uses the same split.
const CountShare = 0.1

// releaseNoisyCount releases the noisy count ñ of a mechanism that needs
// one (sensitivity preprocessing, PTR) from the exact count n, with
// ε·CountShare of the release's ε (rounded down, mech.SplitShare), and
// returns it with rest, the ε left for the statistic. Guarantee: the count
// is pure (ε·CountShare)-DP under add/remove of one row (n moves by 1;
// laplace.ReleaseCount), and the two shares add up to at most ε, so with a
// statistic released at rest from ñ the release is ε-DP (sequential
// composition). TestNoisyCountExactPrivacy checks the law of the count it
// draws.
func releaseNoisyCount(src noise.Source, epsilon float64, n int64) (count laplace.Noisy, rest float64, err error) {
	countEpsilon, rest := mech.SplitShare(epsilon, CountShare)
	count, err = laplace.ReleaseCount(src, n, countEpsilon)
	return count, rest, err
}

// preprocessMechanism is sensitivity preprocessing (Cummings and Durfee)
// for the median, the mean and the variance: the statistic g of a
// preprocessed dataset whose add/remove sensitivity is Δ, plus Laplace
// noise Δ/ε'. Pure ε-DP under add/remove: ε·CountShare pays for the noisy
// count ñ that fixes Δ (preprocess.DefaultParams, public facts and ñ
// only), ε' = ε·(1−CountShare) for the statistic; composition adds them.
// Its values have no 95% interval (preprocessEstimate).
//
// Reads: the median needs the non-NULL count and a window whose width
// depends on Δ, which at the default Δ is the whole column; the mean and
// variance need exact integer sums on a public grid, the smallest and
// largest grid index, and the whole sorted column of indices only when the
// paper's aggregate check cannot settle g. The plan says so (Reads).
type preprocessMechanism struct{}

func (preprocessMechanism) Name() string { return "preprocess" }

func (preprocessMechanism) Guarantee() string {
	return fmt.Sprintf("pure ε-DP: sensitivity preprocessing plus Laplace noise; %g of ε for the noisy count that sets Δ", CountShare)
}

func (preprocessMechanism) NeedsDelta() bool { return false }

func (preprocessMechanism) Supports(s Statistic) bool {
	return s.Kind == StatMean || s.Kind == StatVariance || (s.Kind == StatQuantile && s.Quantile == 0.5)
}

func (preprocessMechanism) Terms(r *Release) []sqlrewrite.SummaryTerm {
	b := columnBounds(r)
	return []sqlrewrite.SummaryTerm{
		countTerm(r),
		{Kind: sqlrewrite.ClampedSum, Column: r.Stat.Column.Source, Lower: b.Lower, Upper: b.Upper},
		{Kind: sqlrewrite.ClampedSumSquares, Column: r.Stat.Column.Source, Lower: b.Lower, Upper: b.Upper},
	}
}

func (preprocessMechanism) Histogram(*Release) *sqlrewrite.Histogram { return nil }

func (preprocessMechanism) Reads(r *Release) string {
	if r.Stat.Kind == StatQuantile {
		return "the non-NULL count, then a window of order statistics of width ≈ (U−L)/Δ: the whole column at the default Δ"
	}
	return "exact sums of grid indices, the smallest and largest index, and the whole sorted column of indices only if the sums cannot settle the statistic"
}

func (m preprocessMechanism) Start(src noise.Source, r *Release, terms []float64, _ []int64) (Step, error) {
	count, rest, err := releaseNoisyCount(src, r.Epsilon, int64(math.Round(terms[0])))
	if err != nil {
		return nil, err
	}
	return m.withCount(r, terms, count.Value(), rest)
}

// withCount starts the release with the noisy count ñ already released and
// eps left for the statistic.
func (preprocessMechanism) withCount(r *Release, terms []float64, nHat, eps float64) (Step, error) {
	b := columnBounds(r)
	n := int64(math.Round(terms[0]))
	switch r.Stat.Kind {
	case StatQuantile:
		params, err := preprocess.DefaultParams(preprocess.MedianStatistic, b, nHat)
		if err != nil {
			return nil, err
		}
		m, err := preprocess.NewMedian(params, eps)
		if err != nil {
			return nil, err
		}
		ranks := m.Window().Ranks(n)
		step := &once{finish: func(_ context.Context, src noise.Source, fetched []Fetched) (Estimate, error) {
			w := mech.SortedWindow{Count: n, First: ranks.First}
			if len(fetched) > 0 {
				w.Values = fetched[0].Values
			}
			v, err := m.Release(src, w)
			return preprocessEstimate(v), err
		}}
		if ranks.Len() > 0 {
			step.requests = []sqlrewrite.Fetch{rankWindow(r, ranks)}
		}
		return step, nil
	case StatMean, StatVariance:
		stat := preprocess.MeanStatistic
		if r.Stat.Kind == StatVariance {
			stat = preprocess.VarianceStatistic
		}
		params, err := preprocess.DefaultParams(stat, b, nHat)
		if err != nil {
			return nil, err
		}
		var m summaryMechanism
		if r.Stat.Kind == StatMean {
			m, err = preprocess.NewMean(params, eps)
		} else {
			m, err = preprocess.NewVariance(params, eps)
		}
		if err != nil {
			return nil, err
		}
		return &summaryStep{r: r, m: m, n: n}, nil
	}
	return nil, fmt.Errorf("preprocess cannot release %s", r.Stat)
}

// summaryMechanism is the preprocessing mean or variance.
type summaryMechanism interface {
	Grid() mech.Grid
	NeedsRows(s preprocess.Summary) (bool, error)
	Release(src noise.Source, s preprocess.Summary, sorted []int64) (float64, error)
}

// summaryStep fetches the exact grid sums and the smallest and largest
// grid indices, then the sorted indices if they do not settle the
// statistic, then releases it: every value the mechanism sees is an exact
// integer on its public grid (preprocess.Mean, preprocess.Variance).
type summaryStep struct {
	r     *Release
	m     summaryMechanism
	n     int64
	s     preprocess.Summary
	phase int
}

func (st *summaryStep) Advance(_ context.Context, src noise.Source, fetched []Fetched) ([]sqlrewrite.Fetch, bool, Estimate, error) {
	n, g := st.n, st.m.Grid()
	switch st.phase {
	case 0:
		st.phase = 1
		requests := []sqlrewrite.Fetch{gridSumsRequest(st.r, g)}
		if n > 0 {
			requests = append(requests, gridWindow(st.r, g, mech.RankRange{First: 1, Last: 1}), gridWindow(st.r, g, mech.RankRange{First: n, Last: n}))
		}
		return requests, false, Estimate{}, nil
	case 1:
		want := 1
		if n > 0 {
			want = 3
		}
		if len(fetched) != want {
			return nil, false, Estimate{}, fmt.Errorf("preprocess: grid sums, minimum and maximum not fetched")
		}
		sums, err := gridSumsOf(n, fetched[0])
		if err != nil {
			return nil, false, Estimate{}, err
		}
		st.s = preprocess.Summary{Sums: sums}
		if n > 0 {
			lo, err := gridIndices(fetched[1].Values)
			if err != nil {
				return nil, false, Estimate{}, err
			}
			hi, err := gridIndices(fetched[2].Values)
			if err != nil {
				return nil, false, Estimate{}, err
			}
			if len(lo) != 1 || len(hi) != 1 {
				return nil, false, Estimate{}, fmt.Errorf("preprocess: minimum and maximum not fetched")
			}
			st.s.Min, st.s.Max = lo[0], hi[0]
		}
		needs, err := st.m.NeedsRows(st.s)
		if err != nil {
			return nil, false, Estimate{}, err
		}
		if needs {
			st.phase = 2
			return []sqlrewrite.Fetch{gridWindow(st.r, g, mech.RankRange{First: 1, Last: n})}, false, Estimate{}, nil
		}
		v, err := st.m.Release(src, st.s, nil)
		return nil, true, preprocessEstimate(v), err
	}
	if len(fetched) != 1 {
		return nil, false, Estimate{}, fmt.Errorf("preprocess: sorted column not fetched")
	}
	sorted, err := gridIndices(fetched[0].Values)
	if err != nil {
		return nil, false, Estimate{}, err
	}
	v, err := st.m.Release(src, st.s, sorted)
	return nil, true, preprocessEstimate(v), err
}

// preprocessEstimate is a value released by sensitivity preprocessing,
// g(D) + Lap(Δ/ε), without an interval. The Laplace interval around the
// release covers g(D), not the statistic: Δ comes from the noisy count ñ,
// and whenever ñ overshoots n (about half the time) g can sit well inside
// the data's range (20 rows at the upper bound of [0, 100], ε = 0.1:
// the interval missed their mean in a quarter of the releases). How far g
// moves depends on the data beyond anything released (Cummings and
// Durfee's bounds, Theorems 1.6 to 1.8, need the spread of the rows), so
// no interval from ñ and the release holds the statistic at 95% for
// every dataset.
func preprocessEstimate(v float64) Estimate {
	return Estimate{Value: v, Note: "95% interval: not available (preprocessing may move the statistic by an amount the released values do not bound)"}
}
