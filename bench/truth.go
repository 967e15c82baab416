package bench

import "math"

// Statistic is what a mechanism estimates.
type Statistic struct {
	Name string
	// Quantile is set for quantiles (0.5 for the median).
	Quantile float64
	Kind     StatKind
}

// StatKind is the kind of statistic.
type StatKind int

// The statistics of the benchmark.
const (
	QuantileStat StatKind = iota + 1
	MeanStat
	VarianceStat
)

// Statistics are the five the issue asks for.
var Statistics = []Statistic{
	{Name: "median", Quantile: 0.5, Kind: QuantileStat},
	{Name: "p10", Quantile: 0.1, Kind: QuantileStat},
	{Name: "p90", Quantile: 0.9, Kind: QuantileStat},
	{Name: "mean", Kind: MeanStat},
	{Name: "variance", Kind: VarianceStat},
}

// Truth is the exact value of s on d (quantiles: the value of rank ⌊q·n⌋).
func Truth(s Statistic, d *Dataset) float64 {
	x := d.Values
	n := float64(len(x))
	switch s.Kind {
	case QuantileStat:
		i := int(math.Floor(s.Quantile * n))
		return x[min(i, len(x)-1)]
	case MeanStat:
		var m float64
		for _, v := range x {
			m += v
		}
		return m / n
	}
	var m, v float64
	for _, y := range x {
		m += y
	}
	m /= n
	for _, y := range x {
		v += (y - m) * (y - m)
	}
	return v / n
}
