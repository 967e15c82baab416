package histogram

import "math"

// dawaStrategy is a weighted hierarchical strategy: tree node q is measured
// with weight c_q (its answer gets Laplace noise of scale 1/(c_q·ε)), and
// the weights on every root-to-leaf path sum to at most 1, so releasing all
// measurements costs ε in total. A pseudo-leaf is a node measured alone,
// whose buckets the estimate merges; nodes below it are not used.
type dawaStrategy struct {
	tr     *dawaTree
	weight []float64
	pseudo []bool
	// trace is tr(ŴᵀŴ (YᵀD²Y)⁻¹) (the paper's Eq. 6 without 2/ε²): the
	// expected total squared error on the workload is 2·trace/ε².
	trace float64
}

// dawaLambdaSteps is the λ grid of the greedy scaling: λ ∈ {0, 0.01, ...,
// 0.99}, as in the authors' code (digest §3.5). λ = 1 is excluded, so every
// leaf keeps a positive weight.
const dawaLambdaSteps = 100

// dawaMinLeafWeight is the smallest weight the greedy scaling leaves on a
// leaf (relative to the whole budget): the λ grid is cut so that no leaf
// falls below it. A leaf measured with less is useless, and the bound keeps
// every measurement's ε = c_q·ε2 a normal, valid epsilon.
const dawaMinLeafWeight = 0x1p-20

// dawaGreedyScaling chooses the weights of the tree's nodes for the
// workload seen through gram (Algorithm 2 of the paper with the corrected
// algebra of digest §3.5). Nodes are visited bottom-up; node q with
// children a, b, ... gets the λ of the grid minimizing the decayed local
// objective (Eq. 9)
//
//	f(λ) = [Σ T_c - κ(λ)·(μ‖Σ u_c‖² + (1-μ)Σ‖u_c‖²)] / (1-λ)²,
//	κ(λ) = λ² / ((1-λ)² + λ²K),   K = Σ K_c,   μ = t^(-depth/2),
//
// where T_c = tr(Ŵ_cᵀŴ_c P_c), K_c = 1ᵀP_c1 and u_c = Ŵ_c P_c 1 for the
// current inverse P_c = (Y_cᵀD_c²Y_c)⁻¹ of child c's subtree. P is never
// formed: v_c = P_c 1 is kept as a vector over the buckets (a leaf has
// v = 1, and a parent's v is α·[v_a; v_b; ...] with α = 1/((1-λ)² + λ²K)),
// so ‖Σ u_c‖² = ‖Ŵ_q [v_a; v_b; ...]‖² is one gram.norm call: O(m) for m
// explicit ranges, O(#buckets) for the implicit workloads. The state of q
// for its parent is T_q = [Σ T_c - κ(λ)‖Σ u_c‖²]/(1-λ)², K_q = αK,
// ‖u_q‖² = α²‖Σ u_c‖².
//
// Paper vs digest: the paper's Eq. (17) divides by λ⁻² + m₁ + m₂ where the
// Sherman–Morrison inverse needs λ⁻² + (1-λ)⁻²(m₁+m₂) (the slip starts in
// Eq. 12 and runs through Eqs. 18–20); we use the digest's corrected form,
// which the tests check against dense matrix inverses.
//
// A node whose every query covers all of its bins or none (gram.constant)
// cannot be told apart by the workload: the optimum is the limit λ → 1,
// measuring the node alone, so it becomes a pseudo-leaf (authors' code,
// digest §3.5) with T = ‖Ŵ[:,c]‖² for any of its buckets c and K = 1.
func dawaGreedyScaling(tr *dawaTree, gram dawaGram, branching int) dawaStrategy {
	nodes := tr.size()
	k := tr.hi[0]
	lambda := make([]float64, nodes)
	pseudo := make([]bool, nodes)
	trace := make([]float64, nodes)
	normU := make([]float64, nodes) // ‖u_q‖²
	sumV := make([]float64, nodes)  // K_q = Σ v over q's buckets
	minMult := make([]float64, nodes)
	v := make([]float64, k)
	decay := make([]float64, tr.height())
	for d := range decay {
		decay[d] = math.Pow(float64(branching), -float64(d)/2)
	}
	for q := nodes - 1; q >= 0; q-- {
		lo, hi := tr.lo[q], tr.hi[q]
		vq := v[lo:hi]
		if tr.isLeaf(q) || gram.constant(q) {
			pseudo[q] = !tr.isLeaf(q)
			for i := range vq {
				vq[i] = 1 / float64(len(vq))
			}
			trace[q] = gram.norm(q, vq)
			normU[q], sumV[q], minMult[q] = trace[q], 1, 1
			continue
		}
		var traces, norms, kSum float64
		mult := 1.0
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			traces += trace[c]
			norms += normU[c]
			kSum += sumV[c]
			mult = min(mult, minMult[c])
		}
		joint := gram.norm(q, vq)
		mu := decay[tr.depth[q]]
		best := dawaBestLambda(traces, mu*joint+(1-mu)*norms, kSum, 1-dawaMinLeafWeight/mult)
		lambda[q] = best
		alpha := 1 / ((1-best)*(1-best) + best*best*kSum)
		trace[q] = (traces - dawaKappa(best, kSum)*joint) / ((1 - best) * (1 - best))
		normU[q], sumV[q] = alpha*alpha*joint, alpha*kSum
		minMult[q] = (1 - best) * mult
		for i := range vq {
			vq[i] *= alpha
		}
	}
	return dawaStrategy{tr: tr, weight: dawaWeights(tr, lambda, pseudo), pseudo: pseudo, trace: trace[0]}
}

