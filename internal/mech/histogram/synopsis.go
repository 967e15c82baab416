package histogram

import (
	"encoding/binary"
	"encoding/json"
	"errors"
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

// The binary form (MarshalBinary) takes 8 bytes a bucket's total and a
// byte or so a bucket's width, where JSON takes up to 25 characters a
// total and 8 a start: small enough for a synopsis of 2^18 bins to fit
// any budget ledger (BinaryBound). Its layout: the version byte
// synopsisBinaryVersion; the mechanism's name, a uvarint length and at
// most maxMechanismName bytes; ε, a little-endian float64; n and the
// number of buckets k, uvarints; the k totals, little-endian float64s;
// then, unless the partition is into singletons (k = n), the k bucket
// widths, uvarints.
const (
	synopsisBinaryVersion = 1
	maxMechanismName      = 64
	// binaryOverhead bounds the bytes besides the totals and widths: the
	// version, the name and its length, ε, n and k.
	binaryOverhead = 1 + binary.MaxVarintLen64 + maxMechanismName + 8 + 2*binary.MaxVarintLen64
)

// BinaryBound is the largest MarshalBinary of a synopsis over n bins,
// whatever its partition and totals: the overhead, 8 bytes a total and
// the widths' uvarints, k ≤ n totals and widths that sum to n (a width's
// uvarint takes at most as many bytes as the width), so at most 9n
// bytes besides the overhead. It depends on n only.
func BinaryBound(n int) int64 { return binaryOverhead + 9*int64(n) }

// MarshalBinary encodes the synopsis exactly (float64 values round-trip)
// in at most BinaryBound(N()) bytes.
func (s *Synopsis) MarshalBinary() ([]byte, error) {
	if len(s.mechanism) > maxMechanismName {
		return nil, fmt.Errorf("%w: mechanism name of %d bytes", mech.ErrInvalidInput, len(s.mechanism))
	}
	k := len(s.starts)
	out := make([]byte, 0, binaryOverhead+8*k+k)
	out = append(out, synopsisBinaryVersion)
	out = binary.AppendUvarint(out, uint64(len(s.mechanism)))
	out = append(out, s.mechanism...)
	out = binary.LittleEndian.AppendUint64(out, math.Float64bits(s.epsilon))
	out = binary.AppendUvarint(out, uint64(s.n))
	out = binary.AppendUvarint(out, uint64(k))
	for _, t := range s.totals {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(t))
	}
	if k != s.n {
		for c, start := range s.starts {
			out = binary.AppendUvarint(out, uint64(s.bucketEnd(c)-start))
		}
	}
	return out, nil
}

// UnmarshalBinary decodes a synopsis written by MarshalBinary and
// validates it as UnmarshalJSON does.
func (s *Synopsis) UnmarshalBinary(data []byte) error {
	bad := func(what string) error { return fmt.Errorf("%w: binary synopsis: %s", mech.ErrInvalidInput, what) }
	uvarint := func() (uint64, error) {
		v, n := binary.Uvarint(data)
		if n <= 0 || n > 1 && data[n-1] == 0 { // truncated, or not the shortest form
			return 0, errors.New("truncated")
		}
		data = data[n:]
		return v, nil
	}
	if len(data) == 0 || data[0] != synopsisBinaryVersion {
		return bad("unknown version")
	}
	data = data[1:]
	nameLen, err := uvarint()
	if err != nil || nameLen > maxMechanismName || nameLen > uint64(len(data)) {
		return bad("bad mechanism name")
	}
	mechanism := string(data[:nameLen])
	data = data[nameLen:]
	if len(data) < 8 {
		return bad("truncated")
	}
	epsilon := math.Float64frombits(binary.LittleEndian.Uint64(data))
	data = data[8:]
	n, err := uvarint()
	if err != nil || n > MaxBins {
		return bad("bad bin count")
	}
	if err := checkDomain(int(n)); err != nil {
		return err
	}
	k, err := uvarint()
	if err != nil || k < 1 || k > n || uint64(len(data)) < 8*k {
		return bad("bad bucket count")
	}
	totals := make([]float64, k)
	for c := range totals {
		totals[c] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*c:]))
		if math.IsNaN(totals[c]) || math.IsInf(totals[c], 0) {
			return fmt.Errorf("%w: synopsis total %v", mech.ErrInvalidInput, totals[c])
		}
	}
	data = data[8*k:]
	var starts []int
	if k == n {
		starts = identityStarts(int(n))
	} else {
		starts = make([]int, k)
		next := uint64(0)
		for c := range starts {
			w, err := uvarint()
			if err != nil || w < 1 || w > n-next {
				return bad("bucket widths do not partition the bins")
			}
			starts[c], next = int(next), next+w
		}
		if next != n {
			return bad("bucket widths do not partition the bins")
		}
	}
	if len(data) != 0 {
		return bad("trailing bytes")
	}
	*s = *newSynopsis(mechanism, epsilon, int(n), starts, totals)
	return nil
}
