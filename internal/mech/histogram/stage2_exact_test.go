package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Exact privacy check of the measurements of Identity, H2, Greedy-H and
// DAWA's stage 2 (dawaRelease), and its mutation check.
//
// Adding or removing one row changes one bucket count by 1, hence the true
// total of every node on its root path by 1. Each active node q of weight
// w_q is released by noise.Laplace(1, w'_q·ε·(1 − 2^-40)) (w' the weight
// rounded down, dawaRoundWeightDown): a discrete Laplace on the grid gℤ
// with integer scale β, whose exact loss for centres one apart is
// (⌊1/g⌋ + 1)/β. The release's exact loss is the largest sum of these over
// a bucket's root path (the draws are independent, so the losses add and
// the sum is attained by the output set where every node's noise sits on
// the far side of both centres). Identity's loss is 1/β of its discrete
// Laplace. The check asserts the loss ≤ ε for the uniform strategy (H2)
// and the greedy strategies of several workloads on every bucket count
// up to 64; built for ε·4/3 while claiming ε it must fail.

// stage2Loss returns the worst path loss of strategy st released at ε.
func stage2Loss(st dawaStrategy, epsilon float64) (float64, error) {
	tr := st.tr
	active := dawaActive(tr, st.pseudo)
	nodeLoss := make([]float64, tr.size())
	for q := range tr.size() {
		if !active[q] || st.weight[q] == 0 {
			continue
		}
		l, err := noise.NewLaplace(1, dawaRoundWeightDown(st.weight[q])*epsilon*dawaBudgetSlack)
		if err != nil {
			return 0, err
		}
		nodeLoss[q] = (math.Floor(1/l.Granularity()) + 1) / (l.Scale() / l.Granularity())
	}
	worst := 0.0
	for c := 0; c < tr.hi[0]; c++ {
		sum := 0.0
		for q := range tr.size() {
			if tr.lo[q] <= c && c < tr.hi[q] {
				sum += nodeLoss[q]
			}
		}
		worst = max(worst, sum)
	}
	return worst, nil
}

// stage2Strategies returns the strategies checked over k buckets: the
// uniform binary tree (H2) and the greedy strategies (Greedy-H, DAWA's
// stage 2) for all ranges, prefixes, the identity and random ranges, with
// branching 2 and 4.
func stage2Strategies(t *testing.T, k int, rng *rand.Rand) map[string]dawaStrategy {
	out := map[string]dawaStrategy{fmt.Sprintf("h2/%d", k): dawaUniformStrategy(newDawaTree(k, 2))}
	starts := identityStarts(k)
	ranges := []Range{{Lo: 0, Hi: rng.IntN(k)}}
	for range 5 {
		a, b := rng.IntN(k), rng.IntN(k)
		ranges = append(ranges, Range{Lo: min(a, b), Hi: max(a, b)})
	}
	random, err := RangesWorkload(k, ranges)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := AllRangesWorkload(k)
	prefix, _ := PrefixWorkload(k)
	identity, _ := IdentityWorkload(k)
	for name, w := range map[string]Workload{"all": all, "prefix": prefix, "identity": identity, "random": random} {
		for _, branching := range []int{2, 4} {
			tr := newDawaTree(k, branching)
			out[fmt.Sprintf("greedy/%s/b%d/%d", name, branching, k)] = dawaGreedyScaling(tr, newDawaGram(w, starts, tr), branching)
		}
	}
	return out
}

// TestStage2ExactPrivacy: every strategy's exact loss (and Identity's) is
// at most ε, and built for ε·4/3 (noise scales cut by 25%) it exceeds ε:
// the mutation check (the weights on a root path sum to 1, so the bound
// is attained up to the 12-bit rounding of the weights).
func TestStage2ExactPrivacy(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, eps := range []float64{0.01, 0.5, 1, 8} {
		worst, mutatedLeast := 0.0, math.Inf(1)
		for k := 1; k <= 64; k++ {
			for name, st := range stage2Strategies(t, k, rng) {
				loss, err := stage2Loss(st, eps)
				if err != nil {
					t.Fatal(err)
				}
				if loss > eps {
					t.Errorf("%s at ε = %v: exact loss %v", name, eps, loss)
				}
				worst = max(worst, loss)
				mutated, err := stage2Loss(st, eps*4/3)
				if err != nil {
					t.Fatal(err)
				}
				if mutated <= eps {
					t.Errorf("%s at ε = %v built for 4ε/3: exact loss %v within ε, the check cannot see it", name, eps, mutated)
				}
				mutatedLeast = min(mutatedLeast, mutated)
			}
		}
		d, err := noise.NewDiscreteLaplace(1, eps)
		if err != nil {
			t.Fatal(err)
		}
		dm, _ := noise.NewDiscreteLaplace(1, eps*4/3)
		if 1/d.Scale() > eps || 1/dm.Scale() <= eps {
			t.Errorf("identity at ε = %v: exact loss %v, built for 4ε/3 %v", eps, 1/d.Scale(), 1/dm.Scale())
		}
		t.Logf("ε = %v: worst exact stage-2 loss %.6f; built for 4ε/3 the least loss %.6f; identity %.6f", eps, worst, mutatedLeast, 1/d.Scale())
	}
}
