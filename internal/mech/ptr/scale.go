package ptr

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// ptrScaleCore is algorithm S (digest §3.1) on one dataset: the spread
// q = max(x_(hi) − x_(lo), 0) on the log grid of a public size, tested on
// two grids, released as b^(log_b q + Lap(1/ε)) or ⊥.
//
// One grid is an (ε, δ0)-PTR function (Definition 24): its test is ε-DP
// (ptr_stability.go); if A ≥ 2 the neighbours' spreads are in the same bin,
// so their clamped log positions differ by at most 1 and the Laplace
// release of sensitivity 1 is ε-DP (total 2ε); if A ≤ 1 it answers with
// probability ≤ δ0. The cascade of the two grids is (3ε, 2δ0)-DP by
// Theorem 29 (K = 1, J = 2): a failed first test (ε), a passed second
// one (ε) and the release (ε). The paper's Theorem 7(a) states 4ε; its own
// proof gives 3ε (digest erratum 1).
//
// Zero spread: q = 0 is the bin {0} in both grids; leaving it means a
// positive spread. If the test passes the output is exactly 0, which every
// neighbour also produces when A ≥ 2.
type ptrScaleCore struct {
	grid    ptrLogGrid
	test    ptrStabilityTest
	release *noise.Laplace
	// substitution selects the distance for fixed-size datasets under
	// substitution (regression blocks); otherwise add/remove.
	substitution bool
}

// ptrScaleOutcome is what a passed S returns.
type ptrScaleOutcome struct {
	// scale is the released spread b^y (0 on the zero bin); it may
	// overflow to +Inf or underflow to 0 for extreme noise.
	scale float64
	// logScale is y = log_b(scale), the released value on the Laplace
	// grid (only meaningful when zero is false).
	logScale float64
	// zero reports that the zero bin passed.
	zero bool
}

// newPTRScaleCore returns S for public size N, one step's ε and δ0.
func newPTRScaleCore(size, epsilon, delta0 float64, substitution bool) (ptrScaleCore, error) {
	test, err := newPTRStabilityTest(epsilon, delta0)
	if err != nil {
		return ptrScaleCore{}, err
	}
	release, err := ptrScaleReleaseNoise(epsilon)
	if err != nil {
		return ptrScaleCore{}, err
	}
	return ptrScaleCore{grid: newPTRLogGrid(size), test: test, release: release, substitution: substitution}, nil
}

// ptrScaleReleaseNoise returns S's release noise for one step's ε:
// Laplace of sensitivity 1, the most that neighbours' clamped log
// positions in one bin differ by (see ptrScaleCore). The step checks read
// the noise it builds.
func ptrScaleReleaseNoise(epsilon float64) (*noise.Laplace, error) {
	return noise.NewLaplace(1, epsilon)
}

// distance returns the capped distance of the spread at ranks lo, hi.
func (c ptrScaleCore) distance(o ptrOrder, lo, hi int64, bin ptrSpreadBin) int64 {
	if c.substitution {
		return ptrSpreadDistanceSubstitution(o, lo, hi, bin, c.test.cap)
	}
	return ptrSpreadDistanceAddRemove(o, lo, hi, bin, c.test.cap)
}

// run runs S on ranks lo, hi of o. The test statistic is
// min(distance, limit): limit is another 1-Lipschitz distance the caller
// needs (TM's count floor), or math.MaxInt64.
func (c ptrScaleCore) run(src noise.Source, o ptrOrder, lo, hi, limit int64) (ptrScaleOutcome, bool) {
	q := ptrSpread(o.at(hi), o.at(lo))
	for _, offset := range ptrOffsets {
		bin, position := ptrSpreadBin{zero: true}, 0.0
		if q > 0 {
			bin, position = c.grid.bin(q, offset)
		}
		if !c.test.pass(src, min(c.distance(o, lo, hi, bin), limit)) {
			continue
		}
		if bin.zero {
			return ptrScaleOutcome{zero: true}, true
		}
		y := c.release.Release(src, position)
		return ptrScaleOutcome{scale: math.Exp(y * c.grid.w), logScale: y}, true
	}
	return ptrScaleOutcome{}, false
}

