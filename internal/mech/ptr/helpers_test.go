package ptr

import (
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/privtest"
)

// ptrData returns what a database would return for f on the sorted,
// clamped column: each window resolved with the true count, and the exact
// sum of the grid indices of the values ranked strictly between the first
// two windows.
func ptrData(f Fetch, sorted []float64) Data {
	var d Data
	for _, s := range f.Windows {
		d.Windows = append(d.Windows, mech.WindowOf(s, sorted))
	}
	if f.SumBetween {
		lw, uw := d.Windows[0].Ranks(), d.Windows[1].Ranks()
		d.SumBetween = new(big.Int)
		for i := lw.Last + 1; i < uw.First; i++ {
			d.SumBetween.Add(d.SumBetween, big.NewInt(f.Grid.Index(sorted[i-1])))
		}
	}
	return d
}

// ptrGaussian returns n sorted standard normal values.
func ptrGaussian(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	slices.Sort(xs)
	return xs
}

// ptrConstant returns n copies of v.
func ptrConstant(n int, v float64) []float64 { return slices.Repeat([]float64{v}, n) }

// ptrHeavy reports whether the heavier statistical runs are enabled
// (DPPROXY_PTR_HEAVY=1 and not -short).
func ptrHeavy() bool { return !testing.Short() && os.Getenv("DPPROXY_PTR_HEAVY") == "1" }

// ptrMedianCI returns the distribution-free confidence interval for the
// median of a sample (sorted in place) at two-sided level 1 − 10⁻⁶: the
// order statistics R/2 ∓ privtest.Z6·√R/2 (normal approximation of the binomial
// count below the median).
func ptrMedianCI(xs []float64) (lo, hi float64) {
	slices.Sort(xs)
	r := float64(len(xs))
	half := privtest.Z6 * math.Sqrt(r) / 2
	i, j := int(math.Floor(r/2-half)), int(math.Ceil(r/2+half))
	return xs[max(i, 0)], xs[min(j, len(xs)-1)]
}

// ptrMedianOf returns the median of xs (sorted in place).
func ptrMedianOf(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
