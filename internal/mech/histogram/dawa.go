package histogram

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// DAWAPartition selects how DAWA's stage 1 chooses the buckets.
type DAWAPartition int

const (
	// DAWADeviationTree (the default) releases the deviation of every
	// node wider than 64 bins of a fixed 4-ary tree over the bins with
	// Laplace noise (0.4·ε1) and merges the nodes that look uniform;
	// narrower regions are split by the noise-first tests on a noisy
	// histogram (0.6·ε1). Our design (dawaDeviationTree), not the paper's.
	DAWADeviationTree DAWAPartition = iota
	// DAWANoiseFirst releases the histogram with Laplace noise at ε1 and
	// chooses the buckets from it by uniformity tests, within public
	// chunks of MaxBucket bins (digest design C1). Private by
	// post-processing; the noisy histogram also refines the estimate.
	DAWANoiseFirst
	// DAWANoisyCost is the paper's Algorithm 1 made exact and provably
	// ε1-private: the least-cost partition under fresh discrete Laplace
	// noise on every candidate bucket's cost, plus Offset noise scales
	// per bucket (digest design C2 when Offset > 0). It degenerates to
	// thousands of buckets on 4096 bins; kept as the paper's reference.
	DAWANoisyCost
)

// String names the partition method.
func (p DAWAPartition) String() string {
	switch p {
	case DAWANoiseFirst:
		return "noise-first"
	case DAWANoisyCost:
		return "noisy-cost"
	case DAWADeviationTree:
		return "deviation-tree"
	}
	return fmt.Sprintf("DAWAPartition(%d)", int(p))
}

// DAWAOptions are DAWA's public parameters. The zero value is the
// default configuration.
type DAWAOptions struct {
	// Partition is the stage-1 method.
	Partition DAWAPartition
	// Rho is the share of ε spent on stage 1, in (0, 1); 0 means
	// DefaultDAWARho.
	Rho float64
	// Branching is the fan-out of stage 2's strategy tree, in [2, 16];
	// 0 means 2 (the paper's).
	Branching int
	// AllIntervals (DAWANoisyCost) makes every interval a candidate
	// instead of the power-of-two lengths; it needs n ≤ 8192 and
	// O(n² log n) time.
	AllIntervals bool
	// Offset (DAWANoisyCost) is a public price per bucket, in units of
	// that bucket's noise scale (κ ≥ 0).
	Offset float64
	// MaxBucket (DAWANoiseFirst) is the longest bucket, ≥ 8; 0 means 128.
	MaxBucket int
	// IgnoreNoisyHistogram (DAWADeviationTree, DAWANoiseFirst) keeps
	// stage 1's noisy histogram out of the final estimate (by default its
	// bucket sums join the least squares as extra observations, for free).
	IgnoreNoisyHistogram bool
}

// DefaultDAWARho is the paper's split: a quarter of ε for the partition.
const DefaultDAWARho = 0.25

// MinStageEpsilon is the smallest ε each DAWA stage (and each of
// Greedy-H's and H2's releases) may get, 2^-20 ≈ 9.5·10^-7: below it the
// weakest tree measurement would leave the range of valid epsilons.
const MinStageEpsilon = 0x1p-20

