package bench

import (
	"fmt"
	"math"
	"time"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/preprocess"
)

// preprocessCandidate is sensitivity preprocessing (Cummings and Durfee):
// g(D) + Lap(Δ/ε') with Δ and the centre from preprocess.DefaultParams
// on the public bounds and a noisy count ñ. Budget (CountShare): ñ costs
// ε/10, the statistic ε' = 9ε/10. Median, mean and population variance.
//
// g depends on ñ, so each draw first releases ñ, then g for that ñ: g is
// computed once per distinct ñ and cached (it is a deterministic function
// of the data and ñ), and the Laplace noise is drawn per release.
func preprocessCandidate() Candidate {
	return Candidate{
		Name:       "preprocess",
		Summary:    "sensitivity preprocessing (Cummings–Durfee), Δ from the bounds and a noisy count",
		NeedsCount: true,
		Supports: func(s Statistic) bool {
			return isMedian(s) || s.Kind == MeanStat || s.Kind == VarianceStat
		},
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			cache := newPreprocessCache(s, c, statisticEpsilon(eps))
			draw := func(src noise.Source) (float64, error) {
				nTilde, err := noisyCount(src, c.d, eps)
				if err != nil {
					return 0, err
				}
				return cache.release(src, nTilde)
			}
			return &Prepared{Draw: draw, Saved: cache.savedTime}, nil
		},
	}
}

// preprocessCache holds the deterministic part of the preprocessing
// release of one statistic and column at the statistic's ε, per ñ. It is
// used by one goroutine at a time.
type preprocessCache struct {
	s       Statistic
	c       *Column
	eps     float64
	entries map[int64]preprocessed
	saved   time.Duration
}

func newPreprocessCache(s Statistic, c *Column, eps float64) *preprocessCache {
	return &preprocessCache{s: s, c: c, eps: eps, entries: map[int64]preprocessed{}}
}

// release returns g(D) + Lap for the noisy count nTilde, computing g on
// the first use of nTilde.
func (pc *preprocessCache) release(src noise.Source, nTilde int64) (float64, error) {
	p, ok := pc.entries[nTilde]
	if ok {
		pc.saved += p.cost
	} else {
		var err error
		if p, err = runPreprocess(pc.s, pc.c, pc.eps, nTilde); err != nil {
			return 0, err
		}
		pc.entries[nTilde] = p
	}
	return p.noise.Release(src, p.g), nil
}

// savedTime returns the computing time the cache has spared.
func (pc *preprocessCache) savedTime() time.Duration { return pc.saved }

// preprocessed is the deterministic part of a preprocessing release for one
// ñ: g(D), the Laplace noise the mechanism adds to it, the time computing
// them took, and the mechanism's own release (which tests check the cached
// path against: same source, same output).
type preprocessed struct {
	g       float64
	noise   *noise.Laplace
	cost    time.Duration
	release func(src noise.Source) (float64, error)
}

// preprocess builds the preprocessing mechanism of s for the noisy count
// nTilde at the statistic's budget eps and computes g.
func runPreprocess(s Statistic, c *Column, eps float64, nTilde int64) (preprocessed, error) {
	start := time.Now()
	b := c.bounds()
	var (
		stat      preprocess.Statistic
		magnitude = math.Max(math.Abs(b.Lower), math.Abs(b.Upper))
	)
	switch {
	case isMedian(s):
		stat = preprocess.MedianStatistic
	case s.Kind == MeanStat:
		stat = preprocess.MeanStatistic
	case s.Kind == VarianceStat:
		stat = preprocess.VarianceStatistic
		h := b.Upper/2 - b.Lower/2
		magnitude = h * h
	default:
		return preprocessed{}, fmt.Errorf("preprocess: no mechanism for %s", s.Name)
	}
	p, err := preprocess.DefaultParams(stat, b, float64(nTilde))
	if err != nil {
		return preprocessed{}, err
	}
	g, release, err := preprocessValue(stat, p, eps, c.d.Values)
	if err != nil {
		return preprocessed{}, err
	}
	noise, err := noise.NewLaplace(preprocessSensitivity(p.Delta, magnitude), eps)
	if err != nil {
		return preprocessed{}, err
	}
	return preprocessed{g: g, noise: noise, cost: time.Since(start), release: release}, nil
}

// preprocessValue builds the mechanism of stat for p and eps and returns
// g(D) and the mechanism's own release on the sorted column.
func preprocessValue(stat preprocess.Statistic, p preprocess.Params, eps float64, sorted []float64) (float64, func(noise.Source) (float64, error), error) {
	switch stat {
	case preprocess.MedianStatistic:
		m, err := preprocess.NewMedian(p, eps)
		if err != nil {
			return 0, nil, err
		}
		w := mech.WindowOf(m.Window(), sorted)
		g, err := m.Value(w)
		return g, func(src noise.Source) (float64, error) { return m.Release(src, w) }, err
	case preprocess.MeanStatistic:
		m, err := preprocess.NewMean(p, eps)
		if err != nil {
			return 0, nil, err
		}
		ps, idx := preprocess.SummaryOf(m.Grid(), sorted)
		g, err := m.Value(ps, idx)
		return g, func(src noise.Source) (float64, error) { return m.Release(src, ps, idx) }, err
	}
	m, err := preprocess.NewVariance(p, eps)
	if err != nil {
		return 0, nil, err
	}
	ps, idx := preprocess.SummaryOf(m.Grid(), sorted)
	g, err := m.Value(ps, idx)
	return g, func(src noise.Source) (float64, error) { return m.Release(src, ps, idx) }, err
}

// preprocessSensitivity is the sensitivity the preprocessing mechanisms
// calibrate their Laplace noise to: Δ plus two ulps of the largest
// magnitude g can take, rounded up (mech's newPreprocessNoise, whose
// Release is g plus this noise; TestPreprocessCacheMatchesMechanism checks
// that the two agree draw for draw).
func preprocessSensitivity(delta, magnitude float64) float64 {
	ulp := math.Nextafter(magnitude, math.Inf(1)) - magnitude
	return math.Nextafter(delta+2*ulp, math.Inf(1))
}
