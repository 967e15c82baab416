package bench

import (
	"errors"
	"math"
	"math/big"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/ptr"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
)

// ptrTrim is the trimmed mean's total trimmed fraction α in the benchmark
// (the proxy's default @dp_trim).
const ptrTrim = 0.1

// PTRColumnCell is one column estimator on one dataset at one ε: the PTR
// mechanism as the proxy runs it and the proxy's pure ε-DP baseline.
type PTRColumnCell struct {
	Dataset   string
	N         int
	Statistic string // "median", "trimmed mean" or "IQR"
	Epsilon   float64
	// Truth is the sample statistic PTR estimates; BaselineTruth the one
	// the baseline estimates (the mean for the trimmed mean's baseline,
	// else the same).
	Truth, BaselineTruth float64
	PTR, Baseline        PTRErrors
	// BaselineName names the baseline mechanism.
	BaselineName string
}

// ptrColumn is a dataset with what the releases read from it, computed
// once: prefix sums of its values and of their grid indices (the
// database's exact sum of grid indices between rank windows), the
// planner's exponential-mechanism histogram, and the Column whose grid
// sums the Laplace-mean baseline reads.
type ptrColumn struct {
	d      *Dataset
	col    *Column
	prefix []float64 // prefix[i] = x_(1) + … + x_(i)
	// gridPrefix[i] is k_(1) + … + k_(i), the grid indices on grid (the
	// last grid a fetch asked for).
	grid       mech.Grid
	gridPrefix []int64
	// The grid of internal/planner/exponential.go: unit bins of an
	// integer column with integer bounds less than 2^16 apart (answer
	// lower + j), else 2^14 equal bins (answer the bin's midpoint).
	gridLower, gridWidth float64
	unit                 bool
	hist                 []int64
}

// Grid sizes of the planner's exponential mechanism, replicated.
const (
	ptrMaxUnitBins = 1 << 16
	ptrRealBins    = 1 << 14
)

func newPTRColumn(d *Dataset) *ptrColumn {
	c := &ptrColumn{d: d, col: NewColumn(d), prefix: make([]float64, len(d.Values)+1), gridLower: d.Lower}
	for i, v := range d.Values {
		c.prefix[i+1] = c.prefix[i] + v
	}
	width, upper, bins := d.Upper-d.Lower, d.Upper, ptrRealBins
	if d.Integer && d.Lower == math.Trunc(d.Lower) && d.Upper == math.Trunc(d.Upper) && width < ptrMaxUnitBins {
		c.unit, upper, bins = true, d.Upper+1, int(width)+1
	}
	c.gridWidth = (upper - d.Lower) / float64(bins)
	c.hist = make([]int64, bins)
	for _, v := range d.Values {
		c.hist[min(int(math.Floor((v-d.Lower)/c.gridWidth)), bins-1)]++
	}
	return c
}

// fetch returns what the database returns for f: the rank windows and the
// sum of the grid indices of the values ranked strictly between the two
// windows.
func (c *ptrColumn) fetch(f ptr.Fetch) ptr.Data {
	var d ptr.Data
	for _, spec := range f.Windows {
		d.Windows = append(d.Windows, mech.WindowOf(spec, c.d.Values))
	}
	if f.SumBetween && len(d.Windows) == 2 {
		first, last := d.Windows[0].Ranks().Last+1, d.Windows[1].Ranks().First-1
		if last >= first {
			if c.gridPrefix == nil || c.grid != f.Grid {
				c.grid, c.gridPrefix = f.Grid, make([]int64, len(c.d.Values)+1)
				for i, v := range c.d.Values {
					c.gridPrefix[i+1] = c.gridPrefix[i] + f.Grid.Index(v)
				}
			}
			d.SumBetween = big.NewInt(c.gridPrefix[last] - c.gridPrefix[first-1])
		}
	}
	return d
}

// gridQuantile releases quantile q with the planner's exponential
// mechanism (quantile.GridExponential over the column's histogram).
func (c *ptrColumn) gridQuantile(src noise.Source, q, epsilon float64) (float64, error) {
	m, err := quantile.NewGridExponential(q, epsilon, len(c.hist))
	if err != nil {
		return 0, err
	}
	j, err := m.Release(src, c.hist)
	if c.unit {
		return c.gridLower + float64(j), err
	}
	return c.gridLower + (float64(j)+0.5)*c.gridWidth, err
}

// trimmedMean returns the sample α-trimmed mean PTRTrimmedMean estimates:
// the mean of ranks lo+1 … hi−1 with lo = ⌈nα/2⌉, hi = ⌊n(1−α/2)⌋
// (PTRTrimmedMean.TrimmedRanks).
func (c *ptrColumn) trimmedMean(alpha float64) float64 {
	n := float64(len(c.d.Values))
	lo, hi := int(math.Ceil(n*alpha/2)), int(math.Floor(n*(1-alpha/2)))
	return (c.prefix[hi-1] - c.prefix[lo]) / float64(hi-lo-1)
}

// ptrColumnStatistic is one column estimator and its baseline.
type ptrColumnStatistic struct {
	name, baseline       string
	truth, baselineTruth func(c *ptrColumn) float64
	// release runs the PTR mechanism with p (ε and Size already set as
	// the proxy sets them) on c.
	release func(src noise.Source, c *ptrColumn, p ptr.Params) (value float64, refused bool, err error)
	// releaseBaseline runs the baseline with all of ε.
	releaseBaseline func(src noise.Source, c *ptrColumn, epsilon float64) (float64, error)
}