// ptrQuartileRanks returns the interquartile ranks lo = ⌊n/4⌋+1 and
// hi = ⌈3n/4⌉ (digest §2.1; the paper's footnote 9 when 4 | n).
func ptrQuartileRanks(n int64) (lo, hi int64) { return n/4 + 1, (3*n + 3) / 4 }

// ptrQuartileWindows returns the specs of the windows around the quartile
// ranks for cap K: RankWindowSpec's rank ⌊q(n−1)⌋+1 is within one of
// ptrQuartileRanks, so two ranks of margin cover [lo−K, lo+K] and
// [hi−K, hi+K].
func ptrQuartileWindows(cap int64) []mech.RankWindowSpec {
	return []mech.RankWindowSpec{
		{Quantile: 0.25, Below: cap + 2, Above: cap + 2},
		{Quantile: 0.75, Below: cap + 2, Above: cap + 2},
	}
}

// Scale is the private interquartile range (IQR(col)): algorithm S of
// Dwork and Lei on the ranks ⌊n/4⌋+1 and ⌈3n/4⌉ of the clamped column.
// It releases IQR·b^Z with b = 1 + 1/ln N and Z on the Laplace grid with
// scale 3/Epsilon, limited to [0, U−L], or ⊥.
//
// Guarantee: (Epsilon, Delta)-DP under add/remove of one row: three steps
// of ε = Epsilon/3 with per-test δ0 = Delta/2 (see ptrScaleCore), the
// spread distance re-derived for add/remove (ptrSpreadDistanceAddRemove),
// and every constant a function of the public size N. The error is
// multiplicative: |ln(S/IQR)| ~ w·|Z|, w = ln(1+1/ln N), so it shrinks only
// like 1/ln N.
//
// Data: two windows of about 2K+5 ranks around the quartiles (Fetch);
// never the whole column.
type Scale struct {
	bounds mech.Bounds
	core   ptrScaleCore
}

// NewScale returns the private IQR for p.
func NewScale(p Params) (*Scale, error) {
	if err := p.validate(3); err != nil {
		return nil, err
	}
	core, err := newPTRScaleCore(p.Size, mech.EvenShare(p.Epsilon, 3), mech.EvenShare(p.Delta, 2), false)
	if err != nil {
		return nil, err
	}
	return &Scale{bounds: p.Bounds, core: core}, nil
}

// Fetch returns the windows Release reads: the ranks around the lower and
// the upper quartile, K+2 on each side (K the public distance cap).
func (s *Scale) Fetch() Fetch { return Fetch{Windows: ptrQuartileWindows(s.core.test.cap)} }

// Release returns the private IQR, or refused = true for ⊥. It fails with
// ErrWindowMismatch or ErrInvalidInput if d is not what Fetch asked for.
func (s *Scale) Release(src noise.Source, d Data) (value float64, refused bool, err error) {
	lo, hi, o, err := s.order(d)
	if err != nil {
		return 0, false, err
	}
	out, ok := s.core.run(src, o, lo, hi, math.MaxInt64)
	if !ok {
		return 0, true, nil
	}
	return mech.Clamp(out.scale, 0, s.bounds.Upper-s.bounds.Lower), false, nil
}

// order validates d and returns the quartile ranks and the order
// statistics.
func (s *Scale) order(d Data) (lo, hi int64, o ptrOrder, err error) {
	if len(d.Windows) != 2 {
		return 0, 0, ptrOrder{}, fmt.Errorf("%w: %d windows given, 2 needed", mech.ErrWindowMismatch, len(d.Windows))
	}
	lo, hi = ptrQuartileRanks(d.Windows[0].Count)
	k := s.core.test.cap
	o, err = ptrCheckWindows(d, s.bounds, []mech.RankRange{ptrAround(lo, k), ptrAround(hi, k)})
	return lo, hi, o, err
}
