package histogram

import (
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/exact"
)

// dawaCandidateLengths returns the bucket lengths stage 1 may choose from,
// ascending and starting at 1: the powers of two up to n (the paper's
// default, §3.2: every interval whose length is a power of two, at every
// start) or every length 1..n. The set is public; including length 1
// keeps a valid partition always available.
func dawaCandidateLengths(n int, all bool) []int {
	var lengths []int
	for l := 1; l <= n; {
		lengths = append(lengths, l)
		if all {
			l++
		} else {
			l *= 2
		}
	}
	return lengths
}

// dawaNoisyCosts holds one noisy integer cost per candidate bucket: entry
// [li][i] is the bucket [i, i+lengths[li]). A cost that does not fit in an
// int64 (never seen in practice: it needs a noise draw beyond 2^62 units)
// is stored as dawaCostOverflow with its exact value in overflow.
type dawaNoisyCosts struct {
	n        int
	lengths  []int
	cost     [][]int64
	overflow map[[2]int]exact.Int128
}

// dawaCostOverflow marks a cost held in dawaNoisyCosts.overflow.
const dawaCostOverflow = math.MinInt64

// newDawaNoisyCosts returns an all-zero cost table.
func newDawaNoisyCosts(n int, lengths []int) *dawaNoisyCosts {
	t := &dawaNoisyCosts{n: n, lengths: lengths, cost: make([][]int64, len(lengths))}
	for li, l := range lengths {
		t.cost[li] = make([]int64, n-l+1)
	}
	return t
}

// set stores the exact cost of bucket [i, i+lengths[li]).
func (t *dawaNoisyCosts) set(li, i int, v exact.Int128) {
	if v.FitsBits(62) {
		t.cost[li][i] = int64(v.Lo)
		return
	}
	if t.overflow == nil {
		t.overflow = map[[2]int]exact.Int128{}
	}
	t.cost[li][i] = dawaCostOverflow
	t.overflow[[2]int{li, i}] = v
}

// at returns the exact cost of bucket [i, i+lengths[li]).
func (t *dawaNoisyCosts) at(li, i int) exact.Int128 {
	if c := t.cost[li][i]; c != dawaCostOverflow {
		return exact.Int(c)
	}
	return t.overflow[[2]int{li, i}]
}

// dawaLeastCostPartition returns the starts of the partition of [0, n) into
// candidate buckets with the least total cost (Algorithm 4, the v-optimal
// style dynamic program, digest §2.6), in exact 128-bit integer arithmetic.
//
// Ties are broken by a fixed total order of the partitions, never by the
// data: compare the start of the last bucket, larger first, then the start
// of the one before, and so on. The program implements exactly that
// order: at each end it keeps the first minimum found while trying the
// lengths in ascending order (the largest start), and an optimal partition
// with a given last bucket ends in an optimal partition of the prefix, by
// induction chosen with the same order. Stage 1's privacy proof relies on
// the output being this argmin (dawaNoisyCostPartition).
func dawaLeastCostPartition(t *dawaNoisyCosts) []int {
	best := make([]exact.Int128, t.n+1)
	back := make([]int, t.n+1)
	for j := 1; j <= t.n; j++ {
		for li, l := range t.lengths {
			if l > j {
				break
			}
			i := j - l
			if c := best[i].Add(t.at(li, i)); li == 0 || c.Cmp(best[j]) < 0 {
				best[j], back[j] = c, i
			}
		}
	}
	var starts []int
	for j := t.n; j > 0; j = back[j] {
		starts = append(starts, back[j])
	}
	for a, b := 0, len(starts)-1; a < b; a, b = a+1, b-1 {
		starts[a], starts[b] = starts[b], starts[a]
	}
	return starts
}
