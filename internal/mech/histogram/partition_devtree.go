package histogram

import (
	"math"
	"math/bits"

	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// dawaDevTreeParams are the public constants of the deviation-tree
// partition. Any values keep the guarantee.
type dawaDevTreeParams struct {
	// eps is the budget of the deviation release.
	eps float64
	// fanout of the fixed tree over the bins (≥ 2).
	fanout int
	// refine: nodes of at most this many bins (≥ fanout) are not
	// measured; the noise-first tests decide inside them.
	refine int
	// tau: a measured node is merged when its noisy deviation is at
	// most tau noise scales.
	tau float64
}

// dawaDefaultDevTree: fan-out 4, refine below 65 bins, merge at one noise
// scale (chosen on the DPComp datasets, see DAWADeviationTree).
var dawaDefaultDevTree = dawaDevTreeParams{fanout: 4, refine: 64, tau: 1}

// dawaSpan is a run of bins [lo, hi): a bucket when merged, otherwise a
// region whose partition the noise-first tests decide.
type dawaSpan struct {
	lo, hi int
	merged bool
}

// dawaDeviationTree is the coarse half of the deviation-tree partition
// (our design, not in the paper): it walks the fixed tree over the bins
// (dawaTree's split rule with branching fanout) from the root, and a node
// wider than refine bins becomes one bucket if its noisy deviation is at
// most tau noise scales, or else is split into its children; nodes of at
// most refine bins are returned unmerged for the noise-first tests.
//
// Privacy: ε-DP (eps) by the Laplace mechanism. Conceptually every node
// wider than refine bins has its deviation released: the integer
// min(⌊dev(x̄, v)·2^a⌋, cap) (x̄ clamped as in stage 1's costs, a public
// unit) plus an independent discrete Laplace draw of scale
// β ≥ h·D/ε, where h is the number of depths holding such nodes and D
// bounds each node's sensitivity in units (dev moves by at most
// 2(1 - 1/L) when one row is added or removed, dawaNoisyCostPartition).
// A row lies in at most one node per depth, so the vector of released
// values has L1 sensitivity at most h·D and the discrete Laplace vector
// mechanism is ε-DP exactly (no floating point touches the noise). The
// walk reads some of these values and decides by comparing them with a
// public threshold: post-processing. Drawing only the values the walk
// reads gives the same output distribution.
//
// Why it helps: the noise on a node's deviation is O(h/ε) whatever the
// node's length, whereas the uniformity tests on the noisy histogram see
// noise growing like √L; so long uniform runs (empty ranges, plateaus)
// are found reliably and merged beyond the noise-first cap, while short
// structure is left to the tests.
func dawaDeviationTree(src noise.Source, x []int64, p dawaDevTreeParams) ([]dawaSpan, error) {
	m, err := newDawaDevTreeMeasure(len(x), p)
	if err != nil || m.depths == 0 {
		return dawaDevTreeWalk(len(x), p, nil), err
	}
	return dawaDevTreeWalk(len(x), p, func(lo, hi int) bool {
		negative, magnitude := m.noise.Sample(src)
		z := exact.Int128{Hi: int64(magnitude.Hi), Lo: magnitude.Lo}
		if negative {
			z = z.Neg()
		}
		return exact.Int(int64(dawaBlockDev(x[lo:hi], m.unit))).Add(z).Cmp(m.threshold) <= 0
	}), nil
}

// dawaDevTreeMeasure is the public part of the deviation release of a
// tree over n bins: the number of depths holding measured nodes, the unit
// 2^-unit of the deviations, the noise and the merge threshold.
type dawaDevTreeMeasure struct {
	depths    int
	unit      int
	noise     noise.Dlap
	threshold exact.Int128
}

// newDawaDevTreeMeasure returns the measure for n bins (depths = 0 and no
// noise when no node is wider than p.refine).
func newDawaDevTreeMeasure(n int, p dawaDevTreeParams) (dawaDevTreeMeasure, error) {
	var m dawaDevTreeMeasure
	for size := n; size > p.refine; size = (size + p.fanout - 1) / p.fanout {
		m.depths++
	}
	if m.depths == 0 {
		return m, nil
	}
	// Unit 2^-a with the noise scale (count units) at ≥ 2^24 units.
	m.unit = dawaCostUnitBits - math.Ilogb(float64(2*m.depths)/p.eps)
	var err error
	if m.noise, err = noise.NewDlap(uint64(m.depths)*dawaDevSensitivity(uint64(n), m.unit), p.eps); err != nil {
		return m, err
	}
	m.threshold = exact.Int(int64(math.Floor(p.tau * m.noise.Scale())))
	return m, nil
}

// dawaDevTreeWalk walks the tree over n bins from the root: a node wider
// than p.refine becomes one merged span if merge(lo, hi) says so, else it
// is split into its fan-out children; narrower nodes are returned
// unmerged. merge is called once per measured node, in walk order.
func dawaDevTreeWalk(n int, p dawaDevTreeParams, merge func(lo, hi int) bool) []dawaSpan {
	var spans []dawaSpan
	var walk func(lo, hi int)
	walk = func(lo, hi int) {
		size := hi - lo
		if size <= p.refine {
			spans = append(spans, dawaSpan{lo, hi, false})
			return
		}
		if merge(lo, hi) {
			spans = append(spans, dawaSpan{lo, hi, true})
			return
		}
		small, bigger := size/p.fanout, size%p.fanout
		at := lo
		for i := range p.fanout {
			child := small
			if i >= p.fanout-bigger {
				child++
			}
			walk(at, at+child)
			at += child
		}
	}
	walk(0, n)
	return spans
}

// dawaBlockDev returns min(⌊dev(x̄, block)·2^a⌋, dawaCostCap) exactly, for a
// block of at most 2^26 bins (x̄ clamped at dawaMaxBinForCost).
func dawaBlockDev(block []int64, a int) uint64 {
	l := int64(len(block))
	var s int64
	for _, v := range block {
		s += min(v, dawaMaxBinForCost)
	}
	var cAbove, sAbove uint64
	for _, v := range block {
		if v = min(v, dawaMaxBinForCost); v*l >= s {
			cAbove++
			sAbove += uint64(v)
		}
	}
	h1, l1 := bits.Mul64(uint64(l), sAbove)
	h2, l2 := bits.Mul64(cAbove, uint64(s))
	lo, borrow := bits.Sub64(l1, l2, 0)
	hi, _ := bits.Sub64(h1, h2, borrow)
	return dawaScaledDev(hi, lo, uint64(l), a+1, dawaCostCap)
}
