package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/sqlrewrite"
)

// uniformIntervals is the size and public seed of the uniform-intervals
// workload (the DAWA paper's 2,000 random ranges).
const (
	uniformIntervals     = 2000
	uniformIntervalsSeed = 20140501
)

// dawaBelowEpsilon is where "auto" switches from DAWA to Greedy-H: a
// synopsis built with ε below it uses DAWA, at or above it Greedy-H. From
// bench/RESULTS-dawa.md (seven DPComp histograms, n = 4096, uniform
// intervals and prefixes): DAWA's partition pays for itself at small ε,
// where its error is far below Greedy-H's on the sparse and piecewise-
// constant histograms and at most 1.3× above it on the hardest; at ε = 0.5
// Greedy-H wins on four of the seven histograms and DAWA's median gain
// across datasets and workloads is below 1.
const dawaBelowEpsilon = 0.5

// chooseSynopsisMechanism is the mechanism "auto" builds a synopsis with,
// from public facts only (ε).
func chooseSynopsisMechanism(epsilon float64) string {
	if epsilon < dawaBelowEpsilon {
		return catalog.SynopsisDAWA
	}
	return catalog.SynopsisGreedyH
}

// MechanismName is the mechanism that builds the synopsis: the configured
// one, or the rule's choice for auto.
func (s *SynopsisSpec) MechanismName() string {
	if s.Config.Mechanism == "" || s.Config.Mechanism == catalog.SynopsisAuto {
		return chooseSynopsisMechanism(s.Config.Epsilon)
	}
	return s.Config.Mechanism
}

// Workload is the workload that tunes the synopsis (catalog.Workload):
// first-statement uses the bin ranges of the statement that builds it
// (Observed; all ranges when it asked for none).
func (s *SynopsisSpec) Workload() (mech.Workload, error) {
	n := s.Domain.Bins
	switch s.Config.Workload.Kind {
	case catalog.WorkloadPrefix:
		return mech.PrefixWorkload(n)
	case catalog.WorkloadUniformIntervals:
		return mech.UniformIntervalsWorkload(n, uniformIntervals, uniformIntervalsSeed)
	case catalog.WorkloadFirstStatement:
		return rangesWorkload(n, s.Observed)
	case catalog.WorkloadRanges:
		var bins [][2]int
		for _, r := range s.Config.Workload.Ranges {
			bins = append(bins, s.Domain.rangeSpan(closedRange(r[0], r[1])).binRanges(n)...)
		}
		return rangesWorkload(n, bins)
	}
	return mech.AllRangesWorkload(n)
}

// rangesWorkload is the workload of the bin ranges, or all ranges if none.
func rangesWorkload(n int, bins [][2]int) (mech.Workload, error) {
	if len(bins) == 0 {
		return mech.AllRangesWorkload(n)
	}
	ranges := make([]mech.Range, len(bins))
	for i, b := range bins {
		ranges[i] = mech.Range{Lo: b[0], Hi: b[1]}
	}
	return mech.RangesWorkload(n, ranges)
}

// Build releases the synopsis from hist, the exact count of every bin of
// the domain (the Histogram fetch), with the configured ε: ε-DP under
// add/remove of one row, since one row changes one bin by one and each
// mechanism is ε-DP on histograms under that change.
func (s *SynopsisSpec) Build(src mech.Source, hist []int64) (*mech.Synopsis, error) {
	w, err := s.Workload()
	if err != nil {
		return nil, err
	}
	eps := s.Config.Epsilon
	switch name := s.MechanismName(); name {
	case catalog.SynopsisDAWA:
		return mech.DAWA(src, hist, w, eps, mech.DAWAOptions{})
	case catalog.SynopsisGreedyH:
		return mech.GreedyH(src, hist, w, eps)
	case catalog.SynopsisH2:
		return mech.H2(src, hist, eps)
	case catalog.SynopsisIdentity:
		return mech.Identity(src, hist, eps)
	default:
		return nil, fmt.Errorf("unknown synopsis mechanism %q", name)
	}
}

// Count answers a from syn: the estimated count of its spans (within span,
// a histogram's bucket, unless nil), rounded to the nearest integer and
// clamped at 0. Post-processing of the synopsis: it costs nothing.
func (a *SynopsisAnswer) Count(syn *mech.Synopsis, within *Span) int64 {
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
