package histogram

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// dawaNoisyCostParams configures stage 1 by noisy costs (the paper's
// Algorithm 1).
type dawaNoisyCostParams struct {
	// eps1 is stage 1's budget; eps2 only sets the per-bucket penalty 1/ε2.
	eps1, eps2 float64
	// allIntervals uses every interval as a candidate (n ≤ 2^13); by
	// default only lengths that are powers of two.
	allIntervals bool
	// offset is the public per-bucket price κ in units of the bucket's
	// noise scale (digest §2.10.3, design C2); 0 is the paper's cost.
	offset float64
	// unitBits overrides dawaCostUnitBits (0: the constant). The privacy
	// proof holds for every unit; the exact check uses a coarse one so
	// that the noise's support can be summed.
	unitBits int
}

// dawaCostUnitBits sets the integer unit of stage 1's costs: 2^-24 of the
// smallest noise scale, so rounding costs to the unit changes nothing
// visible while every quantity stays an exact integer.
const dawaCostUnitBits = 24

// dawaCostCap caps a bucket's deviation in units (about 2^32 noise scales,
// far beyond any cost the argmin could prefer to the singletons): capping
// a cost, min(dev, cap), keeps its sensitivity and bounds every noisy cost.
const dawaCostCap = 1 << 56

// dawaNoisyCostPartition is DAWA's stage 1 as the paper states it
// (Algorithm 1 with the per-bucket noise of the Remark after Theorem 2),
// made exact: it returns the starts of the partition of the bins with the
// least noisy cost. It is ε1-differentially private under add/remove of one
// row. None of the shortcuts of the authors' released code is taken (no
// clamp of noisy costs at 1/ε2, no noise-free singletons, no halved scale):
// each breaks ε1-DP (digest §0.1 and §2.9; dawa_privacy_test.go shows it).
//
// The algorithm. Candidates 𝓑 are the intervals whose length l is a power
// of two (or every length), at every start. All quantities are integers in
// a public unit u = 2^-a (a from the smallest noise scale). Bucket b of
// length l has cost
//
//	c_b(x) = min(⌊dev(x̄, b)/u⌋, cap) + ⌊1/(ε2·u)⌉ + ⌊κ·β_l⌉,
//
// where x̄ is x with every bin clamped to [0, 2^36] and dev(x̄, b) =
// Σ_{j∈b} |x̄_j - mean_b|. Every candidate gets an independent discrete
// Laplace draw Z_b of scale β_l ≥ (D* + D_l)/ε1, where
// D_l = ⌈2(1-1/l)/u⌉ and D* = max_l D_l. The output is
// argmin_B Σ_{b∈B} (c_b(x) + Z_b) over the partitions B of the bins into
// candidates, ties broken by a fixed order of the partitions
// (dawaLeastCostPartition), computed exactly. Only the partition is
// released.
//
// Sensitivity. Adding one row at bin p moves the mean of a window b ∋ p by
// at most 1/l: term p of dev changes by at most 1 - 1/l and each other term
// by at most 1/l, so |dev(x,b) - dev(x',b)| ≤ 2(1 - 1/l) (tight at
// 0 → e_p; the paper only claims ≤ 2). Clamping bins, the cap and the
// floor keep this: |c_b(x) - c_b(x')| ≤ D_b, and windows not containing p
// do not change.
//
// Proof of ε1-DP (Theorem 2 of the paper, restated for integers). Fix an
// output B, neighbours x, x' differing at bin p, and let b_i ∈ B be the
// bucket containing p. Fix all draws but Z_i. (a) Whether B beats the other
// partitions containing b_i does not depend on Z_i (it adds to both sides)
// nor on x vs x' (their other buckets avoid p). (b) B beats a partition B'
// not containing b_i, under the fixed tie order, iff Z_i ≤ t(B') for an
// integer t(B') that changes by at most D_{b_i} + D* between x and x' (B's
// own cost moves by D_{b_i}, and B' has exactly one bucket containing p,
// whose cost moves by at most D*). So B is output iff (a) holds and
// Z_i ≤ T = min_{B'} t(B'), and T(x') ≥ T(x) - (D_{b_i} + D*). The
// discrete Laplace CDF satisfies F(t - 1) ≥ e^{-1/β}·F(t) for every integer
// t (equality for t ≤ 0, where the tail is geometric; for t > 0,
// P[Z = t]/F(t) ≤ r^t(1-r) ≤ 1-r), hence F(T - D) ≥ e^{-D/β_i}·F(T) ≥
// e^{-ε1}·F(T). Integrating over the other draws gives
// P[B | x'] ≥ e^{-ε1}·P[B | x], and symmetrically. The proof uses only
// the independence of the draws and this left-tail property; it is why
// the noise must reach every candidate (singletons included) and why no
// noisy cost may be clamped before the argmin. Data-independent offsets
// (the penalty, κ·β_l) and a data-independent candidate set leave every
// step unchanged. Exact integer arithmetic means the implementation is the
// analysed algorithm: no rounding can break a tie differently on x and x'.
//
// Accuracy warning (digest §0.1, warning 2). With this noise the argmin
// harvests negative draws and returns thousands of buckets on 4096 bins at
// the paper's budget split; a positive offset κ tempers that. The
// deviation tree and the noise-first tests (DAWA's other methods) do better.
func dawaNoisyCostPartition(src noise.Source, x []int64, p dawaNoisyCostParams) ([]int, error) {
	n := len(x)
	if n == 1 {
		return []int{0}, nil
	}
	table, err := newDawaCostTable(x, p)
	if err != nil {
		return nil, err
	}
	costs := newDawaNoisyCosts(n, table.lengths)
	for li := range table.lengths {
		for i, c := range table.cost[li] {
			negative, magnitude := table.noise[li].Sample(src)
			z := exact.Int128{Hi: int64(magnitude.Hi), Lo: magnitude.Lo}
			if negative {
				z = z.Neg()
			}
			costs.set(li, i, exact.Int(c).Add(z))
		}
	}
	return dawaLeastCostPartition(costs), nil
}

