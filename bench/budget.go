package bench

import (
	"github.com/dpproxy/dpproxy/internal/mech/laplace"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// CountShare is the budget rule the proxy applies to a mechanism that needs
// a noisy count ñ (sensitivity preprocessing, whose Δ is (U−L)/ñ or
// (U−L)²/ñ): it spends CountShare·ε on ñ, a discrete-Laplace count
// (laplace.ReleaseCount), and the rest on the statistic. A mechanism that needs
// no ñ gets the whole ε (the Laplace baselines split their ε internally).
// The benchmark measures every candidate under this rule, so its numbers
// are those of the product.
const CountShare = 0.1

// countEpsilon and statisticEpsilon split ε by CountShare.
func countEpsilon(epsilon float64) float64     { return CountShare * epsilon }
func statisticEpsilon(epsilon float64) float64 { return (1 - CountShare) * epsilon }

// noisyCount releases ñ for column d with countEpsilon(ε), as the proxy does
// before a mechanism that needs it.
func noisyCount(src noise.Source, d *Dataset, epsilon float64) (int64, error) {
	c, err := laplace.ReleaseCount(src, int64(len(d.Values)), countEpsilon(epsilon))
	if err != nil {
		return 0, err
	}
	return int64(c.Value()), nil
}