// DAWA is the Data- and Workload-Aware mechanism (Li, Hay, Miklau, Wang,
// PVLDB 2014) for range counts over a histogram, ε-differentially private
// under add/remove of one row. hist holds the count of every bin of a
// public domain (w.N() bins, fixed bounds: empty bins are 0, never
// omitted). It spends ε1 = Rho·ε on stage 1, which partitions the bins into
// buckets that look uniform (see DAWAPartition), and ε2 = ε - ε1 on stage 2,
// which measures a tree of bucket ranges with weights tuned to the
// workload w and fits the bucket totals by least squares (dawaRelease).
// The synopsis spreads each total uniformly over its bucket's bins.
//
// The workload only tunes the noise: any range can be answered from the
// synopsis. But where no query of w ends inside a run of buckets, stage 2
// measures the run as one (the authors' pseudo-leaf, dawaGreedyScaling),
// so a synopsis meant for arbitrary later queries should be tuned with a
// generic workload (AllRangesWorkload, UniformIntervalsWorkload).
//
// Privacy. Stage 1 is ε1-DP: the deviation tree is a Laplace vector
// mechanism (dawaDeviationTree) and the noisy histogram the Laplace
// mechanism, their budgets summing to ε1, and the partition is computed
// from those releases alone (dawaNoiseFirstPartition); the noisy-cost
// method has its own proof (dawaNoisyCostPartition). Stage 2 is ε2-DP for
// every fixed partition (dawaRelease), and the workload and options are
// public. By adaptive sequential composition the releases together are
// (ε1 + ε2)-DP, the synopsis is computed from them alone, and every split
// of ε is checked to never exceed it in floating point.
//
// Default. DAWADeviationTree was chosen on the DPComp histograms of the
// paper (n = 4096, 2000 uniform intervals, ε from 0.01 to 0.5): its error
// is 0.16–0.6× Greedy-H's on the sparse and piecewise-constant ones and
// 1.3–1.8× on the hardest (Patent), where any two-stage method pays for
// the partition; DAWANoiseFirst is steadier (0.45–1.45×), DAWANoisyCost
// never beats Greedy-H.
func DAWA(src noise.Source, hist []int64, w Workload, epsilon float64, opts DAWAOptions) (*Synopsis, error) {
	if err := checkHistogram(hist, w.n); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	rho := opts.Rho
	if rho == 0 {
		rho = DefaultDAWARho
	}
	eps1, eps2, err := dawaSplit(epsilon, rho)
	if err != nil {
		return nil, err
	}
	starts, observed, err := dawaPartition(src, hist, eps1, eps2, opts)
	if err != nil {
		return nil, err
	}
	totals, err := dawaEstimate(src, hist, starts, w, eps2, opts.branching(), observed)
	if err != nil {
		return nil, err
	}
	return newSynopsis("dawa/"+opts.Partition.String(), epsilon, len(hist), starts, totals), nil
}

// dawaPartition runs stage 1 with budget eps1 (eps2 is stage 2's, which
// the noisy-cost penalty reads) and returns the bucket starts and, when
// stage 1 released a noisy histogram, its bucket sums.
func dawaPartition(src noise.Source, hist []int64, eps1, eps2 float64, opts DAWAOptions) ([]int, *dawaBucketObservations, error) {
	if opts.Partition == DAWANoisyCost {
		starts, err := dawaNoisyCostPartition(src, hist, dawaNoisyCostParams{eps1: eps1, eps2: eps2, allIntervals: opts.AllIntervals, offset: opts.Offset})
		return starts, nil, err
	}
	nf := dawaDefaultNoiseFirst
	epsNoisy := eps1
	var spans []dawaSpan
	if opts.Partition == DAWADeviationTree {
		tree := dawaDefaultDevTree
		var err error
		if tree.eps, epsNoisy, err = dawaSplit(eps1, dawaDevTreeShare); err != nil {
			return nil, nil, err
		}
		if spans, err = dawaDeviationTree(src, hist, tree); err != nil {
			return nil, nil, err
		}
		nf.maxBucket = tree.refine
	} else {
		if opts.MaxBucket != 0 {
			nf.maxBucket = opts.MaxBucket
		}
		spans = []dawaSpan{{0, len(hist), false}}
	}
	lap, err := dawaNoisyHistogramNoise(epsNoisy)
	if err != nil {
		return nil, nil, err
	}
	noisy := make([]float64, len(hist))
	for j, x := range hist {
		noisy[j] = lap.Release(src, float64(x))
	}
	var starts []int
	for _, sp := range spans {
		if sp.merged {
			starts = append(starts, sp.lo)
			continue
		}
		for _, s := range dawaNoiseFirstPartition(noisy[sp.lo:sp.hi], lap.Scale(), nf) {
			starts = append(starts, sp.lo+s)
		}
	}
	if opts.IgnoreNoisyHistogram {
		return starts, nil, nil
	}
	return starts, dawaBucketSums(noisy, starts, 2*lap.Scale()*lap.Scale()), nil
}

// dawaNoisyHistogramNoise returns the noise of stage 1's noisy histogram
// at its share ε of ε1: Laplace of sensitivity 1 on every bin (one row
// changes one bin by 1), ε-DP; the noise-first partition and the bucket
// sums are post-processing of it. The exact checks read the noise it
// builds.
func dawaNoisyHistogramNoise(epsilon float64) (*noise.Laplace, error) {
	return noise.NewLaplace(1, epsilon)
}

// dawaDevTreeShare is the part of ε1 the deviation tree spends; the noisy
// histogram gets the rest (0.1ε and 0.15ε at the default ρ = 0.25).
const dawaDevTreeShare = 0.4

