package histogram

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// ErrInvalidWorkload: a workload range or domain size is out of bounds.
var ErrInvalidWorkload = errors.New("mech: invalid workload")

// MaxBins bounds the domain size n of a histogram or workload
// (2^26 bins): it keeps every cell index, tree size and exact integer cost
// of the DAWA stages far from overflow.
const MaxBins = 1 << 26

// Range is the inclusive range of bins [Lo, Hi], 0-based: the range count
// Σ_{Lo ≤ j ≤ Hi} x_j of a histogram x.
type Range struct{ Lo, Hi int }

// workloadKind says how a Workload stores its ranges.
type workloadKind int

const (
	workloadExplicit  workloadKind = iota // the ranges slice
	workloadPrefix                        // [0, j] for j = 0..n-1
	workloadAllRanges                     // every [a, b], 0 ≤ a ≤ b < n
)

// Workload is a list of range-count queries over a domain of n bins: the
// queries a histogram synopsis is tuned for (DAWA's stage 2, Greedy-H). It
// is public information and never depends on data. The prefix and
// all-ranges workloads are implicit: they are never materialized, and the
// mechanisms use closed forms for them. A Workload is immutable and safe
// for concurrent use.
type Workload struct {
	n      int
	kind   workloadKind
	ranges []Range
}

// checkDomain validates a domain size.
func checkDomain(n int) error {
	if n < 1 || n > MaxBins {
		return fmt.Errorf("%w: domain of %d bins, must be in [1, 2^26]", ErrInvalidWorkload, n)
	}
	return nil
}

// RangesWorkload returns the workload of the given ranges over n bins, for
// example the ranges observed in analysts' queries. The ranges are copied;
// repeats count as often as they appear (a range asked twice weighs twice).
// It fails unless 0 ≤ Lo ≤ Hi < n for every range and there is at least one.
func RangesWorkload(n int, ranges []Range) (Workload, error) {
	if err := checkDomain(n); err != nil {
		return Workload{}, err
	}
	if len(ranges) == 0 {
		return Workload{}, fmt.Errorf("%w: no ranges", ErrInvalidWorkload)
	}
	for _, r := range ranges {
		if r.Lo < 0 || r.Lo > r.Hi || r.Hi >= n {
			return Workload{}, fmt.Errorf("%w: range [%d, %d] outside [0, %d]", ErrInvalidWorkload, r.Lo, r.Hi, n-1)
		}
	}
	return Workload{n: n, kind: workloadExplicit, ranges: slices.Clone(ranges)}, nil
}

// PrefixWorkload returns the n prefix ranges [0, j], j = 0..n-1 (CDF-style
// queries), stored implicitly.
func PrefixWorkload(n int) (Workload, error) {
	if err := checkDomain(n); err != nil {
		return Workload{}, err
	}
	return Workload{n: n, kind: workloadPrefix}, nil
}

// AllRangesWorkload returns every range [a, b] with 0 ≤ a ≤ b < n, each
// once (n(n+1)/2 queries), stored implicitly: the natural workload when
// nothing is known about the queries to come.
func AllRangesWorkload(n int) (Workload, error) {
	if err := checkDomain(n); err != nil {
		return Workload{}, err
	}
	return Workload{n: n, kind: workloadAllRanges}, nil
}

// IdentityWorkload returns the n single-bin ranges [j, j].
func IdentityWorkload(n int) (Workload, error) {
	if err := checkDomain(n); err != nil {
		return Workload{}, err
	}
	ranges := make([]Range, n)
	for j := range ranges {
		ranges[j] = Range{j, j}
	}
	return Workload{n: n, kind: workloadExplicit, ranges: ranges}, nil
}

// UniformIntervalsWorkload returns m ranges drawn from the public seed: each
// takes two bins uniformly and independently and spans them (the "uniform
// intervals" workload of the DAWA paper, §5.1). The same (n, m, seed) always
// gives the same workload. m must be in [1, 2^24].
func UniformIntervalsWorkload(n, m int, seed uint64) (Workload, error) {
	if err := checkDomain(n); err != nil {
		return Workload{}, err
	}
	if m < 1 || m > 1<<24 {
		return Workload{}, fmt.Errorf("%w: %d ranges, must be in [1, 2^24]", ErrInvalidWorkload, m)
	}
	src := noise.NewStream(seed)
	ranges := make([]Range, m)
	for i := range ranges {
		a, b := int(noise.Uniform(src, uint64(n))), int(noise.Uniform(src, uint64(n)))
		ranges[i] = Range{min(a, b), max(a, b)}
	}
	return Workload{n: n, kind: workloadExplicit, ranges: ranges}, nil
}

// N returns the domain size.
func (w Workload) N() int { return w.n }

// Len returns the number of queries (n(n+1)/2 for all ranges).
func (w Workload) Len() int64 {
	switch w.kind {
	case workloadPrefix:
		return int64(w.n)
	case workloadAllRanges:
		return int64(w.n) * int64(w.n+1) / 2
	}
	return int64(len(w.ranges))
}

// At returns query i, 0 ≤ i < Len(). All ranges are ordered by Lo, then
// Hi. It panics if i is out of range.
func (w Workload) At(i int64) Range {
	if i < 0 || i >= w.Len() {
		panic(fmt.Sprintf("mech.Workload.At: index %d out of [0, %d)", i, w.Len()))
	}
	switch w.kind {
	case workloadPrefix:
		return Range{0, int(i)}
	case workloadAllRanges:
		// The n-a ranges starting at a follow those starting before a:
		// find the largest a with allRangesBefore(a) ≤ i.
		lo, hi := 0, w.n-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if allRangesBefore(w.n, mid) <= i {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return Range{lo, lo + int(i-allRangesBefore(w.n, lo))}
	}
	return w.ranges[i]
}

// allRangesBefore returns the number of ranges starting before bin a:
// Σ_{s<a} (n-s).
func allRangesBefore(n, a int) int64 {
	return int64(a)*int64(n) - int64(a)*int64(a-1)/2
}

// String names the workload for logs and plans.
func (w Workload) String() string {
	switch w.kind {
	case workloadPrefix:
		return fmt.Sprintf("prefix(n=%d)", w.n)
	case workloadAllRanges:
		return fmt.Sprintf("all-ranges(n=%d)", w.n)
	}
	return fmt.Sprintf("ranges(n=%d, m=%d)", w.n, len(w.ranges))
}