// dawaCostTable is stage 1's noise-free part: the candidate lengths, each
// candidate's cost c_b (deviation, penalty and offset, in units) and the
// discrete Laplace noise of each length.
type dawaCostTable struct {
	lengths []int
	cost    [][]int64
	noise   []noise.Dlap
}

// newDawaCostTable returns the cost table of x for p (n ≥ 2).
func newDawaCostTable(x []int64, p dawaNoisyCostParams) (dawaCostTable, error) {
	n := len(x)
	if p.allIntervals && n > 1<<13 {
		return dawaCostTable{}, fmt.Errorf("%w: all-interval candidates need n ≤ 8192 bins, got %d", mech.ErrInvalidInput, n)
	}
	lengths := dawaCandidateLengths(n, p.allIntervals)
	longest := float64(lengths[len(lengths)-1])
	// Unit u = 2^-a with the smallest noise scale, Δ*/ε1, at ≥ 2^24 units.
	unitBits := dawaCostUnitBits
	if p.unitBits != 0 {
		unitBits = p.unitBits
	}
	a := unitBits - math.Ilogb(2*(1-1/longest)/p.eps1)
	sensitivity := make([]uint64, len(lengths))
	for li, l := range lengths {
		sensitivity[li] = dawaDevSensitivity(uint64(l), a)
	}
	dStar := sensitivity[len(lengths)-1]
	penalty := math.Round(math.Ldexp(1/p.eps2, a))
	if !(penalty < 1<<60) {
		return dawaCostTable{}, fmt.Errorf("%w: stage-1 penalty 1/ε2 = %v too large for ε1 = %v", mech.ErrInvalidEpsilon, 1/p.eps2, p.eps1)
	}
	t := dawaCostTable{lengths: lengths, cost: make([][]int64, len(lengths)), noise: make([]noise.Dlap, len(lengths))}
	for li, l := range lengths {
		noise, err := noise.NewDlap(dStar+sensitivity[li], p.eps1)
		if err != nil {
			return dawaCostTable{}, err
		}
		t.noise[li] = noise
		base := int64(penalty) + int64(math.Round(p.offset*noise.Scale()))
		for _, dev := range dawaDevCosts(x, l, a, dawaCostCap) {
			t.cost[li] = append(t.cost[li], base+int64(dev))
		}
	}
	return t, nil
}

// dawaDevSensitivity returns D_l = ⌈2(1-1/l)·2^a⌉, the sensitivity of a
// length-l bucket's deviation in units 2^-a (0 for l = 1).
func dawaDevSensitivity(l uint64, a int) uint64 {
	if l == 1 {
		return 0
	}
	if a+1 < 0 { // 2(1-1/l)·2^a < 1
		return 1
	}
	num := (l - 1) << (a + 1) // a ≤ 31 and l ≤ 2^26: no overflow
	return (num + l - 1) / l
}
