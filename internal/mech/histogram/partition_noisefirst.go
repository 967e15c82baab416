package histogram

import (
	"math"
	"slices"
)

// dawaNoiseFirstParams are the public constants of the noise-first
// partition (digest §2.10.2, design C1). Any values keep the guarantee;
// they only trade detail against noise.
type dawaNoiseFirstParams struct {
	// maxBucket (Lcap) cuts the bins into public chunks: no bucket is
	// longer, which bounds the damage of a trend the tests cannot see.
	maxBucket int
	// minBlock (Lmin): a block shorter than this that fails is split
	// into single bins.
	minBlock int
	// z is the one-sided normal quantile of the deviation test, and
	// alpha the level of the maximum test: each test wrongly rejects a
	// uniform block with probability about alpha.
	z, alpha float64
	// trend is the number of standard deviations a sub-block sum may
	// stray from its share of the block sum.
	trend float64
}

// dawaDefaultNoiseFirst are the digest's parameters: Lcap = 128, Lmin = 8,
// α = 0.05, q = 2.
var dawaDefaultNoiseFirst = dawaNoiseFirstParams{maxBucket: 128, minBlock: 8, z: 1.6448536269514722, alpha: 0.05, trend: 2}

// dawaNoiseFirstPartition is stage 1 by noise first: it returns the starts
// of a partition chosen from the noisy histogram alone. It never sees the
// data: its only input is noisy, the histogram with independent Laplace
// noise of scale beta on every bin (released by the caller with the
// Laplace mechanism at ε1; sensitivity 1 under add/remove, so ε1-DP), and
// the partition is post-processing of that release. No brute-force privacy
// test is needed; the signature is the invariant.
//
// The procedure (digest design C1): cut the bins into public chunks of
// maxBucket; split a block in halves until it looks uniform, that is until
// its noisy values pass all of
//   - D = Σ|s_j - med| ≤ (L + z√L)·β, and M = max|s_j - med| ≤ qM(L)·β,
//     with qM(L) = -ln(1 - (1-α)^(1/L)): the (1-α) quantiles for L
//     independent Laplace draws (the closed forms match Monte Carlo
//     quantiles within 2% for 8 ≤ L ≤ 1024);
//   - for the halves and the quarters S of the block,
//     |Σ_S s - (|S|/L)·Σ s| ≤ trend·√(2|S|)·β (a trend test);
//
// a block shorter than minBlock that fails becomes single bins.
func dawaNoiseFirstPartition(noisy []float64, beta float64, p dawaNoiseFirstParams) []int {
	var starts []int
	scratch := make([]float64, 0, p.maxBucket)
	var split func(lo, hi int)
	split = func(lo, hi int) {
		if dawaLooksUniform(noisy[lo:hi], beta, p, scratch) {
			starts = append(starts, lo)
			return
		}
		if hi-lo < p.minBlock {
			for j := lo; j < hi; j++ {
				starts = append(starts, j)
			}
			return
		}
		mid := lo + (hi-lo)/2
		split(lo, mid)
		split(mid, hi)
	}
	for lo := 0; lo < len(noisy); lo += p.maxBucket {
		split(lo, min(lo+p.maxBucket, len(noisy)))
	}
	return starts
}

// dawaLooksUniform applies the tests of dawaNoiseFirstPartition to a block
// of noisy values. A single bin is always uniform; a block below minBlock
// is tested like any other.
func dawaLooksUniform(s []float64, beta float64, p dawaNoiseFirstParams, scratch []float64) bool {
	l := len(s)
	if l == 1 {
		return true
	}
	if l < p.minBlock {
		return false
	}
	sorted := append(scratch[:0], s...)
	slices.Sort(sorted)
	med := sorted[(l-1)/2]
	var dev, maxDev, total float64
	for _, v := range s {
		d := math.Abs(v - med)
		dev += d
		maxDev = max(maxDev, d)
		total += v
	}
	fl := float64(l)
	if dev > (fl+p.z*math.Sqrt(fl))*beta {
		return false
	}
	if maxDev > -math.Log(1-math.Pow(1-p.alpha, 1/fl))*beta {
		return false
	}
	for _, parts := range []int{2, 4} {
		at := 0
		for i := range parts {
			end := (i + 1) * l / parts
			sub := 0.0
			for _, v := range s[at:end] {
				sub += v
			}
			width := float64(end - at)
			if math.Abs(sub-width/fl*total) > p.trend*math.Sqrt(2*width)*beta {
				return false
			}
			at = end
		}
	}
	return true
}
