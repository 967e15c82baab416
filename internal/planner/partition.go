package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// PartitionSelection chooses which values of a GROUP BY column without a
// declared domain are released: the keys whose count plus discrete Laplace
// noise reaches a threshold (Laplace thresholding, as in Google's and
// SmartNoise's DP SQL engines).
//
// Guarantee: (ε, δ)-DP for the set of released keys under add/remove of
// one row, each row having one key. Let Z ~ DLap(β) on the integers,
// P[Z = z] = (1-r)/(1+r)·r^|z|, r = e^(-1/β), β ≥ 1/ε (the count's noise,
// noise.DiscreteLaplace with Δ = 1); a key of count n ≥ 1 is kept when
// n + Z ≥ T, independently of the other keys. A neighbour changes one
// key's count by one. If that key has n ≥ 1 rows in both datasets, the
// keep and drop probabilities change by a factor at most e^(1/β) ≤ e^ε
// (the discrete Laplace ratio). If it has none in one of them, it is never
// released there, and released in the other with probability
// P[1 + Z ≥ T] = P[Z ≥ T-1] = r^(T-1)/(1+r), which T makes at most δ:
// T = 2 + ⌈β·ln(1/(δ(1+r)))⌉, one step above the smallest admissible
// threshold so that floating-point error in the logarithm cannot matter.
// The released keys then index groups whose aggregates are released with
// the rest of the statement's ε by parallel composition (each row in one
// group); the statement costs the sum (sequential composition).
//
// Variant and why: plain thresholding of a noisy count. The optimal
// partition selection of Desfontaines et al. (PETS 2022) releases a key
// with n = 1 with probability exactly δ and keeps slightly more keys near
// the threshold, and Gaussian thresholding helps when one row may touch
// several keys; with one key per row the gain of either is a fraction of
// a noise scale in the threshold, while thresholding reuses the exact
// integer discrete Laplace sampler and has a closed-form law, which the
// exact privacy check (partition_test.go) evaluates.
//
// On a table with a privacy unit (neighbours differ by all rows of one
// unit) the count of a key is its number of distinct units, read from
// rows bounded in the database so that each unit keeps at most g =
// max_groups_per_unit of its keys, chosen by a keyed hash independently
// of the values (sqlrewrite.UnitBound.Key, KeyCounts at one row per unit):
// a unit adds exactly 1 to the count of each of at most g keys and
// nothing to any other (the other units' choices depend only on their own
// rows and the salt). Each key is then selected at its share ε/g, δ/g
// (mech.EvenShare) by the rule above: β ≥ g/ε and T for δ/g. Guarantee:
// (ε, δ)-DP for the set of released keys under add/remove of one unit.
// Derivation: the keys' draws are independent, and those of the keys the
// unit does not touch have the same law on both neighbours. Of the j ≤ g
// keys it touches, a key with n ≥ 1 units in both is (ε/g, 0)-DP (the
// ratio above, at scale β ≥ g/ε); a key with units only in the larger
// neighbour is never released in the smaller and released in the larger
// with probability p = P[Z ≥ T-1] ≤ δ/g, so for every event S of its
// draw P(S) ≤ P'(S) + p in both directions: (0, δ/g)-DP. The released set
// is a function of the independent draws, so basic composition over the j
// touched keys gives (j·ε/g, j·δ/g) ⊆ (ε, δ). The exact check
// (TestUnitPartitionSelectionExact) computes the law of the released
// subset of the touched keys on both neighbours for every mix of fresh and
// shared keys and finds the loss within (ε, δ); calibrated as for g = 1 it
// is not. This is the split-share calibration; an L0-aware one (Gaussian
// thresholding on the L2 sensitivity √g) would need a Gaussian sampler
// and a numerically evaluated law, and gains only for large g.
type PartitionSelection struct {
	Column *catalog.Column
	// Epsilon and Delta are what the selection spends in all.
	Epsilon float64
	Delta   float64
	// KeysPerUnit is g, the most keys whose counts one neighbour step
	// changes (by one each): 1 on a row-level table (a row has one key),
	// max_groups_per_unit on a unit table. KeyEpsilon and KeyDelta are each
	// key's share of Epsilon and Delta (÷ g), which the noise and the
	// threshold are calibrated for.
	KeysPerUnit          int64
	KeyEpsilon, KeyDelta float64
	Threshold            int64
	noise                *noise.DiscreteLaplace
}

// newPartitionSelection returns the selection for ε > 0 and δ in (0, 1)
// when one neighbour step changes the counts of at most keysPerUnit ≥ 1
// keys by one each.
func newPartitionSelection(col *catalog.Column, epsilon, delta float64, keysPerUnit int64) (*PartitionSelection, error) {
	if keysPerUnit < 1 || keysPerUnit > catalog.MaxGroupsPerUnitLimit {
		return nil, fmt.Errorf("planner: partition selection needs 1 to %d keys per unit, got %d", catalog.MaxGroupsPerUnitLimit, keysPerUnit)
	}
	keyEpsilon, keyDelta := mech.EvenShare(epsilon, int(keysPerUnit)), mech.EvenShare(delta, int(keysPerUnit))
	d, err := noise.NewDiscreteLaplace(1, keyEpsilon)
	if err != nil {
		return nil, err
	}
	if !(delta > 0 && delta < 1) || !(keyDelta > 0) {
		return nil, fmt.Errorf("planner: partition selection needs δ in (0, 1), got %g", delta)
	}
	beta := d.Scale()
	r := math.Exp(-1 / beta)
	m := math.Ceil(beta * math.Log(1/(keyDelta*(1+r))))
	if m < 0 {
		m = 0
	}
	if m > 1<<40 {
		return nil, fmt.Errorf("planner: partition selection threshold too large (ε = %g, δ = %g)", epsilon, delta)
	}
	return &PartitionSelection{Column: col, Epsilon: epsilon, Delta: delta, KeysPerUnit: keysPerUnit,
		KeyEpsilon: keyEpsilon, KeyDelta: keyDelta, Threshold: 2 + int64(m), noise: d}, nil
}

// Scale is β, the scale of the selection's discrete Laplace noise.
func (ps *PartitionSelection) Scale() float64 { return ps.noise.Scale() }

// Keep draws the selection for a key with n ≥ 1 rows (units, on a unit
// table).
func (ps *PartitionSelection) Keep(src noise.Source, n int64) bool {
	return ps.noise.Release(src, n) >= ps.Threshold
}

// KeepProbability is the exact probability that Keep keeps a key of n
// rows, from the closed form of the discrete Laplace (EXPLAIN shows it
// for one row): P[Z ≥ T-n], P[Z ≥ m] = r^m/(1+r) for m ≥ 1, 1 - r^(1-m)/(1+r)
// for m ≤ 0.
func (ps *PartitionSelection) KeepProbability(n int64) float64 {
	return dlapTail(ps.Scale(), ps.Threshold-n)
}

// dlapTail is P[Z ≥ m] for Z ~ DLap(β).
func dlapTail(beta float64, m int64) float64 {
	r := math.Exp(-1 / beta)
	if m >= 1 {
		return math.Pow(r, float64(m)) / (1 + r)
	}
	return 1 - math.Pow(r, float64(1-m))/(1+r)
}
