package histogram

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// Synopsis is a released histogram estimate over n bins: a partition of
// [0, n) into buckets with an estimated total per bucket, spread uniformly
// over the bucket's bins. Every answer computed from it (range sums,
// rounded counts, the per-bin estimate) is post-processing of one private
// release, so answering any number of queries from a Synopsis costs no
// further privacy. It is immutable and safe for concurrent use.
type Synopsis struct {
	mechanism string
	epsilon   float64
	n         int
	// starts[c] is the first bin of bucket c; starts[0] = 0 and the
	// bucket ends where the next starts (or at n).
	starts []int
	// totals[c] is the estimated count of bucket c.
	totals []float64
	// prefix[c] = Σ_{c' < c} totals[c'], len k+1.
	prefix []float64
}

// newSynopsis builds a Synopsis; starts and totals are owned by it.
func newSynopsis(mechanism string, epsilon float64, n int, starts []int, totals []float64) *Synopsis {
	prefix := make([]float64, len(totals)+1)
	for c, t := range totals {
		prefix[c+1] = prefix[c] + t
	}
	return &Synopsis{mechanism: mechanism, epsilon: epsilon, n: n, starts: starts, totals: totals, prefix: prefix}
}

// identityStarts returns the starts of the partition of n bins into singletons.
func identityStarts(n int) []int {
	starts := make([]int, n)
	for j := range starts {
		starts[j] = j
	}
	return starts
}

// Mechanism names the mechanism that released the synopsis.
func (s *Synopsis) Mechanism() string { return s.mechanism }

// Epsilon returns the total ε the release cost.
func (s *Synopsis) Epsilon() float64 { return s.epsilon }

// N returns the number of bins.
func (s *Synopsis) N() int { return s.n }

// Buckets returns the number of buckets of the partition the mechanism
// chose (n for the data-independent mechanisms; the "k" of the DAWA
// paper's Table 1). It is part of the release.
func (s *Synopsis) Buckets() int { return len(s.starts) }

// Estimate returns the estimated count of every bin (real numbers, possibly
// negative: the unbiased estimate before any rounding).
func (s *Synopsis) Estimate() []float64 {
	est := make([]float64, s.n)
	for c, start := range s.starts {
		end := s.bucketEnd(c)
		v := s.totals[c] / float64(end-start)
		for j := start; j < end; j++ {
			est[j] = v
		}
	}
	return est
}

// bucketEnd returns the bin after bucket c.
func (s *Synopsis) bucketEnd(c int) int {
	if c+1 < len(s.starts) {
		return s.starts[c+1]
	}
	return s.n
}

// cumulative returns the estimated count of [0, pos) for a position pos in
// [0, n], counting a bin partly when pos falls inside it.
func (s *Synopsis) cumulative(pos float64) float64 {
	c := sort.Search(len(s.starts), func(i int) bool { return float64(s.starts[i]) > pos }) - 1
	start, end := s.starts[c], s.bucketEnd(c)
	return s.prefix[c] + s.totals[c]*(pos-float64(start))/float64(end-start)
}

// RangeSum returns the estimated count of bins lo..hi (inclusive), a real
// number. It panics unless 0 ≤ lo ≤ hi < N().
func (s *Synopsis) RangeSum(lo, hi int) float64 {
	if lo < 0 || lo > hi || hi >= s.n {
		panic(fmt.Sprintf("mech.Synopsis.RangeSum: range [%d, %d] outside [0, %d]", lo, hi, s.n-1))
	}
	return s.cumulative(float64(hi+1)) - s.cumulative(float64(lo))
}

// SpanSum returns the estimated count of the real interval [from, to) of
// bin coordinates (bin j covers [j, j+1)), counting the end bins in
// proportion to their covered part: the uniformity-within-bin answer for a
// predicate whose bounds fall inside bins. It panics unless
// 0 ≤ from ≤ to ≤ N().
func (s *Synopsis) SpanSum(from, to float64) float64 {
	if !(from >= 0 && from <= to && to <= float64(s.n)) {
		panic(fmt.Sprintf("mech.Synopsis.SpanSum: span [%v, %v) outside [0, %d]", from, to, s.n))
	}
	return s.cumulative(to) - s.cumulative(from)
}

// Answer returns the count of bins lo..hi as a non-negative integer: the
// RangeSum rounded to the nearest integer and clamped at 0. Rounding and
// clamping are post-processing; they make answers integral and plausible
// at the price of additivity between answers. It panics unless
// 0 ≤ lo ≤ hi < N().
func (s *Synopsis) Answer(lo, hi int) int64 {
	return roundCount(s.RangeSum(lo, hi))
}

// roundCount rounds a real estimate to a non-negative int64.
func roundCount(v float64) int64 {
	r := math.Round(v)
	switch {
	case !(r > 0):
		return 0
	case r >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(r)
}

// synopsisJSON is the serialized form of a Synopsis. Starts is omitted for
// the partition into singletons.
type synopsisJSON struct {
	Version   int       `json:"version"`
	Mechanism string    `json:"mechanism"`
	Epsilon   float64   `json:"epsilon"`
	N         int       `json:"n"`
	Starts    []int     `json:"starts,omitempty"`
	Totals    []float64 `json:"totals"`
}

// synopsisVersion is the version of the serialized form.
const synopsisVersion = 1

// MarshalJSON encodes the synopsis exactly (float64 values round-trip).
func (s *Synopsis) MarshalJSON() ([]byte, error) {
	out := synopsisJSON{Version: synopsisVersion, Mechanism: s.mechanism, Epsilon: s.epsilon, N: s.n, Totals: s.totals}
	if len(s.starts) != s.n {
		out.Starts = s.starts
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes a synopsis written by MarshalJSON and validates it.
func (s *Synopsis) UnmarshalJSON(data []byte) error {
	var in synopsisJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	if in.Version != synopsisVersion {
		return fmt.Errorf("%w: synopsis version %d, want %d", mech.ErrInvalidInput, in.Version, synopsisVersion)
	}
	if err := checkDomain(in.N); err != nil {
		return err
	}
	if in.Starts == nil {
		in.Starts = identityStarts(in.N)
	}
	if len(in.Starts) != len(in.Totals) || len(in.Starts) == 0 || in.Starts[0] != 0 {
		return fmt.Errorf("%w: synopsis with %d starts and %d totals", mech.ErrInvalidInput, len(in.Starts), len(in.Totals))
	}
	for c := range in.Starts {
		if c > 0 && in.Starts[c] <= in.Starts[c-1] || in.Starts[c] >= in.N {
			return fmt.Errorf("%w: synopsis bucket starts not increasing within [0, %d)", mech.ErrInvalidInput, in.N)
		}
		if math.IsNaN(in.Totals[c]) || math.IsInf(in.Totals[c], 0) {
			return fmt.Errorf("%w: synopsis total %v", mech.ErrInvalidInput, in.Totals[c])
		}
	}
	*s = *newSynopsis(in.Mechanism, in.Epsilon, in.N, in.Starts, in.Totals)
	return nil
}