// dawaBestLambda returns the first λ of the grid, up to maxLambda, that
// minimizes f(λ) = (traces - κ(λ)·mixed)/(1-λ)². With a = (1-λ)², b = λ²
// and d = a + bK, f = (traces·d - b·mixed)/(a·d): candidates are compared
// by cross-multiplication, without a division per grid point.
func dawaBestLambda(traces, mixed, k, maxLambda float64) float64 {
	best, bestNum, bestDen := 0.0, traces, 1.0
	for i := 1; i < dawaLambdaSteps; i++ {
		l := float64(i) / dawaLambdaSteps
		if l > maxLambda {
			break
		}
		a, b := (1-l)*(1-l), l*l
		d := a + b*k
		num, den := traces*d-b*mixed, a*d
		if num*bestDen < bestNum*den {
			best, bestNum, bestDen = l, num, den
		}
	}
	return best
}

// dawaKappa is κ(λ) = λ²/((1-λ)² + λ²K), the Sherman–Morrison factor.
func dawaKappa(lambda, k float64) float64 {
	return lambda * lambda / ((1-lambda)*(1-lambda) + lambda*lambda*k)
}

// dawaWeights turns the λ of every node into the final weights, top-down:
// c_q = λ_q·Π_{ancestors a}(1-λ_a), and a leaf or pseudo-leaf takes all
// that is left, Π(1-λ_a). Nodes below a pseudo-leaf get 0 and are marked
// pseudo=false; only nodes reachable without crossing a pseudo-leaf count.
func dawaWeights(tr *dawaTree, lambda []float64, pseudo []bool) []float64 {
	weight := make([]float64, tr.size())
	mult := make([]float64, tr.size())
	active := make([]bool, tr.size())
	mult[0], active[0] = 1, true
	for q := range tr.size() {
		if !active[q] {
			pseudo[q] = false
			continue
		}
		if tr.isLeaf(q) || pseudo[q] {
			weight[q] = mult[q]
			continue
		}
		weight[q] = mult[q] * lambda[q]
		for c := tr.child[q]; c < tr.child[q]+tr.children[q]; c++ {
			mult[c], active[c] = mult[q]*(1-lambda[q]), true
		}
	}
	return weight
}

// dawaUniformStrategy is the H_2 strategy (Hay et al. 2010): every node of
// the tree measured with the same weight 1/h, h the tree's height, so every
// root-to-leaf path sums to at most 1.
func dawaUniformStrategy(tr *dawaTree) dawaStrategy {
	weight := make([]float64, tr.size())
	h := float64(tr.height())
	for q := range weight {
		weight[q] = 1 / h
	}
	return dawaStrategy{tr: tr, weight: weight, pseudo: make([]bool, tr.size()), trace: math.NaN()}
}
