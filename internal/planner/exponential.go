package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/mech/quantile"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// exponentialMechanism releases quantiles with the exponential mechanism
// over a public grid of the column's range (quantile.GridExponential: pure ε-DP
// under add/remove, no clipping, so ties cost nothing). It reads one
// GROUP BY histogram computed by the database, never a row. The grid is
// the column's integers when it is an integer column with integer bounds
// at most maxUnitBins apart (the answer is then exact to the unit), and
// realBins equal bins otherwise (the answer is a bin midpoint).
type exponentialMechanism struct{}

// Grid sizes of the exponential mechanism.
const (
	maxUnitBins = 1 << 16
	realBins    = 1 << 14
)

func (exponentialMechanism) Name() string { return "exponential" }

func (exponentialMechanism) Guarantee() string {
	return "pure ε-DP: exponential mechanism on ranks over a public grid of the range"
}

func (exponentialMechanism) NeedsDelta() bool { return false }

func (exponentialMechanism) Supports(s Statistic) bool { return s.Kind == StatQuantile }

func (exponentialMechanism) Terms(*Release) []sqlrewrite.SummaryTerm { return nil }

// grid returns the histogram of the release and whether its bins are the
// column's integers.
func (exponentialMechanism) grid(r *Release) (h *sqlrewrite.Histogram, unit bool) {
	b := columnBounds(r)
	width := b.Upper - b.Lower
	if r.Stat.Column.Type == catalog.Integer && b.Lower == math.Trunc(b.Lower) && b.Upper == math.Trunc(b.Upper) && width < maxUnitBins {
		// Unit bins [L+j, L+j+1); values above U fall in the last, U's own.
		return &sqlrewrite.Histogram{Column: r.Stat.Column.Source, Lower: b.Lower, Upper: b.Upper + 1, Bins: int(width) + 1}, true
	}
	return &sqlrewrite.Histogram{Column: r.Stat.Column.Source, Lower: b.Lower, Upper: b.Upper, Bins: realBins}, false
}

func (m exponentialMechanism) Histogram(r *Release) *sqlrewrite.Histogram {
	h, _ := m.grid(r)
	return h
}

func (m exponentialMechanism) Reads(r *Release) string {
	h, _ := m.grid(r)
	return fmt.Sprintf("one GROUP BY histogram of %d bins computed by the database, no rows", h.Bins)
}

func (m exponentialMechanism) Start(src noise.Source, r *Release, _ []float64, histogram []int64) (Step, error) {
	h, _ := m.grid(r)
	q, err := quantile.NewGridExponential(r.Stat.Quantile, r.Epsilon, h.Bins)
	if err != nil {
		return nil, err
	}
	return m.draw(src, r, q, histogram)
}

// gridSampler is a quantile mechanism over the grid: it draws a bin from
// the histogram's counts (quantile.GridExponential, GridPermuteFlip).
type gridSampler interface {
	Release(src noise.Source, counts []int64) (int, error)
}

// draw releases a bin with sampler and maps it to its value (estimate).
func (m exponentialMechanism) draw(src noise.Source, r *Release, sampler gridSampler, histogram []int64) (Step, error) {
	bin, err := sampler.Release(src, histogram)
	if err != nil {
		return nil, err
	}
	return m.estimate(r, bin), nil
}

// estimate maps the released bin to its value (post-processing) with the
// accuracy note. With rows, some bin has utility at least −½ (the one
// holding the rank nearest the target rank q·(n − 1), at most ½ from it),
// and both grid mechanisms release a bin r with probability at most
// exp(−ε·(dist_r − d*)/(2Δu)) (the exponential mechanism's normaliser is
// at least 1; permute-and-flip must accept r), so with probability 95% the
// released bin's ranks are within ½ + (2Δu/ε)·ln(B/0.05) of the target: a
// statement about ranks that needs no data.
func (m exponentialMechanism) estimate(r *Release, bin int) Step {
	h, unit := m.grid(r)
	ranks := 0.5 + 2*math.Max(r.Stat.Quantile, 1-r.Stat.Quantile)/r.Epsilon*math.Log(float64(h.Bins)/(1-Confidence))
	note := fmt.Sprintf("95%% rank accuracy: the answer is within %.0f rows (in sorted order) of the true quantile", math.Ceil(ranks))
	if unit {
		return finished{Estimate{Value: h.Lower + float64(bin), Note: note}}
	}
	w := (h.Upper - h.Lower) / float64(h.Bins)
	return finished{Estimate{Value: h.Lower + (float64(bin)+0.5)*w, Note: note + fmt.Sprintf(", to a resolution of %.3g", w)}}
}

// permuteFlipMechanism releases quantiles with permute-and-flip (McKenna
// and Sheldon 2020; quantile.GridPermuteFlip: pure ε-DP, exact) over the
// exponential mechanism's grid, histogram and utility: the same fetch and
// the same rank guarantee, and an expected utility never below the
// exponential mechanism's. It is "auto"'s quantile mechanism on unit
// grids (defaultMechanism).
type permuteFlipMechanism struct{ exponentialMechanism }

func (permuteFlipMechanism) Name() string { return "permute-flip" }

func (permuteFlipMechanism) Guarantee() string {
	return "pure ε-DP: permute-and-flip on ranks over a public grid of the range"
}

func (m permuteFlipMechanism) Check(r *Release) error {
	h, _ := m.grid(r)
	_, err := quantile.NewGridPermuteFlip(r.Stat.Quantile, r.Epsilon, h.Bins)
	return err
}

func (m permuteFlipMechanism) Start(src noise.Source, r *Release, _ []float64, histogram []int64) (Step, error) {
	h, _ := m.grid(r)
	q, err := quantile.NewGridPermuteFlip(r.Stat.Quantile, r.Epsilon, h.Bins)
	if err != nil {
		return nil, err
	}
	return m.draw(src, r, q, histogram)
}
