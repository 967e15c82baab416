package catalog

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Histogram declares a histogram domain on a numeric column: range counts
// and FLOOR(col / w) histograms on the column are answered from a private
// synopsis, one per predicate on the other columns, each built once with
// Epsilon and then reused at no further cost.
type Histogram struct {
	// Bins is the number of equal-width bins over the domain (HistogramDomain).
	// Default: 4096 for real columns, min(4096, number of integers in
	// [lower, upper]) for integer columns.
	Bins int `yaml:"bins"`
	// Epsilon is what building one synopsis costs, once. Required.
	Epsilon float64 `yaml:"epsilon"`
	// Workload is the range queries the synopsis is tuned for.
	Workload Workload `yaml:"workload"`
	// Mechanism releases the synopsis: auto (the default; the rule of
	// package planner), dawa, greedy-h, h2 or identity.
	Mechanism string `yaml:"mechanism"`
}

// Workload names the range queries a synopsis is tuned for: a Kind, or
// explicit Ranges in the column's units (YAML: a name, or a list of
// [lo, hi] pairs).
type Workload struct {
	// Kind is one of the Workload* names; WorkloadRanges when Ranges is set.
	Kind string
	// Ranges are closed ranges [lo, hi] of column values.
	Ranges [][2]float64
}

// The workload kinds.
const (
	// WorkloadAllRanges is every range of bins: nothing is known of the queries.
	WorkloadAllRanges = "all-ranges"
	// WorkloadPrefix is every range [lower, v]: CDF-style queries.
	WorkloadPrefix = "prefix"
	// WorkloadUniformIntervals is 2,000 ranges with uniform random ends
	// (public seed), the DAWA paper's benchmark workload.
	WorkloadUniformIntervals = "uniform-intervals"
	// WorkloadFirstStatement is the ranges of the statement that builds the
	// synopsis (learned from the analyst's query shape).
	WorkloadFirstStatement = "first-statement"
	// WorkloadRanges is the explicit list of Workload.Ranges.
	WorkloadRanges = "ranges"
)

// The synopsis mechanisms a configuration may name.
const (
	SynopsisAuto     = "auto"
	SynopsisDAWA     = "dawa"
	SynopsisGreedyH  = "greedy-h"
	SynopsisH2       = "h2"
	SynopsisIdentity = "identity"
)

// DefaultHistogramBins is the number of bins of a real column's histogram
// domain, and the most an integer column gets by default.
const DefaultHistogramBins = 4096

// MaxHistogramBins bounds Histogram.Bins (2^20): the fetch returns up to
// that many rows and the synopsis holds as many numbers (one more on a
// real column: the cell of its upper bound).
const MaxHistogramBins = 1 << 20

// UnmarshalYAML reads a workload name or a list of [lo, hi] pairs.
func (w *Workload) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		w.Kind = n.Value
		return nil
	case yaml.SequenceNode:
		w.Kind = WorkloadRanges
		return n.Decode(&w.Ranges)
	}
	return fmt.Errorf("workload must be a name or a list of [lo, hi] ranges")
}

// HistogramDomain returns the histogram domain of a column with a declared
// histogram: bins equal-width bins over [lower, upper). A real column's
// domain is its bounds [L, U], the synopsis holding U (and the values
// clamped to it) in a cell of its own above the bins; an integer column's is [⌈L⌉, ⌊U⌋ + 1), each
// integer k taking the cell [k, k+1), so that with one bin per integer
// every bin holds exactly one value. ok is false without a histogram.
func (c *Column) HistogramDomain() (lower, upper float64, bins int, ok bool) {
	lo, hi, numeric := c.Bounds()
	if !numeric || c.Histogram == nil {
		return 0, 0, 0, false
	}
	if c.Type == Integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)+1
	}
	return lo, hi, c.Histogram.Bins, true
}

// applyDefaults fills in the bins and the workload of a column's histogram.
func (h *Histogram) applyDefaults(c *Column) {
	if h.Workload.Kind == "" {
		h.Workload.Kind = WorkloadAllRanges
	}
	if h.Mechanism == "" {
		h.Mechanism = SynopsisAuto
	}
	if h.Bins != 0 || c.Lower == nil || c.Upper == nil {
		return
	}
	h.Bins = DefaultHistogramBins
	if c.Type == Integer {
		if n := math.Floor(*c.Upper) - math.Ceil(*c.Lower) + 1; n >= 1 && n < DefaultHistogramBins {
			h.Bins = int(n)
		}
	}
}

// validate checks a column's histogram; f names the histogram field.
func (h *Histogram) validate(f string, c *Column, p Privacy) error {
	if !c.Numeric() {
		return invalid(f, "only numeric columns can have a histogram domain")
	}
	lo, hi, bins, _ := c.HistogramDomain()
	if !(hi > lo) {
		return invalid(f, "integer column %q has no integer in its bounds", c.Name)
	}
	if bins < 1 || bins > MaxHistogramBins {
		return invalid(f+".bins", "must be in [1, %d], got %d", MaxHistogramBins, bins)
	}
	if err := checkReleaseEpsilon(f+".epsilon", h.Epsilon); err != nil {
		return err
	}
	if h.Epsilon > p.MaxEpsilon {
		return invalid(f+".epsilon", "%g exceeds privacy.max_epsilon %g", h.Epsilon, p.MaxEpsilon)
	}
	switch h.Mechanism {
	case SynopsisAuto, SynopsisDAWA, SynopsisGreedyH, SynopsisH2, SynopsisIdentity:
	default:
		return invalid(f+".mechanism", "must be %s, got %q", strings.Join([]string{SynopsisAuto, SynopsisDAWA, SynopsisGreedyH, SynopsisH2, SynopsisIdentity}, ", "), h.Mechanism)
	}
	switch h.Workload.Kind {
	case WorkloadAllRanges, WorkloadPrefix, WorkloadUniformIntervals, WorkloadFirstStatement:
	case WorkloadRanges:
		if len(h.Workload.Ranges) == 0 {
			return invalid(f+".workload", "an explicit workload needs at least one [lo, hi] range")
		}
		cl, cu, _ := c.Bounds()
		for i, r := range h.Workload.Ranges {
			if !(r[0] <= r[1] && r[0] >= cl && r[1] <= cu) {
				return invalid(fmt.Sprintf("%s.workload[%d]", f, i), "range [%g, %g] must have lo ≤ hi within the bounds [%g, %g]", r[0], r[1], cl, cu)
			}
		}
	default:
		return invalid(f+".workload", "must be all-ranges, prefix, uniform-intervals, first-statement or a list of [lo, hi] ranges, got %q", h.Workload.Kind)
	}
	return nil
}
