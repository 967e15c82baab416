package ptr

import (
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
)

// PTR grids (digest §2.5). Each algorithm tests two grids, the second
// shifted by half a bin; offset is 0 for the first and 0.5 for the second.
// Bin membership is decided by comparing with the edges, computed by one
// monotone function (the "rounding repair": the edges are the source of
// truth, not a floating-point bin index), and the distance routines use
// the same edges.

// ptrOffsets are the two grids' offsets, in the paper's order.
var ptrOffsets = [2]float64{0, 0.5}

// ptrLogGrid is the scale grid: bins [b^(k−offset), b^(k+1−offset)) of
// the spread with base b = 1 + 1/ln N, w = ln b.
type ptrLogGrid struct{ w float64 }

// newPTRLogGrid returns the grid for public size N.
func newPTRLogGrid(size float64) ptrLogGrid {
	return ptrLogGrid{w: math.Log1p(1 / math.Log(ptrSize(size)))}
}

// edge returns b^(k − offset).
func (g ptrLogGrid) edge(k, offset float64) float64 { return math.Exp((k - offset) * g.w) }

// bin returns the bin of q > 0 (finite) and the position of log_b q
// clamped into the bin's closed extent [k − offset, k + 1 − offset]: two
// spreads in the same bin give positions at most 1 apart, exactly, whatever
// the rounding of the logarithm.
func (g ptrLogGrid) bin(q, offset float64) (ptrSpreadBin, float64) {
	k := math.Floor(math.Log(q)/g.w + offset)
	for q < g.edge(k, offset) {
		k--
	}
	for q >= g.edge(k+1, offset) {
		k++
	}
	// An edge below the smallest float64 underflows to 0; the zero spread
	// must stay outside every positive bin.
	lower := math.Max(g.edge(k, offset), math.SmallestNonzeroFloat64)
	position := mech.Clamp(math.Log(q)/g.w, k-offset, k+1-offset)
	return ptrSpreadBin{lower: lower, upper: g.edge(k+1, offset)}, position
}

// ptrLinearGrid is the median grid: bins [origin + (k−offset)·width,
// origin + (k+1−offset)·width). The paper's origin is 0; any public origin
// tiles the line as well, and the column's lower bound keeps the bin index
// small (decision).
type ptrLinearGrid struct{ origin, width float64 }

// edge returns origin + (k − offset)·width.
func (g ptrLinearGrid) edge(k, offset float64) float64 { return g.origin + (k-offset)*g.width }

// binSpan returns a public bound on upper − lower over the bins that hold
// a value of b, which the width alone is not: each edge origin +
// (k−offset)·width rounds twice (k − offset is exact, k < 2^52), the
// product and the sum, each by at most half an ulp of a magnitude below
// 2·max(|L|, |U|) + 2·width, so a bin is at most width plus two ulps of
// that magnitude wide. Near 0, where floats are denser than at the bounds,
// two values of one bin can lie that far apart: a release whose
// neighbours share a bin has this sensitivity, not the width (an
// independent review measured bins 1.25 widths wide at the narrowest
// width ptrWidthLimits allows). Twice the slack and a final rounding up
// keep the bound safe against the rounding of its own terms.
func (g ptrLinearGrid) binSpan(b mech.Bounds) float64 {
	m := math.Max(math.Abs(b.Lower), math.Abs(b.Upper))
	return math.Nextafter(g.width+4*ptrULP(2*m+2*g.width), math.Inf(1))
}

// bin returns the edges [lower, upper) of the bin holding x.
func (g ptrLinearGrid) bin(x, offset float64) (lower, upper float64) {
	k := math.Floor((x-g.origin)/g.width + offset)
	for x < g.edge(k, offset) {
		k--
	}
	for x >= g.edge(k+1, offset) {
		k++
	}
	return g.edge(k, offset), g.edge(k+1, offset)
}

// ptrWidthLimits returns the range [lo, hi] bin widths are clamped to for
// values in b (a public function of b). lo is 4 ulps of the largest bound,
// so consecutive edges differ after rounding and the bin index of any
// value in b is below 2^52 (an exact float64 integer); both ends keep
// width/ε inside the Laplace sampler's range [2^-960, 2^960] for every ε.
// Bounds far wider than the data cost resolution only through lo: ±10^6
// allows widths down to 5·10^-10.
func ptrWidthLimits(b mech.Bounds) (lo, hi float64) {
	lo = math.Max(4*ptrULP(math.Max(math.Abs(b.Lower), math.Abs(b.Upper))), 0x1p-900)
	return lo, math.Max((b.Upper-b.Lower)*0x1p10, lo)
}

// ptrULP returns the spacing of float64 values at magnitude m ≥ 0.
func ptrULP(m float64) float64 { return math.Nextafter(m, math.Inf(1)) - m }

// ptrBinWidth returns the clamped width scale·N^(−exponent), or
// N^(−1/2) for a zero scale (the paper's choice: "any positive number").
func ptrBinWidth(scale, size, exponent float64, b mech.Bounds) float64 {
	n := ptrSize(size)
	h := scale * math.Pow(n, -exponent)
	if scale == 0 {
		h = 1 / math.Sqrt(n)
	}
	lo, hi := ptrWidthLimits(b)
	return mech.Clamp(h, lo, hi)
}
