package bench

import (
	"math"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// GoogleName is the benchmark arm that re-implements the algorithms of
// Google's differential-privacy Go library (github.com/google/
// differential-privacy/go, package dpagg) from their documentation, so that
// dpproxy is measured against it in the same run on the same rows. The
// library itself cannot be fetched here; its published numbers on the same
// rows (../shared/data/anchors/google-dp-go.tsv) check this arm
// (TestGoogleArmMatchesAnchors).
const GoogleName = "google"

// The documented defaults of dpagg.BoundedQuantiles: a tree of height 4
// and branching factor 16 (16^4 leaves of equal width over [L, U]), and
// the post-processing constants of its search.
const (
	googleTreeHeight  = 4
	googleBranching   = 16
	googleAlpha       = 0.0075 // children below this share of their siblings' total are treated as empty
	googleTolerance   = 1e-6   // numerical tolerance of the rank comparison
	googleRankLow     = 0.005  // ranks are clamped to [0.005, 0.995]
	googleRankHigh    = 0.995
	googleLeafCount   = 65536 // googleBranching^googleTreeHeight
	googleNodesAbove  = 4369  // 1 + 16 + 256 + 4096: nodes before the leftmost leaf, breadth first
	googleTotalNodes  = googleNodesAbove + googleLeafCount
	googleRootIndex   = 0
	googleFirstLeaf   = googleNodesAbove
	googleVarianceDiv = 3
)

// GoogleCandidate is the Google arm:
//
//   - mean (dpagg.BoundedMean): ε/2 on a count (integer Laplace noise,
//     sensitivity 1) and ε/2 on the normalised sum Σ(clamp(x) − m),
//     m = (L+U)/2 (Laplace, sensitivity (U−L)/2); the release is
//     clamp(m + S̃/max(ñ, 1), L, U).
//   - variance (dpagg.BoundedVariance): ε/3 each on the count, the
//     normalised sum and the normalised sum of squares Σ(clamp(x) − m)²
//     (sensitivity ((U−L)/2)²); the release is
//     clamp(Q̃/ñ₁ − (S̃/ñ₁)², 0, (U−L)²/4), ñ₁ = max(ñ, 1).
//   - quantiles (dpagg.BoundedQuantiles): every row increments one node per
//     level of a tree of height 4, branching 16 (L1 sensitivity 4), each
//     node's count gets Laplace noise of scale 4/ε; the search descends from
//     the root, at each node summing its children's noisy counts clamped at
//     0, dropping children below 0.0075 of that total, and entering the
//     child in which the (clamped, rescaled) rank falls; in the leaf it
//     interpolates linearly between the leaf's ends.
func GoogleCandidate() Candidate {
	return Candidate{
		Name:     GoogleName,
		Summary:  "Google's dpagg algorithms re-implemented from their documentation (BoundedMean, BoundedVariance, BoundedQuantiles tree 4×16)",
		Supports: func(Statistic) bool { return true },
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			switch s.Kind {
			case MeanStat:
				return drawOnly(func(src noise.Source) (float64, error) { return googleMean(src, c, eps) }), nil
			case VarianceStat:
				return drawOnly(func(src noise.Source) (float64, error) { return googleVariance(src, c, eps) }), nil
			}
			tree := newGoogleTree(c.d, googleAlpha)
			return drawOnly(func(src noise.Source) (float64, error) { return tree.quantile(src, s.Quantile, eps) }), nil
		},
	}
}

// GoogleUnprunedName is the Google arm's quantile tree without its
// pruning (α = 0: no child is treated as empty for its share of its
// siblings' total), for diagnosis (bench/cmd/google -also).
const GoogleUnprunedName = "google-unpruned"

// GoogleUnprunedCandidate is BoundedQuantiles as GoogleCandidate runs it
// but with α = 0: it shows what the pruning, a rule on the noisy counts
// that favours dense blocks, contributes to a cell's error.
func GoogleUnprunedCandidate() Candidate {
	return Candidate{
		Name:     GoogleUnprunedName,
		Summary:  "Google's BoundedQuantiles tree without its pruning of small children (α = 0), for diagnosis",
		Supports: isQuantile,
		Prepare: func(s Statistic, c *Column, eps float64) (*Prepared, error) {
			tree := newGoogleTree(c.d, 0)
			return drawOnly(func(src noise.Source) (float64, error) { return tree.quantile(src, s.Quantile, eps) }), nil
		},
	}
}