// ptrColumnRelease adapts a PTR column mechanism to a release on c.
func ptrColumnRelease(src noise.Source, c *ptrColumn, m interface {
	Fetch() ptr.Fetch
	Release(noise.Source, ptr.Data) (float64, bool, error)
}) (float64, bool, error) {
	return m.Release(src, c.fetch(m.Fetch()))
}

// ptrColumnStatistics are the estimators of the column benchmark.
var ptrColumnStatistics = []ptrColumnStatistic{
	{
		name: "median", baseline: "exponential",
		truth:         func(c *ptrColumn) float64 { return ptrPercentile(c.d.Values, 0.5) },
		baselineTruth: func(c *ptrColumn) float64 { return ptrPercentile(c.d.Values, 0.5) },
		release: func(src noise.Source, c *ptrColumn, p ptr.Params) (float64, bool, error) {
			m, err := ptr.NewMedian(p, 0)
			if err != nil {
				return 0, false, err
			}
			return ptrColumnRelease(src, c, m)
		},
		releaseBaseline: func(src noise.Source, c *ptrColumn, epsilon float64) (float64, error) {
			return c.gridQuantile(src, 0.5, epsilon)
		},
	},
	{
		name: "trimmed mean", baseline: "Laplace mean",
		truth:         func(c *ptrColumn) float64 { return c.trimmedMean(ptrTrim) },
		baselineTruth: func(c *ptrColumn) float64 { return c.prefix[len(c.d.Values)] / float64(len(c.d.Values)) },
		release: func(src noise.Source, c *ptrColumn, p ptr.Params) (float64, bool, error) {
			m, err := ptr.NewTrimmedMean(p, ptrTrim, 0)
			if errors.Is(err, mech.ErrInvalidInput) {
				// No κ fits the noisy size at this ε and δ: the proxy
				// answers ⊥ (internal/planner/ptr.go).
				return 0, true, nil
			}
			if err != nil {
				return 0, false, err
			}
			return ptrColumnRelease(src, c, m)
		},
		releaseBaseline: func(src noise.Source, c *ptrColumn, epsilon float64) (float64, error) {
			g, sums, err := c.col.GridSums()
			if err != nil {
				return 0, err
			}
			e, err := laplaceMean(src, c.col.bounds(), g, sums, epsilon)
			return e.Value, err
		},
	},
	{
		name: "IQR", baseline: "exponential quartiles",
		truth: func(c *ptrColumn) float64 {
			return ptrPercentile(c.d.Values, 0.75) - ptrPercentile(c.d.Values, 0.25)
		},
		baselineTruth: func(c *ptrColumn) float64 {
			return ptrPercentile(c.d.Values, 0.75) - ptrPercentile(c.d.Values, 0.25)
		},
		release: func(src noise.Source, c *ptrColumn, p ptr.Params) (float64, bool, error) {
			m, err := ptr.NewScale(p)
			if err != nil {
				return 0, false, err
			}
			return ptrColumnRelease(src, c, m)
		},
		releaseBaseline: func(src noise.Source, c *ptrColumn, epsilon float64) (float64, error) {
			q1, err := c.gridQuantile(src, 0.25, epsilon/2)
			if err != nil {
				return 0, err
			}
			q3, err := c.gridQuantile(src, 0.75, epsilon/2)
			return math.Max(q3-q1, 0), err
		},
	},
}

// measurePTRColumn runs trials of one statistic on c at ε: PTR with a noisy
// count at ε·0.1 as its public size and 0.9ε for the mechanism, and the
// baseline with all of ε, each with its own noise stream per trial.
func measurePTRColumn(c *ptrColumn, s ptrColumnStatistic, epsilon, delta float64, trials int, seed uint64) (PTRColumnCell, error) {
	cell := PTRColumnCell{
		Dataset: c.d.Name, N: len(c.d.Values), Statistic: s.name, Epsilon: epsilon,
		Truth: s.truth(c), BaselineTruth: s.baselineTruth(c), BaselineName: s.baseline,
	}
	outcomes := make([]ptrOutcome, trials)
	base := make([]ptrOutcome, trials)
	bounds := mech.Bounds{Lower: c.d.Lower, Upper: c.d.Upper}
	for t := range trials {
		src := ptrSource(seed, "column", c.d.Name, s.name, epsilon, t)
		size, rest, err := ptrPublicSize(src, cell.N, epsilon)
		if err != nil {
			return cell, err
		}
		v, refused, err := s.release(src, c, ptr.Params{Epsilon: rest, Delta: delta, Size: size, Bounds: bounds})
		if err != nil {
			return cell, err
		}
		outcomes[t] = ptrOutcome{err: math.Abs(v - cell.Truth), refused: refused}
		b, err := s.releaseBaseline(ptrSource(seed, "baseline", c.d.Name, s.name, epsilon, t), c, epsilon)
		if err != nil {
			return cell, err
		}
		base[t] = ptrOutcome{err: math.Abs(b - cell.BaselineTruth)}
	}
	cell.PTR, cell.Baseline = ptrSummarize(outcomes), ptrSummarize(base)
	return cell, nil
}