// dawaEstimate is stage 2: the greedy-scaled tree over the buckets at
// starts, measured with ε and fitted.
func dawaEstimate(src noise.Source, hist []int64, starts []int, w Workload, epsilon float64, branching int, observed *dawaBucketObservations) ([]float64, error) {
	counts, lengths := dawaBucketCounts(hist, starts)
	tr := newDawaTree(len(starts), branching)
	st := dawaGreedyScaling(tr, newDawaGram(w, starts, tr), branching)
	return dawaRelease(src, st, counts, lengths, epsilon, observed)
}

// validate checks the options.
func (o DAWAOptions) validate() error {
	switch {
	case o.Partition < DAWADeviationTree || o.Partition > DAWANoisyCost:
		return fmt.Errorf("%w: unknown partition method %v", mech.ErrInvalidInput, o.Partition)
	case o.Rho != 0 && !(o.Rho > 0 && o.Rho < 1):
		return fmt.Errorf("%w: DAWA rho %v, must be in (0, 1)", mech.ErrInvalidInput, o.Rho)
	case o.Branching != 0 && (o.Branching < 2 || o.Branching > 16):
		return fmt.Errorf("%w: DAWA branching %d, must be in [2, 16]", mech.ErrInvalidInput, o.Branching)
	case !(o.Offset >= 0 && o.Offset <= 64):
		return fmt.Errorf("%w: DAWA offset %v, must be in [0, 64]", mech.ErrInvalidInput, o.Offset)
	case o.MaxBucket != 0 && (o.MaxBucket < dawaDefaultNoiseFirst.minBlock || o.MaxBucket > MaxBins):
		return fmt.Errorf("%w: DAWA max bucket %d, must be in [8, 2^26]", mech.ErrInvalidInput, o.MaxBucket)
	}
	return nil
}

// branching returns the tree's fan-out.
func (o DAWAOptions) branching() int {
	if o.Branching == 0 {
		return 2
	}
	return o.Branching
}

// dawaSplit returns ε1 ≈ ρ·ε and ε2 ≈ ε − ε1 with ε1 + ε2 ≤ ε exactly (as
// real numbers, mech.SplitShare), both at least MinStageEpsilon.
func dawaSplit(epsilon, rho float64) (eps1, eps2 float64, err error) {
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return 0, 0, err
	}
	if !(rho > 0 && rho < 1) {
		return 0, 0, fmt.Errorf("%w: stage-1 share ρ = %v, must be in (0, 1)", mech.ErrInvalidInput, rho)
	}
	eps1, eps2 = mech.SplitShare(epsilon, rho)
	if eps1 < MinStageEpsilon || eps2 < MinStageEpsilon {
		return 0, 0, fmt.Errorf("%w: %v split into %v and %v, each must be at least 2^-20", mech.ErrInvalidEpsilon, epsilon, eps1, eps2)
	}
	return eps1, eps2, nil
}

// checkHistogram validates a histogram over a domain of n bins: n is a
// valid domain size, hist has n counts, all ≥ 0, and their total is below
// 2^53, so every node total is an exact float64.
func checkHistogram(hist []int64, n int) error {
	if err := checkDomain(n); err != nil {
		return err
	}
	if len(hist) != n {
		return fmt.Errorf("%w: histogram of %d bins for a domain of %d", mech.ErrInvalidInput, len(hist), n)
	}
	total := int64(0)
	for _, x := range hist {
		if x < 0 || x > 1<<53-total {
			return fmt.Errorf("%w: bin count %d (counts must be ≥ 0 and total < 2^53)", mech.ErrInvalidInput, x)
		}
		total += x
	}
	return nil
}

// dawaBucketCounts returns the true count and the length of every bucket.
func dawaBucketCounts(hist []int64, starts []int) (counts []int64, lengths []int) {
	counts = make([]int64, len(starts))
	lengths = make([]int, len(starts))
	for c, start := range starts {
		end := len(hist)
		if c+1 < len(starts) {
			end = starts[c+1]
		}
		lengths[c] = end - start
		for _, x := range hist[start:end] {
			counts[c] += x
		}
	}
	return counts, lengths
}

// dawaBucketSums returns the bucket sums of the noisy histogram as
// observations of the bucket totals, each bin contributing binVariance.
func dawaBucketSums(noisy []float64, starts []int, binVariance float64) *dawaBucketObservations {
	obs := &dawaBucketObservations{value: make([]float64, len(starts)), variance: make([]float64, len(starts))}
	for c, start := range starts {
		end := len(noisy)
		if c+1 < len(starts) {
			end = starts[c+1]
		}
		for _, v := range noisy[start:end] {
			obs.value[c] += v
		}
		obs.variance[c] = float64(end-start) * binVariance
	}
	return obs
}
