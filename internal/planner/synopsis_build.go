package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech/histogram"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// uniformIntervals is the size and public seed of the uniform-intervals
// workload (the DAWA paper's 2,000 random ranges).
const (
	uniformIntervals     = 2000
	uniformIntervalsSeed = 20140501
)

// chooseSynopsisMechanism is the mechanism "auto" builds a synopsis with,
// from public facts only: its ε and its number of bins. DAWA where the
// benchmark (bench/RESULTS-dawa.md: the seven DPComp histograms at 4096
// bins, the same coarsened to 1024, 256 and 64 bins, the demo's columns;
// 2,000 uniform intervals and all prefixes; 10 trials) shows it at least
// 1.15× better than Greedy-H in geometric mean, Greedy-H elsewhere:
//
//	bins ≥ 4096:         DAWA for ε ≤ 2 (gains 1.80 to 1.27; at ε = 5 and 10 only 1.10, 1.12)
//	1024 ≤ bins < 4096:  DAWA for ε ≤ 0.1 (gains 1.56 to 1.25; 1.08 at ε = 0.5)
//	bins < 1024:         Greedy-H (DAWA's gain 0.79 to 1.07)
//
// Where DAWA's gain is small Greedy-H is preferred: it is data-independent,
// so its error does not depend on the data's shape, while DAWA's partition
// can cost it up to 3× on a dense histogram. Sizes between those measured
// take the rule of the smaller size.
func chooseSynopsisMechanism(epsilon float64, bins int) string {
	switch {
	case bins >= 4096 && epsilon <= 2, bins >= 1024 && epsilon <= 0.1:
		return catalog.SynopsisDAWA
	}
	return catalog.SynopsisGreedyH
}

// MechanismName is the mechanism that builds the synopsis: the configured
// one, or the rule's choice for auto.
func (s *SynopsisSpec) MechanismName() string {
	if s.Config.Mechanism == "" || s.Config.Mechanism == catalog.SynopsisAuto {
		return chooseSynopsisMechanism(s.Config.Epsilon, s.Domain.Bins)
	}
	return s.Config.Mechanism
}

// Workload is the workload that tunes the synopsis (catalog.Workload):
// first-statement uses the bin ranges of the statement that builds it
// (Observed; all ranges when it asked for none).
func (s *SynopsisSpec) Workload() (histogram.Workload, error) {
	n := s.Domain.Cells()
	switch s.Config.Workload.Kind {
	case catalog.WorkloadPrefix:
		return histogram.PrefixWorkload(n)
	case catalog.WorkloadUniformIntervals:
		return histogram.UniformIntervalsWorkload(n, uniformIntervals, uniformIntervalsSeed)
	case catalog.WorkloadFirstStatement:
		return rangesWorkload(n, s.Observed)
	case catalog.WorkloadRanges:
		var bins [][2]int
		for _, r := range s.Config.Workload.Ranges {
			bins = append(bins, s.Domain.rangeSpan(closedRange(r[0], r[1])).binRanges(n)...)
		}
		return rangesWorkload(n, bins)
	}
	return histogram.AllRangesWorkload(n)
}

// rangesWorkload is the workload of the bin ranges, or all ranges if none.
func rangesWorkload(n int, bins [][2]int) (histogram.Workload, error) {
	if len(bins) == 0 {
		return histogram.AllRangesWorkload(n)
	}
	ranges := make([]histogram.Range, len(bins))
	for i, b := range bins {
		ranges[i] = histogram.Range{Lo: b[0], Hi: b[1]}
	}
	return histogram.RangesWorkload(n, ranges)
}

// Build releases the synopsis from hist, the exact count of every bin of
// the domain (the Histogram fetch), with the configured ε.
//
// On a row-level table it is ε-DP under add/remove of one row, since one
// row changes one bin by one and each mechanism is ε-DP on histograms
// under that change. On a table with a privacy unit hist must come from
// the fetch bounded to RowsPerUnit() rows per unit (package exec sets
// Histogram.Unit with a fresh salt per build), so adding or removing a
// unit changes hist by at most k = RowsPerUnit() in L1, in any bins; the
// mechanism then runs at ε/k per row (histogram.BuildForUnits: every
// stage's noise scaled for L1 sensitivity k, DAWA's partition and
// measurement alike), which makes the release ε-DP per unit.
// (On a row-level table k = 1 and BuildForUnits runs the mechanism at ε.)
func (s *SynopsisSpec) Build(src noise.Source, hist []int64) (*histogram.Synopsis, error) {
	return histogram.BuildForUnits(s.Config.Epsilon, s.RowsPerUnit(), func(rowEpsilon float64) (*histogram.Synopsis, error) {
		return s.build(src, hist, rowEpsilon)
	})
}

// RowsPerUnit is the most rows of one unit the synopsis's histogram
// counts (max_rows_per_unit; 1 on a row-level table, where a row is the
// unit): the histogram's L1 sensitivity.
func (s *SynopsisSpec) RowsPerUnit() int64 {
	if s.Table != nil && s.Table.HasPrivacyUnit() {
		return s.Table.MaxRowsPerUnit
	}
	return 1
}

// build releases the synopsis with the mechanism at eps for one-row changes.
func (s *SynopsisSpec) build(src noise.Source, hist []int64, eps float64) (*histogram.Synopsis, error) {
	w, err := s.Workload()
	if err != nil {
		return nil, err
	}
	switch name := s.MechanismName(); name {
	case catalog.SynopsisDAWA:
		return histogram.DAWA(src, hist, w, eps, histogram.DAWAOptions{})
	case catalog.SynopsisGreedyH:
		return histogram.GreedyH(src, hist, w, eps)
	case catalog.SynopsisH2:
		return histogram.H2(src, hist, eps)
	case catalog.SynopsisIdentity:
		return histogram.Identity(src, hist, eps)
	default:
		return nil, fmt.Errorf("unknown synopsis mechanism %q", name)
	}
}

// Count answers a from syn: the estimated count of its spans (within span,
// a histogram's bucket, unless nil), rounded to the nearest integer and
// clamped at 0. Post-processing of the synopsis: it costs nothing.
func (a *SynopsisAnswer) Count(syn *histogram.Synopsis, within *Span) int64 {
	spans := a.Spans
	if within != nil {
		spans = spans.intersect(Spans{*within})
	}
	total := 0.0
	for _, sp := range spans {
		total += syn.SpanSum(sp.From, sp.To)
	}
	return int64(math.Max(math.Round(total), 0))
}

// closedRange is the range [lo, hi].
func closedRange(lo, hi float64) sqlrewrite.Range {
	return sqlrewrite.Range{Lower: lo, Upper: hi, HasLower: true, HasUpper: true}
}