// googleMoments are the count, normalised sum and normalised sum of
// squares of c, each released with Laplace noise at its share of ε.
func googleMoments(src noise.Source, c *Column, countEps, sumEps, squaresEps float64) (count, sum, squares float64, err error) {
	b := c.bounds()
	h, m := b.HalfRange(), b.Mid()
	s := c.Summary()
	n := float64(s.Count)
	lc, err := noise.NewDiscreteLaplace(1, countEps)
	if err != nil {
		return 0, 0, 0, err
	}
	count = float64(lc.Release(src, s.Count))
	ls, err := noise.NewLaplace(h, sumEps)
	if err != nil {
		return 0, 0, 0, err
	}
	sum = ls.Release(src, s.Sum-n*m)
	if squaresEps == 0 {
		return count, sum, 0, nil
	}
	lq, err := noise.NewLaplace(h*h, squaresEps)
	if err != nil {
		return 0, 0, 0, err
	}
	squares = lq.Release(src, s.SumSquares-2*m*s.Sum+n*m*m)
	return count, sum, squares, nil
}

// googleMean is dpagg.BoundedMean's release.
func googleMean(src noise.Source, c *Column, eps float64) (float64, error) {
	count, sum, _, err := googleMoments(src, c, eps/2, eps/2, 0)
	if err != nil {
		return 0, err
	}
	b := c.bounds()
	return math.Min(math.Max(b.Mid()+sum/math.Max(count, 1), b.Lower), b.Upper), nil
}

// googleVariance is dpagg.BoundedVariance's release.
func googleVariance(src noise.Source, c *Column, eps float64) (float64, error) {
	third := eps / googleVarianceDiv
	count, sum, squares, err := googleMoments(src, c, third, third, eps-2*third)
	if err != nil {
		return 0, err
	}
	h := c.bounds().HalfRange()
	n := math.Max(count, 1)
	mu := sum / n
	return math.Min(math.Max(squares/n-mu*mu, 0), h*h), nil
}

// googleTree holds the exact counts of dpagg.BoundedQuantiles' tree
// (breadth-first indices, the root 0 has none) for one column.
type googleTree struct {
	lower, upper float64
	counts       []int64
	// alpha is the share of its siblings' noisy total below which a
	// child is treated as empty (googleAlpha, or 0 for no pruning).
	alpha float64
}

// newGoogleTree counts every row into its leaf (equal-width leaves over
// [L, U], U in the last) and every ancestor below the root.
func newGoogleTree(d *Dataset, alpha float64) *googleTree {
	t := &googleTree{lower: d.Lower, upper: d.Upper, counts: make([]int64, googleTotalNodes), alpha: alpha}
	for _, v := range d.Values {
		v = math.Min(math.Max(v, d.Lower), d.Upper)
		leaf := int((v - d.Lower) / (d.Upper - d.Lower) * googleLeafCount)
		if v == d.Upper {
			leaf = googleLeafCount - 1
		}
		for i := googleFirstLeaf + leaf; i != googleRootIndex; i = (i - 1) / googleBranching {
			t.counts[i]++
		}
	}
	return t
}

// quantile is one release of BoundedQuantiles.Result(q) on a fresh noisy
// tree: noise is drawn for the nodes the search reads, each once.
func (t *googleTree) quantile(src noise.Source, q, eps float64) (float64, error) {
	lap, err := noise.NewLaplace(googleTreeHeight, eps)
	if err != nil {
		return 0, err
	}
	noisy := map[int]float64{}
	get := func(i int) float64 {
		v, ok := noisy[i]
		if !ok {
			v = lap.Release(src, float64(t.counts[i]))
			noisy[i] = v
		}
		return v
	}
	rank := math.Min(math.Max(q, googleRankLow), googleRankHigh)
	index := googleRootIndex
	for index < googleFirstLeaf {
		first, last := index*googleBranching+1, (index+1)*googleBranching
		total := 0.0
		for i := first; i <= last; i++ {
			total += math.Max(0, get(i))
		}
		corrected := 0.0
		for i := first; i <= last; i++ {
			if v := get(i); v >= total*t.alpha {
				corrected += v
			}
		}
		if corrected == 0 {
			break
		}
		partial := 0.0
		for i := first; i <= last; i++ {
			v := get(i)
			if v < total*t.alpha {
				continue
			}
			partial += v
			if partial/corrected >= rank-googleTolerance || i == last {
				rank = math.Min(math.Max((rank-(partial-v)/corrected)/(v/corrected), 0), 1)
				index = i
				break
			}
		}
	}
	return (1-rank)*t.leftValue(index) + rank*t.rightValue(index), nil
}

// leftValue and rightValue are the ends of the range of node index's
// subtree (its leftmost and rightmost leaves).
func (t *googleTree) leftValue(index int) float64 {
	for index < googleFirstLeaf {
		index = index*googleBranching + 1
	}
	return t.lower + (t.upper-t.lower)*float64(index-googleFirstLeaf)/googleLeafCount
}

func (t *googleTree) rightValue(index int) float64 {
	for index < googleFirstLeaf {
		index = (index + 1) * googleBranching
	}
	return t.lower + (t.upper-t.lower)*float64(index-googleFirstLeaf+1)/googleLeafCount
}
