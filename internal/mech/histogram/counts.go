package histogram

import "github.com/dpproxy/dpproxy/internal/mech/noise"

// NoisyRowCount releases the row count n of a histogram as
// n̂ = max(n + Z, 1), Z ~ DLap(β) on the integers with β ≥ 1/ε (countNoise):
// the interactive instance's n̂, which chooses its mechanism and is the
// Median Mechanism's row count.
//
// Guarantee: ε-DP under adding or removing one row. Derivation: a row
// changes n by exactly 1, and P[Z = z] ∝ exp(−|z|/β), so at every output
// y > 1 the laws of n + Z and n + 1 + Z differ by a factor of at most
// exp(1/β) ≤ exp(ε); the clamp to 1 merges the outputs ≤ 1 into one atom,
// post-processing that keeps the bound. With at most k rows of a privacy
// unit counted, the caller runs it at ε/k per row (group privacy).
// counts_test.go checks the exact law.
func NoisyRowCount(src noise.Source, n int64, epsilon float64) (int64, error) {
	d, err := countNoise(epsilon)
	if err != nil {
		return 0, err
	}
	return max(d.Release(src, n), 1), nil
}

// NoisyCells releases every cell count c_x of a histogram as c_x + Z_x,
// with independent Z_x ~ DLap(β), β ≥ 1/ε (countNoise), drawn in cell
// order: the interactive instance's noisy histogram, and Identity's bins.
//
// Guarantee: ε-DP under adding or removing one row. Derivation: a row is
// in one cell, so one count changes by exactly 1 and the others not; the
// other cells' laws are equal and that cell's differ by a factor of at
// most exp(1/β) ≤ exp(ε) at every output. With at most k rows of a
// privacy unit counted, the caller runs it at ε/k per row (group
// privacy). counts_test.go checks the exact law.
func NoisyCells(src noise.Source, cells []int64, epsilon float64) ([]int64, error) {
	d, err := countNoise(epsilon)
	if err != nil {
		return nil, err
	}
	noisy := make([]int64, len(cells))
	for x, c := range cells {
		noisy[x] = d.Release(src, c)
	}
	return noisy, nil
}

// countNoise returns the noise of NoisyRowCount and NoisyCells: the
// discrete Laplace of sensitivity 1 at ε. The exact checks read the noise
// it builds.
func countNoise(epsilon float64) (*noise.DiscreteLaplace, error) {
	return noise.NewDiscreteLaplace(1, epsilon)
}
