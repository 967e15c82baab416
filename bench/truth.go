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

// StatisticsByName indexes Statistics by name.
func StatisticsByName() map[string]Statistic {
	out := make(map[string]Statistic, len(Statistics))
	for _, s := range Statistics {
		out[s.Name] = s
	}
	return out
}

// DatasetsByName indexes data by name.
func DatasetsByName(data []*Dataset) map[string]*Dataset {
	out := make(map[string]*Dataset, len(data))
	for _, d := range data {
		out[d.Name] = d
	}
	return out
}

// Statistics are the five the issue asks for.
var Statistics = []Statistic{
	{Name: "median", Quantile: 0.5, Kind: QuantileStat},
	{Name: "p10", Quantile: 0.1, Kind: QuantileStat},
	{Name: "p90", Quantile: 0.9, Kind: QuantileStat},
	{Name: "mean", Kind: MeanStat},
	{Name: "variance", Kind: VarianceStat},
}

// Truth is the exact value of s on d, as SQL defines it: quantiles are
// PERCENTILE_CONT(q) (the value at 1-based position 1 + q·(n−1), linearly
// interpolated; MEDIAN averages the two middle values of an even n), the
// mean is AVG and the variance is VAR_POP. d must not be empty.
func Truth(s Statistic, d *Dataset) float64 {
	x := d.Values
	switch s.Kind {
	case QuantileStat:
		p := s.Quantile * float64(len(x)-1)
		i := int(math.Floor(p))
		if i+1 >= len(x) {
			return x[len(x)-1]
		}
		return x[i] + (p-float64(i))*(x[i+1]-x[i])
	case MeanStat:
		return mean(x)
	}
	m := mean(x)
	var ss kahan
	for _, v := range x {
		ss.add((v - m) * (v - m))
	}
	return ss.value() / float64(len(x))
}

// mean returns the average of x with compensated summation.
func mean(x []float64) float64 {
	var s kahan
	for _, v := range x {
		s.add(v)
	}
	return s.value() / float64(len(x))
}

// kahan is a compensated (Kahan–Babuška) running sum: exact enough for
// 10^7-row columns whose plain float64 sum would drift.
type kahan struct{ sum, c float64 }

func (k *kahan) add(v float64) {
	t := k.sum + v
	if math.Abs(k.sum) >= math.Abs(v) {
		k.c += (k.sum - t) + v
	} else {
		k.c += (v - t) + k.sum
	}
	k.sum = t
}

// value returns the compensated sum.
func (k kahan) value() float64 { return k.sum + k.c }
