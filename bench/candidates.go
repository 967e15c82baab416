package bench

import (
	"github.com/dpproxy/dpproxy/internal/mech"
)

// confidence is the interval level asked of mechanisms that report one.
const confidence = 0.95

func bounds(d *Dataset) mech.Bounds { return mech.Bounds{Lower: d.Lower, Upper: d.Upper} }

func summary(d *Dataset) mech.Summary {
	s := mech.Summary{Count: int64(len(d.Values))}
	for _, v := range d.Values {
		s.Sum += v
		s.SumSquares += v * v
	}
	return s
}

// Baselines are the mechanisms of the end-to-end proxy: Laplace noise with
// global sensitivity on clamped sums (mean, variance), and the exponential
// mechanism on ranks (quantiles).
func Baselines() []Candidate {
	return []Candidate{
		{
			Name:     "laplace",
			Supports: func(s Statistic) bool { return s.Kind == MeanStat || s.Kind == VarianceStat },
			Prepare: func(s Statistic, d *Dataset, eps float64) (func(mech.Source) (float64, error), error) {
				b, sum := bounds(d), summary(d)
				return func(src mech.Source) (float64, error) {
					var e mech.Estimate
					var err error
					if s.Kind == MeanStat {
						e, err = mech.BoundedMean(src, b, sum, eps, confidence)
					} else {
						e, err = mech.BoundedVariance(src, b, mech.PopulationVariance, sum, eps, confidence)
					}
					return e.Value, err
				}, nil
			},
		},
		{
			Name:     "exponential",
			Supports: func(s Statistic) bool { return s.Kind == QuantileStat },
			Prepare: func(s Statistic, d *Dataset, eps float64) (func(mech.Source) (float64, error), error) {
				q, err := mech.NewQuantile(bounds(d), s.Quantile, eps, mech.DefaultQuantileWindow(eps, s.Quantile))
				if err != nil {
					return nil, err
				}
				w := mech.WindowOf(q.Window(), d.Values)
				return func(src mech.Source) (float64, error) {
					e, err := q.Release(src, w)
					return e.Value, err
				}, nil
			},
		},
	}
}

// Candidates are every mechanism of the benchmark.
func Candidates() []Candidate {
	return Baselines()
}
