package ptr

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// ptrMedianCore is algorithm M (digest §3.3) on one dataset: the median
// x_(r), r = ⌈n/2⌉, on the linear grid of width h = s·N^(−1/3), tested on
// two grids, released as x_(r) + Lap(h/ε) or ⊥. The scale s is public or
// comes from S on the same dataset.
//
// One grid given s is an (ε, δ0)-PTR function: its test is ε-DP
// (ptrMedianDistance has sensitivity 1); if A ≥ 2 every neighbour's median
// is in the same bin of width h, so Lap(h/ε) makes the release ε-DP; if
// A ≤ 1 it answers with probability ≤ δ0. (The Laplace sensitivity is the
// bins' rounded span, ptrLinearGrid.binSpan: h plus a few ulps of the
// bounds.) With a public s the two grids
// form a level-1 cascade: (3ε, 2δ0) by Theorem 29 (digest [RECON]). With
// s from S it is a level-2 cascade, K = 2, J = (2, 2): (6ε, 4δ0) (Theorem
// 12(a); worst path: S fails a grid, passes the other and releases, M
// fails a grid, passes the other and releases). The rank is the lower
// median ⌈n/2⌉, one order statistic (decision, digest erratum 9: the
// paper's ⌊n/2⌋ is wrong for odd n, and an average of two ranks would
// change the distance).
//
// s = 0 (a zero IQR) gives the paper's h = N^(−1/2); widths are clamped to
// a public range of the bounds (ptrWidthLimits). Both are functions of
// released or public values only.
type ptrMedianCore struct {
	size    float64
	bounds  mech.Bounds
	epsilon float64
	test    ptrStabilityTest
	// scale is S on the same data, or nil for the public publicScale.
	scale       *ptrScaleCore
	publicScale float64
}

// run returns the released median, or ok = false for ⊥.
func (c ptrMedianCore) run(src noise.Source, o ptrOrder) (value float64, ok bool, err error) {
	s := c.publicScale
	if c.scale != nil {
		lo, hi := ptrQuartileRanks(o.n)
		out, passed := c.scale.run(src, o, lo, hi, math.MaxInt64)
		if !passed {
			return 0, false, nil
		}
		s = out.scale
	}
	grid := c.grid(s)
	r := (o.n + 1) / 2
	m := o.at(r)
	for _, offset := range ptrOffsets {
		lower, upper := grid.bin(m, offset)
		if !c.test.pass(src, ptrMedianDistance(o, r, lower, upper, c.test.cap)) {
			continue
		}
		release, err := c.releaseNoise(grid)
		if err != nil {
			return 0, false, err
		}
		return c.bounds.Clamp(release.Release(src, m)), true, nil
	}
	return 0, false, nil
}

// grid returns the linear grid of M for the scale s: width
// h = s·N^(−1/3), clamped to ptrWidthLimits, from the lower bound.
func (c ptrMedianCore) grid(s float64) ptrLinearGrid {
	return ptrLinearGrid{origin: c.bounds.Lower, width: ptrBinWidth(s, c.size, 1.0/3, c.bounds)}
}

// releaseNoise returns the noise of M's release on grid: Laplace of
// sensitivity the bins' rounded span (ptrLinearGrid.binSpan) at the
// step's ε. The step checks read the noise it builds.
func (c ptrMedianCore) releaseNoise(grid ptrLinearGrid) (*noise.Laplace, error) {
	return noise.NewLaplace(grid.binSpan(c.bounds), c.epsilon)
}

// Median is the PTR median (MEDIAN(col) with @dp_mechanism = 'ptr'):
// algorithm M of Dwork and Lei on the lower median x_(⌈n/2⌉) of the
// clamped column. Its noise is Lap(s·N^(−1/3)/ε) with s the IQR, so it does
// not grow with the width of the bounds (the paper's point: a median that
// needs no range), and its error shrinks like N^(−1/3).
//
// Guarantee: (Epsilon, Delta)-DP under add/remove of one row. With the
// scale estimated privately (scale = 0): six steps of ε = Epsilon/6 with
// per-test δ0 = Delta/4. With a public scale s > 0 (a configured column
// scale): three steps of Epsilon/3, δ0 = Delta/2. See ptrMedianCore; the
// distances are re-derived for add/remove in ptr_distance.go and every
// constant comes from the public size N.
//
// Data: windows of about 2K+3 ranks around the median, plus the two
// quartile windows when the scale is estimated (Fetch).
type Median struct {
	core ptrMedianCore
}

// NewMedian returns the PTR median for p, with a public scale > 0 or
// scale = 0 to estimate it privately with S.
func NewMedian(p Params, scale float64) (*Median, error) {
	if !(scale >= 0) || math.IsInf(scale, 0) {
		return nil, fmt.Errorf("%w: scale %v, must be finite and ≥ 0", mech.ErrInvalidInput, scale)
	}
	steps, tests := 6, 4
	if scale > 0 {
		steps, tests = 3, 2
	}
	if err := p.validate(steps); err != nil {
		return nil, err
	}
	epsilon, delta0 := mech.EvenShare(p.Epsilon, steps), mech.EvenShare(p.Delta, tests)
	test, err := newPTRStabilityTest(epsilon, delta0)
	if err != nil {
		return nil, err
	}
	core := ptrMedianCore{size: p.Size, bounds: p.Bounds, epsilon: epsilon, test: test, publicScale: scale}
	if scale == 0 {
		s, err := newPTRScaleCore(p.Size, epsilon, delta0, false)
		if err != nil {
			return nil, err
		}
		core.scale = &s
	}
	return &Median{core: core}, nil
}

// Fetch returns the windows Release reads: the median window (ranks
// ⌈n/2⌉ ± (K+1)) and, when the scale is estimated, the two quartile
// windows after it.
func (m *Median) Fetch() Fetch {
	k := m.core.test.cap
	windows := []mech.RankWindowSpec{{Quantile: 0.5, Below: k + 1, Above: k + 1}}
	if m.core.scale != nil {
		windows = append(windows, ptrQuartileWindows(k)...)
	}
	return Fetch{Windows: windows}
}

// Release returns the private median, within the bounds, or refused = true
// for ⊥. It fails with ErrWindowMismatch or ErrInvalidInput if d is not
// what Fetch asked for.
func (m *Median) Release(src noise.Source, d Data) (value float64, refused bool, err error) {
	if len(d.Windows) == 0 {
		return 0, false, fmt.Errorf("%w: no window given", mech.ErrWindowMismatch)
	}
	n, k := d.Windows[0].Count, m.core.test.cap
	need := []mech.RankRange{ptrAround((n+1)/2, k)}
	if m.core.scale != nil {
		lo, hi := ptrQuartileRanks(n)
		need = append(need, ptrAround(lo, k), ptrAround(hi, k))
	}
	o, err := ptrCheckWindows(d, m.core.bounds, need)
	if err != nil {
		return 0, false, err
	}
	v, ok, err := m.core.run(src, o)
	return v, !ok && err == nil, err
}
