package bench

import (
	"math"
	"sync"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/piecewise"
)

// Column holds what the database would compute over a dataset, once for
// every candidate and ε that needs it: safe for concurrent use.
type Column struct {
	d *Dataset

	once    sync.Once
	summary Summary

	gridOnce sync.Once
	grid     mech.Grid
	gridSums mech.GridSums
	gridErr  error

	mu         sync.Mutex
	histograms map[histogramSpec][]int64
}

// histogramSpec is a GROUP BY histogram: bins equal bins over [lower, upper].
type histogramSpec struct {
	lower, upper float64
	bins         int
}

func NewColumn(d *Dataset) *Column {
	return &Column{d: d, histograms: map[histogramSpec][]int64{}}
}

func (c *Column) bounds() mech.Bounds { return mech.Bounds{Lower: c.d.Lower, Upper: c.d.Upper} }

// aggregates computes the summaries on first use.
func (c *Column) aggregates() {
	c.once.Do(func() {
		x := c.d.Values
		var sum, squares kahan
		for _, v := range x {
			sum.add(v)
			squares.add(v * v)
		}
		n := int64(len(x))
		c.summary = Summary{Count: n, Sum: sum.value(), SumSquares: squares.value()}
	})
}

// Summary is COUNT, SUM and the sum of squares of a column as a database
// computes them in float: what the float constructions of the benchmark
// read (the centred candidate's sums around a released centre, the
// re-implemented Google algorithms). The proxy itself releases no float
// sum: its sums come from the exact grid sums (Column.GridSums).
type Summary struct {
	// Count is n, the number of values.
	Count int64
	// Sum is Σ x.
	Sum float64
	// SumSquares is Σ x².
	SumSquares float64
}

// Summary returns the column's COUNT, SUM and sum of squares, each sum
// compensated (Kahan).
func (c *Column) Summary() Summary {
	c.aggregates()
	return c.summary
}

// GridSums returns the grid of the bounds and the exact sums of the
// values' indices on it (sqlrewrite.GridSums: the edge releases' fetch).
func (c *Column) GridSums() (mech.Grid, mech.GridSums, error) {
	c.gridOnce.Do(func() {
		if c.grid, c.gridErr = mech.NewGrid(c.bounds()); c.gridErr == nil {
			_, c.gridSums = c.grid.Indices(c.d.Values)
		}
	})
	return c.grid, c.gridSums, c.gridErr
}

// VarianceSketch returns the piecewise variance's fetch: the exact sums
// of grid indices and the smallest and largest indices.
func (c *Column) VarianceSketch(m *piecewise.Variance) piecewise.VarianceSketch {
	return m.Sketch(c.d.Values)
}

// Histogram returns the counts the proxy's histogram fetch returns
// (sqlrewrite.Histogram): bin ⌊(clamp(v) − lower)·bins/(upper − lower)⌋,
// clamped to [lower, upper], the index bins folded into the last bin.
func (c *Column) Histogram(lower, upper float64, bins int) []int64 {
	spec := histogramSpec{lower, upper, bins}
	c.mu.Lock()
	defer c.mu.Unlock()
	if h, ok := c.histograms[spec]; ok {
		return h
	}
	h := make([]int64, bins)
	width := upper - lower
	for _, v := range c.d.Values {
		v = math.Min(math.Max(v, lower), upper)
		b := int(math.Floor((v - lower) * float64(bins) / width))
		h[min(b, bins-1)]++
	}
	c.histograms[spec] = h
	return h
}
