package histogram

import (
	"math/rand/v2"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// Sampled audits of every release through the entry point production
// calls, each at the share of ε its proof gives it, on a pair where that
// release's loss reaches its share: a noise cut by 25% anywhere between
// the entry point and the sampler (the ε a mechanism hands to its stage,
// the stage to its noise, or the noise's own scale) fails the audit. The
// exact checks (stage2_exact_test.go, stage1_exact_test.go,
// counts_test.go) compute the loss of the noise each helper builds for a
// given ε; these audits check the ε the mechanisms actually hand them.
//
// The pairs. On one bin, Identity, H2 and Greedy-H measure the bin once
// with all of ε (one tree node of weight 1), and the synopsis is that
// measurement: the Laplace tails give the loss ε exactly. DAWA's synopsis
// mixes its stages by least squares, whose loss is below the stages' sum,
// so each stage is audited on its own: stage 2 on one bin with the noisy
// histogram kept out of the estimate (IgnoreNoisyHistogram, which changes
// nothing else); stage 1's noisy histogram through dawaPartition on one
// bin, its observation of the bin being that Laplace release; the
// deviation tree through DAWA on 65 bins (one measured node, the root:
// every child is at most 64 bins), all zero against one row in bin 0,
// the output whether the root was merged (one bucket). The merge
// threshold there is one noise scale, twice the root's deviation at the
// tree's share 0.5, so the split event sits in the noise's geometric
// tail, where the likelihood ratio is e^(loss) exactly.
//
// False rejections: each audit fails a correct release with probability
// at most 10⁻³ (privtest's 99.9% bound), so each test (three audits) at
// most 3·10⁻³; the seeds are fixed, so the outcome is deterministic.
// Mutations checked: ε·4/3 handed to NoisyCells by Identity, to the
// stage-2 release by Greedy-H, H2 and DAWA, to dawaPartition by DAWA, to
// the noisy histogram and to the deviation tree by dawaPartition, and
// inside dawaRelease and countNoise each fail their audit (lower bounds
// about 1.3 against a claim of 1; 0.62 against 0.5 for the tree).
func TestAuditBaselinesAtTheirShares(t *testing.T) {
	one, err := AllRangesWorkload(1)
	if err != nil {
		t.Fatal(err)
	}
	auditShares(t, []shareAudit{
		{"identity", 1, privtest.AuditSamples, privtest.IntegerEdges(-12, 13), func(src rand.Source, h []int64) (float64, error) {
			return binTotal(Identity(src, h, 1))
		}},
		{"greedy-h", 1, privtest.AuditSamples, nil, func(src rand.Source, h []int64) (float64, error) {
			return binTotal(GreedyH(src, h, one, 1))
		}},
		{"h2", 1, privtest.AuditSamples, nil, func(src rand.Source, h []int64) (float64, error) {
			return binTotal(H2(src, h, 1))
		}},
	}, []int64{0}, []int64{1})
}

func TestAuditDAWAStagesAtTheirShares(t *testing.T) {
	one, err := AllRangesWorkload(1)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := IdentityWorkload(65)
	if err != nil {
		t.Fatal(err)
	}
	// Stage 2 at ε = 4/3: ε2 = 1. Stage 1 at ε1 = 5/3: 2/3 for the
	// deviation tree, 1 for the noisy histogram. The deviation tree
	// through DAWA at ε = 5: ε1 = 1.25, 0.5 for the tree.
	shares := func(epsilon float64) (tree, noisy, eps1, eps2 float64) {
		eps1, eps2, err := dawaSplit(epsilon, DefaultDAWARho)
		if err != nil {
			t.Fatal(err)
		}
		tree, noisy, err = dawaSplit(eps1, dawaDevTreeShare)
		if err != nil {
			t.Fatal(err)
		}
		if tree+noisy+eps2 > epsilon {
			t.Fatalf("DAWA's shares %v + %v + %v exceed ε = %v", tree, noisy, eps2, epsilon)
		}
		return tree, noisy, eps1, eps2
	}
	_, _, _, stage2 := shares(4.0 / 3)
	_, noisy, eps1, eps2 := shares(5.0 / 3 / DefaultDAWARho)
	tree, _, _, _ := shares(5)
	zero, row := []int64{0}, []int64{1}
	zeros, first := make([]int64, 65), make([]int64, 65)
	first[0] = 1
	auditShares(t, []shareAudit{
		{"stage 2", stage2, 100000, nil, func(src rand.Source, h []int64) (float64, error) {
			return binTotal(DAWA(src, h, one, 4.0/3, DAWAOptions{IgnoreNoisyHistogram: true}))
		}},
		{"noisy histogram", noisy, 100000, nil, func(src rand.Source, h []int64) (float64, error) {
			_, observed, err := dawaPartition(src, h, eps1, eps2, DAWAOptions{})
			if err != nil {
				return 0, err
			}
			return observed.value[0], nil
		}},
	}, zero, row)
	auditShares(t, []shareAudit{
		{"deviation tree", tree, 100000, []float64{0.5}, func(src rand.Source, h []int64) (float64, error) {
			s, err := DAWA(src, h, wide, 5, DAWAOptions{})
			if err != nil || s.Buckets() > 1 {
				return 0, err
			}
			return 1, nil
		}},
	}, zeros, first)
}

// shareAudit is one release audited at its share: the claimed ε, the
// runs per dataset, the audit's bucket edges (nil: from a pilot run) and
// the release's output on a histogram.
type shareAudit struct {
	name    string
	claim   float64
	samples int
	edges   []float64
	run     func(src rand.Source, h []int64) (float64, error)
}

// auditShares audits each release on the neighbours d and d2.
func auditShares(t *testing.T, audits []shareAudit, d, d2 []int64) {
	t.Helper()
	for _, a := range audits {
		t.Run(a.name, func(t *testing.T) {
			cfg := privtest.Config{Epsilon: a.claim, Samples: a.samples, Seed: privtest.Seed(t, 0xf5), Edges: a.edges}
			privtest.Audit(t, cfg, func(src rand.Source, nb int) float64 {
				v, err := a.run(src, [][]int64{d, d2}[nb])
				if err != nil {
					t.Fatal(err)
				}
				return v
			})
		})
	}
}

// binTotal is the released total of a one-bin synopsis.
func binTotal(s *Synopsis, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	return s.RangeSum(0, 0), nil
}
