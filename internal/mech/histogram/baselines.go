package histogram

import (
	"fmt"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// The data-independent baselines for range counts over a histogram. Each
// is ε-differentially private under add/remove of one row (one bin count
// changes by 1) and returns a Synopsis over the bins.

// Identity releases every bin count with discrete Laplace noise of scale
// 1/ε (NoisyCells: the Laplace mechanism on the histogram, L1
// sensitivity 1). A range count then has noise variance growing with its
// length.
func Identity(src noise.Source, hist []int64, epsilon float64) (*Synopsis, error) {
	if err := checkHistogram(hist, len(hist)); err != nil {
		return nil, err
	}
	noisy, err := NoisyCells(src, hist, epsilon)
	if err != nil {
		return nil, err
	}
	totals := make([]float64, len(hist))
	for j, x := range noisy {
		totals[j] = float64(x)
	}
	return newSynopsis("identity", epsilon, len(hist), identityStarts(len(hist)), totals), nil
}

// H2 is the hierarchical mechanism of Hay et al. (VLDB 2010) with a binary
// tree: every node of the tree over the bins (dawaTree) is measured with
// Laplace noise of scale h/ε, h the tree's height (13 for 4096 bins), and
// the bin estimates are the consistent least-squares fit. Each bin lies in
// at most h nodes, so the release is ε-DP (dawaRelease).
func H2(src noise.Source, hist []int64, epsilon float64) (*Synopsis, error) {
	if err := checkHistogram(hist, len(hist)); err != nil {
		return nil, err
	}
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	tr := newDawaTree(len(hist), 2)
	if epsilon/float64(tr.height()) < MinStageEpsilon {
		return nil, fmt.Errorf("%w: %v over %d tree levels, each must get at least 2^-20", mech.ErrInvalidEpsilon, epsilon, tr.height())
	}
	totals, err := dawaRelease(src, dawaUniformStrategy(tr), hist, identityOnes(len(hist)), epsilon, nil)
	if err != nil {
		return nil, err
	}
	return newSynopsis("h2", epsilon, len(hist), identityStarts(len(hist)), totals), nil
}

// GreedyH is DAWA's stage 2 alone on the bins (the "Greedy Scaling w/o
// Partition" of the paper's Fig. 4, Greedy-H in DPBench): the binary tree
// over the bins with weights chosen greedily for the workload w, measured
// with all of ε. Data-independent, hence no budget goes to a partition.
// Bins that no range of w ends inside are measured together and merged
// (see DAWA).
func GreedyH(src noise.Source, hist []int64, w Workload, epsilon float64) (*Synopsis, error) {
	if err := checkHistogram(hist, w.n); err != nil {
		return nil, err
	}
	if err := mech.CheckEpsilon(epsilon); err != nil {
		return nil, err
	}
	if epsilon < MinStageEpsilon {
		return nil, fmt.Errorf("%w: %v, must be at least 2^-20", mech.ErrInvalidEpsilon, epsilon)
	}
	starts := identityStarts(len(hist))
	totals, err := dawaEstimate(src, hist, starts, w, epsilon, 2, nil)
	if err != nil {
		return nil, err
	}
	return newSynopsis("greedy-h", epsilon, len(hist), starts, totals), nil
}

// identityOnes returns n ones: the bucket lengths of the bins themselves.
func identityOnes(n int) []int {
	ones := make([]int, n)
	for j := range ones {
		ones[j] = 1
	}
	return ones
}
