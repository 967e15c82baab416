package laplace

import (
	"fmt"
	"math"

	"github.com/dpproxy/dpproxy/internal/mech"
	"github.com/dpproxy/dpproxy/internal/mech/exact"
	"github.com/dpproxy/dpproxy/internal/mech/noise"
)

// Moments measured from both bounds (the planner's AVG and VARIANCE when
// n·ε is small; issue 15).
//
// Google's bounded mean releases the count with ε/2 and Σ(clamp(x) − m),
// m = (L+U)/2, with ε/2. Scaled by h = (U−L)/2, that is the pair
// (h·n, Σ(x − m)): a row adds (h, x − m), of L1 norm up to 2h = U−L, and
// each coordinate gets Laplace(2h/ε). The edge sums are the same
// information in other coordinates,
//
//	S_L = Σ(clamp(x) − L),   S_U = Σ(U − clamp(x)),
//
// (S_L + S_U = n·(U−L), S_L − S_U = 2·Σ(x − m)). A row adds
// (x − L, U − x): both ≥ 0, summing to exactly U − L, so the pair has L1
// sensitivity U − L and each coordinate gets Laplace((U−L)/ε), with all of
// ε (the vector Laplace mechanism). In the coordinates of the bounded
// mean that is noise of half the variance in every direction, independent
// between S_L and S_U where the bounded mean's are correlated. The mean
// L + (U−L)·S_L/(S_L + S_U) then errs by about
// ((1−p)·Z_L − p·Z_U)/n, p = (μ−L)/(U−L), Z ~ Laplace((U−L)/ε): mean
// absolute error 2h/(εn) for data at a bound and 1.5h/(εn) at the middle,
// where the bounded mean's is 3h/(εn) and 2h/(εn): 0.67× and 0.75×.
//
// VAR_POP likewise: a row adds
//
//	a = (x − L)²,  b = (U − x)²,  c = 2(x − L)(U − x),
//
// all ≥ 0 with a + b + c = ((x − L) + (U − x))² = (U − L)², so the three
// sums A, B, C have L1 sensitivity (U − L)² and each gets
// Laplace((U−L)²/ε). From them n = (A+B+C)/(U−L)², Σ(x − L) = (A + C/2)/(U−L)
// and Σ(x − L)² = A, so VAR_POP = A/n − (Σ(x−L)/n)². Google's bounded
// variance spends ε/3 on each of n, Σ(x − m), Σ(x − m)² (noise
// 3h²/ε on each in the units of the squares); here the dominant term A
// gets 4h²/ε with all of ε, and the count and the sum come almost free:
// about 0.55–0.6× its error for data at a bound or at the middle.
//
// Guarantee: pure ε-DP under adding or removing one row, for the
// implementation as written. The coordinates of neighbours differ by
// d_1..d_k with Σ|d_i| ≤ Δ (Δ = U − L or (U − L)², k = 2 or 3). Each is
// released by noise.Laplace on its grid γ: the output is γ·(m_i + Z_i),
// m_i = round(f_i/γ), Z_i discrete Laplace of scale β, so the worst
// log-ratio of the joint law is Σ|m_i − m_i'|/β ≤ Σ(|d_i|/γ + 1)/β ≤
// (Δ + kγ)/(γβ). The noise is built for the sensitivity Δ' ≥ Δ + kγ
// (edgeNoise checks it on the final γ), for which noise.Laplace
// guarantees β ≥ (⌊Δ'/γ⌋ + 1)/ε, so the loss is below ε. Below ε = 2^−30
// the padding would not converge and edgeNoise instead gives each
// coordinate ε/k with sensitivity Δ (sequential composition). As for the
// other sums of this package, the coordinates are formed here from the
// database's COUNT, SUM and sum of squares of the clamped values; their
// rounding residue is not part of the sensitivity analysis. Everything
// after the release (the mean, the variance, their intervals) is
// post-processing.
//
// The construction is the standard vector Laplace mechanism applied to a
// choice of coordinates in which each row's contribution lies on a face of
// the L1 ball (the sums measured from both ends of the range); the
// observation that the bounded mean's pair does not is ours.

// edgeMinEpsilon is the smallest ε at which the coordinates share ε.
const edgeMinEpsilon = 0x1p-30

// edgeNoise returns the noise of each of k coordinates whose changes on
// neighbours sum to at most l1 in absolute value, and the ε each spends
// (see above: all of ε, or ε/k below edgeMinEpsilon).
func edgeNoise(l1 float64, k int, epsilon float64) (*noise.Laplace, error) {
	if epsilon >= edgeMinEpsilon {
		l, err := noise.NewLaplace(l1, epsilon)
		if err != nil {
			return nil, err
		}
		padded := exact.RoundUp(l1 + float64(2*k)*l.Granularity())
		l, err = noise.NewLaplace(padded, epsilon)
		if err != nil {
			return nil, err
		}
		if exact.RoundUp(l1+float64(k)*l.Granularity()) <= padded {
			return l, nil
		}
	}
	return noise.NewLaplace(l1, epsilon/float64(k))
}

