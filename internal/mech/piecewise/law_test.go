package piecewise

import (
	"math"
	"slices"
	"testing"
)

// The exact output law of a prepared piecewise release, for the privacy
// checks. The mechanism outputs clamp(i·h, A, B) for a grid index i drawn
// with probability P(piece)·P(j | piece), where P(piece) ∝ exp(logWeight)
// and P(j | piece) is the truncated geometric r^j(1−r)/(1−r^n) (PLM) or
// 1/n (INV, centre): within a piece log P is linear in i. The law is kept
// as such segments plus the two atoms of the clamp, and two laws are
// compared segment by segment over the union of their breakpoints: on an
// interval where both are linear their log-ratio is linear, so its
// largest value is at an end. This is the law the sampler draws from up to
// the dyadic table's quantisation of the piece weights (relative 2^−52,
// covered by the mechanism's slack of 10^−9 in ε).

// lawSegment is a run of grid indices [lo, hi] whose log-probability is
// logP0 + slope·(i − lo).
type lawSegment struct {
	lo, hi       int64
	logP0, slope float64
}

// outputLaw is the output law of one release.
type outputLaw struct {
	segments       []lawSegment // interior points only, sorted, disjoint
	logLow, logTop float64      // log P of the atoms A and B (−Inf if none)
}

// logSumExp returns log(e^a + e^b).
func logSumExp(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	m := math.Max(a, b)
	return m + math.Log(math.Exp(a-m)+math.Exp(b-m))
}

// logMass returns log Σ_{t<m} exp(p0 + s·t).
func logMass(p0, s float64, m int64) float64 {
	switch {
	case s == 0:
		return p0 + math.Log(float64(m))
	case s < 0:
		return p0 + math.Log(-math.Expm1(s*float64(m))) - math.Log(-math.Expm1(s))
	}
	return p0 + s*float64(m-1) + logMass(0, -s, m)
}

// lawOf returns the output law of pp.
func lawOf(pp *preparedPiecewise) outputLaw {
	lw := make([]float64, len(pp.pieces))
	total := math.Inf(-1)
	for i, pc := range pp.pieces {
		lw[i] = pp.p.logWeight(pc)
		total = logSumExp(total, lw[i])
	}
	h := pp.p.step
	lowIdx := int64(math.Floor(pp.p.rng.Lower / h)) // i ≤ lowIdx outputs A
	topIdx := int64(math.Ceil(pp.p.rng.Upper / h))  // i ≥ topIdx outputs B
	law := outputLaw{logLow: math.Inf(-1), logTop: math.Inf(-1)}
	for i, pc := range pp.pieces {
		logPiece := lw[i] - total
		a, inner := 0.0, -math.Log(float64(pc.count)) // per-point step, log P(j = 0 | piece)
		count := pc.count
		if pc.side != 0 && pp.p.kind == plmKind {
			a = pp.p.ratio(pc)
			if math.IsInf(a, 1) { // a piece far shorter than h: all its mass on its first point
				a, count = 0, 1
			}
			inner = -logMass(0, -a, count)
		}
		// As an index range: the centre runs up from first; a side piece
		// runs from first outward, log P falling by a per step.
		seg := lawSegment{lo: pc.first, hi: pc.first + count - 1, logP0: logPiece + inner, slope: -a}
		if pc.side < 0 {
			seg = lawSegment{lo: pc.first - count + 1, hi: pc.first, logP0: logPiece + inner - a*float64(count-1), slope: a}
		}
		at := func(i int64) float64 { return seg.logP0 + seg.slope*float64(i-seg.lo) }
		if seg.lo <= lowIdx {
			end := min(seg.hi, lowIdx)
			law.logLow = logSumExp(law.logLow, logMass(seg.logP0, seg.slope, end-seg.lo+1))
			seg.logP0, seg.lo = at(end+1), end+1
		}
		if seg.hi >= topIdx && seg.lo <= seg.hi {
			start := max(seg.lo, topIdx)
			law.logTop = logSumExp(law.logTop, logMass(at(start), seg.slope, seg.hi-start+1))
			seg.hi = start - 1
		}
		if seg.lo <= seg.hi {
			law.segments = append(law.segments, seg)
		}
	}
	slices.SortFunc(law.segments, func(x, y lawSegment) int { return int(x.lo - y.lo) })
	return law
}

// at returns the log-probability of interior index i and whether i is in
// the support, with the segment searched from hint.
func (l outputLaw) at(i int64) (float64, bool) {
	k, found := slices.BinarySearchFunc(l.segments, i, func(s lawSegment, i int64) int {
		switch {
		case s.hi < i:
			return -1
		case s.lo > i:
			return 1
		}
		return 0
	})
	if !found {
		return math.Inf(-1), false
	}
	s := l.segments[k]
	return s.logP0 + s.slope*float64(i-s.lo), true
}

// worstLogRatio returns max over outputs of |log P(y) − log P'(y)|: +Inf
// when one law puts mass where the other puts none.
func worstLogRatio(p, q outputLaw) float64 {
	worst := 0.0
	ratio := func(a, b float64) {
		switch {
		case math.IsInf(a, -1) && math.IsInf(b, -1):
		case math.IsInf(a, -1) || math.IsInf(b, -1):
			worst = math.Inf(1)
		default:
			worst = math.Max(worst, math.Abs(a-b))
		}
	}
	ratio(p.logLow, q.logLow)
	ratio(p.logTop, q.logTop)
	var cuts []int64
	for _, l := range []outputLaw{p, q} {
		for _, s := range l.segments {
			cuts = append(cuts, s.lo, s.hi, s.hi+1)
			if s.lo > math.MinInt64 {
				cuts = append(cuts, s.lo-1)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// Between consecutive cuts both laws are linear (or absent), so the
	// cuts and the points next to them are the only candidates.
	for _, i := range cuts {
		a, _ := p.at(i)
		b, _ := q.at(i)
		ratio(a, b)
	}
	return worst
}

// exactLoss returns the worst log-ratio of the laws of two datasets.
func exactLoss(t *testing.T, law func([]float64) (*preparedPiecewise, error), d, d2 []float64) float64 {
	t.Helper()
	pd, err := law(d)
	if err != nil {
		t.Fatalf("%v: %v", d, err)
	}
	pd2, err := law(d2)
	if err != nil {
		t.Fatalf("%v: %v", d2, err)
	}
	return worstLogRatio(lawOf(pd), lawOf(pd2))
}

func TestOutputLawSumsToOne(t *testing.T) {
	// The checker itself: the law's total mass is 1 for every mechanism.
	for _, x := range [][]float64{nil, {0}, {3, 3, 3}, {0, 1, 2, 10}} {
		for name, law := range checkedLaws(t, 1) {
			pp, err := law(x)
			if err != nil {
				t.Fatal(err)
			}
			l := lawOf(pp)
			total := logSumExp(l.logLow, l.logTop)
			for _, s := range l.segments {
				total = logSumExp(total, logMass(s.logP0, s.slope, s.hi-s.lo+1))
			}
			if math.Abs(total) > 1e-9 {
				t.Errorf("%s %v: log total mass %v, want 0", name, x, total)
			}
		}
	}
}
