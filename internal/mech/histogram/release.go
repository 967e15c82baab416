package histogram

import (
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// dawaBucketObservations are optional extra unbiased observations of the
// bucket totals, independent of the tree's noise (DAWA's noise-first
// partition supplies them): value[c] with variance[c].
type dawaBucketObservations struct {
	value, variance []float64
}

// dawaRelease measures the strategy's nodes on the bucket counts with
// total budget ε and returns the least-squares estimate of every bucket
// total (Algorithm 2's measurement and inference, digest §3.6–3.7).
//
// Privacy (ε-DP for a fixed, public strategy and partition). Adding or
// removing one row changes one bucket count by 1, hence the true total of
// every node on that bucket's root path by 1 and no other node. Node q is
// released by the Laplace mechanism (sensitivity 1) at
// ε_q = c'_q·ε·(1 - 2^-40), where c'_q ≤ c_q is the weight rounded down to
// 12 significant bits (so that few distinct mechanisms are built). By
// sequential composition the loss is at most Σ_{q on the path} ε_q ≤ ε,
// because the weights on every path sum to 1 up to float rounding (a few
// units in 2^-52, which the factor 1 - 2^-40 covers). The least squares
// that follow see only the noisy answers and public quantities:
// post-processing.
//
// Every bucket must belong to exactly one measured leaf or pseudo-leaf; the
// strategies of this package guarantee it.
func dawaRelease(src noise.Source, st dawaStrategy, counts []int64, lengths []int, epsilon float64, extra *dawaBucketObservations) ([]float64, error) {
	tr := st.tr
	prefix := make([]int64, len(counts)+1)
	for c, x := range counts {
		prefix[c+1] = prefix[c] + x
	}
	active := dawaActive(tr, st.pseudo)
	value := make([]float64, tr.size())
	precision := make([]float64, tr.size())
	type measurement struct {
		lap       *noise.Laplace
		precision float64 // 1/variance = 1/(2·scale²)
	}
	mechanisms := map[float64]measurement{}
	for q := range tr.size() {
		if !active[q] || st.weight[q] == 0 {
			continue
		}
		c := dawaRoundWeightDown(st.weight[q])
		m, ok := mechanisms[c]
		if !ok {
			lap, err := dawaNodeNoise(st.weight[q], epsilon)
			if err != nil {
				return nil, err
			}
			m = measurement{lap, 1 / (2 * lap.Scale() * lap.Scale())}
			mechanisms[c] = m
		}
		value[q] = m.lap.Release(src, float64(prefix[tr.hi[q]]-prefix[tr.lo[q]]))
		precision[q] = m.precision
	}
	leaf := make([]bool, tr.size())
	for q := range leaf {
		leaf[q] = active[q] && (tr.isLeaf(q) || st.pseudo[q])
		if leaf[q] && extra != nil {
			var obs, variance float64
			for c := tr.lo[q]; c < tr.hi[q]; c++ {
				obs += extra.value[c]
				variance += extra.variance[c]
			}
			value[q] = (precision[q]*value[q] + obs/variance) / (precision[q] + 1/variance)
			precision[q] += 1 / variance
		}
	}
	fitted := dawaTreeLeastSquares(tr, active, leaf, value, precision)
	totals := make([]float64, len(counts))
	for q := range leaf {
		if !leaf[q] {
			continue
		}
		// A pseudo-leaf's buckets are merged: spread its total uniformly
		// over its bins.
		bins := 0
		for c := tr.lo[q]; c < tr.hi[q]; c++ {
			bins += lengths[c]
		}
		for c := tr.lo[q]; c < tr.hi[q]; c++ {
			totals[c] = fitted[q] * float64(lengths[c]) / float64(bins)
		}
	}
	return totals, nil
}

// dawaNodeNoise returns the noise of a tree node of weight w measured at
// ε: Laplace of sensitivity 1 (one row changes the node's total by 1) at
// w'·ε·dawaBudgetSlack, w' the weight rounded down (dawaRoundWeightDown),
// so the nodes on a bucket's root path, whose weights sum to at most 1,
// lose at most ε together. The exact checks read the noise it builds.
func dawaNodeNoise(weight, epsilon float64) (*noise.Laplace, error) {
	return noise.NewLaplace(1, dawaRoundWeightDown(weight)*epsilon*dawaBudgetSlack)
}

// dawaBudgetSlack scales every tree measurement's ε down by 2^-40 so that
// float rounding of the weights can never make a path spend more than ε.
const dawaBudgetSlack = 1 - 0x1p-40

// dawaRoundWeightDown rounds a weight in (0, 1] down to 12 significant bits.
func dawaRoundWeightDown(c float64) float64 {
	frac, exp := math.Frexp(c)
	return math.Ldexp(math.Floor(math.Ldexp(frac, 12)), exp-12)
}

// dawaActive marks the nodes reachable from the root without passing below
// a pseudo-leaf.
func dawaActive(tr *dawaTree, pseudo []bool) []bool {
	active := make([]bool, tr.size())
	active[0] = true
	for q := range tr.size() {
		if !active[q] || pseudo[q] {
			continue
		}
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			active[c] = true
		}
	}
	return active
}

// dawaTreeLeastSquares returns the weighted least-squares fit of the
// subtree totals: value[q] observes the total of node q with precision
// precision[q] (0: not observed), every leaf (leaf[q]) is observed, and
// the fit is consistent (a node's total is the sum of its children's).
// Two passes, O(#nodes), exact (digest §3.7, a Kalman-style generalization
// of Hay et al.'s constrained inference to unequal weights):
//
//	up:   leaf ẑ = value, V = 1/precision; internal S = Σ ẑ_child,
//	      V_S = Σ V_child, ẑ = (p·value + S/V_S)/(p + 1/V_S), V = 1/(p + 1/V_S)
//	down: f_root = ẑ_root; f_child = ẑ_child + (V_child/V_S)(f_parent - S)
//
// The result holds f for every active node.
func dawaTreeLeastSquares(tr *dawaTree, active, leaf []bool, value, precision []float64) []float64 {
	n := tr.size()
	est := make([]float64, n)
	variance := make([]float64, n)
	childSum := make([]float64, n)
	childVar := make([]float64, n)
	for q := n - 1; q >= 0; q-- {
		if !active[q] {
			continue
		}
		if leaf[q] {
			est[q], variance[q] = value[q], 1/precision[q]
			continue
		}
		var s, vs float64
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			s += est[c]
			vs += variance[c]
		}
		childSum[q], childVar[q] = s, vs
		p := precision[q] + 1/vs
		est[q] = (precision[q]*value[q] + s/vs) / p
		variance[q] = 1 / p
	}
	fit := make([]float64, n)
	fit[0] = est[0]
	for q := range n {
		if !active[q] || leaf[q] {
			continue
		}
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			fit[c] = est[c] + variance[c]/childVar[q]*(fit[q]-childSum[q])
		}
	}
	return fit
}