// EdgeSums are the released S_L = Σ(clamp(x) − L) and S_U = Σ(U − clamp(x)).
type EdgeSums struct {
	Lower, Upper float64
	noise        *noise.Laplace
}

// ReleaseEdgeSums releases S_L and S_U with ε (see above).
func ReleaseEdgeSums(src noise.Source, b mech.Bounds, s Summary, epsilon float64) (EdgeSums, error) {
	if err := b.Validate(); err != nil {
		return EdgeSums{}, err
	}
	if err := s.validate(); err != nil {
		return EdgeSums{}, err
	}
	width := exact.RoundUp(b.Upper - b.Lower)
	if !(width > 0) {
		return EdgeSums{}, fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	l, err := edgeNoise(width, 2, epsilon)
	if err != nil {
		return EdgeSums{}, err
	}
	lower, upper := edgeSumsOf(b, s)
	return EdgeSums{Lower: l.Release(src, lower), Upper: l.Release(src, upper), noise: l}, nil
}

// edgeSumsOf returns S_L and S_U from the summary, each limited to
// [0, n·(U−L)].
func edgeSumsOf(b mech.Bounds, s Summary) (lower, upper float64) {
	n := float64(s.Count)
	top := n * (b.Upper - b.Lower)
	return mech.Clamp(s.Sum-n*b.Lower, 0, top), mech.Clamp(n*b.Upper-s.Sum, 0, top)
}

// edgeMean is L + (U−L)·a/(a + b) for a, b limited to ≥ 0, the middle of
// the bounds when both are 0.
func edgeMean(bd mech.Bounds, a, b float64) float64 {
	a, b = math.Max(a, 0), math.Max(b, 0)
	if a+b == 0 {
		return bd.Mid()
	}
	return bd.Clamp(bd.Lower + (bd.Upper-bd.Lower)*(a/(a+b)))
}

// Mean returns the mean derived from the edge sums: post-processing.
func (e EdgeSums) Mean(b mech.Bounds) float64 { return edgeMean(b, e.Lower, e.Upper) }

// EdgeMeanEstimate is the mean with a conservative interval at confidence:
// each sum within its half-width at 1 − (1 − confidence)/2, and the mean,
// increasing in S_L and decreasing in S_U, at the corners of that box.
func EdgeMeanEstimate(b mech.Bounds, e EdgeSums, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if e.noise == nil {
		return mech.Estimate{}, fmt.Errorf("%w: edge sums not released by ReleaseEdgeSums", mech.ErrInvalidInput)
	}
	w := e.noise.HalfWidth(1 - (1-confidence)/2)
	return mech.Estimate{
		Value: e.Mean(b),
		Low:   edgeMean(b, e.Lower-w, e.Upper+w), High: edgeMean(b, e.Lower+w, e.Upper-w),
		HasInterval: true,
	}, nil
}

// EdgeSquares are the released A = Σ(x − L)², B = Σ(U − x)² and
// C = 2·Σ(x − L)(U − x) of the clamped values.
type EdgeSquares struct {
	Lower, Upper, Cross float64
	noise               *noise.Laplace
}

// ReleaseEdgeSquares releases A, B and C with ε (see above).
func ReleaseEdgeSquares(src noise.Source, b mech.Bounds, s Summary, epsilon float64) (EdgeSquares, error) {
	if err := b.Validate(); err != nil {
		return EdgeSquares{}, err
	}
	if err := s.validate(); err != nil {
		return EdgeSquares{}, err
	}
	width := exact.RoundUp(b.Upper - b.Lower)
	if !(width > 0) {
		return EdgeSquares{}, fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	l, err := edgeNoise(exact.RoundUp(width*width), 3, epsilon)
	if err != nil {
		return EdgeSquares{}, err
	}
	a, up, c := edgeSquaresOf(b, s)
	return EdgeSquares{Lower: l.Release(src, a), Upper: l.Release(src, up), Cross: l.Release(src, c), noise: l}, nil
}

// edgeSquaresOf returns A, B and C from the summary, each limited to
// [0, n·(U−L)²].
func edgeSquaresOf(b mech.Bounds, s Summary) (a, up, c float64) {
	n, lo, hi := float64(s.Count), b.Lower, b.Upper
	top := n * (hi - lo) * (hi - lo)
	return mech.Clamp(s.SumSquares-2*lo*s.Sum+n*lo*lo, 0, top),
		mech.Clamp(s.SumSquares-2*hi*s.Sum+n*hi*hi, 0, top),
		mech.Clamp(2*((lo+hi)*s.Sum-s.SumSquares-n*lo*hi), 0, top)
}

// edgeMoments returns n, Σ(x − L) and Σ(x − L)² from A, B, C.
func edgeMoments(b mech.Bounds, a, up, c float64) (n, s, q float64) {
	w := b.Upper - b.Lower
	return (a + up + c) / (w * w), (a + c/2) / w, a
}

// Variance returns the variance of kind derived from the released sums:
// VAR_POP is clamp(Q/n₁ − (S/n₁)², 0, ((U−L)/2)²), n₁ = max(n, 1), and
// VAR_SAMP that times n₂/(n₂ − 1), n₂ = max(n, 2), with n, S = Σ(x − L)
// and Q = Σ(x − L)² from A, B and C (the count comes with the squares: no
// count is released beside them). Post-processing.
func (e EdgeSquares) Variance(b mech.Bounds, kind VarianceKind) float64 {
	n, s, q := edgeMoments(b, e.Lower, e.Upper, e.Cross)
	n1 := math.Max(n, 1)
	h := b.HalfRange()
	v := mech.Clamp(q/n1-(s/n1)*(s/n1), 0, h*h)
	if kind == SampleVariance {
		n2 := math.Max(n, 2)
		v *= n2 / (n2 - 1)
	}
	return v
}

// Plus returns the sums of e and o, released on disjoint rows with the same
// bounds: the squares of the union of those rows (WITH ROLLUP's totals).
// The result carries no noise description, so it has no interval.
func (e EdgeSquares) Plus(o EdgeSquares) EdgeSquares {
	return EdgeSquares{Lower: e.Lower + o.Lower, Upper: e.Upper + o.Upper, Cross: e.Cross + o.Cross}
}

// EdgeVarianceEstimate is the variance of kind with a conservative
// interval at confidence: each of A, B, C within its half-width at
// 1 − (1 − confidence)/3, the count, the sum and the sum of squares
// (linear in them) bounded over that box, then populationVarianceSpan,
// and for VAR_SAMP × n/(n − 1) at the ends of the count's span.
func EdgeVarianceEstimate(b mech.Bounds, kind VarianceKind, e EdgeSquares, confidence float64) (mech.Estimate, error) {
	if err := checkDerive(b, confidence); err != nil {
		return mech.Estimate{}, err
	}
	if kind != PopulationVariance && kind != SampleVariance {
		return mech.Estimate{}, fmt.Errorf("%w: variance kind %d", mech.ErrInvalidInput, kind)
	}
	if e.noise == nil {
		return mech.Estimate{}, fmt.Errorf("%w: edge squares not released by ReleaseEdgeSquares", mech.ErrInvalidInput)
	}
	value, top := e.Variance(b, kind), varianceRange(b, kind)
	minCount := 1.0
	if kind == SampleVariance {
		minCount = 2
	}
	w := e.noise.HalfWidth(1 - (1-confidence)/3)
	nLo, sLo, qLo := edgeMoments(b, e.Lower-w, e.Upper-w, e.Cross-w)
	nHi, sHi, qHi := edgeMoments(b, e.Lower+w, e.Upper+w, e.Cross+w)
	n := span{math.Max(math.Ceil(nLo), minCount), math.Floor(nHi)}
	if n.hi < n.lo {
		return mech.Estimate{Value: value, Low: 0, High: top, HasInterval: true}, nil
	}
	v := populationVarianceSpan(b, n, span{sLo, sHi}, span{qLo, qHi})
	if kind == SampleVariance { // × n/(n-1), decreasing in n
		v = span{v.lo * n.hi / (n.hi - 1), v.hi * n.lo / (n.lo - 1)}
	}
	return mech.Estimate{Value: value, Low: mech.Clamp(v.lo, 0, top), High: mech.Clamp(v.hi, 0, top), HasInterval: true}, nil
}

// CheckEdgeSums and CheckEdgeSquares build, without data, the noise
// ReleaseEdgeSums and ReleaseEdgeSquares would use with b and ε: they fail
// where the releases would.
func CheckEdgeSums(b mech.Bounds, epsilon float64) error { return checkEdges(b, epsilon, false) }

func CheckEdgeSquares(b mech.Bounds, epsilon float64) error { return checkEdges(b, epsilon, true) }

func checkEdges(b mech.Bounds, epsilon float64, squares bool) error {
	if err := b.Validate(); err != nil {
		return err
	}
	width := exact.RoundUp(b.Upper - b.Lower)
	if !(width > 0) {
		return fmt.Errorf("%w: empty bounds", mech.ErrInvalidInput)
	}
	if !squares {
		_, err := edgeNoise(width, 2, epsilon)
		return err
	}
	_, err := edgeNoise(exact.RoundUp(width*width), 3, epsilon)
	return err
}
