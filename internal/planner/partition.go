package planner

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/catalog"
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
type PartitionSelection struct {
	Column    *catalog.Column
	Epsilon   float64
	Delta     float64
	Threshold int64
	noise     *noise.DiscreteLaplace
}

// newPartitionSelection returns the selection for ε > 0 and δ in (0, 1).
func newPartitionSelection(col *catalog.Column, epsilon, delta float64) (*PartitionSelection, error) {
	d, err := noise.NewDiscreteLaplace(1, epsilon)
	if err != nil {
		return nil, err
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("planner: partition selection needs δ in (0, 1), got %g", delta)
	}
	beta := d.Scale()
	r := math.Exp(-1 / beta)
	m := math.Ceil(beta * math.Log(1/(delta*(1+r))))
	if m < 0 {
		m = 0
	}
	if m > 1<<40 {
		return nil, fmt.Errorf("planner: partition selection threshold too large (ε = %g, δ = %g)", epsilon, delta)
	}
	return &PartitionSelection{Column: col, Epsilon: epsilon, Delta: delta, Threshold: 2 + int64(m), noise: d}, nil
}

// Scale is β, the scale of the selection's discrete Laplace noise.
func (ps *PartitionSelection) Scale() float64 { return ps.noise.Scale() }

// Keep draws the selection for a key with n ≥ 1 rows.
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
