package histogram

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Exact privacy check of the measurements of Identity, H2, Greedy-H,
// DAWA's stage 2 (dawaRelease) and stage 1's noisy histogram, and its
// mutation check. Every loss is that of the noise production builds
// (dawaNodeNoise, countNoise for Identity, dawaNoisyHistogramNoise), so a
// noise cut
// there fails the check.
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
// Laplace, and the noisy histogram's that of its Laplace for centres one
// apart (one bin changes). The check asserts the loss ≤ ε for the uniform strategy (H2)
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
		l, err := dawaNodeNoise(st.weight[q], epsilon)
		if err != nil {
			return 0, err
		}
		nodeLoss[q] = laplaceShiftLoss(l, 1)
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

// TestStage2ExactPrivacy: every strategy's exact loss (and Identity's, and
// stage 1's noisy histogram's) is at most ε, and built for ε·4/3 (noise scales cut by 25%) it exceeds ε:
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
		identity, err := identityLoss(eps)
		if err != nil {
			t.Fatal(err)
		}
		identityMutated, err := identityLoss(eps * 4 / 3)
		if err != nil {
			t.Fatal(err)
		}
		if identity > eps || identityMutated <= eps {
			t.Errorf("identity at ε = %v: exact loss %v, built for 4ε/3 %v", eps, identity, identityMutated)
		}
		noisy, err := noisyHistogramUnitLoss(8, eps, 1)
		if err != nil {
			t.Fatal(err)
		}
		noisyMutated, err := noisyHistogramUnitLoss(8, eps*4/3, 1)
		if err != nil {
			t.Fatal(err)
		}
		if noisy > eps || noisyMutated <= eps {
			t.Errorf("stage 1's noisy histogram at ε = %v: exact loss %v, built for 4ε/3 %v", eps, noisy, noisyMutated)
		}
		t.Logf("ε = %v: worst exact stage-2 loss %.6f; built for 4ε/3 the least loss %.6f; identity %.6f (4ε/3: %.6f); noisy histogram %.6f (4ε/3: %.6f)",
			eps, worst, mutatedLeast, identity, identityMutated, noisy, noisyMutated)
	}
}

// identityLoss returns the exact loss of Identity's noise (countNoise,
// through NoisyCells)
// built for epsilon on neighbours: one bin's count changes by 1, every
// other bin is the same.
func identityLoss(epsilon float64) (float64, error) {
	d, err := countNoise(epsilon)
	if err != nil {
		return 0, err
	}
	return dlapShiftLoss(d, 1), nil
}
